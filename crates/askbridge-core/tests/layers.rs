//! askbridge-core's modules read in the order data flows through them:
//! `model` → `resolve` → `normalize` → `outcome` → `lifecycle` → `render`.
//! A module uses only modules before it (and itself), never one after it,
//! so there is no import circle. Doc comments may point anywhere.

/// The modules of the crate, in flow order.
const ORDER: &[&str] = &[
    "model",
    "resolve",
    "normalize",
    "outcome",
    "lifecycle",
    "render",
    "inbound",
    "failure",
    "hooks",
    "written",
    "rules",
    "audit",
];

mod layering;
