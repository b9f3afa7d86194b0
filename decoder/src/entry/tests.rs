//! Unit and property tests for the entry batch parser.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::transaction::test_wire::{
    TransactionSpec, legacy_spec, minimal_spec, v0_spec, valid_spec,
};

/// An owned entry for the test encoder.
#[derive(Debug, Clone)]
struct EntrySpec {
    num_hashes: u64,
    hash: [u8; 32],
    transactions: Vec<TransactionSpec>,
}

fn encode_batch(entries: &[EntrySpec]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for entry in entries {
        out.extend_from_slice(&entry.num_hashes.to_le_bytes());
        out.extend_from_slice(&entry.hash);
        out.extend_from_slice(&(entry.transactions.len() as u64).to_le_bytes());
        for transaction in &entry.transactions {
            out.extend_from_slice(&transaction.encode());
        }
    }
    out
}

fn tick(num_hashes: u64) -> EntrySpec {
    EntrySpec {
        num_hashes,
        hash: [num_hashes as u8; 32],
        transactions: vec![],
    }
}

fn sample_entries() -> Vec<EntrySpec> {
    vec![
        tick(12_500),
        EntrySpec {
            num_hashes: 3,
            hash: [7; 32],
            transactions: vec![legacy_spec(), v0_spec()],
        },
        tick(1),
        EntrySpec {
            num_hashes: 9,
            hash: [8; 32],
            transactions: vec![minimal_spec()],
        },
    ]
}

/// Checks counts and every entry and transaction of `batch` against `entries`.
fn assert_batch_matches(batch: &EntryBatch<'_>, entries: &[EntrySpec]) {
    let transaction_count: usize = entries.iter().map(|e| e.transactions.len()).sum();
    assert_eq!(batch.entry_count(), entries.len() as u64);
    assert_eq!(batch.transaction_count(), transaction_count as u64);
    assert_eq!(batch.entries().count(), entries.len());
    for (view, spec) in batch.entries().zip(entries) {
        assert_eq!(view.num_hashes, spec.num_hashes);
        assert_eq!(view.hash, &spec.hash);
        assert_eq!(view.transaction_count, spec.transactions.len() as u64);
        assert_eq!(view.is_tick(), spec.transactions.is_empty());
        let wires: Vec<Vec<u8>> = spec
            .transactions
            .iter()
            .map(TransactionSpec::encode)
            .collect();
        assert_eq!(view.transactions_bytes(), &wires.concat()[..]);
        let parsed: Vec<&[u8]> = view.transactions().map(|t| t.bytes()).collect();
        assert_eq!(parsed, wires.iter().map(Vec::as_slice).collect::<Vec<_>>());
    }
    let flat: Vec<Vec<u8>> = batch.transactions().map(|t| t.bytes().to_vec()).collect();
    let expected: Vec<Vec<u8>> = entries
        .iter()
        .flat_map(|e| e.transactions.iter().map(TransactionSpec::encode))
        .collect();
    assert_eq!(flat, expected);
    assert_eq!(
        batch.transactions().size_hint(),
        (transaction_count, Some(transaction_count))
    );
}

#[test]
fn batch_with_ticks_legacy_and_v0_parses() {
    let entries = sample_entries();
    let wire = encode_batch(&entries);
    let batch = parse_entry_batch(&wire).unwrap();
    assert_batch_matches(&batch, &entries);
    assert_eq!(batch.transaction_count(), 3);
}

#[test]
fn empty_batch_parses() {
    let wire = 0u64.to_le_bytes();
    let batch = parse_entry_batch(&wire).unwrap();
    assert_eq!(batch.entry_count(), 0);
    assert_eq!(batch.entries().next().map(|e| e.num_hashes), None);
    assert_eq!(
        batch.transactions().next().map(|t| t.signature_count()),
        None
    );
}

