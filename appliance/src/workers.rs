//! The per-core worker pool: each worker runs a `SetStage` for the FEC sets the receive threads
//! shard to it (hash of `(slot, fec_set_index)`), a `SlotStage` for the slots it owns (hash of
//! the slot), the DEX decoders, and publishes with `ServerTiming` stamps (docs/workers.md).
//!
//! ```text
//!  rx thread s ── ring[s][w] ──▶ worker w: SetStage ─DataShredReady(slot owned by v)─▶ fwd[w][v]
//!                                           │ (slot owned by w)                          │
//!                                           ▼                                            ▼
//!                                 SlotStage ─▶ batches ─▶ DEX decode ─▶ Feed   worker v's SlotStage
//! ```
//! Every ring is a bounded single-producer ring of preallocated slots (`crate::ring`): a full
//! ring drops and counts, nothing waits. Slot notifications go out once per new highest slot
//! across workers, before the slot's shreds leave the set stage that raised it. An idle worker
//! yields briefly, then sleeps between polls, from `idle_sleep` doubling up to 16 × `idle_sleep`
//! while the silence lasts, so it does not burn its core.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use decoder::dex::ProgramRegistry;
use decoder::fec::SetKey;
use decoder::shard::slot_shard;
use decoder::shred::DATA_SHRED_LEN;
use decoder::{
    DataShredReady, DecoderConfig, LeaderSchedule, SetEvent, SetStage, ShredOutcome, SlotStage,
    SlotStageConfig,
};
use server::stream_service::Feed;
use server::updates::{Placement, transaction_updates};
use stream_proto::stream::{self, SubscribeUpdate, subscribe_update::Update};
use tracing::info;

use crate::metrics::{Metrics, RingGauge, WorkerCounters};
use crate::receive::thread::{Datagram, SourceRings};
use crate::ring::{Consumer, Producer, RingStats, ring};

/// How often a worker flushes its counters for `/metrics`.
const METRICS_FLUSH: Duration = Duration::from_millis(100);
/// Empty polls before an idle worker starts sleeping.
const IDLE_SPINS: u32 = 64;
/// An idle worker's sleep grows to this multiple of `idle_sleep` while the silence lasts.
const IDLE_SLEEP_GROWTH: u32 = 16;
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
    pub idle_sleep: Duration,
    /// Core of each worker, by worker index; missing entries are not pinned.
    pub cores: Vec<usize>,
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

/// What a forwarding ring slot carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum ForwardKind {
    #[default]
    Data,
    Evicted,
}

/// A `SetEvent` copied into a forwarding ring slot.
pub struct Forwarded {
    kind: ForwardKind,
    slot: u64,
    index: u32,
    flags: u8,
    first_rx_ns: u64,
    rx_ns: u64,
    len: u16,
    payload: Box<[u8; DATA_SHRED_LEN]>,
}

impl Default for Forwarded {
    fn default() -> Self {
        Self {
            kind: ForwardKind::Data,
            slot: 0,
            index: 0,
            flags: 0,
            first_rx_ns: 0,
            rx_ns: 0,
            len: 0,
            payload: Box::new([0; DATA_SHRED_LEN]),
        }
    }
}

impl Forwarded {
    fn fill(&mut self, event: &SetEvent<'_>) {
        match event {
            SetEvent::DataShredReady(shred) => {
                let len = shred.payload.len().min(DATA_SHRED_LEN);
                self.kind = ForwardKind::Data;
                self.slot = shred.slot;
                self.index = shred.index;
                self.flags = shred.flags;
                self.first_rx_ns = shred.first_rx_ns;
                self.rx_ns = shred.rx_ns;
                self.payload[..len].copy_from_slice(&shred.payload[..len]);
                self.len = len as u16;
            }
            SetEvent::SetEvicted(key) => {
                self.kind = ForwardKind::Evicted;
                self.slot = key.slot;
                self.index = key.fec_set_index;
            }
            // Floors and slot notifications stay with the worker that raised them (`route`).
            SetEvent::SlotFloor(_) | SetEvent::HighestSlot(_) => {}
        }
    }

