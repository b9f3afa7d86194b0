//! The two stages split over shards decode exactly like `ShredDecoder`: every fixture slot's lossy
//! (shuffled, with drops) capture goes through 1..=4 `SetStage`s sharded by `(slot,
//! fec_set_index)`, their events are routed by slot to as many `SlotStage`s, and the batches,
//! entries and signatures equal the single-thread decoder's, which the manifest conformance tests
//! check against the reference.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

use capture::framing;
use common::{DecodedBatch, DecodedEntry, Run, b58, decode_capture, drain, note, read_fixture};
use decoder::shard::{set_shard, slot_shard};
use decoder::shred::peek_slot_and_fec_set;
use decoder::{
    DecoderConfig, LeaderSchedule, SetEvent, SetStage, ShredDecoder, SlotStage, SlotStageConfig,
};
use serde_json::Value;

fn manifest() -> Value {
    serde_json::from_slice(&read_fixture("shreds/manifest.json")).unwrap()
}

fn config(authenticate: bool) -> DecoderConfig {
    let mut config = DecoderConfig {
        shred_version: Some(50093),
        ..DecoderConfig::default()
    };
    config.fec.authenticate = authenticate;
    config
}

fn schedule(manifest: &Value) -> LeaderSchedule {
    let map = manifest["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|slot| {
            let key = LeaderSchedule::key_from_base58(slot["leader"].as_str().unwrap()).unwrap();
            (slot["slot"].as_u64().unwrap(), key)
        })
        .collect();
    LeaderSchedule::PerSlot(map)
}

fn drain_stage(stage: &mut SlotStage, batches: &mut Vec<DecodedBatch>) {
    while let Some(batch) = stage.next_batch() {
        assert!(batch.first_rx_ns <= batch.completed_rx_ns);
        batches.push(DecodedBatch {
            slot: batch.span.slot,
            start_index: batch.span.start_index,
            end_index: batch.span.end_index,
            start_certain: batch.span.start_certain,
            bytes: batch.bytes.to_vec(),
            entries: batch
                .entries
                .entries()
                .map(|entry| DecodedEntry {
                    num_hashes: entry.num_hashes,
                    hash: b58(entry.hash),
                    signatures: entry
                        .transactions()
                        .map(|tx| b58(tx.first_signature()))
                        .collect(),
                })
                .collect(),
            transaction_count: batch.entries.transaction_count(),
        });
    }
}

/// Everything that must match between the sharded stages and the one decoder.
type Key = (u64, u32, u32, Vec<u8>, Vec<DecodedEntry>);

fn comparable(batches: &[DecodedBatch]) -> Vec<Key> {
    let mut keys: Vec<Key> = batches
        .iter()
        .map(|b| {
            (
                b.slot,
                b.start_index,
                b.end_index,
                b.bytes.clone(),
                b.entries.clone(),
            )
        })
        .collect();
    keys.sort_by_key(|a| (a.0, a.1));
    keys
}

/// Runs the datagrams through `shards` set stages and as many slot stages, as the appliance's
/// workers do (each worker's set-stage floor applies to its own slot stage).
fn decode_sharded(
    datagrams: &[(&[u8], u64)],
    config: DecoderConfig,
    leaders: &LeaderSchedule,
    shards: usize,
) -> (Run, Vec<u64>) {
    let mut sets: Vec<SetStage> = (0..shards)
        .map(|_| SetStage::new(config, leaders.clone()))
        .collect();
    let mut slots: Vec<SlotStage> = (0..shards)
        .map(|_| SlotStage::new(SlotStageConfig::from(&config)))
        .collect();
    let mut run = Run::default();
    let mut per_shard = vec![0u64; shards];
    for &(datagram, rx_ns) in datagrams {
        let shard = peek_slot_and_fec_set(datagram).map_or(0, |(slot, fec_set_index)| {
            set_shard(slot, fec_set_index, shards)
        });
        per_shard[shard] += 1;
        let outcome = sets[shard].ingest(datagram, rx_ns, &mut |event| {
            let owner = match event {
                SetEvent::DataShredReady(ready) => slot_shard(ready.slot, shards),
                SetEvent::SetEvicted(key) => slot_shard(key.slot, shards),
                SetEvent::SlotFloor(_)
                | SetEvent::HighestSlot(_)
                | SetEvent::Reanchored { .. }
                | SetEvent::Duplicate(_) => shard,
            };
            slots[owner].apply(&event);
        });
        note(&mut run, outcome);
        for stage in &mut slots {
            drain_stage(stage, &mut run.batches);
        }
    }
    (run, per_shard)
}