#[test]
fn trailing_bytes_are_rejected() {
    let mut wire = encode_batch(&sample_entries());
    wire.push(0);
    let error = parse_entry_batch(&wire).unwrap_err();
    assert_eq!(error, EntryError::TrailingBytes { count: 1 });
    assert_eq!(error.label(), "batch_trailing_bytes");
}

#[test]
fn short_batch_header_is_rejected() {
    let error = parse_entry_batch(&[1, 0, 0]).unwrap_err();
    assert!(matches!(
        error,
        EntryError::BatchHeaderTruncated(CursorError::Truncated { .. })
    ));
    assert_eq!(error.label(), "batch_header_truncated");
}

#[test]
fn huge_entry_count_fails_fast() {
    let mut wire = encode_batch(&[tick(1)]);
    wire[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    let error = parse_entry_batch(&wire).unwrap_err();
    assert_eq!(
        error,
        EntryError::EntryCountExceedsInput {
            declared: u64::MAX,
            max: 1
        }
    );
    assert_eq!(error.label(), "entry_count_exceeds_input");
}

#[test]
fn huge_transaction_count_fails_fast() {
    let entries = vec![EntrySpec {
        num_hashes: 1,
        hash: [0; 32],
        transactions: vec![legacy_spec()],
    }];
    let mut wire = encode_batch(&entries);
    // The transaction count sits after the 8-byte entry count, num_hashes and the hash.
    wire[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
    let error = parse_entry_batch(&wire).unwrap_err();
    let max = (legacy_spec().encode().len() / TRANSACTION_LEN_BYTES_MIN) as u64;
    assert_eq!(
        error,
        EntryError::TransactionCountExceedsInput {
            entry_index: 0,
            declared: u64::MAX,
            max
        }
    );
    assert_eq!(error.label(), "transaction_count_exceeds_input");
}

#[test]
fn truncated_entry_header_names_the_entry() {
    // The declared count passes the fast bound (the transaction's bytes make room for it), but
    // the third header is one byte short.
    let entries = vec![
        tick(1),
        EntrySpec {
            num_hashes: 2,
            hash: [2; 32],
            transactions: vec![legacy_spec()],
        },
    ];
    let mut wire = encode_batch(&entries);
    wire[..8].copy_from_slice(&3u64.to_le_bytes());
    wire.extend_from_slice(&[0; 47]);
    let error = parse_entry_batch(&wire).unwrap_err();
    assert!(
        matches!(
            error,
            EntryError::EntryHeaderTruncated { entry_index: 2, .. }
        ),
        "{error}"
    );
    assert_eq!(error.label(), "entry_header_truncated");
}

#[test]
fn bad_transaction_names_entry_and_index() {
    let mut entries = sample_entries();
    let mut bad = legacy_spec();
    bad.instructions[0].program_id_index = 0;
    entries[3].transactions.push(bad);
    let error = parse_entry_batch(&encode_batch(&entries)).unwrap_err();
    assert_eq!(
        error,
        EntryError::Transaction {
            entry_index: 3,
            transaction_index: 1,
            source: TransactionError::ProgramIdIsFeePayer {
                instruction_index: 0
            },
        }
    );
    assert_eq!(error.label(), "program_id_is_fee_payer");
}

#[test]
fn every_truncation_is_an_error() {
    let wire = encode_batch(&sample_entries());
    for len in 0..wire.len() {
        assert!(parse_entry_batch(&wire[..len]).is_err(), "length {len}");
    }
}

fn entry_spec() -> impl Strategy<Value = EntrySpec> {
    (any::<u64>(), any::<[u8; 32]>(), vec(valid_spec(), 0..4)).prop_map(
        |(num_hashes, hash, transactions)| EntrySpec {
            num_hashes,
            hash,
            transactions,
        },
    )
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..4096)) {
        if let Ok(batch) = parse_entry_batch(&bytes) {
            // Anything accepted re-walks to exactly the counts it reported.
            prop_assert_eq!(batch.entries().count() as u64, batch.entry_count());
            prop_assert_eq!(batch.transactions().count() as u64, batch.transaction_count());
        }
    }

    #[test]
    fn arbitrary_tail_after_a_valid_count_never_panics(
        entry_count in 0u64..4,
        tail in vec(any::<u8>(), 0..2048),
    ) {
        let mut bytes = entry_count.to_le_bytes().to_vec();
        bytes.extend_from_slice(&tail);
        if let Ok(batch) = parse_entry_batch(&bytes) {
            prop_assert_eq!(batch.entries().count() as u64, batch.entry_count());
        }
    }

    #[test]
    fn mutated_batches_never_panic(
        entries in vec(entry_spec(), 0..4),
        edits in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut wire = encode_batch(&entries);
        for (index, byte) in edits {
            let position = index.index(wire.len());
            wire[position] = byte;
        }
        if let Ok(batch) = parse_entry_batch(&wire) {
            prop_assert_eq!(batch.transactions().count() as u64, batch.transaction_count());
        }
    }

    #[test]
    fn valid_batches_round_trip(entries in vec(entry_spec(), 0..5)) {
        let wire = encode_batch(&entries);
        let batch = parse_entry_batch(&wire);
        prop_assert!(batch.is_ok(), "{:?}", batch.err());
        if let Ok(batch) = batch {
            assert_batch_matches(&batch, &entries);
        }
    }
}

