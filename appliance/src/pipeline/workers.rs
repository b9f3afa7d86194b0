//! The per-core worker pool: each worker runs a `SetStage` for the FEC sets the receive threads
//! shard to it (hash of `(slot, fec_set_index)`), a `SlotStage` for the slots it owns (hash of
//! the slot), and publishes what they complete through the output room (`pipeline::output`:
//! DEX decode, `ServerTiming` stamps, the feeds; docs/workers.md).
//!
//! ```text
//!  rx thread s ── ring[s][w] ──▶ worker w: SetStage ─DataShredReady(slot owned by v)─▶ fwd[w][v]
//!                                           │ (slot owned by w)                          │
//!                                           ▼                                            ▼
//!                                 SlotStage ─▶ batches ─▶ DEX decode ─▶ Feed   worker v's SlotStage
//! ```
//! Every ring is a bounded lock-free single-producer ring of preallocated slots (`crate::handoff::ring`):
//! a full ring drops and counts, nothing waits. Slot notifications go out once per new highest
//! slot across workers, before the slot's shreds leave the set stage that raised it. An idle
//! worker yields a few times, then parks (`crate::handoff::wake`): its producers (receive threads, other
//! workers forwarding) unpark it after publishing into its rings, at most twice per batch and
//! never while it is busy; `park_timeout` is only a safety net.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use decoder::dex::ProgramRegistry;
use decoder::{DecoderConfig, SetEvent, SetStage, ShredOutcome, SlotStage, SlotStageConfig};

use tracing::info;

use super::forward::{Forwarded, route};
use super::output::{self, Feeds, Output};
use crate::handoff::ring::{Consumer, Producer, RingStats, ring};
use crate::handoff::wake::{ParkOutcome, Sleeper, Waker, wake_pair, wake_touched, worker_bit};
use crate::handoff::{Datagram, SourceRings};
use crate::metrics::{Metrics, RingGauge, WorkerCounters};

/// How often a worker flushes its counters for `/metrics`.
const METRICS_FLUSH: Duration = Duration::from_millis(100);
/// Empty polls (each followed by a yield) before an idle worker parks.
const IDLE_SPINS: u32 = 64;
/// Items taken from one ring before looking at the next (fairness between rings).
const BURST: usize = 256;

/// Sizing of the pool.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub workers: usize,
    /// Datagram slots of each (receive thread, worker) ring.
    pub ring_slots: usize,
    /// Data shred slots of each (worker, worker) forwarding ring.
    pub forward_slots: usize,
    /// Longest park of an idle worker (a safety net: producers unpark it).
    pub park_timeout: Duration,
    /// Core of each worker, by worker index; missing entries are not pinned.
    pub cores: Vec<usize>,
    /// `SCHED_FIFO` priority of the workers (0 = ordinary scheduling).
    pub realtime_priority: u8,
}

impl PoolOptions {
    /// The pool of the configuration on a machine with `cores` cores and `receive_threads`
    /// receive threads.
    pub fn from_config(
        config: &crate::config::Config,
        cores: usize,
        receive_threads: usize,
    ) -> Self {
        Self {
            workers: config
                .workers
                .count
                .unwrap_or_else(|| default_workers(cores, receive_threads)),
            ring_slots: config.sources.ring_slots,
            forward_slots: config.workers.forward_slots,
            park_timeout: Duration::from_micros(config.workers.park_timeout_us),
            cores: config.workers.cores.clone(),
            realtime_priority: config.workers.realtime_priority,
        }
    }
}

/// The default worker count: 1 on a machine with at most 2 cores, else the cores left after
/// the receive threads (at least 1).
pub fn default_workers(cores: usize, receive_threads: usize) -> usize {
    if cores <= 2 {
        1
    } else {
        cores.saturating_sub(receive_threads).clamp(1, 64)
    }
}

/// One worker's ends of the rings.
pub struct WorkerRings {
    /// From each receive thread.
    receive: Vec<Consumer<Datagram>>,
    /// From each other worker.
    forward_in: Vec<Consumer<Forwarded>>,
    /// To each worker, by index (`None` for itself).
    forward_out: Vec<Option<Producer<Forwarded>>>,
    /// Each worker's waker, by index (this worker's own is never used).
    forward_wakers: Vec<Waker>,
    /// Parks this worker when its rings are empty.
    sleeper: Sleeper,
}

/// The occupancy and drops of one worker's inbound rings, for `/metrics`.
pub struct WorkerRingStats {
    pub receive: Vec<RingStats<Datagram>>,
    pub forward: Vec<RingStats<Forwarded>>,
}

