//! The incremental parser against the whole-range parser, over every way of growing the window.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::entry::parse_components;
use crate::transaction::test_wire::{legacy_spec, minimal_spec, v0_spec, valid_spec};

fn batch(transactions: &[Vec<u8>]) -> Vec<u8> {
    let mut out = 2u64.to_le_bytes().to_vec();
    // A tick, then one entry with every transaction.
    out.extend_from_slice(&7u64.to_le_bytes());
    out.extend_from_slice(&[1; 32]);
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&3u64.to_le_bytes());
    out.extend_from_slice(&[2; 32]);
    out.extend_from_slice(&(transactions.len() as u64).to_le_bytes());
    for transaction in transactions {
        out.extend_from_slice(transaction);
    }
    out
}

fn footer() -> Vec<u8> {
    let mut out = 0u64.to_le_bytes().to_vec();
    out.extend_from_slice(&[1, 0, 0, 12, 0, 1]);
    out.extend_from_slice(&9u64.to_le_bytes());
    out.extend_from_slice(&[2, b'o', b'k']);
    out
}

fn sample_range() -> Vec<u8> {
    let first = batch(&[legacy_spec().encode(), v0_spec().encode()]);
    let second = batch(&[minimal_spec().encode()]);
    [first, footer(), second].concat()
}

/// Drives the parser as a caller would: `available` grows along `cuts`; returns the transactions
/// (as bytes), the markers seen and the verdict.
fn drive(range: &[u8], cuts: &[usize]) -> (Vec<Vec<u8>>, usize, Result<(), IncrementalError>) {
    let mut parser = RangeParser::new();
    let mut position = 0;
    let mut transactions = Vec::new();
    let mut markers = 0;
    let mut limits: Vec<usize> = cuts
        .iter()
        .map(|cut| cut.min(&range.len()).to_owned())
        .collect();
    limits.sort_unstable();
    limits.push(range.len());
    for available in limits {
        loop {
            let at_end = available == range.len();
            match parser.step(&range[position..available], at_end) {
                Step::Transaction {
                    transaction, len, ..
                } => {
                    transactions.push(transaction.bytes().to_vec());
                    position += len;
                }
                Step::Marker { len, .. } => {
                    markers += 1;
                    position += len;
                }
                Step::Skip { len } => position += len,
                Step::NeedMore => break,
                Step::End => return (transactions, markers, Ok(())),
                Step::Malformed(error) => return (transactions, markers, Err(error)),
            }
        }
    }
    unreachable!("the last window reaches the end")
}

fn whole(range: &[u8]) -> Vec<Vec<u8>> {
    let parsed = parse_components(range).unwrap();
    parsed.transactions().map(|t| t.bytes().to_vec()).collect()
}

#[test]
fn every_single_cut_gives_the_whole_parse() {
    let range = sample_range();
    let expected = whole(&range);
    assert_eq!(expected.len(), 3);
    for cut in 0..=range.len() {
        let (transactions, markers, verdict) = drive(&range, &[cut]);
        assert_eq!(transactions, expected, "cut {cut}");
        assert_eq!((markers, verdict), (1, Ok(())), "cut {cut}");
    }
    // Byte by byte.
    let every: Vec<usize> = (0..range.len()).collect();
    assert_eq!(drive(&range, &every).0, expected);
}

#[test]
fn a_bad_transaction_fails_once_its_bytes_are_there_after_the_good_ones() {
    let mut range = batch(&[legacy_spec().encode(), legacy_spec().encode()]);
    let second = 8 + 48 + 48 + legacy_spec().encode().len();
    range[second] = 0; // zero signatures: fails sanitize (rule 7), not truncation
    for cut in [second, second + 1, range.len() - 1] {
        let (transactions, _, verdict) = drive(&range, &[cut]);
        assert_eq!(transactions.len(), 1, "cut {cut}");
        let error = verdict.unwrap_err();
        assert_ne!(error.label(), "truncated", "cut {cut}: {error}");
    }
}

#[test]
fn ranges_that_end_early_or_carry_trailing_bytes_are_malformed_at_their_end() {
    let range = sample_range();
    let (transactions, _, verdict) = drive(&range[..range.len() - 1], &[]);
    assert_eq!(transactions.len(), 2);
    assert_eq!(verdict.unwrap_err().label(), "truncated");
    let mut trailing = range.clone();
    trailing.extend_from_slice(&[5, 0, 0]);
    let (transactions, _, verdict) = drive(&trailing, &[10, 400]);
    assert_eq!(transactions.len(), 3);
    assert_eq!(verdict.unwrap_err().label(), "batch_header_truncated");
}

#[test]
fn a_forged_count_waits_until_the_item_limit() {
    // An entry declaring one transaction whose signature count needs far more bytes than come.
    let mut range = 1u64.to_le_bytes().to_vec();
    range.extend_from_slice(&[0; 40]);
    range.extend_from_slice(&1u64.to_le_bytes());
    range.extend_from_slice(&[0xFF, 0xFF, 0x03]);
    range.extend_from_slice(&vec![0; MAX_PENDING_ITEM_BYTES]);
    let mut parser = RangeParser::new();
    assert!(matches!(parser.step(&range, false), Step::Skip { len: 8 }));
    assert!(matches!(
        parser.step(&range[8..], false),
        Step::Skip { len: 48 }
    ));
    assert!(matches!(
        parser.step(&range[56..1000], false),
        Step::NeedMore
    ));
    let Step::Malformed(error) = parser.step(&range[56..], false) else {
        panic!()
    };
    assert_eq!(error.label(), "item_too_large");
}

proptest! {
    #[test]
    fn any_cuts_of_valid_ranges_give_the_whole_parse(
        batches in vec(vec(valid_spec(), 1..4), 1..4),
        cuts in vec(any::<prop::sample::Index>(), 0..12),
        with_footer in any::<bool>(),
    ) {
        let mut range = Vec::new();
        for transactions in &batches {
            let wires: Vec<Vec<u8>> = transactions.iter().map(|t| t.encode()).collect();
            range.extend_from_slice(&batch(&wires));
            if with_footer {
                range.extend_from_slice(&footer());
            }
        }
        let cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(range.len() + 1)).collect();
        let (transactions, _, verdict) = drive(&range, &cuts);
        prop_assert_eq!(verdict, Ok(()));
        prop_assert_eq!(transactions, whole(&range));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_agree_with_the_whole_parse(
        bytes in vec(any::<u8>(), 0..2048),
        cuts in vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
        let (transactions, _, verdict) = drive(&bytes, &cuts);
        if let Ok(parsed) = parse_components(&bytes) {
            prop_assert_eq!(verdict, Ok(()));
            let expected: Vec<Vec<u8>> = parsed.transactions().map(|t| t.bytes().to_vec()).collect();
            prop_assert_eq!(transactions, expected);
        } else {
            prop_assert!(verdict.is_err());
        }
    }
}