    fn event(&self) -> SetEvent<'_> {
        match self.kind {
            ForwardKind::Data => SetEvent::DataShredReady(DataShredReady {
                slot: self.slot,
                index: self.index,
                flags: self.flags,
                first_rx_ns: self.first_rx_ns,
                rx_ns: self.rx_ns,
                payload: &self.payload[..usize::from(self.len)],
            }),
            ForwardKind::Evicted => SetEvent::SetEvicted(SetKey {
                slot: self.slot,
                fec_set_index: self.index,
            }),
        }
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
    let mut source_rings: Vec<SourceRings> = (0..sources).map(|_| Vec::new()).collect();
    let mut worker_rings: Vec<WorkerRings> = (0..workers)
        .map(|_| WorkerRings {
            receive: Vec::new(),
            forward_in: Vec::new(),
            forward_out: (0..workers).map(|_| None).collect(),
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
            rings.push(producer);
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
    pub feed: Feed,
    pub registry: Arc<ProgramRegistry>,
    pub metrics: Arc<Metrics>,
    pub shutdown: Arc<AtomicBool>,
    pub decoder_config: DecoderConfig,
    pub leaders: LeaderSchedule,
    /// Highest slot notified. A lock rather than an atomic `fetch_max` so that a notification is
    /// in the feed before any other worker can see the slot as notified and publish its
    /// transactions; taken once per new highest slot per worker.
    pub highest_notified: Mutex<Option<u64>>,
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
        let idle_sleep = options.idle_sleep;
        let handle = std::thread::Builder::new()
            .name(format!("worker-{index}"))
            .spawn(move || {
                if let Some(core) = core {
                    let pinned = core_affinity::set_for_current(core);
                    info!(worker = index, core = core.id, pinned, "worker pinned");
                }
                let mut worker = Worker::new(index, workers, &shared, rings.forward_out);
                worker_loop(
                    &mut worker,
                    rings.receive,
                    rings.forward_in,
                    &shared,
                    idle_sleep,
                );
            })?;
        handles.push(handle);
    }
    Ok(handles)
}

fn worker_loop(
    worker: &mut Worker<'_>,
    mut receive: Vec<Consumer<Datagram>>,
    mut forward_in: Vec<Consumer<Forwarded>>,
    shared: &Shared,
    idle_sleep: Duration,
) {
    let mut last_flush = Instant::now();
    let mut idle_polls = 0u32;
    while !shared.shutdown.load(Ordering::Acquire) {
        if last_flush.elapsed() >= METRICS_FLUSH {
            worker.flush(&shared.metrics);
            last_flush = Instant::now();
        }
        let mut work = 0;
        for ring in &mut receive {
            while work < BURST {
                if ring
                    .pop_with(|datagram| worker.ingest(datagram.bytes(), datagram.rx_ns))
                    .is_none()
                {
                    break;
                }
                work += 1;
            }
        }
        for ring in &mut forward_in {
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
            // The sleep doubles while the silence lasts, up to IDLE_SLEEP_GROWTH × idle_sleep.
            let doublings = (idle_polls - IDLE_SPINS).min(IDLE_SLEEP_GROWTH.ilog2());
            idle_polls = idle_polls.saturating_add(1);
            std::thread::sleep(idle_sleep * (1 << doublings));
        }
    }
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
    counters: WorkerCounters,
    shared: &'a Shared,
}

impl<'a> Worker<'a> {
    pub fn new(
        index: usize,
        workers: usize,
        shared: &'a Shared,
        forward_out: Vec<Option<Producer<Forwarded>>>,
    ) -> Self {
        let config = shared.decoder_config;
        Self {
            index,
            workers,
            sets: SetStage::new(config, shared.leaders.clone()),
            slots: SlotStage::new(SlotStageConfig::from(&config)),
            forward_out,
            counters: WorkerCounters::default(),
            shared,
        }
    }

    /// Processes one datagram of this worker's shard, publishing what it completed.
    pub fn ingest(&mut self, datagram: &[u8], rx_ns: u64) {
        self.counters.datagrams += 1;
        self.counters.bytes += datagram.len() as u64;
        let (own, workers, shared) = (self.index, self.workers, self.shared);
        let (slots, forward_out) = (&mut self.slots, &mut self.forward_out);
        let notifications = &mut self.counters.slot_notifications;
        let outcome = self.sets.ingest(datagram, rx_ns, &mut |event| {
            if let SetEvent::HighestSlot(slot) = event {
                *notifications += notify_slot(shared, slot);
            }
            route(&event, own, workers, slots, forward_out);
        });
        match outcome {
            ShredOutcome::Stored { .. } => self.counters.stored += 1,
            ShredOutcome::Redundant { .. } => self.counters.redundant += 1,
            ShredOutcome::Rejected { reason, .. } => {
                *self.counters.rejected.entry(reason.label()).or_default() += 1;
            }
        }
        self.publish_batches();
    }