impl RingGauge for WorkerRingStats {
    fn receive(&self) -> (usize, usize, u64) {
        sum(&self.receive)
    }

    fn forward(&self) -> (usize, usize, u64) {
        sum(&self.forward)
    }
}

fn sum<T>(rings: &[RingStats<T>]) -> (usize, usize, u64) {
    rings
        .iter()
        .fold((0, 0, 0), |(occupancy, capacity, drops), r| {
            (
                occupancy + r.occupancy(),
                capacity + r.capacity(),
                drops + r.full_drops(),
            )
        })
}

/// Every ring of the pool: the receive threads' ends (by source), the workers' ends and the
/// per-worker statistics (by worker).
pub fn build_rings(
    sources: usize,
    options: &PoolOptions,
) -> (Vec<SourceRings>, Vec<WorkerRings>, Vec<WorkerRingStats>) {
    let workers = options.workers;
    let (sleepers, wakers): (Vec<Sleeper>, Vec<Waker>) = (0..workers).map(|_| wake_pair()).unzip();
    let mut source_rings: Vec<SourceRings> = (0..sources)
        .map(|_| SourceRings {
            rings: Vec::new(),
            wakers: wakers.clone(),
        })
        .collect();
    let mut worker_rings: Vec<WorkerRings> = sleepers
        .into_iter()
        .map(|sleeper| WorkerRings {
            receive: Vec::new(),
            forward_in: Vec::new(),
            forward_out: (0..workers).map(|_| None).collect(),
            forward_wakers: wakers.clone(),
            sleeper,
        })
        .collect();
    let mut stats: Vec<WorkerRingStats> = (0..workers)
        .map(|_| WorkerRingStats {
            receive: Vec::new(),
            forward: Vec::new(),
        })
        .collect();
    for rings in &mut source_rings {
        for (worker, worker_rings) in worker_rings.iter_mut().enumerate() {
            let (producer, consumer) = ring::<Datagram>(options.ring_slots);
            stats[worker].receive.push(producer.stats());
            rings.rings.push(producer);
            worker_rings.receive.push(consumer);
        }
    }
    for from in 0..workers {
        for to in (0..workers).filter(|&to| to != from) {
            let (producer, consumer) = ring::<Forwarded>(options.forward_slots);
            stats[to].forward.push(producer.stats());
            worker_rings[from].forward_out[to] = Some(producer);
            worker_rings[to].forward_in.push(consumer);
        }
    }
    (source_rings, worker_rings, stats)
}

/// What every worker shares.
pub struct Shared {
    /// Where the workers publish (`pipeline::output::feeds`).
    pub feeds: Feeds,
    pub registry: Arc<ProgramRegistry>,
    pub metrics: Arc<Metrics>,
    pub shutdown: Arc<AtomicBool>,
    pub decoder_config: DecoderConfig,
    /// The schedule every worker verifies against, swapped by the schedule fetcher.
    pub leaders: Arc<crate::cluster::LeaderSlot>,
    /// Highest slot notified. A lock rather than an atomic `fetch_max` so that a notification is
    /// in the feed before any other worker can see the slot as notified and publish its
    /// transactions; taken once per new highest slot per worker.
    pub highest_notified: Mutex<Option<u64>>,
    /// The lookup-table cache every worker resolves through (`pipeline::lookups`).
    pub lookups: Arc<crate::cluster::lookup_tables::LookupTables>,
}

/// Starts the workers; `rings` from [`build_rings`].
pub fn spawn(
    rings: Vec<WorkerRings>,
    options: &PoolOptions,
    shared: &Arc<Shared>,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    let workers = rings.len();
    let mut handles = Vec::with_capacity(workers);
    for (index, rings) in rings.into_iter().enumerate() {
        let shared = Arc::clone(shared);
        let core = options
            .cores
            .get(index)
            .map(|&id| core_affinity::CoreId { id });
        let park_timeout = options.park_timeout;
        let realtime_priority = options.realtime_priority;
        let handle = std::thread::Builder::new()
            .name(format!("worker-{index}"))
            .spawn(move || {
                if let Some(core) = core {
                    let pinned = core_affinity::set_for_current(core);
                    info!(worker = index, core = core.id, pinned, "worker pinned");
                }
                crate::handoff::sched::make_current_thread_realtime(realtime_priority, "worker");
                let mut worker = Worker::new(
                    index,
                    workers,
                    &shared,
                    rings.forward_out,
                    rings.forward_wakers,
                );
                let inbound = Inbound {
                    receive: rings.receive,
                    forward_in: rings.forward_in,
                    sleeper: rings.sleeper,
                };
                worker_loop(&mut worker, inbound, &shared, park_timeout);
            })?;
        handles.push(handle);
    }
    Ok(handles)
}

