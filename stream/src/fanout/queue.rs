//! `SessionQueue`: one session's queue of deliveries, bounded in updates, in bytes and in the age
//! of its oldest delivery, written by the publisher without waiting. The bound is enforced by the
//! publisher itself, so a session that is never polled (its stream blocked by HTTP/2 flow
//! control) is still cut: on overflow the publisher marks the session lagged, closes the queue,
//! frees what it held and reports the lag at once; the session ends with `RESOURCE_EXHAUSTED`
//! whenever it next runs (issue "Hostile clients and damaged data").

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

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

/// How far a session may fall behind before it is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueBounds {
    /// Deliveries queued (at least one).
    pub updates: usize,
    /// Bytes of the queued updates' shared encodings (one update always fits).
    pub bytes: usize,
    /// Age of the oldest queued delivery.
    pub max_age: Duration,
}

/// Bytes a session may hold queued unless configured otherwise.
pub const DEFAULT_QUEUE_BYTES: usize = 64 << 20;
/// Age of the oldest queued delivery unless configured otherwise.
pub const DEFAULT_QUEUE_MAX_AGE: Duration = Duration::from_secs(30);

impl QueueBounds {
    /// `updates` deliveries, with the default bytes and age bounds.
    pub fn updates(updates: usize) -> Self {
        Self {
            updates: updates.max(1),
            bytes: DEFAULT_QUEUE_BYTES,
            max_age: DEFAULT_QUEUE_MAX_AGE,
        }
    }
}

/// Told once when a session's queue overflows, with the deliveries it dropped (e.g. the
/// stream's metrics), whether or not the session ever runs again.
pub trait LagObserver: Send + Sync {
    fn lagged(&self, dropped: u64);
}

/// What became of an offered delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Queued,
    /// The queue overflowed now: closed, emptied, the session lagged.
    Lagged,
    /// The queue was closed already (session ended or lagged before).
    Closed,
}

#[derive(Debug, Default)]
struct State {
    items: VecDeque<(Instant, Delivery)>,
    bytes: usize,
    closed: bool,
}

/// One session's queue: the publisher offers, the session receives.
pub struct SessionQueue {
    bounds: QueueBounds,
    state: Mutex<State>,
    ready: Notify,
    dropped: AtomicU64,
    lagged: AtomicBool,
    observer: Option<Arc<dyn LagObserver>>,
}

impl fmt::Debug for SessionQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionQueue")
            .field("bounds", &self.bounds)
            .field("lagged", &self.is_lagged())
            .finish_non_exhaustive()
    }
}

impl SessionQueue {
    /// An empty queue with these bounds, reporting its overflow to `observer`.
    pub fn new(bounds: QueueBounds, observer: Option<Arc<dyn LagObserver>>) -> Arc<Self> {
        Arc::new(Self {
            bounds: QueueBounds {
                updates: bounds.updates.max(1),
                ..bounds
            },
            state: Mutex::new(State::default()),
            ready: Notify::new(),
            dropped: AtomicU64::new(0),
            lagged: AtomicBool::new(false),
            observer,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every change under the lock is complete before it can panic (no user code runs there).
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Enqueues without waiting (`now`: the publish time). Beyond a bound the queue drops the
    /// delivery and everything queued, closes, marks the session lagged and tells the observer.
    pub fn offer(&self, delivery: Delivery, now: Instant) -> Offer {
        let size = delivery.update.shared_len();
        let mut state = self.state();
        if state.closed {
            return Offer::Closed;
        }
        let too_old = state.items.front().is_some_and(|(queued, _)| {
            now.saturating_duration_since(*queued) > self.bounds.max_age
        });
        let full = state.items.len() >= self.bounds.updates
            || (!state.items.is_empty() && state.bytes + size > self.bounds.bytes);
        if !(full || too_old) {
            state.bytes += size;
            state.items.push_back((now, delivery));
            drop(state);
            self.ready.notify_one();
            return Offer::Queued;
        }
        self.lag(state, 1);
        Offer::Lagged
    }

    /// Cuts the session as a lagging one: its resume fell behind the recent-slot buffer.
    pub fn cut(&self) {
        let state = self.state();
        if !state.closed {
            self.lag(state, 0);
        }
    }

    /// Empties and closes the queue, marks it lagged and reports what it dropped (`extra`: the
    /// delivery being offered).
    fn lag(&self, mut state: MutexGuard<'_, State>, extra: u64) {
        let held = std::mem::take(&mut state.items);
        state.bytes = 0;
        // Marked lagged before the lock is given back: a session that finds the queue closed
        // must also find it lagged, or it would end the stream as a plain close (status OK).
        self.lagged.store(true, Ordering::Release);
        state.closed = true;
        drop(state);
        let dropped = held.len() as u64 + extra;
        // Freed outside the lock.
        drop(held);
        self.dropped.fetch_add(dropped, Ordering::Relaxed);
        self.ready.notify_one();
        if let Some(observer) = &self.observer {
            observer.lagged(dropped);
        }
    }

    /// The next delivery if one is queued.
    pub fn try_recv(&self) -> Option<Delivery> {
        let mut state = self.state();
        let (_, delivery) = state.items.pop_front()?;
        state.bytes -= delivery.update.shared_len();
        Some(delivery)
    }

    /// The next delivery; `None` once the queue is closed and empty.
    pub async fn recv(&self) -> Option<Delivery> {
        loop {
            let notified = self.ready.notified();
            {
                let mut state = self.state();
                if let Some((_, delivery)) = state.items.pop_front() {
                    state.bytes -= delivery.update.shared_len();
                    return Some(delivery);
                }
                if state.closed {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Closes the queue (the session ended); returns the deliveries still queued, now dropped.
    pub fn close(&self) -> u64 {
        let held = {
            let mut state = self.state();
            state.closed = true;
            state.bytes = 0;
            std::mem::take(&mut state.items)
        };
        self.ready.notify_one();
        held.len() as u64
    }

    /// Whether the queue overflowed.
    pub fn is_lagged(&self) -> bool {
        self.lagged.load(Ordering::Acquire)
    }

    /// Deliveries dropped on overflow (the offered one and those queued then).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Deliveries and bytes queued now.
    pub fn queued(&self) -> (usize, usize) {
        let state = self.state();
        (state.items.len(), state.bytes)
    }
}
