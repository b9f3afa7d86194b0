//! The receive threads: one per source, optionally pinned to a core, each reading into its own
//! [`RxBatch`] and copying every datagram into the ring of the worker that owns its FEC set.
//!
//! Sharding: the worker is [`decoder::shard::set_shard`] of the datagram's `(slot,
//! fec_set_index)`, read with `peek_slot_and_fec_set`; a datagram too short to peek goes to worker
//! 0, whose parser counts it as malformed. Each (source, worker) pair has its own bounded
//! single-producer ring ([`crate::handoff::ring`]) of preallocated datagram slots, so nothing allocates per
//! packet. A full ring drops the datagram and counts it (`appliance_ring_drops_total{worker,
//! reason="ring_full"}`): the receive thread never waits for a worker. After each batch it wakes
//! the workers it pushed to (`crate::handoff::wake`): one check per worker, an unpark only for a parked
//! one, so at most one unpark per worker per batch.
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use decoder::shard::set_shard;
use decoder::shred::peek_slot_and_fec_set;
use tracing::{info, warn};

use super::{RxBatch, ShredSource, SourceMetrics};
use crate::handoff::ring::Producer;
use crate::handoff::wake::{wake_touched, worker_bit};
use crate::handoff::{Datagram, SourceRings};

/// Housekeeping period: drop counters are read from the kernel this often.
const HOUSEKEEPING: Duration = Duration::from_millis(100);

/// Sizing of the receive buffers.
#[derive(Debug, Clone, Copy)]
pub struct PoolConfig {
    /// Datagrams per batch (and per `recvmmsg` call).
    pub batch_capacity: usize,
    /// `SCHED_FIFO` priority of the receive threads (0 = ordinary scheduling).
    pub realtime_priority: u8,
}

/// A source to start: the backend, its counters, and the core to pin its thread to.
pub struct SourceSpec {
    pub source: Box<dyn ShredSource>,
    pub metrics: Arc<SourceMetrics>,
    pub core: Option<core_affinity::CoreId>,
}

/// Starts one receive thread per source (`rings[i]` are source `i`'s rings); returns the join
/// handles.
pub fn spawn(
    sources: Vec<SourceSpec>,
    pool: PoolConfig,
    rings: Vec<SourceRings>,
    shutdown: &Arc<AtomicBool>,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    assert_eq!(sources.len(), rings.len(), "one set of rings per source");
    let mut handles = Vec::with_capacity(sources.len());
    for (index, (spec, rings)) in sources.into_iter().zip(rings).enumerate() {
        let batch = RxBatch::new(pool.batch_capacity);
        let shutdown = Arc::clone(shutdown);
        let name = format!("rx-{}-{index}", spec.metrics.kind);
        let realtime_priority = pool.realtime_priority;
        let handle = std::thread::Builder::new().name(name).spawn(move || {
            crate::handoff::sched::make_current_thread_realtime(realtime_priority, "receive");
            receive_loop(spec, batch, rings, &shutdown)
        })?;
        handles.push(handle);
    }
    Ok(handles)
}

/// The worker that handles a datagram.
pub fn worker_of(datagram: &[u8], workers: usize) -> usize {
    peek_slot_and_fec_set(datagram).map_or(0, |(slot, fec_set_index)| {
        set_shard(slot, fec_set_index, workers)
    })
}

/// Copies every datagram of `batch` into its worker's ring; full rings drop (counted there).
/// `first_in(worker)` runs once per worker, right after the batch's first datagram for it is in
/// its ring. Returns the workers that got at least one datagram and, second, those that got more
/// than one (bits of [`worker_bit`]).
pub fn dispatch(
    batch: &RxBatch,
    rings: &mut [Producer<Datagram>],
    mut first_in: impl FnMut(usize),
) -> (u64, u64) {
    let workers = rings.len();
    let (mut touched, mut more) = (0u64, 0u64);
    for (datagram, rx_ns) in batch.iter() {
        let worker = worker_of(datagram, workers);
        if let Some(ring) = rings.get_mut(worker)
            && ring.push_with(|slot| slot.fill(datagram, rx_ns))
        {
            let bit = worker_bit(worker);
            if touched & bit == 0 {
                touched |= bit;
                first_in(worker);
            } else {
                more |= bit;
            }
        }
    }
    (touched, more)
}

/// [`dispatch`], waking each worker as soon as its first datagram is in (an unpark only for a
/// parked one), so that its wake-up overlaps the copy of the rest of the batch. A worker that got
/// more datagrams after that is woken once more at the end, in case it emptied its ring and
/// parked meanwhile (a check, no system call while it is busy).
pub fn dispatch_and_wake(batch: &RxBatch, rings: &mut SourceRings) {
    let SourceRings { rings, wakers } = rings;
    let (_, more) = dispatch(batch, rings, |worker| {
        if let Some(waker) = wakers.get(worker) {
            waker.wake();
        }
    });
    wake_touched(more, wakers);
}

