//! Incremental deshredding (`next_ready`) against the batch-wise path (`next_batch`): every
//! fixture slot fed shred by shred in emitted, shuffled and lossy orders gives, for every batch,
//! the same transactions in the same order, each exactly once, and a clean batch end; and at the
//! slot stage, any arrival order of data shreds (with duplicates and refused conflicting copies)
//! gives the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use capture::framing;
use common::{
    TestDataShred, b58, footer_data, marker_component, parent_data, read_fixture, shred_ranges,
};
use decoder::incremental::IncrementalConfig;
use decoder::{DecoderConfig, LeaderSchedule, ReadyItem, ShredDecoder, SlotStage, SlotStageConfig};
use proptest::prelude::*;
use serde_json::Value;

fn manifest() -> Value {
    serde_json::from_slice(&read_fixture("shreds/manifest.json")).unwrap()
}

fn config(incremental: bool) -> DecoderConfig {
    DecoderConfig {
        shred_version: Some(50093),
        incremental: IncrementalConfig {
            enabled: incremental,
            ..IncrementalConfig::default()
        },
        ..DecoderConfig::default()
    }
}

fn leader(slot: &Value) -> LeaderSchedule {
    LeaderSchedule::Fixed(
        LeaderSchedule::key_from_base58(slot["leader"].as_str().unwrap()).unwrap(),
    )
}

/// Per batch `(slot, start index)`: its transactions' signatures in order.
type PerBatch = BTreeMap<(u64, u32), Vec<String>>;

/// A transaction's receive facts: first_read, capture, and the batch's own capture.
#[derive(Debug, Default)]
struct Timing {
    earlier_than_batch: u64,
    transactions: u64,
}

fn batch_wise(
    records: &[(&[u8], u64)],
    leaders: LeaderSchedule,
) -> (PerBatch, BTreeMap<(u64, u32), u64>) {
    let mut decoder = ShredDecoder::new(config(false), leaders);
    let mut batches = PerBatch::new();
    let mut completed = BTreeMap::new();
    for (payload, rx_ns) in records {
        decoder.ingest(payload, *rx_ns);
        while let Some(batch) = decoder.next_batch() {
            let key = (batch.span.slot, batch.span.start_index);
            let signatures = batch
                .entries
                .transactions()
                .map(|t| b58(t.first_signature()))
                .collect();
            assert!(
                batches.insert(key, signatures).is_none(),
                "batch {key:?} twice"
            );
            completed.insert(key, batch.completed_rx_ns);
        }
    }
    (batches, completed)
}

fn incremental(
    records: &[(&[u8], u64)],
    leaders: LeaderSchedule,
    batch_completed: &BTreeMap<(u64, u32), u64>,
) -> (PerBatch, Timing) {
    let mut decoder = ShredDecoder::new(config(true), leaders);
    let mut batches = PerBatch::new();
    let mut ended = BTreeMap::new();
    let mut timing = Timing::default();
    for (payload, rx_ns) in records {
        decoder.ingest(payload, *rx_ns);
        let expect_items = decoder.has_ready();
        let mut items = 0;
        while let Some(item) = decoder.next_ready() {
            items += 1;
            match item {
                ReadyItem::Transaction(ready) => {
                    let key = (ready.slot, ready.batch_start_index);
                    assert!(!ended.contains_key(&key), "transaction after its batch end");
                    assert!(ready.first_rx_ns <= ready.completed_rx_ns);
                    assert!(
                        ready.completed_rx_ns <= *rx_ns,
                        "completed by a shred not yet here"
                    );
                    let list = batches.entry(key).or_default();
                    assert_eq!(ready.index_in_batch, list.len() as u64);
                    list.push(b58(ready.transaction.first_signature()));
                    timing.transactions += 1;
                    let batch_done = batch_completed.get(&key).copied().unwrap_or(u64::MAX);
                    assert!(ready.completed_rx_ns <= batch_done);
                    if ready.completed_rx_ns < batch_done {
                        timing.earlier_than_batch += 1;
                    }
                }
                ReadyItem::Marker(marker) => panic!("fixtures carry no markers: {marker:?}"),
                ReadyItem::BatchEnd(end) => {
                    let key = (end.span.slot, end.span.start_index);
                    assert_eq!(end.outcome, Ok(()), "batch {key:?}");
                    assert!(
                        ended.insert(key, end.transactions).is_none(),
                        "batch {key:?} ended twice"
                    );
                    batches.entry(key).or_default();
                }
            }
        }
        assert!(
            expect_items || items == 0,
            "has_ready said nothing was ready"
        );
    }
    for (key, list) in &batches {
        assert_eq!(
            ended.get(key),
            Some(&(list.len() as u64)),
            "batch {key:?} has its end"
        );
    }
    (batches, timing)
}

