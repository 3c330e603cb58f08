//! askbridge-tests: end-to-end tests that cross crate boundaries live in
//! `tests/tests/`. This library is empty; shared test support (the platform
//! fakes) will live here.
