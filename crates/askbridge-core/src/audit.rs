//! The audit trail of approval decisions, as a hash chain that proves
//! itself: each [`Record`] carries the hash of the one before it, so an
//! edited, removed or inserted record breaks the chain where it was
//! changed, and [`verify`] names the first record that does not fit.
//!
//! A record's hash is SHA-256 over the hash before it and the record's
//! canonical encoding ([`Record::canonical`]): its fields as compact JSON
//! in a fixed order, strings escaped as JSON escapes them. The encoding is
//! made from the fields, never from stored text, so a record reads back
//! to the same hash on any database. The first record of a trail follows
//! [`GENESIS`]; a pruned trail starts from the hash of the last record it
//! dropped (its [`Anchor`]), so what is kept still verifies.
//!
//! Storage, the clock and who writes the records are not here: the
//! daemon appends records as approvals end and hands them back in order.

use std::fmt;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::model::{Responder, Timestamp};

/// The hash before the first record of a trail: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// How an approval was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The call may run.
    Allow,
    /// It may not; with the words the agent was told.
    Deny(String),
    /// Nobody decided: the host asks in its terminal (a skip, the hold
    /// ran out, the daemon could not be asked).
    None,
}

impl Decision {
    fn name(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny(_) => "deny",
            Decision::None => "none",
        }
    }
}

/// Who or what decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecidedBy {
    /// A person, in a chat or on the web page.
    Person(Responder),
    /// A rule, by its id and pattern.
    Rule {
        /// The rule's id.
        id: String,
        /// What it matches, as written.
        pattern: String,
    },
    /// Several people, each by their answer (a quorum).
    People(Vec<Responder>),
    /// The person at the agent host's own prompt (the terminal).
    Terminal,
    /// Nobody: why not (`timeout`, `skipped`, `daemon down`…).
    Silence(String),
}

/// One approval decision on record: an [`Entry`] in its place in the
/// trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its place in the trail, from 1.
    pub seq: u64,
    /// What was decided, by whom, about what.
    pub entry: Entry,
    /// The hash of the record before it ([`GENESIS`] for the first).
    pub prev: String,
    /// This record's hash ([`Record::hash_of`]).
    pub hash: String,
}

/// Where a kept trail starts: the last record pruned from it (`seq` 0
/// and [`GENESIS`] when nothing was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// The last pruned record's place in the trail.
    pub seq: u64,
    /// Its hash.
    pub hash: String,
}

impl Default for Anchor {
    fn default() -> Anchor {
        Anchor {
            seq: 0,
            hash: GENESIS.to_owned(),
        }
    }
}

/// One approval decision, before it is chained into the trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The agent host (`claude-code`, `codex`, …).
    pub host: String,
    /// The project directory the host reported.
    pub project: String,
    /// The agent session.
    pub session: String,
    /// The call as shown to the person (credentials masked).
    pub call: String,
    /// What was decided.
    pub decision: Decision,
    /// Who or what decided it.
    pub by: DecidedBy,
    /// When the call was asked about.
    pub asked_at: Timestamp,
    /// When it was decided.
    pub decided_at: Timestamp,
}

impl Entry {
    /// The record this entry makes after `last` (the trail's last record,
    /// or its anchor when it has none).
    pub fn chain(self, last: &Anchor) -> Record {
        let mut record = Record {
            seq: last.seq + 1,
            entry: self,
            prev: last.hash.clone(),
            hash: String::new(),
        };
        record.hash = record.hash_of();
        record
    }
}

impl Record {
    /// The record's canonical encoding: its fields (but its own hash) as
    /// compact JSON, in this order, always.
    pub fn canonical(&self) -> String {
        let entry = &self.entry;
        let words = match &entry.decision {
            Decision::Deny(words) => Value::String(words.clone()),
            Decision::Allow | Decision::None => Value::Null,
        };
        json!([
            self.seq,
            entry.host,
            entry.project,
            entry.session,
            entry.call,
            entry.decision.name(),
            words,
            decided_by(&entry.by),
            entry.asked_at.0,
            entry.decided_at.0,
            self.prev,
        ])
        .to_string()
    }

    /// SHA-256 over the canonical encoding (which holds the hash before
    /// it), as 64 lowercase hex digits.
    pub fn hash_of(&self) -> String {
        let digest = Sha256::digest(self.canonical().as_bytes());
        digest.iter().map(|byte| format!("{byte:02x}")).collect()
    }

    /// What it says of itself as an anchor for the records after it.
    pub fn anchor(&self) -> Anchor {
        Anchor {
            seq: self.seq,
            hash: self.hash.clone(),
        }
    }
}

/// Who decided, in the canonical encoding.
fn decided_by(by: &DecidedBy) -> Value {
    let person = |who: &Responder| {
        json!([
            who.channel.as_str(),
            who.user_id,
            who.name,
            who.place.as_ref().map(ToString::to_string),
        ])
    };
    match by {
        DecidedBy::Person(who) => json!(["person", person(who)]),
        DecidedBy::Rule { id, pattern } => json!(["rule", id, pattern]),
        DecidedBy::People(people) => {
            json!(["people", people.iter().map(person).collect::<Vec<_>>()])
        }
        DecidedBy::Terminal => json!(["terminal"]),
        DecidedBy::Silence(why) => json!(["silence", why]),
    }
}

/// Where and why a trail does not verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The first record that does not fit (its `seq` as stored).
    pub seq: u64,
    /// Why.
    pub why: Break,
}

/// Why a record does not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Break {
    /// Its place is not the one after the record before it (one was
    /// removed or inserted).
    Gap { expected: u64 },
    /// It does not follow the hash of the record before it.
    Prev,
    /// Its content does not make its hash (it was edited).
    Hash,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.why {
            Break::Gap { expected } => write!(
                f,
                "record {} is where record {expected} should be: one was removed or inserted",
                self.seq
            ),
            Break::Prev => write!(
                f,
                "record {} does not follow the hash of the record before it",
                self.seq
            ),
            Break::Hash => write!(
                f,
                "record {}'s content does not match its hash: it was edited",
                self.seq
            ),
        }
    }
}

/// Checks records, in order, against the trail's anchor: how many there
/// are when the chain is intact, else the first that does not fit.
/// Records can be checked a page at a time: pass the last record's
/// [`Record::anchor`] with the next page.
pub fn verify<'a>(
    anchor: &Anchor,
    records: impl IntoIterator<Item = &'a Record>,
) -> Result<u64, Broken> {
    let mut last = anchor.clone();
    let mut count = 0;
    for record in records {
        let broken = |why| Broken {
            seq: record.seq,
            why,
        };
        if record.seq != last.seq + 1 {
            return Err(broken(Break::Gap {
                expected: last.seq + 1,
            }));
        }
        if record.prev != last.hash {
            return Err(broken(Break::Prev));
        }
        if record.hash_of() != record.hash {
            return Err(broken(Break::Hash));
        }
        last = record.anchor();
        count += 1;
    }
    Ok(count)
}