fn records(bytes: &[u8]) -> Vec<(&[u8], u64)> {
    framing::records(bytes)
        .map(|record| {
            let record = record.unwrap();
            (record.payload, record.timestamp_ns.unwrap_or(0))
        })
        .collect()
}

#[test]
fn sharded_stages_decode_every_lossy_slot_like_the_decoder_conformance() {
    let manifest = manifest();
    for authenticate in [true, false] {
        let leaders = match authenticate {
            true => schedule(&manifest),
            false => LeaderSchedule::Unchecked,
        };
        for slot in manifest["slots"].as_array().unwrap() {
            let file = slot["files"]["lossy"].as_str().unwrap();
            let bytes = read_fixture(&format!("shreds/{file}"));
            let reference = decode_capture(&bytes, config(authenticate), leaders.clone());
            assert!(!reference.batches.is_empty(), "{file}");
            let datagrams = records(&bytes);
            for shards in 1..=4 {
                let (run, per_shard) =
                    decode_sharded(&datagrams, config(authenticate), &leaders, shards);
                assert!(
                    run.rejected.is_empty(),
                    "{file}/{shards}: {:?}",
                    run.rejected
                );
                assert_eq!(
                    comparable(&run.batches),
                    comparable(&reference.batches),
                    "{file}: {shards} shards, authenticate {authenticate}"
                );
                assert_eq!(run.sets_completed, reference.sets_completed, "{file}");
                if shards > 1 {
                    assert!(
                        per_shard.iter().filter(|&&count| count > 0).count() > 1,
                        "{file}: the sets of a slot spread over shards: {per_shard:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn sharded_stages_decode_all_slots_in_one_stream_like_the_decoder_conformance() {
    let manifest = manifest();
    let leaders = schedule(&manifest);
    let captures: Vec<Vec<u8>> = manifest["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|slot| {
            read_fixture(&format!(
                "shreds/{}",
                slot["files"]["lossy"].as_str().unwrap()
            ))
        })
        .collect();
    let datagrams: Vec<(&[u8], u64)> = captures.iter().flat_map(|bytes| records(bytes)).collect();
    let mut decoder = ShredDecoder::new(config(true), leaders.clone());
    let mut reference = Run::default();
    for &(datagram, rx_ns) in &datagrams {
        note(&mut reference, decoder.ingest(datagram, rx_ns));
        drain(&mut decoder, &mut reference);
    }
    let expected_batches: usize = manifest["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|slot| slot["batches"].as_array().unwrap().len())
        .sum();
    assert_eq!(reference.batches.len(), expected_batches);
    for shards in 1..=4 {
        let (run, _) = decode_sharded(&datagrams, config(true), &leaders, shards);
        assert_eq!(
            comparable(&run.batches),
            comparable(&reference.batches),
            "{shards} shards"
        );
        assert_eq!(run.stored, reference.stored, "{shards} shards");
        assert_eq!(run.redundant, reference.redundant, "{shards} shards");
    }
}

/// A tampered data shred would change the decoded bytes; the comparison above is not vacuous.
#[test]
fn a_lost_set_changes_the_sharded_output() {
    let manifest = manifest();
    let slot = &manifest["slots"][0];
    let bytes = read_fixture(&format!(
        "shreds/{}",
        slot["files"]["lossy"].as_str().unwrap()
    ));
    let datagrams = records(&bytes);
    let leaders = schedule(&manifest);
    let (full, _) = decode_sharded(&datagrams, config(true), &leaders, 2);
    // Dropping every shred of FEC set 0 loses the batches that need it.
    let without_first_set: Vec<_> = datagrams
        .iter()
        .copied()
        .filter(|(datagram, _)| peek_slot_and_fec_set(datagram).is_none_or(|(_, set)| set != 0))
        .collect();
    let (lossy, _) = decode_sharded(&without_first_set, config(true), &leaders, 2);
    assert_ne!(comparable(&full.batches), comparable(&lossy.batches));
}
