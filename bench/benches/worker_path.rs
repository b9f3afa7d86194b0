//! One worker core's whole pipeline over the six lossy fixture files (3,418 shuffled records with
//! drops): `SetStage::ingest` of every record with its events applied to a `SlotStage` (what a
//! worker of `appliance run` does for the slots it owns), after each record draining
//! `next_batch`, decoding every transaction with the DEX decoders into `SubscribeUpdate`s
//! (`stream::encode::transaction_updates`) and encoding each update with protobuf into a reused
//! buffer: datagram to wire bytes, on one thread, without the receive copy and the fan-out.
//!
//! `checked` authenticates (Merkle proofs, one leader signature per set with the manifest's
//! per-slot schedule, recovered shreds re-authenticated); `unauthenticated` is the trusted-feed
//! mode. A fresh pair of stages per iteration is built in the untimed setup.

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use decoder::decoder::ShredOutcome;
use decoder::dex::ProgramRegistry;
use decoder::{DecoderConfig, LeaderSchedule, SetStage, SlotStage, SlotStageConfig};
use prost::Message;
use stream::encode::{DecodeStats, Placement, transaction_updates};

#[global_allocator]
static ALLOC: bench::PrefaultAlloc = bench::PrefaultAlloc;

/// What one pass produced, checked before timing.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Pass {
    rejected: u64,
    batches: u64,
    transactions: u64,
    updates: u64,
    encoded_bytes: u64,
}

fn stages(config: DecoderConfig, leaders: &LeaderSchedule) -> (SetStage, SlotStage, Vec<u8>) {
    (
        SetStage::new(config, leaders.clone()),
        SlotStage::new(SlotStageConfig::from(&config)),
        Vec::with_capacity(64 << 10),
    )
}

fn run(
    sets: &mut SetStage,
    slots: &mut SlotStage,
    buffer: &mut Vec<u8>,
    registry: &ProgramRegistry,
    records: &[Vec<u8>],
) -> Pass {
    let mut pass = Pass::default();
    let mut stats = DecodeStats::default();
    for (rx_ns, record) in (1_u64..).zip(records) {
        let outcome = sets.ingest(record, rx_ns, &mut |event| slots.apply(&event));
        if let ShredOutcome::Rejected { .. } = outcome {
            pass.rejected += 1;
        }
        while let Some(batch) = slots.next_batch() {
            pass.batches += 1;
            for (tx_index, transaction) in batch.entries.transactions().enumerate() {
                pass.transactions += 1;
                let placement = Placement {
                    slot: batch.span.slot,
                    tx_index: tx_index as u32,
                };
                for update in transaction_updates(&transaction, registry, placement, &mut stats) {
                    buffer.clear();
                    if update.encode(buffer).is_ok() {
                        pass.updates += 1;
                        pass.encoded_bytes += buffer.len() as u64;
                    }
                }
            }
        }
    }
    pass
}

fn worker_path(c: &mut Criterion) {
    let manifest: serde_json::Value =
        serde_json::from_slice(&bench::read_fixture("manifest.json")).expect("manifest.json");
    let slots_json = manifest["slots"].as_array().expect("manifest slots");
    let checked = bench::per_slot_schedule(slots_json.iter().map(|slot| {
        (
            slot["slot"].as_u64().expect("slot number"),
            slot["leader"].as_str().expect("slot leader"),
        )
    }));
    let expected_transactions: u64 = slots_json
        .iter()
        .map(|slot| slot["num_transactions"].as_u64().expect("count"))
        .sum();
    let records = bench::lossy_records();
    let registry = ProgramRegistry::default();
    let authenticated = bench::decoder_config();
    let mut unauthenticated = bench::decoder_config();
    unauthenticated.fec.authenticate = false;
    let mut group = c.benchmark_group("worker_path");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    for (name, leaders, config) in [
        (
            "lossy_files/unauthenticated",
            LeaderSchedule::Unchecked,
            unauthenticated,
        ),
        ("lossy_files/checked", checked, authenticated),
    ] {
        let (mut sets, mut slots, mut buffer) = stages(config, &leaders);
        let pass = run(&mut sets, &mut slots, &mut buffer, &registry, &records);
        println!("worker_path {name}: {pass:?}");
        assert_eq!(pass.rejected, 0, "{name}: no record rejected");
        assert_eq!(pass.transactions, expected_transactions, "{name}");
        assert!(pass.updates > 0, "{name}: DEX updates decoded");

        group.throughput(Throughput::Elements(records.len() as u64));
        group.bench_function(name, |b| {
            b.iter_batched(
                || stages(config, &leaders),
                |(mut sets, mut slots, mut buffer)| {
                    std::hint::black_box(run(
                        &mut sets,
                        &mut slots,
                        &mut buffer,
                        &registry,
                        &records,
                    ));
                    (sets, slots) // dropped outside the timed region
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, worker_path);
criterion_main!(benches);