fn records(bytes: &[u8]) -> Vec<(&[u8], u64)> {
    framing::records(bytes)
        .enumerate()
        .map(|(number, record)| (record.unwrap().payload, 1_000 * (number as u64 + 1)))
        .collect()
}

/// A fixed permutation (xorshift), so a failure reproduces.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        items.swap(i, (seed % (i as u64 + 1)) as usize);
    }
}

#[test]
fn every_fixture_slot_in_emitted_shuffled_and_lossy_order_matches_the_batch_path() {
    let manifest = manifest();
    for slot in manifest["slots"].as_array().unwrap() {
        let number = slot["slot"].as_u64().unwrap();
        let full = read_fixture(&format!("shreds/slot-{number}.full.bin"));
        let lossy = read_fixture(&format!("shreds/slot-{number}.bin"));
        let emitted = records(&full);
        let mut shuffled = emitted.clone();
        shuffle(&mut shuffled, number);
        let shuffled: Vec<_> = shuffled
            .iter()
            .enumerate()
            .map(|(i, (p, _))| (*p, 1_000 * (i as u64 + 1)))
            .collect();
        for (name, order) in [
            ("emitted", emitted),
            ("shuffled", shuffled),
            ("lossy", records(&lossy)),
        ] {
            let (expected, completed) = batch_wise(&order, leader(slot));
            let total: usize = expected.values().map(Vec::len).sum();
            assert_eq!(
                total as u64,
                slot["num_transactions"].as_u64().unwrap(),
                "{number} {name}"
            );
            let (got, timing) = incremental(&order, leader(slot), &completed);
            assert_eq!(got, expected, "slot {number}, {name} order");
            assert_eq!(timing.transactions, total as u64);
            if name == "emitted" && total > 0 {
                // Batches spanning several shreds hand out their first transactions early.
                assert!(
                    timing.earlier_than_batch > 0,
                    "slot {number}: nothing early"
                );
            }
        }
    }
}

/// The slot-stage feed: every batch of a slot plus markers, cut into test shreds.
fn slot_shreds(chunk: usize) -> (Vec<TestDataShred>, Vec<Vec<String>>) {
    let manifest = manifest();
    let slot = &manifest["slots"][0];
    let number = slot["slot"].as_u64().unwrap();
    let full = read_fixture(&format!("shreds/slot-{number}.full.bin"));
    let order = records(&full);
    let mut decoder = ShredDecoder::new(config(false), leader(slot));
    let mut ranges = Vec::new();
    let mut expected = Vec::new();
    for (payload, rx_ns) in order {
        decoder.ingest(payload, rx_ns);
        while let Some(batch) = decoder.next_batch() {
            ranges.push(batch.bytes.to_vec());
            expected.push(
                batch
                    .entries
                    .transactions()
                    .map(|t| b58(t.first_signature()))
                    .collect(),
            );
        }
    }
    ranges[0] = [
        marker_component(1, &parent_data(number - 1, [1; 32])),
        ranges[0].clone(),
    ]
    .concat();
    let last = ranges.len() - 1;
    ranges[last].extend_from_slice(&marker_component(0, &footer_data(9, b"ua")));
    (shred_ranges(number, 0, &ranges, chunk), expected)
}

fn stage(incremental: bool) -> SlotStage {
    SlotStage::new(SlotStageConfig::from(&config(incremental)))
}

/// Feeds shreds in `order` (indexes into `shreds`) and returns per-batch signatures in index
/// order of the batch starts, plus the markers seen.
fn feed_incremental(
    stage: &mut SlotStage,
    shreds: &[TestDataShred],
    order: &[usize],
) -> (Vec<Vec<String>>, u64) {
    let mut batches: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut markers = 0;
    for (arrival, &which) in order.iter().enumerate() {
        let rx = arrival as u64 + 1;
        stage.insert(&shreds[which].ready(rx, rx));
        while let Some(item) = stage.next_ready() {
            match item {
                ReadyItem::Transaction(ready) => batches
                    .entry(ready.batch_start_index)
                    .or_default()
                    .push(b58(ready.transaction.first_signature())),
                ReadyItem::Marker(_) => markers += 1,
                ReadyItem::BatchEnd(end) => {
                    assert_eq!(end.outcome, Ok(()));
                    batches.entry(end.span.start_index).or_default();
                }
            }
        }
    }
    (batches.into_values().collect(), markers)
}

