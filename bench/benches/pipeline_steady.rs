//! One worker core's whole pipeline in the steady state (issue 5's "full pipeline shreds/s on one
//! worker core"): what a worker of `appliance run` does with each datagram its receive ring hands
//! it, on one thread, with warm pools.
//!
//! Per record of a [`SteadyFeed`] loop (six fixture slots renumbered and re-signed loop after
//! loop): `SetStage::ingest` (parse, Merkle proof, leader signature once per set, store, recover)
//! with its events applied to the `SlotStage` (one worker owns every slot, as with `--workers 1`),
//! then what the shred completed goes out through the worker's own drain,
//! `appliance::pipeline::output::drain` (with the worker's counters and latency histograms): every
//! completed entry batch (the batch-wise path), or, in the `…/incremental` cases (the appliance's
//! default), each transaction as soon as its bytes are complete; either way every transaction
//! through the DEX decoders into `SubscribeUpdate`s, the six-stamp `ServerTiming` and
//! `Feed::publish` into the real fan-out hub with one started subscriber whose empty filter map
//! matches everything (so each update is matched and encoded once, and queued); the entry and
//! deshred streams have no subscriber. The subscriber's queue is drained outside the timed
//! region: that is its session task's work, on the runtime's threads.
//!
//! Timed with the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`): throughput is shreds per
//! CPU-second of the worker thread, the per-core figure, robust to other load on the machine.
//!
//! Not included: the receive thread's `recvmmsg` and its copy into the ring (another core), the
//! fan-out to more subscribers (`benches/fanout.rs`).
//!
//! Feeds: `lossy` (the shuffled fixture files with ~38 % of shreds dropped: 84 of 85 sets
//! recovered; a stress case), `turbine` (every shred, each set's shreds in random order: a set
//! completes on its 32nd shred and its missing data shreds are recovered), `full` (emitted order:
//! data shreds first). Modes: `unauthenticated` (trusted feed), `merkle` (Merkle proofs and
//! chained roots verified, recovered shreds re-authenticated, no leader schedule), `signed` (also
//! one ed25519 leader signature per FEC set).

use std::time::Duration;

use appliance::metrics::WorkerCounters;
use appliance::pipeline::lookups::WorkerLookups;
use appliance::pipeline::output::{self, Feeds, Output};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use decoder::decoder::ShredOutcome;
use decoder::dex::ProgramRegistry;
use decoder::{LeaderSchedule, SetStage, SlotStage, SlotStageConfig};
use stream::deshred::DeshredFeed;
use stream::entries::EntriesFeed;
use stream::fanout::Subscriber;
use stream::filter::Filters;
use stream::service::Feed;
use stream::timing::unix_nanos;

use bench::steady::{FeedOrder, LoopsAhead, SteadyFeed, steady_decoder_config};

/// The appliance's allocator (appliance/src/main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Loops renumbered at a time before the timed ones.
const LOOPS_AHEAD: usize = 32;

/// What one loop produced.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Pass {
    rejected: u64,
    batches: u64,
    transactions: u64,
    published: u64,
    /// Footer notifications published into the feed besides the decoded updates.
    footers: u64,
}

struct Pipeline {
    sets: SetStage,
    slots: SlotStage,
    registry: ProgramRegistry,
    counters: WorkerCounters,
    lookups: WorkerLookups,
    feeds: Feeds,
    /// Incremental deshredding (the appliance's default): each transaction as its bytes arrive.
    incremental: bool,
}

impl Pipeline {
    /// The worker's `ingest` + drain for one loop of records.
    fn run(&mut self, records: &[Vec<u8>]) -> Pass {
        let mut pass = Pass::default();
        let before = self.tally();
        let now = unix_nanos();
        let publish_with = Output {
            incremental: self.incremental,
            registry: &self.registry,
            feeds: &self.feeds,
        };
        for (offset, record) in (0_u64..).zip(records) {
            let slots = &mut self.slots;
            let outcome = self
                .sets
                .ingest(record, now + offset, &mut |event| slots.apply(&event));
            if let ShredOutcome::Rejected { .. } = outcome {
                pass.rejected += 1;
            }
            // The worker's drain: no clock read for a datagram that completes nothing.
            output::drain(slots, &mut self.counters, &mut self.lookups, &publish_with);
        }
        let after = self.tally();
        pass.batches = after.batches - before.batches;
        pass.transactions = after.transactions - before.transactions;
        pass.published = after.published - before.published;
        pass.footers = after.footers - before.footers;
        pass
    }

    /// The running totals a [`Pass`] is the difference of: batches handed out by the slot stage
    /// (whole ones, or ends of well-formed ones), transactions and updates from the worker's
    /// counters.
    fn tally(&self) -> Pass {
        Pass {
            rejected: 0,
            batches: self.slots.batch_counters().batches_emitted,
            transactions: self.counters.transactions,
            published: self.counters.updates_published,
            footers: self.counters.footer_notifications,
        }
    }
}

