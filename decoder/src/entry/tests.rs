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
