//! Block ingest from the upstream validator: follows the confirmed tip by polling `getSlot` and
//! `getBlocks`, fetches each produced block with `getBlock`, computes its statistics once,
//! publishes the new window, then writes block, snapshot and cursor to the store.
//! Runs on its own thread until the shutdown flag is raised.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use tracing::{info, warn};

use super::config::InsightsConfig;
use super::error::InsightsError;
use super::live::{Live, Shared, Window};
use super::store::BlockRecord;
use super::upstream::{FetchedBlock, Upstream};

/// Blocks between two prunes of the store.
const PRUNE_EVERY_BLOCKS: u64 = 256;

/// The ingest loop's state.
pub struct Ingest {
    upstream: Upstream,
    shared: Arc<Shared>,
    config: InsightsConfig,
    window: Window,
    cursor: Option<u64>,
    since_prune: u64,
}

/// The window of the newest stored blocks at or below `up_to`, published when full.
pub fn restore_window(shared: &Shared, up_to: u64) -> Result<Window, InsightsError> {
    let mut window = Window::new(shared.limits.window_blocks);
    for stats in shared
        .store
        .blocks_up_to(up_to, shared.limits.window_blocks)?
    {
        window.push(Arc::new(stats));
    }
    if let Some(blocks) = window.full()
        && let Some(live) = Live::build(blocks, &shared.limits, SystemTime::now())
    {
        shared.publish(Arc::new(live));
    }
    Ok(window)
}

impl Ingest {
    /// Restores the window and the cursor from the store and publishes the window if full.
    pub fn new(shared: Arc<Shared>, config: InsightsConfig) -> Result<Self, InsightsError> {
        let upstream = Upstream::new(
            &config.upstream,
            config.request_timeout,
            config.max_response_bytes,
            &config.upstream_trust,
        );
        let cursor = shared.store.cursor()?;
        let window = match cursor {
            Some(cursor) => restore_window(&shared, cursor)?,
            None => Window::new(shared.limits.window_blocks),
        };
        info!(?cursor, upstream = %front::redact::redact_url(&config.upstream), "insights ingest restored");
        Ok(Self {
            upstream,
            shared,
            config,
            window,
            cursor,
            since_prune: 0,
        })
    }

    /// Runs until `shutdown` is raised.
    pub fn run(mut self, shutdown: &AtomicBool) {
        while !shutdown.load(Ordering::Acquire) {
            let pause = match self.step(shutdown) {
                Ok(true) => None,
                Ok(false) => Some(self.config.poll_interval),
                Err(error) => {
                    warn!(%error, label = error.label(), "insights ingest step failed");
                    Some(self.config.poll_interval.max(Duration::from_millis(500)))
                }
            };
            if let Some(pause) = pause {
                sleep_unless(shutdown, pause);
            }
        }
        info!(cursor = ?self.cursor, "insights ingest stopped");
    }

    /// One poll: fetches the produced blocks after the cursor up to the tip (one getBlocks
    /// request's worth). Returns whether the cursor moved.
    pub fn step(&mut self, shutdown: &AtomicBool) -> Result<bool, InsightsError> {
        let tip = self.upstream.slot()?;
        let lookback = self.config.start_lookback_slots;
        let start = match self.cursor {
            // Too far behind to catch up within retention: restart near the tip (a gap, logged).
            Some(cursor) if tip.saturating_sub(cursor) > self.config.block_retention_slots() => {
                warn!(
                    cursor,
                    tip, "insights ingest too far behind; skipping ahead"
                );
                self.window = Window::new(self.config.limits.window_blocks);
                tip.saturating_sub(lookback)
            }
            Some(cursor) => cursor + 1,
            None => tip.saturating_sub(lookback),
        };
        if start > tip {
            return Ok(false);
        }
        let end = tip.min(start + self.config.blocks_per_request.max(1) - 1);
        let mut produced = self.upstream.blocks(start, end)?;
        produced.retain(|slot| (start..=end).contains(slot));
        produced.sort_unstable();
        produced.dedup();
        for slot in produced {
            if shutdown.load(Ordering::Acquire) {
                return Ok(true);
            }
            match self.upstream.block(slot)? {
                FetchedBlock::Produced(stats) => self.accept(stats)?,
                FetchedBlock::Skipped => self.shared.store.write(&[], Some(slot))?,
            }
            self.cursor = Some(slot);
        }
        if self.cursor != Some(end) {
            self.shared.store.write(&[], Some(end))?;
            self.cursor = Some(end);
        }
        Ok(true)
    }

    /// Adds one fetched block: window, publish, then store (block, snapshot, cursor in one
    /// commit). Publishing first keeps the fsync out of the freshness path; a crash before the
    /// commit only means the block is fetched again, and a failed commit takes the block back out.
    fn accept(&mut self, stats: super::block_stats::BlockStats) -> Result<(), InsightsError> {
        let slot = stats.slot;
        let stats = Arc::new(stats);
        let started = Instant::now();
        let live = self
            .window
            .push(Arc::clone(&stats))
            .and_then(|blocks| Live::build(blocks, &self.shared.limits, SystemTime::now()))
            .map(Arc::new);
        if let Some(live) = &live {
            self.shared.publish(Arc::clone(live));
        }
        let record = BlockRecord {
            stats: &stats,
            snapshot: live.as_ref().map(|live| live.snapshot.as_ref()),
        };
        if let Err(error) = self.shared.store.write(&[record], Some(slot)) {
            self.window.pop_newest();
            match self.window.full() {
                Some(blocks) => {
                    if let Some(previous) =
                        Live::build(blocks, &self.shared.limits, SystemTime::now())
                    {
                        self.shared.publish(Arc::new(previous));
                    }
                }
                None => self.shared.unpublish(),
            }
            return Err(error);
        }
        tracing::debug!(
            slot,
            elapsed_us = started.elapsed().as_micros() as u64,
            "block accepted"
        );
        self.since_prune += 1;
        if self.since_prune >= PRUNE_EVERY_BLOCKS {
            self.since_prune = 0;
            self.shared.store.prune(
                slot.saturating_sub(self.config.block_retention_slots()),
                slot.saturating_sub(self.config.retention_slots()),
            )?;
        }
        Ok(())
    }
}

/// Sleeps for `pause`, waking early when `shutdown` is raised.
fn sleep_unless(shutdown: &AtomicBool, pause: Duration) {
    let deadline = Instant::now() + pause;
    while !shutdown.load(Ordering::Acquire) {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return;
        };
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}