/// The batch-wise slot stage over the same arrival order: per batch start, its signatures, and
/// the markers it read.
fn feed_batch_wise(shreds: &[TestDataShred], order: &[usize]) -> (Vec<Vec<String>>, u64) {
    let mut stage = stage(false);
    let mut batches: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut markers = 0;
    for (arrival, &which) in order.iter().enumerate() {
        let rx = arrival as u64 + 1;
        stage.insert(&shreds[which].ready(rx, rx));
        while let Some(batch) = stage.next_batch() {
            let signatures = batch
                .entries
                .transactions()
                .map(|t| b58(t.first_signature()));
            batches
                .entry(batch.span.start_index)
                .or_default()
                .extend(signatures);
            markers += batch.entries.marker_counts().total();
        }
    }
    (batches.into_values().collect(), markers)
}

#[test]
fn a_conflicting_copy_of_a_used_shred_is_refused_and_counted() {
    let (shreds, expected) = slot_shreds(400);
    let mut stage = stage(true);
    let order: Vec<usize> = (0..shreds.len()).collect();
    let (got, markers) = feed_incremental(&mut stage, &shreds[..3], &order[..3]);
    let mut forged = shreds[1].clone();
    let last = forged.payload.len() - 1;
    forged.payload[last] ^= 0xFF;
    stage.insert(&forged.ready(99, 99));
    stage.insert(&shreds[1].ready(100, 100)); // an identical copy: ignored, not counted
    assert_eq!(stage.batch_counters().conflicting_shreds_refused, 1);
    assert!(stage.next_ready().is_none());
    let (rest, more_markers) = feed_incremental(&mut stage, &shreds, &order[3..]);
    let mut all: Vec<String> = got.into_iter().chain(rest).flatten().collect();
    all.dedup();
    assert_eq!(all, expected.concat());
    assert_eq!(markers + more_markers, 2);
}