/// One source's loop: fill the batch, dispatch it; read kernel drops on the tick.
fn receive_loop(
    spec: SourceSpec,
    mut batch: RxBatch,
    mut rings: SourceRings,
    shutdown: &AtomicBool,
) {
    let SourceSpec {
        mut source,
        metrics,
        core,
    } = spec;
    if let Some(core) = core {
        let pinned = core_affinity::set_for_current(core);
        info!(endpoint = %metrics.endpoint, core = core.id, pinned, "receive thread pinned");
    }
    let mut last_housekeeping = Instant::now();
    while !shutdown.load(Ordering::Acquire) {
        if last_housekeeping.elapsed() >= HOUSEKEEPING {
            metrics.store_drops(&source.drops());
            last_housekeeping = Instant::now();
        }
        if let Err(error) = source.receive(&mut batch) {
            metrics.record_error();
            warn!(endpoint = %metrics.endpoint, reason = error.label(), %error, "receive failed");
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        if batch.is_empty() {
            continue;
        }
        metrics.record_batch(batch.len(), batch.bytes());
        dispatch_and_wake(&batch, &mut rings);
        batch.clear();
    }
    metrics.store_drops(&source.drops());
    info!(endpoint = %metrics.endpoint, packets = metrics.packets(), "receive thread stopped");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::ring::ring;
    use crate::receive::{DropCounts, DropReason, ReceiveError};

    /// A stand-in source producing numbered datagrams (the real backends have their own tests).
    struct Counting {
        next: u32,
        end: u32,
    }

    impl ShredSource for Counting {
        fn receive(&mut self, batch: &mut RxBatch) -> Result<(), ReceiveError> {
            batch.clear();
            while self.next < self.end && batch.push(&self.next.to_le_bytes(), 1) {
                self.next += 1;
            }
            if batch.is_empty() {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(())
        }

        fn drops(&mut self) -> DropCounts {
            let mut drops = DropCounts::default();
            drops.set(DropReason::RingFull, 3);
            drops
        }
    }

    #[test]
    fn every_datagram_arrives_once_in_order() {
        let shutdown = Arc::new(AtomicBool::new(false));
        let metrics = Arc::new(SourceMetrics::new("udp", "test".into(), "test".into()));
        let spec = SourceSpec {
            source: Box::new(Counting { next: 0, end: 1000 }),
            metrics: Arc::clone(&metrics),
            core: None,
        };
        // Room for every datagram: none may be dropped.
        let (producer, mut consumer) = ring::<Datagram>(1024);
        let pool = PoolConfig {
            batch_capacity: 7,
            realtime_priority: 0,
        };
        let rings = SourceRings {
            rings: vec![producer],
            wakers: Vec::new(),
        };
        let handles = spawn(vec![spec], pool, vec![rings], &shutdown).unwrap();
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while seen.len() < 1000 && Instant::now() < deadline {
            match consumer.pop_with(|d| u32::from_le_bytes(d.bytes().try_into().unwrap())) {
                Some(value) => seen.push(value),
                None => std::thread::yield_now(),
            }
        }
        shutdown.store(true, Ordering::Release);
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        assert_eq!(metrics.packets(), 1000);
        assert_eq!(metrics.drops(DropReason::RingFull), 3);
    }

    /// A shred header naming `slot` and `fec_set_index` at their wire offsets.
    fn shred(slot: u64, fec_set_index: u32) -> Vec<u8> {
        let mut payload = vec![0u8; 88];
        payload[65..73].copy_from_slice(&slot.to_le_bytes());
        payload[79..83].copy_from_slice(&fec_set_index.to_le_bytes());
        payload
    }

    #[test]
    fn a_full_worker_ring_drops_and_counts_without_blocking() {
        let (p0, mut c0) = ring::<Datagram>(2);
        let (p1, _c1) = ring::<Datagram>(2);
        let stats = [p0.stats(), p1.stats()];
        let mut rings = vec![p0, p1];
        let mut batch = RxBatch::new(64);
        let mut expected = [0u64; 2];
        for set in 0..40u32 {
            let datagram = shred(9, set * 32);
            expected[worker_of(&datagram, 2)] += 1;
            assert!(batch.push(&datagram, u64::from(set)));
        }
        assert!(batch.push(b"short", 99), "unpeekable");
        expected[0] += 1;
        let mut firsts = Vec::new();
        let (touched, more) = dispatch(&batch, &mut rings, |worker| {
            // Called right after the worker's first datagram: exactly one is in its ring.
            firsts.push((worker, stats[worker].occupancy()));
        });
        assert_eq!(
            firsts,
            [
                (worker_of(&shred(9, 0), 2), 1),
                (1 - worker_of(&shred(9, 0), 2), 1)
            ]
        );
        assert_eq!(touched, 0b11, "both workers got datagrams");
        assert_eq!(more, 0b11, "both got more than one");
        assert!(
            expected.iter().all(|&n| n > 2),
            "both workers get sets: {expected:?}"
        );
        for (worker, stats) in stats.iter().enumerate() {
            assert_eq!(stats.occupancy(), 2);
            assert_eq!(stats.full_drops(), expected[worker] - 2, "worker {worker}");
        }
        // The first datagram of worker 0 waits in its slot as sent.
        let first = c0.pop_with(|d| (d.bytes().to_vec(), d.rx_ns)).unwrap();
        assert_eq!(worker_of(&first.0, 2), 0);
    }
}