// Block components (docs/decoder.md, format §9a): batches and markers back to back in one range.

/// A marker component: zero entry count, version 1, variant, length, data.
fn encode_marker(variant: u8, data: &[u8]) -> Vec<u8> {
    let mut out = 0u64.to_le_bytes().to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.push(variant);
    out.extend_from_slice(&(data.len() as u16).to_le_bytes());
    out.extend_from_slice(data);
    out
}

fn earlier_footer(time: u64, agent: &[u8]) -> Vec<u8> {
    let mut data = vec![1u8];
    data.extend_from_slice(&time.to_le_bytes());
    data.push(agent.len() as u8);
    data.extend_from_slice(agent);
    data
}

fn parent_data(slot: u64) -> Vec<u8> {
    let mut data = vec![1u8];
    data.extend_from_slice(&slot.to_le_bytes());
    data.extend_from_slice(&[5; 32]);
    data
}

#[test]
fn batch_then_footer_parses_both() {
    let entries = sample_entries();
    let mut wire = encode_batch(&entries);
    wire.extend_from_slice(&encode_marker(0, &earlier_footer(42, b"agent")));
    // The earlier format sees trailing bytes; the component parse reads the footer.
    assert!(matches!(
        parse_entry_batch(&wire),
        Err(EntryError::TrailingBytes { .. })
    ));
    let batch = parse_components(&wire).unwrap();
    assert_batch_matches(&batch, &entries);
    assert_eq!(batch.marker_counts().block_footer, 1);
    let markers: Vec<_> = batch.markers().collect();
    let [marker::BlockMarker::Footer(footer)] = markers[..] else {
        panic!("{markers:?}")
    };
    assert_eq!(
        (footer.producer_time_ns, footer.user_agent),
        (42, &b"agent"[..])
    );
}

#[test]
fn header_batch_update_parent_batch_reads_in_order() {
    let first = sample_entries();
    let second = vec![EntrySpec {
        num_hashes: 4,
        hash: [3; 32],
        transactions: vec![v0_spec(), legacy_spec()],
    }];
    let mut wire = encode_marker(1, &parent_data(10));
    wire.extend_from_slice(&encode_batch(&first));
    wire.extend_from_slice(&encode_marker(2, &parent_data(8)));
    wire.extend_from_slice(&encode_marker(200, &[1, 2, 3]));
    wire.extend_from_slice(&encode_batch(&second));
    let batch = parse_components(&wire).unwrap();
    let all: Vec<EntrySpec> = first.iter().chain(&second).cloned().collect();
    assert_batch_matches(&batch, &all);
    let counts = batch.marker_counts();
    assert_eq!(
        (
            counts.block_header,
            counts.update_parent,
            counts.unknown,
            counts.total()
        ),
        (1, 1, 1, 3)
    );
    let kinds: Vec<&str> = batch.markers().map(|m| m.kind().label()).collect();
    assert_eq!(kinds, ["block_header", "update_parent", "unknown"]);
    let Some(marker::BlockMarker::UpdateParent(update)) = batch.markers().nth(1) else {
        panic!()
    };
    assert_eq!(update.parent_slot, 8);
}