/// A worker's inbound rings and the sleeper its producers wake.
struct Inbound {
    receive: Vec<Consumer<Datagram>>,
    forward_in: Vec<Consumer<Forwarded>>,
    sleeper: Sleeper,
}

impl Inbound {
    /// Parks until a producer publishes into one of the rings (or `timeout` passes).
    fn park(&mut self, timeout: Duration) -> ParkOutcome {
        let Self {
            receive,
            forward_in,
            sleeper,
        } = self;
        sleeper.park(timeout, || {
            receive.iter_mut().any(Consumer::has_items)
                || forward_in.iter_mut().any(Consumer::has_items)
        })
    }
}

fn worker_loop(
    worker: &mut Worker<'_>,
    mut inbound: Inbound,
    shared: &Shared,
    park_timeout: Duration,
) {
    let mut last_flush = Instant::now();
    let mut idle_polls = 0u32;
    while !shared.shutdown.load(Ordering::Acquire) {
        if last_flush.elapsed() >= METRICS_FLUSH {
            worker.counters.unparks = inbound.sleeper.unparks();
            worker.flush(&shared.metrics);
            last_flush = Instant::now();
        }
        worker.refresh_leaders();
        let mut work = 0;
        for ring in &mut inbound.receive {
            while work < BURST {
                if ring
                    .pop_with(|datagram| worker.ingest(datagram.bytes(), datagram.rx_ns))
                    .is_none()
                {
                    break;
                }
                work += 1;
            }
            // What this ring's datagrams forwarded is published: wake its owners once.
            worker.wake_forwarded();
        }
        for ring in &mut inbound.forward_in {
            for _ in 0..BURST {
                if ring
                    .pop_with(|forwarded| worker.apply_forwarded(forwarded))
                    .is_none()
                {
                    break;
                }
                work += 1;
            }
        }
        if work > 0 {
            idle_polls = 0;
        } else if idle_polls < IDLE_SPINS {
            idle_polls += 1;
            std::thread::yield_now();
        } else {
            match inbound.park(park_timeout) {
                ParkOutcome::Skipped => {}
                ParkOutcome::Woken => worker.counters.parks += 1,
                ParkOutcome::TimedOut => {
                    worker.counters.parks += 1;
                    worker.counters.park_timeouts += 1;
                }
            }
        }
    }
    worker.counters.unparks = inbound.sleeper.unparks();
    worker.flush(&shared.metrics);
    info!(
        worker = worker.index,
        datagrams = worker.counters.datagrams,
        published = worker.counters.updates_published,
        "worker stopped"
    );
}

/// One worker's state.
pub struct Worker<'a> {
    index: usize,
    workers: usize,
    sets: SetStage,
    slots: SlotStage,
    forward_out: Vec<Option<Producer<Forwarded>>>,
    forward_wakers: Vec<Waker>,
    /// Bit `w`: something was forwarded to worker `w` since the last `wake_forwarded`.
    forwarded_to: u64,
    counters: WorkerCounters,
    shared: &'a Shared,
    /// The [`LeaderSlot`](crate::cluster::LeaderSlot) generation `sets` verifies against.
    leaders_generation: u64,
    lookups: super::lookups::WorkerLookups,
    /// What the drain after each shred publishes with (`pipeline::output::drain`).
    output: Output<'a>,
}

impl<'a> Worker<'a> {
    pub fn new(
        index: usize,
        workers: usize,
        shared: &'a Shared,
        forward_out: Vec<Option<Producer<Forwarded>>>,
        forward_wakers: Vec<Waker>,
    ) -> Self {
        let config = shared.decoder_config;
        // The generation before the schedule: a schedule installed in between (the fetcher runs
        // from start-up, and building the set stage takes a while) is then taken by the first
        // `refresh_leaders`; read the other way round, the worker would keep the old schedule
        // under the new generation for good.
        let leaders_generation = shared.leaders.generation();
        Self {
            index,
            workers,
            sets: SetStage::new(config, (*shared.leaders.load()).clone()),
            leaders_generation,
            slots: SlotStage::new(SlotStageConfig::from(&config)),
            forward_out,
            forward_wakers,
            forwarded_to: 0,
            output: Output {
                incremental: config.incremental.enabled,
                registry: &shared.registry,
                feeds: &shared.feeds,
            },
            counters: WorkerCounters::default(),
            shared,
            lookups: super::lookups::WorkerLookups::new(Arc::clone(&shared.lookups)),
        }
    }

