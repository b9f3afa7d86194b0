//! The receive threads: one per source, optionally pinned to a core, each cycling its own pool
//! of [`RxBatch`]es through the decode worker, and the worker's side of that exchange
//! ([`BatchReceiver`]).
//!
//! Bounds: a source owns `pool_batches` batches; the channel to the worker holds at most the sum
//! over sources, so a send never blocks, and a source's free channel holds at most its own pool.
//! When its pool is empty (the worker is behind) the thread waits for a batch to come back
//! instead of reading, and the kernel queue absorbs or drops (counted by reason).
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing::{info, warn};

use super::{RxBatch, ShredSource, SourceMetrics};

/// Housekeeping period: drop counters are read from the kernel this often.
const HOUSEKEEPING: Duration = Duration::from_millis(100);
/// How long a thread waits for a free batch before checking for shutdown.
const FREE_WAIT: Duration = Duration::from_millis(100);

/// Sizing of the batch pools.
#[derive(Debug, Clone, Copy)]
pub struct PoolConfig {
    /// Datagrams per batch (and per `recvmmsg` call).
    pub batch_capacity: usize,
    /// Batches per source.
    pub pool_batches: usize,
}

/// A source to start: the backend, its counters, and the core to pin its thread to.
pub struct SourceSpec {
    pub source: Box<dyn ShredSource>,
    pub metrics: Arc<SourceMetrics>,
    pub core: Option<core_affinity::CoreId>,
}

/// The decode worker's end: full batches in, empty batches back to their source.
pub struct BatchReceiver {
    full: Receiver<RxBatch>,
    free: Vec<SyncSender<RxBatch>>,
}

impl BatchReceiver {
    /// The next full batch, or `None` after `timeout` (or when every source has stopped).
    pub fn next(&self, timeout: Duration) -> Option<RxBatch> {
        self.full.recv_timeout(timeout).ok()
    }

    /// Returns a read batch to its source's pool.
    pub fn recycle(&self, mut batch: RxBatch) {
        batch.clear();
        if let Some(free) = self.free.get(batch.source) {
            // Cannot be full (the pool is the channel's bound); fails only if the thread ended.
            let _ = free.try_send(batch);
        }
    }
}

/// Starts one receive thread per source; returns the worker's end and the join handles.
pub fn spawn(
    sources: Vec<SourceSpec>,
    pool: PoolConfig,
    shutdown: &Arc<AtomicBool>,
) -> std::io::Result<(BatchReceiver, Vec<JoinHandle<()>>)> {
    assert!(pool.pool_batches >= 1, "a source needs at least one batch");
    let (full_sender, full) = sync_channel(sources.len() * pool.pool_batches);
    let mut free_senders = Vec::with_capacity(sources.len());
    let mut handles = Vec::with_capacity(sources.len());
    let total_bytes =
        sources.len() * pool.pool_batches * pool.batch_capacity * super::batch::SLOT_BYTES;
    info!(
        sources = sources.len(),
        batches_per_source = pool.pool_batches,
        batch_capacity = pool.batch_capacity,
        total_bytes,
        "receive batch pools allocated"
    );
    for (index, spec) in sources.into_iter().enumerate() {
        let (free_sender, free) = sync_channel(pool.pool_batches);
        for _ in 0..pool.pool_batches {
            let _ = free_sender.try_send(RxBatch::new(pool.batch_capacity, index));
        }
        free_senders.push(free_sender);
        let full = full_sender.clone();
        let shutdown = Arc::clone(shutdown);
        let name = format!("rx-{}-{index}", spec.metrics.kind);
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || receive_loop(spec, &free, &full, &shutdown))?;
        handles.push(handle);
    }
    Ok((
        BatchReceiver {
            full,
            free: free_senders,
        },
        handles,
    ))
}

/// One source's loop: take a free batch, fill it, hand it over; read kernel drops on the tick.
fn receive_loop(
    spec: SourceSpec,
    free: &Receiver<RxBatch>,
    full: &SyncSender<RxBatch>,
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
    let mut current: Option<RxBatch> = None;
    let mut last_housekeeping = Instant::now();
    while !shutdown.load(Ordering::Acquire) {
        if last_housekeeping.elapsed() >= HOUSEKEEPING {
            metrics.store_drops(&source.drops());
            last_housekeeping = Instant::now();
        }
        let mut batch = match current.take() {
            Some(batch) => batch,
            None => match free.recv_timeout(FREE_WAIT) {
                Ok(batch) => batch,
                Err(RecvTimeoutError::Timeout) => {
                    metrics.record_worker_wait();
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            },
        };
        if let Err(error) = source.receive(&mut batch) {
            metrics.record_error();
            warn!(endpoint = %metrics.endpoint, reason = error.label(), %error, "receive failed");
            current = Some(batch);
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        if batch.is_empty() {
            current = Some(batch);
            continue;
        }
        metrics.record_batch(batch.len(), batch.bytes());
        if full.send(batch).is_err() {
            break;
        }
    }
    metrics.store_drops(&source.drops());
    info!(endpoint = %metrics.endpoint, packets = metrics.packets(), "receive thread stopped");
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn every_datagram_arrives_once_in_order_through_a_pool_of_two() {
        let shutdown = Arc::new(AtomicBool::new(false));
        let metrics = Arc::new(SourceMetrics::new("udp", "test".into(), "test".into()));
        let spec = SourceSpec {
            source: Box::new(Counting { next: 0, end: 1000 }),
            metrics: Arc::clone(&metrics),
            core: None,
        };
        let pool = PoolConfig {
            batch_capacity: 7,
            pool_batches: 2,
        };
        let (receiver, handles) = spawn(vec![spec], pool, &shutdown).unwrap();
        let mut seen = Vec::new();
        while seen.len() < 1000 {
            let batch = receiver.next(Duration::from_secs(5)).unwrap();
            for (bytes, _) in batch.iter() {
                seen.push(u32::from_le_bytes(bytes.try_into().unwrap()));
            }
            receiver.recycle(batch);
        }
        shutdown.store(true, Ordering::Release);
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        assert_eq!(metrics.packets(), 1000);
        assert_eq!(metrics.drops(DropReason::RingFull), 3);
    }
}