#[test]
fn marker_only_ranges_and_a_final_empty_count_parse() {
    let wire = encode_marker(0, &earlier_footer(1, b""));
    let batch = parse_components(&wire).unwrap();
    assert_eq!((batch.entry_count(), batch.transaction_count()), (0, 0));
    assert_eq!(batch.entries().count() + batch.transactions().count(), 0);
    let mut wire = encode_batch(&sample_entries());
    wire.extend_from_slice(&0u64.to_le_bytes());
    let batch = parse_components(&wire).unwrap();
    assert_eq!(
        (batch.transaction_count(), batch.marker_counts().total()),
        (3, 0)
    );
    assert!(parse_components(&0u64.to_le_bytes()).is_ok());
}

#[test]
fn bad_markers_fail_the_range_with_their_label() {
    let mut wire = encode_batch(&sample_entries());
    let mut bad = encode_marker(0, &earlier_footer(1, b"a"));
    bad[8] = 2;
    wire.extend_from_slice(&bad);
    let error = parse_components(&wire).unwrap_err();
    assert_eq!(error.label(), "marker_version_unsupported");
    let mut wire = encode_batch(&sample_entries());
    let marker = encode_marker(1, &parent_data(3));
    for cut in 9..marker.len() {
        let mut truncated = wire.clone();
        truncated.extend_from_slice(&marker[..cut]);
        let error = parse_components(&truncated).unwrap_err();
        assert_eq!(error.label(), "marker_truncated", "cut {cut}");
    }
    wire.extend_from_slice(&[1, 0, 0]);
    assert_eq!(
        parse_components(&wire).unwrap_err().label(),
        "batch_header_truncated"
    );
}

fn component() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(entry_spec(), 1..3).prop_map(|entries| encode_batch(&entries)),
        (any::<u64>(), vec(any::<u8>(), 0..40))
            .prop_map(|(time, agent)| encode_marker(0, &earlier_footer(time, &agent))),
        any::<u64>().prop_map(|slot| encode_marker(1, &parent_data(slot))),
        any::<u64>().prop_map(|slot| encode_marker(2, &parent_data(slot))),
        (4u8.., vec(any::<u8>(), 0..64)).prop_map(|(variant, data)| encode_marker(variant, &data)),
    ]
}

proptest! {
    #[test]
    fn component_sequences_parse_and_rewalk(components in vec(component(), 1..6)) {
        let wire = components.concat();
        let batch = parse_components(&wire);
        prop_assert!(batch.is_ok(), "{:?}", batch.err());
        if let Ok(batch) = batch {
            let markers = components.iter().filter(|c| c[..8] == [0; 8]).count() as u64;
            prop_assert_eq!(batch.marker_counts().total(), markers);
            prop_assert_eq!(batch.markers().count() as u64, markers);
            prop_assert_eq!(batch.entries().count() as u64, batch.entry_count());
            prop_assert_eq!(batch.transactions().count() as u64, batch.transaction_count());
        }
    }

    #[test]
    fn arbitrary_component_bytes_never_panic(bytes in vec(any::<u8>(), 0..4096)) {
        if let Ok(batch) = parse_components(&bytes) {
            prop_assert_eq!(batch.entries().count() as u64, batch.entry_count());
            prop_assert_eq!(batch.transactions().count() as u64, batch.transaction_count());
            prop_assert_eq!(batch.markers().count() as u64, batch.marker_counts().total());
        }
    }
}
