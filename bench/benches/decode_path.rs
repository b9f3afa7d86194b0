//! The whole decode path over the six lossy fixture files (3,418 shuffled records with drops):
//! `ShredDecoder::ingest` of every record, after each one draining `next_batch` and reading the
//! first signature of every transaction. Goal: ≥ 800 k shreds/s on one core. Recovery runs as soon
//! as a set has 32 of its 64 shreds, so 84 of the 85 sets are completed by Reed-Solomon (871 data
//! shreds rebuilt) and the 698 records arriving after that are redundant.
//!
//! `full_files/*` feeds the complete files instead (5,440 records in emitted order, no recovery;
//! the coding shreds of a set arrive after it completed and are redundant): the path's ceiling
//! without loss, for comparison.
//!
//! `unchecked` runs without a leader schedule (Merkle proofs still bind shreds to their set's
//! root); `checked` verifies one leader signature per set with the per-slot schedule of the
//! manifest; `unauthenticated` is the trusted-feed mode (`FecConfig::authenticate = false`: no
//! Merkle proofs, signatures or links, recovered shreds not re-authenticated), the same work as
//! the reference implementation's decode path that the goal is measured against. A fresh decoder per iteration is built in the untimed setup ([`bench::decoder_config`],
//! 128-set FEC pool) and dropped after the timed region; [`bench::PrefaultAlloc`] keeps the pools'
//! first-touch page faults in the setup.

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use decoder::{LeaderSchedule, ShredDecoder};

#[global_allocator]
static ALLOC: bench::PrefaultAlloc = bench::PrefaultAlloc;

/// The per-slot leader schedule and the expected batch and transaction totals, from the manifest.
fn manifest() -> (LeaderSchedule, u64, u64) {
    let manifest: serde_json::Value =
        serde_json::from_slice(&bench::read_fixture("manifest.json")).expect("manifest.json");
    let slots = manifest["slots"].as_array().expect("manifest slots");
    let schedule = bench::per_slot_schedule(slots.iter().map(|slot| {
        (
            slot["slot"].as_u64().expect("slot number"),
            slot["leader"].as_str().expect("slot leader"),
        )
    }));
    let batches = slots
        .iter()
        .map(|slot| slot["batches"].as_array().expect("batches").len())
        .sum::<usize>();
    let transactions = slots
        .iter()
        .map(|slot| slot["num_transactions"].as_u64().expect("count"))
        .sum();
    (schedule, batches as u64, transactions)
}

fn decode_path(c: &mut Criterion) {
    let (checked, expected_batches, expected_transactions) = manifest();
    let lossy = bench::lossy_records();
    let full = bench::full_records();
    let mut group = c.benchmark_group("decode_path");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    let authenticated = bench::decoder_config();
    let mut unauthenticated = bench::decoder_config();
    unauthenticated.fec.authenticate = false;
    for (name, records, leaders, config) in [
        (
            "lossy_files/unauthenticated",
            &lossy,
            LeaderSchedule::Unchecked,
            unauthenticated,
        ),
        (
            "lossy_files/unchecked",
            &lossy,
            LeaderSchedule::Unchecked,
            authenticated,
        ),
        (
            "lossy_files/checked",
            &lossy,
            checked.clone(),
            authenticated,
        ),
        (
            "full_files/unauthenticated",
            &full,
            LeaderSchedule::Unchecked,
            unauthenticated,
        ),
        (
            "full_files/unchecked",
            &full,
            LeaderSchedule::Unchecked,
            authenticated,
        ),
        ("full_files/checked", &full, checked, authenticated),
    ] {
        // One untimed pass: nothing rejected, every batch and transaction of the fixtures comes out.
        let mut decoder = ShredDecoder::new(config, leaders.clone());
        let summary = bench::decode_all(&mut decoder, records);
        let counters = decoder.fec_counters();
        println!("decode_path {name}: {summary:?}, {counters:?}");
        assert_eq!(summary.rejected, 0, "{name}: no record rejected");
        assert_eq!(summary.batches, expected_batches, "{name}: every batch");
        assert_eq!(
            summary.transactions, expected_transactions,
            "{name}: every transaction"
        );
        drop(decoder);

        group.throughput(Throughput::Elements(records.len() as u64));
        group.bench_function(name, |b| {
            b.iter_batched(
                || ShredDecoder::new(config, leaders.clone()),
                |mut decoder| {
                    std::hint::black_box(bench::decode_all(&mut decoder, records));
                    decoder // dropped outside the timed region
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, decode_path);
criterion_main!(benches);
