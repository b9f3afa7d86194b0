//! Verified intake: `parse_shred` + `FecResolver::insert` (Merkle proof → root, one ed25519
//! `verify_strict` per FEC set against the per-slot leader schedule, dedup, copy into the pool)
//! over the complete fixture files. Goal: ≥ 400 k shreds/s per core.
//!
//! The resolver dedups, so each iteration gets a fresh one, built in the untimed setup
//! (`iter_batched`, [`bench::fec_config`]: 128 sets) and dropped after the timed region.
//! [`bench::PrefaultAlloc`] keeps the pool's first-touch page faults in the setup, as in a
//! long-running worker whose pool is resident.
//!
//! Inputs:
//! - `full_files`: all 5,440 shreds in emitted order. Each set completes on its 32nd data shred, so
//!   its 32 coding shreds then take the cheap `SetAlreadyComplete` exit (no hashing): half the
//!   records are fully verified and stored, half are redundant — the mix a receiver that gets every
//!   shred sees.
//! - `data_shreds`: only the 2,720 data shreds: every record is verified and stored.
//! - `unchecked` variants: the same without a leader schedule, to show the ed25519 share.
//! - `components/*`: the Merkle part alone (leaf hash + proof walk per shred) and one leader
//!   signature check (per set).

use std::hint::black_box;

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use decoder::LeaderSchedule;
use decoder::fec::{FecError, FecResolver};
use decoder::leader::LeaderCheck;
use decoder::merkle::{leaf_hash, root_from_proof};
use decoder::shred::{ParseOptions, ShredKind, parse_shred};

#[global_allocator]
static ALLOC: bench::PrefaultAlloc = bench::PrefaultAlloc;

fn schedule() -> LeaderSchedule {
    let manifest: serde_json::Value =
        serde_json::from_slice(&bench::read_fixture("manifest.json")).expect("manifest.json");
    let slots = manifest["slots"].as_array().expect("manifest slots");
    bench::per_slot_schedule(slots.iter().map(|slot| {
        (
            slot["slot"].as_u64().expect("slot number"),
            slot["leader"].as_str().expect("slot leader"),
        )
    }))
}

/// The timed work: parse and insert every record into `resolver`.
fn intake(mut resolver: FecResolver, records: &[Vec<u8>], leaders: &LeaderSchedule) -> FecResolver {
    let options = ParseOptions::default();
    for (rx_ns, record) in (1_u64..).zip(records) {
        if let Ok(shred) = parse_shred(black_box(record), options) {
            let _ = black_box(resolver.insert(&shred, leaders, rx_ns));
        }
    }
    resolver
}

/// One untimed pass: every record is stored or (coding after completion) redundant, every set
/// completes.
fn check(records: &[Vec<u8>], leaders: &LeaderSchedule, sets: u64) {
    let mut resolver = FecResolver::new(bench::fec_config());
    for record in records {
        let shred = parse_shred(record, ParseOptions::default()).expect("fixture shred parses");
        match resolver.insert(&shred, leaders, 0) {
            Ok(_) | Err(FecError::SetAlreadyComplete) => {}
            Err(error) => panic!("fixture shred rejected: {error}"),
        }
    }
    assert_eq!(
        resolver.counters().sets_completed,
        sets,
        "every set completes"
    );
}

fn verified_intake(c: &mut Criterion) {
    let full = bench::full_records();
    let data: Vec<Vec<u8>> = full
        .iter()
        .filter(|record| {
            parse_shred(record, ParseOptions::default())
                .expect("parses")
                .kind()
                == ShredKind::Data
        })
        .cloned()
        .collect();
    let sets = (data.len() / 32) as u64;
    let checked = schedule();
    let unchecked = LeaderSchedule::Unchecked;
    check(&full, &checked, sets);
    check(&data, &checked, sets);

    let mut group = c.benchmark_group("verified_intake");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    for (name, records, leaders) in [
        ("full_files/checked", &full, &checked),
        ("data_shreds/checked", &data, &checked),
        ("full_files/unchecked", &full, &unchecked),
        ("data_shreds/unchecked", &data, &unchecked),
    ] {
        group.throughput(Throughput::Elements(records.len() as u64));
        group.bench_function(name, |b| {
            b.iter_batched(
                || FecResolver::new(bench::fec_config()),
                |resolver| intake(resolver, records, leaders),
                BatchSize::LargeInput,
            );
        });
    }

    // Components, for the breakdown.
    let shreds: Vec<_> = full
        .iter()
        .map(|record| parse_shred(record, ParseOptions::default()).expect("parses"))
        .collect();
    group.sampling_mode(SamplingMode::Auto).sample_size(50);
    group.throughput(Throughput::Elements(shreds.len() as u64));
    group.bench_function("components/merkle_root_per_shred", |b| {
        b.iter(|| {
            for shred in &shreds {
                let leaf = leaf_hash(black_box(shred.merkle_leaf_input()));
                black_box(root_from_proof(
                    leaf,
                    shred.erasure_index(),
                    shred.merkle_proof(),
                ))
                .expect("proof");
            }
        });
    });
    let first = &shreds[0];
    let leaf = leaf_hash(first.merkle_leaf_input());
    let root = root_from_proof(leaf, first.erasure_index(), first.merkle_proof()).expect("proof");
    assert_eq!(
        checked.check(first.slot(), &root, first.signature()),
        LeaderCheck::Valid
    );
    group.throughput(Throughput::Elements(1));
    group.bench_function("components/leader_signature_per_set", |b| {
        b.iter(|| black_box(checked.check(first.slot(), black_box(&root), first.signature())));
    });
    group.finish();
}

criterion_group!(benches, verified_intake);
criterion_main!(benches);