    /// Takes the shared leader schedule when it changed since the last call: one atomic load per
    /// batch of datagrams, a copy (a few `Arc` increments) only after a new schedule.
    pub fn refresh_leaders(&mut self) {
        let generation = self.shared.leaders.generation();
        if generation != self.leaders_generation {
            self.leaders_generation = generation;
            self.sets.set_leaders((*self.shared.leaders.load()).clone());
        }
    }

    /// Processes one datagram of this worker's shard, publishing what it completed.
    pub fn ingest(&mut self, datagram: &[u8], rx_ns: u64) {
        self.counters.datagrams += 1;
        self.counters.bytes += datagram.len() as u64;
        let (own, workers, shared) = (self.index, self.workers, self.shared);
        let (slots, forward_out) = (&mut self.slots, &mut self.forward_out);
        let forwarded_to = &mut self.forwarded_to;
        let notifications = &mut self.counters.slot_notifications;
        let outcome = self.sets.ingest(datagram, rx_ns, &mut |event| {
            match event {
                SetEvent::HighestSlot(slot) => *notifications += notify_slot(shared, slot),
                SetEvent::Reanchored { previous, slot } => {
                    reanchor_notifications(shared, previous, slot)
                }
                SetEvent::Duplicate(duplicate) => shared.feeds.duplicate(&duplicate),
                _ => {}
            }
            if let Some(owner) = route(&event, own, workers, slots, forward_out) {
                *forwarded_to |= worker_bit(owner);
            }
        });
        match outcome {
            ShredOutcome::Stored { .. } => self.counters.stored += 1,
            ShredOutcome::Redundant { .. } => self.counters.redundant += 1,
            ShredOutcome::Rejected { reason, .. } => {
                self.counters.rejected[reason.index()] += 1;
            }
        }
        self.publish_ready();
    }

    /// Wakes the workers this one forwarded to since the last call (one check each, an unpark
    /// only for a parked one).
    fn wake_forwarded(&mut self) {
        let touched = std::mem::take(&mut self.forwarded_to);
        wake_touched(touched, &self.forward_wakers);
    }

    /// Applies a data shred (or eviction) another worker forwarded for a slot this one owns.
    fn apply_forwarded(&mut self, forwarded: &Forwarded) {
        self.counters.forwarded_in += 1;
        self.slots.apply(&forwarded.event());
        self.publish_ready();
    }

    fn flush(&mut self, metrics: &Metrics) {
        let counters = &mut self.counters;
        counters.fec = self.sets.fec_counters();
        counters.batches = self.slots.batch_counters();
        counters.sets_in_flight = self.sets.sets_in_flight();
        counters.pending_batches = self.slots.pending_batches();
        metrics.flush_worker(self.index, counters);
    }

    /// Publishes what the last shred applied made ready: each transaction whose bytes are
    /// complete (incremental deshredding) or each complete entry batch (`pipeline::output`).
    fn publish_ready(&mut self) {
        output::drain(
            &mut self.slots,
            &mut self.counters,
            &mut self.lookups,
            &self.output,
        );
    }
}

/// Publishes a slot notification when `slot` is new across workers; 1 when it did.
fn notify_slot(shared: &Shared, slot: u64) -> u64 {
    let mut highest = shared
        .highest_notified
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if highest.is_some_and(|notified| slot <= notified) {
        return 0;
    }
    *highest = Some(slot);
    shared.feeds.slot_notified(slot);
    1
}

