//! Block markers (docs/decoder.md, format §9a) between real entry batches: every fixture slot's batches,
//! re-cut into data-complete ranges with a block header before the first batch, an update-parent
//! marker and an unknown variant after a middle one and a footer after the last, fed to a slot
//! stage as data shreds. Every transaction must come out as in the batch-wise reference, and every
//! marker must be read with its values and counted by kind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{
    DecodedBatch, b58, decode_capture, footer_data, marker_component, parent_data, read_fixture,
    shred_ranges,
};
use decoder::entry::marker::BlockMarker;
use decoder::{DecoderConfig, LeaderSchedule, SlotStage, SlotStageConfig};
use serde_json::Value;

fn manifest() -> Value {
    serde_json::from_slice(&read_fixture("shreds/manifest.json")).unwrap()
}

/// The batch-wise reference: every batch of a complete slot capture, in index order.
fn reference_batches(slot: &Value) -> Vec<DecodedBatch> {
    let key = LeaderSchedule::key_from_base58(slot["leader"].as_str().unwrap()).unwrap();
    let file = format!("shreds/slot-{}.full.bin", slot["slot"]);
    let mut config = DecoderConfig {
        shred_version: Some(50093),
        ..DecoderConfig::default()
    };
    config.fec.authenticate = true;
    let run = decode_capture(&read_fixture(&file), config, LeaderSchedule::Fixed(key));
    let mut batches = run.batches;
    batches.sort_by_key(|batch| batch.start_index);
    batches
}

fn signatures(batches: &[DecodedBatch]) -> Vec<String> {
    batches
        .iter()
        .flat_map(|batch| batch.entries.iter().flat_map(|e| e.signatures.clone()))
        .collect()
}

/// What the stage produced: signatures in emission order and the markers' debug forms.
#[derive(Default)]
struct Output {
    signatures: Vec<String>,
    footers: Vec<(u64, Vec<u8>)>,
    headers: Vec<u64>,
    update_parents: Vec<u64>,
    unknown: Vec<u8>,
}

fn drain(stage: &mut SlotStage, output: &mut Output) {
    while let Some(batch) = stage.next_batch() {
        for transaction in batch.entries.transactions() {
            output.signatures.push(b58(transaction.first_signature()));
        }
        for marker in batch.entries.markers() {
            match marker {
                BlockMarker::Footer(footer) => output
                    .footers
                    .push((footer.producer_time_ns, footer.user_agent.to_vec())),
                BlockMarker::Header(header) => output.headers.push(header.parent_slot),
                BlockMarker::UpdateParent(update) => output.update_parents.push(update.parent_slot),
                BlockMarker::Unknown { variant, .. } => output.unknown.push(variant),
                other => panic!("unexpected marker {other:?}"),
            }
        }
    }
}

/// The reference batches re-cut with markers; see the module documentation.
fn ranges_with_markers(slot: u64, parent: u64, batches: &[DecodedBatch]) -> Vec<Vec<u8>> {
    let mut ranges: Vec<Vec<u8>> = batches.iter().map(|batch| batch.bytes.clone()).collect();
    let mut first = marker_component(1, &parent_data(parent, [7; 32]));
    first.extend_from_slice(&ranges[0]);
    ranges[0] = first;
    let middle = ranges.len() / 2;
    ranges[middle].extend_from_slice(&marker_component(2, &parent_data(parent - 1, [8; 32])));
    ranges[middle].extend_from_slice(&marker_component(77, b"future"));
    let last = ranges.len() - 1;
    ranges[last].extend_from_slice(&marker_component(
        0,
        &footer_data(slot * 1000, b"agave/4.0"),
    ));
    ranges
}

#[test]
fn markers_between_fixture_batches_lose_no_transaction() {
    let manifest = manifest();
    for slot in manifest["slots"].as_array().unwrap() {
        let number = slot["slot"].as_u64().unwrap();
        let parent = slot["parent_slot"].as_u64().unwrap();
        let reference = reference_batches(slot);
        let expected = signatures(&reference);
        assert_eq!(
            expected.len() as u64,
            slot["num_transactions"].as_u64().unwrap()
        );
        let ranges = ranges_with_markers(number, parent, &reference);
        for chunk in [1000, 97] {
            let shreds = shred_ranges(number, 0, &ranges, chunk);
            let mut stage = SlotStage::new(SlotStageConfig::default());
            let mut output = Output::default();
            for (arrival, shred) in shreds.iter().enumerate() {
                stage.insert(&shred.ready(arrival as u64, arrival as u64));
                drain(&mut stage, &mut output);
            }
            assert_eq!(output.signatures, expected, "slot {number}, chunk {chunk}");
            assert_eq!(output.footers, [(number * 1000, b"agave/4.0".to_vec())]);
            assert_eq!(output.headers, [parent]);
            assert_eq!(output.update_parents, [parent - 1]);
            assert_eq!(output.unknown, [77]);
            let counters = stage.batch_counters();
            assert_eq!(counters.batches_invalid, 0);
            assert_eq!(counters.batches_emitted, reference.len() as u64);
            let markers = counters.markers;
            assert_eq!(
                (
                    markers.block_footer,
                    markers.block_header,
                    markers.update_parent,
                    markers.unknown
                ),
                (1, 1, 1, 1)
            );
        }
    }
}

#[test]
fn a_footer_in_its_own_range_and_reverse_arrival_keep_every_batch() {
    let manifest = manifest();
    let slot = &manifest["slots"][0];
    let number = slot["slot"].as_u64().unwrap();
    let reference = reference_batches(slot);
    let mut ranges: Vec<Vec<u8>> = reference.iter().map(|batch| batch.bytes.clone()).collect();
    ranges.push(marker_component(0, &footer_data(123, b"")));
    let shreds = shred_ranges(number, 0, &ranges, 500);
    let mut stage = SlotStage::new(SlotStageConfig::default());
    let mut output = Output::default();
    // Last shred first: each batch completes when its first shred (its start) lands.
    for (arrival, shred) in shreds.iter().rev().enumerate() {
        stage.insert(&shred.ready(arrival as u64, arrival as u64));
        drain(&mut stage, &mut output);
    }
    let mut expected = signatures(&reference);
    let mut got = output.signatures.clone();
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    assert_eq!(output.footers, [(123, vec![])]);
    assert_eq!(stage.batch_counters().batches_emitted, ranges.len() as u64);
}
