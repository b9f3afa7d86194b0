//! `SessionQueue`: one session's bounded queue of deliveries, written by the publisher without
//! waiting (`try_send`), and its lag state: on overflow the publisher counts the drop and marks the
//! session lagged. A full queue holds updates, so the session is already woken (or running) and
//! sees the mark in its next turn; the stream then ends at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::sync::mpsc;

use super::encode::EncodedUpdate;
use crate::filter::Matches;

/// One update for one session: the shared encoding, the generation of the filters it was matched
/// with, and what it matched under them.
#[derive(Debug)]
pub struct Delivery {
    pub update: Arc<EncodedUpdate>,
    pub generation: u64,
    pub matches: Matches,
}

/// The publisher's side of one session's queue.
#[derive(Debug)]
pub struct SessionQueue {
    sender: mpsc::Sender<Delivery>,
    dropped: AtomicU64,
    lagged: AtomicBool,
}

impl SessionQueue {
    /// A queue of at most `capacity` deliveries (at least one) and its receiving end.
    pub fn new(capacity: usize) -> (Arc<Self>, mpsc::Receiver<Delivery>) {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        let queue = Self {
            sender,
            dropped: AtomicU64::new(0),
            lagged: AtomicBool::new(false),
        };
        (Arc::new(queue), receiver)
    }

    /// Enqueues without waiting; a full queue drops the delivery and marks the session lagged.
    pub fn offer(&self, delivery: Delivery) {
        match self.sender.try_send(delivery) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                self.lagged.store(true, Ordering::Release);
            }
            // The session has ended; its registration goes with the next index change.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    /// Whether a delivery was dropped because the queue was full.
    pub fn is_lagged(&self) -> bool {
        self.lagged.load(Ordering::Acquire)
    }

    /// Deliveries dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