/// CPU time of this thread: the bench reports shreds per CPU-second of the worker thread, so
/// other processes on the shared cores stretch wall time without changing the result (they
/// still share caches).
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Takes every queued delivery (the subscriber task's part, untimed).
fn drain(subscriber: &mut Subscriber) -> u64 {
    let mut taken = 0;
    while subscriber.try_next().is_some() {
        taken += 1;
    }
    taken
}

fn pipeline_steady(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline_steady");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    let mut batch_wise = None;
    for (order, mode, deshred) in cases() {
        if !selected(order, mode, deshred) {
            continue;
        }
        let mut feed = SteadyFeed::new(order);
        let leaders = match mode {
            "signed" => feed.leaders(),
            _ => LeaderSchedule::Unchecked,
        };
        let mut config = steady_decoder_config(mode != "unauthenticated");
        config.incremental.enabled = deshred == Deshred::Incremental;
        let mut pipeline = Pipeline {
            sets: SetStage::new(config, leaders),
            slots: SlotStage::new(SlotStageConfig::from(&config)),
            registry: ProgramRegistry::default(),
            counters: WorkerCounters::default(),
            lookups: WorkerLookups::standalone(),
            feeds: Feeds {
                feed: Feed::new(1 << 14),
                entries: EntriesFeed::new(1),
                deshred: DeshredFeed::new(1),
            },
            incremental: config.incremental.enabled,
        };
        let hub = pipeline.feeds.feed.hub();
        let mut subscriber = Subscriber::new(hub.clone());
        subscriber.replace(Filters::default());
        hub.rebuild();

        // Warm-up loops, checked: nothing rejected, every loop alike, every update delivered.
        let mut records = Vec::new();
        let mut first = None;
        for _ in 0..4 {
            feed.next_loop(&mut records);
            let pass = pipeline.run(&records);
            assert_eq!(pass.rejected, 0, "{order:?}/{mode}: nothing rejected");
            assert!(pass.published > 0, "{order:?}/{mode}: updates published");
            assert_eq!(*first.get_or_insert(pass), pass, "every loop decodes alike");
            assert_eq!(
                drain(&mut subscriber),
                pass.published + pass.footers,
                "{order:?}/{mode}: the subscriber got every update"
            );
        }
        println!("pipeline_steady {order:?}/{mode}/{deshred:?}: per loop {first:?}");
        // Both paths publish the same updates (the batch case of each order and mode runs first).
        match deshred {
            Deshred::Batch => batch_wise = first,
            Deshred::Incremental => {
                assert_eq!(first, batch_wise, "{order:?}/{mode}: as batch-wise")
            }
        }

        let name = format!("{}/{mode}", format!("{order:?}").to_lowercase());
        let name = match deshred {
            Deshred::Batch => name,
            Deshred::Incremental => format!("{name}/incremental"),
        };
        group.throughput(Throughput::Elements(feed.records_per_loop() as u64));
        let mut ahead = LoopsAhead::new(LOOPS_AHEAD);
        let mut rejected_in_timed_loops = 0;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let records = ahead.next(&mut feed);
                    let start = thread_cpu_time();
                    let pass = std::hint::black_box(pipeline.run(&records));
                    timed += thread_cpu_time().saturating_sub(start);
                    rejected_in_timed_loops += pass.rejected;
                    drain(&mut subscriber);
                }
                timed
            });
        });
        assert_eq!(
            rejected_in_timed_loops, 0,
            "{order:?}/{mode}: timed loops rejected records"
        );
    }
    group.finish();
}

/// How the slot stage hands transactions out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deshred {
    /// Whole entry batches (`next_batch`), the names without a suffix (comparable with earlier
    /// runs).
    Batch,
    /// Each transaction as its bytes arrive (`next_ready`), the names ending `/incremental`.
    Incremental,
}

/// Whether the case runs: all unless `STEADY_CASE` names a prefix of the case's name (its batch
/// case runs too, as the incremental one is checked against it). Each case's setup and warm-up
/// loops cost seconds, so A/B runs that alternate builds case by case set it.
fn selected(order: FeedOrder, mode: &str, deshred: Deshred) -> bool {
    let Ok(only) = std::env::var("STEADY_CASE") else {
        return true;
    };
    let name = format!("{}/{mode}", format!("{order:?}").to_lowercase());
    match deshred {
        Deshred::Batch => name.starts_with(&only) || only.starts_with(&name),
        Deshred::Incremental => format!("{name}/incremental").starts_with(&only),
    }
}

/// Every feed order × authentication mode × deshred path.
fn cases() -> Vec<(FeedOrder, &'static str, Deshred)> {
    let mut cases = Vec::new();
    for order in [FeedOrder::Lossy, FeedOrder::Turbine, FeedOrder::Full] {
        for mode in ["unauthenticated", "merkle", "signed"] {
            for deshred in [Deshred::Batch, Deshred::Incremental] {
                cases.push((order, mode, deshred));
            }
        }
    }
    cases
}

criterion_group!(benches, pipeline_steady);
criterion_main!(benches);
