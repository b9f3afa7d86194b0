//! Where workers publish for `geyser.Geyser/SubscribeDeshred`: a bounded broadcast ring of
//! [`DeshredItem`]s, each encoded once and shared by every session, and the highest slot seen
//! (`GetSlot`). Nothing is built while nobody subscribes: workers ask [`DeshredFeed::wanted`]
//! (one atomic load) first.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::broadcast;

use super::item::{DeshredItem, DeshredTransaction, SlotUpdate};
use crate::grpc::metrics::StreamMetrics;

/// Items a session may fall behind by before it is cut (`[grpc] deshred_queue`).
pub const DEFAULT_DESHRED_QUEUE: usize = 16_384;

/// Counters of what was published (the sessions' own are a [`StreamMetrics`]).
#[derive(Debug, Default)]
pub struct DeshredCounters {
    pub transactions_published: AtomicU64,
    pub bytes_published: AtomicU64,
    pub slot_updates_published: AtomicU64,
    /// Pongs sent in answer to client pings.
    pub pongs: AtomicU64,
    /// Requests refused (bad filter), by the filter error's label in the log.
    pub requests_refused: AtomicU64,
}

/// The feed; cheap to clone.
#[derive(Debug, Clone)]
pub struct DeshredFeed {
    sender: broadcast::Sender<Arc<DeshredItem>>,
    counters: Arc<DeshredCounters>,
    sessions: Arc<StreamMetrics>,
    highest_slot: Arc<AtomicU64>,
}

impl DeshredFeed {
    /// A feed whose sessions may fall `queue` items behind.
    pub fn new(queue: usize) -> Self {
        let (sender, _) = broadcast::channel(queue.max(1));
        Self {
            sender,
            counters: Arc::default(),
            sessions: Arc::default(),
            highest_slot: Arc::default(),
        }
    }

    /// Whether any session is open (else publishing would build for nobody).
    pub fn wanted(&self) -> bool {
        self.sessions.open_streams.load(Ordering::Relaxed) > 0
    }

    /// Sends one transaction to every session.
    pub fn publish_transaction(&self, transaction: DeshredTransaction) {
        let counters = &self.counters;
        counters
            .transactions_published
            .fetch_add(1, Ordering::Relaxed);
        counters
            .bytes_published
            .fetch_add(transaction.body.len() as u64, Ordering::Relaxed);
        let _ = self
            .sender
            .send(Arc::new(DeshredItem::Transaction(transaction)));
    }

    /// Records `update`'s slot as seen and sends the update to every session that wants it.
    pub fn publish_slot(&self, update: SlotUpdate) {
        self.highest_slot.fetch_max(update.slot, Ordering::Relaxed);
        if !self.wanted() {
            return;
        }
        self.counters
            .slot_updates_published
            .fetch_add(1, Ordering::Relaxed);
        let _ = self.sender.send(Arc::new(DeshredItem::Slot(update)));
    }

    /// The highest slot any shred showed so far (0 before the first).
    pub fn highest_slot(&self) -> u64 {
        self.highest_slot.load(Ordering::Relaxed)
    }

    pub fn counters(&self) -> &Arc<DeshredCounters> {
        &self.counters
    }

    /// The sessions' counters: started, refused, open, sent, lagged, ends by reason.
    pub fn sessions(&self) -> &Arc<StreamMetrics> {
        &self.sessions
    }

    pub(super) fn subscribe(&self) -> broadcast::Receiver<Arc<DeshredItem>> {
        self.sender.subscribe()
    }
}