#[test]
fn streams_that_find_no_room_are_served_whole() {
    let (shreds, expected) = slot_shreds(300);
    let mut config = SlotStageConfig::from(&config(true));
    config.incremental.max_open_streams = 1;
    let mut stage = SlotStage::new(config);
    let mut order: Vec<usize> = (0..shreds.len()).collect();
    shuffle(&mut order, 7);
    let (got, markers) = feed_incremental(&mut stage, &shreds, &order);
    assert_eq!(got, expected);
    assert_eq!(markers, 2);
    assert!(stage.batch_counters().streams_unavailable > 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_arrival_order_with_duplicates_gives_the_batch_path_transactions(
        chunk in 60usize..1100,
        seed in any::<u64>(),
        duplicates in proptest::collection::vec(any::<prop::sample::Index>(), 0..20),
    ) {
        let (shreds, expected) = slot_shreds(chunk);
        let mut order: Vec<usize> = (0..shreds.len()).collect();
        order.extend(duplicates.iter().map(|d| d.index(shreds.len())));
        shuffle(&mut order, seed | 1);
        let mut incremental_stage = stage(true);
        let (got, markers) = feed_incremental(&mut incremental_stage, &shreds, &order);
        let (batch_wise, batch_wise_markers) = feed_batch_wise(&shreds, &order);
        prop_assert_eq!(&got, &batch_wise);
        prop_assert_eq!(markers, batch_wise_markers);
        // Every transaction of the slot is there; an uncertain start that happens to fall on a
        // component boundary may add a batch (the same in both paths, see DESHRED-NOTES.md).
        let mut all: Vec<&String> = got.iter().flatten().collect();
        all.sort();
        all.dedup();
        prop_assert_eq!(all.len(), expected.concat().len());
        let counters = incremental_stage.batch_counters();
        prop_assert_eq!(counters.conflicting_shreds_refused, 0);
        prop_assert_eq!(counters.batches_invalid, 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Real FEC sets: any arrival order and any drop pattern that leaves every set recoverable
    /// (at least 32 of its 64 shreds) gives the batch path's transactions, batch by batch.
    #[test]
    fn any_recoverable_loss_and_order_gives_the_batch_path_transactions(
        seed in any::<u64>(),
        keep in proptest::collection::vec(32usize..=64, 6),
    ) {
        let manifest = manifest();
        let slot = &manifest["slots"][0];
        let full = read_fixture("shreds/slot-361200000.full.bin");
        let emitted = records(&full);
        // The full file holds each set's 64 shreds together (data then coding).
        let mut kept = Vec::new();
        for (set, shreds) in emitted.chunks(64).enumerate() {
            let mut shreds: Vec<_> = shreds.to_vec();
            shuffle(&mut shreds, seed ^ set as u64 | 1);
            kept.extend(shreds.into_iter().take(keep[set % keep.len()]));
        }
        shuffle(&mut kept, seed | 1);
        let order: Vec<_> = kept.iter().enumerate().map(|(i, (p, _))| (*p, 1_000 * (i as u64 + 1))).collect();
        let (expected, completed) = batch_wise(&order, leader(slot));
        let total: usize = expected.values().map(Vec::len).sum();
        prop_assert_eq!(total as u64, slot["num_transactions"].as_u64().unwrap());
        let (got, _) = incremental(&order, leader(slot), &completed);
        prop_assert_eq!(got, expected);
    }
}

/// The first batch of slot 361200000 (bytes, signatures), from the batch path.
fn first_batch() -> (Vec<u8>, Vec<String>) {
    let manifest = manifest();
    let slot = &manifest["slots"][0];
    let full = read_fixture("shreds/slot-361200000.full.bin");
    let mut decoder = ShredDecoder::new(config(false), leader(slot));
    for (payload, rx_ns) in records(&full) {
        decoder.ingest(payload, rx_ns);
        if let Some(batch) = decoder.next_batch() {
            let signatures = batch
                .entries
                .transactions()
                .map(|t| b58(t.first_signature()));
            return (batch.bytes.to_vec(), signatures.collect());
        }
    }
    panic!("no batch")
}

#[test]
fn a_batch_malformed_at_its_end_reports_the_transactions_already_out() {
    let (mut bytes, signatures) = first_batch();
    bytes.extend_from_slice(&[5, 0, 0]);
    let shreds = shred_ranges(7, 0, &[bytes], 900);
    let mut stage = stage(true);
    let mut out = Vec::new();
    let mut ends = Vec::new();
    for (arrival, shred) in shreds.iter().enumerate() {
        stage.insert(&shred.ready(arrival as u64, arrival as u64));
        while let Some(item) = stage.next_ready() {
            match item {
                ReadyItem::Transaction(ready) => out.push(b58(ready.transaction.first_signature())),
                ReadyItem::BatchEnd(end) => ends.push(end),
                ReadyItem::Marker(_) => panic!("no markers here"),
            }
        }
    }
    assert_eq!(out, signatures, "every complete transaction went out");
    let [end] = ends[..] else { panic!("{ends:?}") };
    assert_eq!(end.transactions, signatures.len() as u64);
    assert_eq!(end.outcome.unwrap_err().label(), "batch_header_truncated");
    let counters = stage.batch_counters();
    assert_eq!(
        (
            counters.batches_invalid,
            counters.batches_malformed_after_transactions,
            counters.batches_emitted
        ),
        (1, 1, 0)
    );
    // The batch path hands out nothing from it.
    let mut batch_stage = stage_for_batches();
    for shred in &shreds {
        batch_stage.insert(&shred.ready(0, 0));
        assert!(batch_stage.next_batch().is_none());
    }
    assert_eq!(batch_stage.batch_counters().batches_invalid, 1);
}

fn stage_for_batches() -> SlotStage {
    stage(false)
}

#[test]
fn an_evicted_set_closes_its_stream_and_is_counted() {
    let (bytes, signatures) = first_batch();
    let shreds = shred_ranges(7, 0, &[bytes], 200);
    assert!(shreds.len() > 33, "the batch spans two sets");
    let mut stage = stage(true);
    let mut out = 0;
    for (arrival, shred) in shreds[..20].iter().enumerate() {
        stage.insert(&shred.ready(arrival as u64, arrival as u64));
        while let Some(item) = stage.next_ready() {
            assert!(matches!(item, ReadyItem::Transaction(_)), "no end yet");
            out += 1;
        }
    }
    assert!(
        out > 0 && out < signatures.len(),
        "{out} of {}",
        signatures.len()
    );
    stage.forget_set(decoder::fec::SetKey {
        slot: 7,
        fec_set_index: 0,
    });
    assert_eq!(stage.batch_counters().streams_evicted, 1);
    for shred in &shreds[20..] {
        stage.insert(&shred.ready(50, 50));
    }
    assert!(stage.next_ready().is_none(), "nothing from a closed stream");
}
