//! The whole decode path in the steady state: one long-lived `ShredDecoder` with the production
//! pools (1,024-set FEC pool, default slot store) fed loop after loop of the six fixture slots,
//! renumbered to fresh slots by [`bench::steady::SteadyFeed`] (re-signed by the feed's key, the
//! schedule's only leader). Every timed iteration is one loop: `ingest` of each record, draining
//! `next_batch` after each and reading every transaction's first signature
//! ([`bench::decode_all`]). Loops are renumbered 48 at a time, outside the timed region.
//!
//! This is what a worker of `appliance run` does for days with the same warm memory, unlike
//! `decode_path`, which builds a fresh decoder per iteration and so also times the first touch of
//! whatever the decoder reaches for the first time. `lossy` feeds the shuffled files with their
//! drops (84 of 85 sets completed by recovery), `full` the complete files in emitted order. The
//! modes are those of `decode_path`: `unauthenticated` (trusted feed: no proofs, signatures or
//! links), `unchecked` (Merkle proofs and chained links, no leader schedule), `checked` (also one
//! leader signature per set).

use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use decoder::{LeaderSchedule, ShredDecoder};

use bench::steady::{FeedOrder, LoopsAhead, SteadyFeed, steady_decoder_config};

/// Loops renumbered at a time before the timed ones (~4 MB each).
const LOOPS_AHEAD: usize = 48;

fn decode_steady(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode_steady");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    for order in [FeedOrder::Lossy, FeedOrder::Full] {
        for mode in ["unauthenticated", "unchecked", "checked"] {
            let mut feed = SteadyFeed::new(order);
            let leaders = match mode {
                "checked" => feed.leaders(),
                _ => LeaderSchedule::Unchecked,
            };
            let mut decoder =
                ShredDecoder::new(steady_decoder_config(mode != "unauthenticated"), leaders);
            let mut records = Vec::new();
            // Warm-up loops, checked: nothing rejected, batches and transactions every loop.
            let mut first = None;
            for _ in 0..4 {
                feed.next_loop(&mut records);
                let summary = bench::decode_all(&mut decoder, &records);
                assert_eq!(summary.rejected, 0, "{order:?}/{mode}: nothing rejected");
                assert!(
                    summary.transactions > 0,
                    "{order:?}/{mode}: transactions out"
                );
                let totals = (summary.batches, summary.transactions);
                assert_eq!(
                    *first.get_or_insert(totals),
                    totals,
                    "every loop decodes alike"
                );
            }
            println!(
                "decode_steady {order:?}/{mode}: per loop {:?} batches/transactions",
                first
            );
            let name = format!(
                "{}/{mode}",
                if order == FeedOrder::Lossy {
                    "lossy"
                } else {
                    "full"
                }
            );
            group.throughput(Throughput::Elements(feed.records_per_loop() as u64));
            let mut ahead = LoopsAhead::new(LOOPS_AHEAD);
            let mut rejected_in_timed_loops = 0;
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        let records = ahead.next(&mut feed);
                        let start = Instant::now();
                        let summary =
                            std::hint::black_box(bench::decode_all(&mut decoder, &records));
                        timed += start.elapsed();
                        rejected_in_timed_loops += summary.rejected;
                    }
                    timed
                });
            });
            // A feed out of order (slots going backwards) would be rejected as stale: fast, and
            // wrong.
            assert_eq!(
                rejected_in_timed_loops, 0,
                "{order:?}/{mode}: timed loops rejected records"
            );
        }
    }
    group.finish();
}

criterion_group!(benches, decode_steady);
criterion_main!(benches);