    /// Applies a data shred (or eviction) another worker forwarded for a slot this one owns.
    fn apply_forwarded(&mut self, forwarded: &Forwarded) {
        self.counters.forwarded_in += 1;
        self.slots.apply(&forwarded.event());
        self.publish_batches();
    }

    fn flush(&mut self, metrics: &Metrics) {
        let counters = &mut self.counters;
        counters.fec = self.sets.fec_counters();
        counters.batches = self.slots.batch_counters();
        counters.sets_in_flight = self.sets.sets_in_flight();
        counters.pending_batches = self.slots.pending_batches();
        metrics.flush_worker(self.index, counters);
    }

    /// Publishes the decoded updates of every entry batch that became complete. The
    /// `first_read` stamp is the earliest kernel receive time of the batch's FEC sets
    /// (SO_TIMESTAMPNS on the UDP path; the ring read time on AF_XDP).
    fn publish_batches(&mut self) {
        let capture_done = unix_nanos();
        while let Some(batch) = self.slots.next_batch() {
            let deshred_done = unix_nanos();
            let counters = &mut self.counters;
            counters.entries += batch.entries.entry_count();
            counters.transactions += batch.entries.transaction_count();
            for (tx_index, transaction) in batch.entries.transactions().enumerate() {
                let placement = Placement {
                    slot: batch.span.slot,
                    tx_index: tx_index as u32,
                };
                let updates = transaction_updates(
                    &transaction,
                    &self.shared.registry,
                    placement,
                    &mut counters.decode,
                );
                let decode_done = unix_nanos();
                for mut update in updates {
                    let timing = stream::ServerTiming {
                        first_read_unix_nanos: batch.first_rx_ns.min(capture_done),
                        capture_done_unix_nanos: capture_done,
                        deshred_done_unix_nanos: deshred_done,
                        decode_done_unix_nanos: decode_done,
                        publish_unix_nanos: unix_nanos(),
                        subscriber_recv_unix_nanos: 0,
                    };
                    counters.record_timing(&timing);
                    stamp(&mut update, timing);
                    self.shared.feed.publish(update);
                    counters.updates_published += 1;
                }
            }
        }
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
    shared.feed.publish(SubscribeUpdate {
        update: Some(Update::Slot(stream::SlotNotification { slot })),
    });
    1
}

/// Sends a set-stage event to the slot stage of the slot's owner: applied at once when that is
/// this worker, copied into the forwarding ring otherwise (full ring: dropped, counted there).
fn route(
    event: &SetEvent<'_>,
    own: usize,
    workers: usize,
    slots: &mut SlotStage,
    forward_out: &mut [Option<Producer<Forwarded>>],
) {
    let owner = match event {
        SetEvent::DataShredReady(shred) => slot_shard(shred.slot, workers),
        SetEvent::SetEvicted(key) => slot_shard(key.slot, workers),
        // Each worker's set stage sees every slot (sets are spread over all workers), so its
        // floor is applied to its own slot stage.
        SetEvent::SlotFloor(_) | SetEvent::HighestSlot(_) => own,
    };
    if owner == own {
        slots.apply(event);
    } else if let Some(Some(producer)) = forward_out.get_mut(owner) {
        producer.push_with(|slot| slot.fill(event));
    }
}

fn unix_nanos() -> u64 {
    crate::receive::unix_nanos()
}

fn stamp(update: &mut SubscribeUpdate, timing: stream::ServerTiming) {
    match update.update.as_mut() {
        Some(Update::Transaction(transaction)) => transaction.server_timing = Some(timing),
        Some(Update::Delta(delta)) => {
            if let Some(envelope) = delta.envelope.as_mut() {
                envelope.server_timing = Some(timing);
            }
        }
        _ => {}
    }
}
