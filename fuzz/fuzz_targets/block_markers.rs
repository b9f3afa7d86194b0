//! `parse_components` on ranges of block components (docs/decoder.md, format §9a) built from the input:
//! markers of every kind with fuzzed variants, lengths and data, mixed with raw bytes, plus the
//! raw input itself. An accepted range re-walks to exactly the entry, transaction and marker
//! counts it reported, every marker lies inside the input, and a range the marker-less parser
//! accepts reads the same through the component parser.
#![no_main]

use decoder::entry::marker::BlockMarker;
use decoder::entry::{parse_components, parse_entry_batch};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    check(input);
    check(&build_range(input));
});

fn check(bytes: &[u8]) {
    let Ok(range) = parse_components(bytes) else {
        return;
    };
    assert_eq!(range.entries().count() as u64, range.entry_count());
    assert_eq!(
        range.transactions().count() as u64,
        range.transaction_count()
    );
    let counts = range.marker_counts();
    let mut kinds = decoder::entry::marker::MarkerCounts::default();
    for marker in range.markers() {
        kinds.add(marker.kind());
        let inside = match marker {
            BlockMarker::Footer(footer) => footer.user_agent,
            BlockMarker::Header(parent) | BlockMarker::UpdateParent(parent) => {
                &parent.parent_block_id[..]
            }
            BlockMarker::GenesisCertificate { data }
            | BlockMarker::Malformed { data, .. }
            | BlockMarker::Unknown { data, .. } => data,
        };
        decoder_fuzz::span_within(bytes, inside);
    }
    assert_eq!(kinds, counts, "the re-walk finds every marker counted");
    if let Ok(batch) = parse_entry_batch(bytes) {
        assert_eq!(batch.entry_count(), range.entry_count());
        assert_eq!(batch.transaction_count(), range.transaction_count());
        assert_eq!(counts.total(), 0);
    }
}

/// Reads the input as a list of components: op byte, then its parameters and data.
fn build_range(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = input;
    while let Some((&op, tail)) = rest.split_first() {
        let len = usize::from(tail.first().copied().unwrap_or(0) % 64);
        let data = tail
            .get(1..1 + len)
            .unwrap_or(tail.get(1..).unwrap_or_default());
        match op % 4 {
            0 => marker(&mut out, op >> 2, data),
            1 => {
                let mut footer = vec![1u8];
                footer.extend_from_slice(&[op; 40]);
                footer.push(data.len() as u8);
                footer.extend_from_slice(data);
                footer.extend_from_slice(&[0, 0, 0][..usize::from(op >> 6)]);
                marker(&mut out, 0, &footer);
            }
            2 => out.extend_from_slice(data),
            _ => {
                let mut parent = vec![1u8];
                parent.extend_from_slice(&[op; 40]);
                marker(
                    &mut out,
                    1 + (op >> 7),
                    &parent[..(41 - (op >> 2 & 1) as usize)],
                );
            }
        }
        rest = tail.get(1 + data.len()..).unwrap_or_default();
    }
    out
}

fn marker(out: &mut Vec<u8>, variant: u8, data: &[u8]) {
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.push(variant);
    out.extend_from_slice(&(data.len() as u16).to_le_bytes());
    out.extend_from_slice(data);
}
