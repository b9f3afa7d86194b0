//! The live window and what the HTTP workers read: the newest full window of produced blocks with
//! its figures and pre-serialised bodies, swapped in whole once per new block, so a request costs
//! one read-lock and one reference-count increment.

use std::collections::VecDeque;
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use actix_web::web::Bytes;

use super::block_stats::BlockStats;
use super::config::Limits;
use super::figures::{FEE_LEVELS, WindowFigures, window_figures};
use super::responses::{Congestion, FeeEstimate, Snapshot, iso8601};
use super::store::Store;

/// One full window, ready to serve.
pub struct Live {
    /// The window's blocks, oldest first.
    pub blocks: Vec<Arc<BlockStats>>,
    pub figures: WindowFigures,
    pub updated_at: String,
    /// `GET /v1/block50` (also the stored history record).
    pub snapshot: Bytes,
    /// `GET /v1/network/congestion`.
    pub congestion: Bytes,
    /// `GET /v1/fees/estimate?level=…` without accounts, in [`FEE_LEVELS`] order.
    pub fees: [Bytes; 4],
}

impl Live {
    /// Figures and bodies of `blocks` (a full window, oldest first).
    pub fn build(blocks: Vec<Arc<BlockStats>>, limits: &Limits, now: SystemTime) -> Option<Self> {
        let figures = window_figures(&blocks, limits)?;
        let updated_at = iso8601(now);
        let snapshot = to_bytes(&Snapshot::new(&figures, &updated_at));
        let congestion = to_bytes(&Congestion {
            score: figures.congestion_score,
            level: figures.congestion_level,
            factors: figures.factors,
            updated_at: &updated_at,
        });
        let sample_size = figures.tx_count;
        let fee = |index: usize| {
            FeeEstimate::new(
                FEE_LEVELS[index].0,
                figures.fee_levels,
                sample_size,
                figures.slot_range,
                &updated_at,
            )
            .map(|estimate| to_bytes(&estimate))
            .unwrap_or_default()
        };
        let fees = [fee(0), fee(1), fee(2), fee(3)];
        Some(Self {
            blocks,
            figures,
            updated_at,
            snapshot,
            congestion,
            fees,
        })
    }
}

fn to_bytes(value: &impl serde::Serialize) -> Bytes {
    // Serialising plain structs of numbers and strings cannot fail.
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

/// The newest produced blocks, at most a window's worth.
pub struct Window {
    blocks: VecDeque<Arc<BlockStats>>,
    capacity: usize,
}

impl Window {
    pub fn new(capacity: usize) -> Self {
        Self {
            blocks: VecDeque::with_capacity(capacity + 1),
            capacity,
        }
    }

    /// Adds the newest block; returns the blocks of the window when it is full.
    pub fn push(&mut self, stats: Arc<BlockStats>) -> Option<Vec<Arc<BlockStats>>> {
        self.blocks.push_back(stats);
        while self.blocks.len() > self.capacity {
            self.blocks.pop_front();
        }
        self.full()
    }

    /// Takes the newest block back out (its write failed).
    pub fn pop_newest(&mut self) {
        self.blocks.pop_back();
    }

    /// The window's blocks when it is full.
    pub fn full(&self) -> Option<Vec<Arc<BlockStats>>> {
        (self.blocks.len() == self.capacity).then(|| self.blocks.iter().cloned().collect())
    }

    pub fn newest_slot(&self) -> Option<u64> {
        self.blocks.back().map(|block| block.slot)
    }
}

/// State shared by the ingest (writer) and the HTTP workers (readers).
pub struct Shared {
    live: RwLock<Option<Arc<Live>>>,
    pub store: Store,
    pub limits: Limits,
}

impl Shared {
    pub fn new(store: Store, limits: Limits) -> Self {
        Self {
            live: RwLock::new(None),
            store,
            limits,
        }
    }

    /// The current full window, if any.
    pub fn live(&self) -> Option<Arc<Live>> {
        match self.live.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Withdraws the window (it is no longer full).
    pub fn unpublish(&self) {
        match self.live.write() {
            Ok(mut guard) => *guard = None,
            Err(poisoned) => *poisoned.into_inner() = None,
        }
    }

    pub fn publish(&self, live: Arc<Live>) {
        match self.live.write() {
            Ok(mut guard) => *guard = Some(live),
            Err(poisoned) => *poisoned.into_inner() = Some(live),
        }
    }
}