/// The window re-anchored below the highest slot notified (a poisoned anchor recovered, or the
/// feed restarted lower): notifications start again from the new anchor.
fn reanchor_notifications(shared: &Shared, previous: Option<u64>, slot: u64) {
    let mut highest = shared
        .highest_notified
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if highest.is_some_and(|notified| notified > slot) {
        *highest = Some(slot);
    }
    tracing::warn!(?previous, slot, "slot window re-anchored");
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::AtomicU64;
    use std::sync::mpsc;

    use super::*;
    use crate::receive::RxBatch;
    use crate::receive::thread::dispatch_and_wake;

    /// A shred header naming `slot` and `fec_set_index` at their wire offsets, tagged with `n`.
    fn shred(n: u64) -> Vec<u8> {
        let mut payload = vec![0u8; 96];
        payload[65..73].copy_from_slice(&7u64.to_le_bytes());
        payload[79..83].copy_from_slice(&0u32.to_le_bytes());
        payload[88..96].copy_from_slice(&n.to_le_bytes());
        payload
    }

    /// Single datagrams with pauses of varying length between them, through the receive
    /// thread's dispatch and the worker's park: every datagram must be taken although the
    /// worker's safety-net timeout is an hour, so a single lost wakeup hangs the worker and the
    /// watchdog fails the test.
    #[test]
    fn no_wakeup_is_lost_across_thousands_of_park_cycles() {
        const CYCLES: u64 = 20_000;
        let options = PoolOptions {
            workers: 1,
            ring_slots: 64,
            forward_slots: 64,
            park_timeout: Duration::from_secs(3_600),
            cores: Vec::new(),
            realtime_priority: 0,
        };
        let (mut sources, mut workers, _stats) = build_rings(1, &options);
        let mut source = sources.pop().unwrap();
        let rings = workers.pop().unwrap();
        let taken = Arc::new(AtomicU64::new(0));
        let (done_tx, done_rx) = mpsc::channel();
        let worker_taken = Arc::clone(&taken);
        std::thread::spawn(move || {
            let mut inbound = Inbound {
                receive: rings.receive,
                forward_in: rings.forward_in,
                sleeper: rings.sleeper,
            };
            let (mut woken, mut timed_out) = (0u64, 0u64);
            let mut expected = 0u64;
            while expected < CYCLES {
                let read = inbound.receive[0].pop_with(|datagram| {
                    u64::from_le_bytes(datagram.bytes()[88..96].try_into().unwrap())
                });
                match read {
                    Some(n) => {
                        assert_eq!(n, expected, "in order, none lost");
                        expected += 1;
                        worker_taken.store(expected, Ordering::Release);
                    }
                    None => {
                        // Like the worker loop's idle polls, a varying gap between the last
                        // empty poll and the park: a push landing in it must be caught by the
                        // park's re-check (without it, this test hangs).
                        let gap = expected.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 57;
                        (0..gap).for_each(|_| std::hint::spin_loop());
                        match inbound.park(options.park_timeout) {
                            ParkOutcome::Woken => woken += 1,
                            ParkOutcome::TimedOut => timed_out += 1,
                            ParkOutcome::Skipped => {}
                        }
                    }
                }
            }
            done_tx
                .send((woken, timed_out, inbound.sleeper.unparks()))
                .unwrap();
        });
        let mut batch = RxBatch::new(4);
        for n in 0..CYCLES {
            batch.clear();
            assert!(batch.push(&shred(n), n));
            dispatch_and_wake(&batch, &mut source);
            // The next single datagram only after this one was taken (the worker then goes
            // idle), watched by spinning so the next push can land within nanoseconds of the
            // worker's last empty poll, before its announcement.
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut polls = 0u64;
            while taken.load(Ordering::Acquire) <= n {
                polls += 1;
                if polls.is_multiple_of(1_024) {
                    assert!(Instant::now() < deadline, "datagram {n} never taken");
                    std::thread::yield_now();
                }
                std::hint::spin_loop();
            }
            // Then a pause from none to tens of microseconds, so the push lands before, during
            // and after the worker's announcement and park.
            let mixed = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58;
            match n % 8 {
                0..=4 => (0..mixed).for_each(|_| std::hint::spin_loop()),
                5 => (0..mixed * 20).for_each(|_| std::hint::spin_loop()),
                6 => std::thread::yield_now(),
                _ => std::thread::sleep(Duration::from_micros(mixed)),
            }
        }
        let (woken, _timed_out, unparks) = done_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the worker hung: a wakeup was lost");
        // The park path was exercised (a test that never parked could not fail).
        assert!(woken > 0, "the worker never parked and woke");
        eprintln!("{CYCLES} datagrams: woken {woken}, timed out {_timed_out}, unparks {unparks}");
        assert!(unparks >= woken, "every wake came from a producer's unpark");
        assert!(
            unparks <= CYCLES,
            "at most one unpark per single-datagram batch"
        );
    }

    /// A worker that does not park costs its producers no unpark, however many batches.
    #[test]
    fn a_busy_worker_gets_no_unpark() {
        let options = PoolOptions {
            workers: 2,
            ring_slots: 64,
            forward_slots: 64,
            park_timeout: Duration::from_secs(3_600),
            cores: Vec::new(),
            realtime_priority: 0,
        };
        let (mut sources, mut workers, _stats) = build_rings(1, &options);
        let mut source = sources.pop().unwrap();
        let mut rings = workers.remove(0);
        let mut batch = RxBatch::new(4);
        for n in 0..1_000 {
            batch.clear();
            assert!(batch.push(&shred(n), n));
            dispatch_and_wake(&batch, &mut source);
            while rings
                .receive
                .iter_mut()
                .any(|ring| ring.pop_with(|_| ()).is_some())
            {}
        }
        assert_eq!(rings.sleeper.unparks(), 0);
    }
}
