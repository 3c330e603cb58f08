//! The audit trail's hash chain: intact, it verifies page by page and
//! after pruning; changed in any way — a field edited, a record removed,
//! inserted or swapped — it names the first record that does not fit.

use askbridge_core::audit::{Anchor, Break, DecidedBy, Decision, Entry, GENESIS, Record, verify};
use askbridge_core::model::{ChannelKind, Responder, Timestamp};
use proptest::prelude::*;

fn alice() -> Responder {
    Responder {
        channel: ChannelKind::Telegram,
        user_id: "42".to_owned(),
        name: Some("Alice".to_owned()),
        place: None,
    }
}

fn entry(n: u64) -> Entry {
    let (decision, by) = match n % 5 {
        0 => (Decision::Allow, DecidedBy::Person(alice())),
        1 => (
            Decision::Deny("use the staging box".to_owned()),
            DecidedBy::Person(alice()),
        ),
        2 => (
            Decision::Allow,
            DecidedBy::Rule {
                id: "rule_1".to_owned(),
                pattern: "Bash(npm test:*)".to_owned(),
            },
        ),
        3 => (Decision::Allow, DecidedBy::Terminal),
        _ => (Decision::None, DecidedBy::Silence("timeout".to_owned())),
    };
    Entry {
        host: "claude-code".to_owned(),
        project: "/home/alice/api-server".to_owned(),
        session: "79187ccd".to_owned(),
        call: format!("$ make release-{n}"),
        decision,
        by,
        asked_at: Timestamp(1_800_000_000_000 + n * 1_000),
        decided_at: Timestamp(1_800_000_000_500 + n * 1_000),
    }
}

/// A trail of `n` records after `anchor`.
fn trail(anchor: &Anchor, n: u64) -> Vec<Record> {
    let mut records: Vec<Record> = Vec::new();
    for k in 0..n {
        let last = records
            .last()
            .map_or_else(|| anchor.clone(), Record::anchor);
        records.push(entry(anchor.seq + k).chain(&last));
    }
    records
}

#[test]
fn an_intact_trail_verifies_whole_page_by_page_and_after_pruning() {
    let records = trail(&Anchor::default(), 10);
    assert_eq!(records[0].prev, GENESIS);
    assert_eq!(records[0].seq, 1);
    assert_eq!(verify(&Anchor::default(), &records), Ok(10));
    // Page by page: each page after the last record of the one before.
    let first = verify(&Anchor::default(), &records[..4]);
    let rest = verify(&records[3].anchor(), &records[4..]);
    assert_eq!((first, rest), (Ok(4), Ok(6)));
    // Pruned: the kept records verify from the last pruned one's hash.
    assert_eq!(verify(&records[5].anchor(), &records[6..]), Ok(4));
    // Not from the start, though: a pruned trail needs its anchor.
    assert!(verify(&Anchor::default(), &records[6..]).is_err());
}

#[test]
fn a_change_of_any_kind_names_the_first_record_that_does_not_fit() {
    let records = trail(&Anchor::default(), 6);
    let anchor = Anchor::default();
    type Edit = Box<dyn Fn(&mut Record)>;
    let edits: Vec<(&str, Edit)> = vec![
        ("decision", Box::new(|r| r.entry.decision = Decision::Allow)),
        (
            "words",
            Box::new(|r| r.entry.decision = Decision::Deny("ok".into())),
        ),
        ("call", Box::new(|r| r.entry.call.push(' '))),
        ("who", Box::new(|r| r.entry.by = DecidedBy::Terminal)),
        (
            "time",
            Box::new(|r| r.entry.decided_at = Timestamp(r.entry.decided_at.0 + 1)),
        ),
        ("project", Box::new(|r| r.entry.project = "/tmp".into())),
    ];
    for (what, edit) in edits {
        let mut edited = records.clone();
        edit(&mut edited[1]);
        if edited[1] == records[1] {
            continue;
        }
        let broken = verify(&anchor, &edited).expect_err(what);
        assert_eq!((broken.seq, &broken.why), (2, &Break::Hash), "{what}");
        assert_eq!(
            broken.to_string(),
            "record 2's content does not match its hash: it was edited"
        );
        // Its hash made again to hide the edit: the next one breaks.
        edited[1].hash = edited[1].hash_of();
        let broken = verify(&anchor, &edited).expect_err(what);
        assert_eq!((broken.seq, broken.why), (3, Break::Prev), "{what}");
    }
    // Removed.
    let mut removed = records.clone();
    removed.remove(2);
    let broken = verify(&anchor, &removed).expect_err("a gap");
    assert_eq!((broken.seq, broken.why), (4, Break::Gap { expected: 3 }));
    // Swapped.
    let mut swapped = records.clone();
    swapped.swap(2, 3);
    assert_eq!(verify(&anchor, &swapped).expect_err("swapped").seq, 4);
}

#[test]
fn the_canonical_encoding_is_fixed() {
    let record = entry(1).chain(&Anchor::default());
    assert_eq!(
        record.canonical(),
        format!(
            r#"[1,"claude-code","/home/alice/api-server","79187ccd","$ make release-1","deny","use the staging box",["person",["telegram","42","Alice",null]],1800000001000,1800000001500,"{GENESIS}"]"#
        )
    );
    // A known hash, so a change to the encoding or the digest is seen.
    // (`sha256sum` of the line above gives the same.)
    assert_eq!(
        record.hash,
        "ace7a4141db5843a23d4d6b042605cbca0dd55f5024084cbae8b1ae16ca2b85f"
    );
}

proptest! {
    #[test]
    fn any_single_byte_changed_in_a_call_is_seen(at in 0usize..20, byte in any::<u8>()) {
        let records = trail(&Anchor::default(), 3);
        let mut edited = records.clone();
        let mut call = edited[1].entry.call.clone().into_bytes();
        let at = at % call.len();
        prop_assume!(call[at] != byte);
        call[at] = byte;
        edited[1].entry.call = String::from_utf8_lossy(&call).into_owned();
        prop_assume!(edited[1].entry.call != records[1].entry.call);
        prop_assert_eq!(verify(&Anchor::default(), &edited).map_err(|b| b.seq), Err(2));
    }
}
