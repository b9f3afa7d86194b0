//! `Subscriber`: the session's side of the fan-out: its queue's receiving end and its current
//! registration. It turns each delivery into the session's outbound message, re-matching a
//! delivery made under filters that the session has replaced since, so that the first update
//! after a new request already reflects it. A resumed session first reads the recent-slot buffer
//! through its cursor, then its queue from the seam on. Dropping it unregisters the session.

use std::collections::VecDeque;
use std::sync::Arc;

use tracing::debug;

use super::encode::{EncodedUpdate, OutboundUpdate, PersonalUpdate};
use super::hub::Hub;
use super::queue::{Delivery, LagObserver, SessionQueue};
use super::recent::{Cursor, Read, ResumeError};
use super::registration::{Registration, SessionId};
use crate::filter::{Filters, Matches, UpdateView};

/// The generation of a replayed delivery: never a registration's, so it is always re-matched.
const REPLAYED: u64 = u64::MAX;

/// A resume in progress: the cursor, what it read and not yet handed out, and, once it caught up,
/// where the live deliveries start.
#[derive(Debug)]
struct Resume {
    cursor: Cursor,
    pending: VecDeque<Arc<EncodedUpdate>>,
    caught_up: Option<u64>,
}

/// One session's subscription.
#[derive(Debug)]
pub struct Subscriber {
    hub: Arc<Hub>,
    session: SessionId,
    queue: Arc<SessionQueue>,
    current: Option<Arc<Registration>>,
    resume: Option<Resume>,
    /// Live deliveries numbered below this were covered by the resume's cursor.
    live_from: u64,
}

impl Subscriber {
    /// A subscriber that receives nothing until [`Subscriber::replace`] starts it.
    pub fn new(hub: Arc<Hub>) -> Self {
        Self::observed(hub, None)
    }

    /// A subscriber whose queue overflow is reported to `observer` when it happens.
    pub fn observed(hub: Arc<Hub>, observer: Option<Arc<dyn LagObserver>>) -> Self {
        let queue = SessionQueue::new(hub.queue_bounds(), observer);
        Self {
            session: hub.next_session(),
            hub,
            queue,
            current: None,
            resume: None,
            live_from: 0,
        }
    }

    pub fn session(&self) -> SessionId {
        self.session
    }

    /// Whether a request has started the stream.
    pub fn is_started(&self) -> bool {
        self.current.is_some()
    }

    /// The queue (lag state), e.g. to wait on it while `next` is pending.
    pub fn queue(&self) -> Arc<SessionQueue> {
        Arc::clone(&self.queue)
    }

    /// Starts the stream or replaces every filter at once; in effect for every update published
    /// after this returns, and for every queued one taken after it.
    pub fn replace(&mut self, filters: Filters) {
        let registration = self
            .hub
            .register(self.session, Arc::new(filters), &self.queue);
        self.current = Some(registration);
    }

    /// Replays the buffered updates of slots from `from_slot` before the live ones (call it after
    /// [`Subscriber::replace`]; a later call starts over from its own slot, under the filters
    /// current then).
    pub fn resume(&mut self, from_slot: u64) -> Result<(), ResumeError> {
        let cursor = self.hub.recent().cursor(from_slot)?;
        self.resume = Some(Resume {
            cursor,
            pending: VecDeque::new(),
            caught_up: None,
        });
        Ok(())
    }

    /// The next delivery; pending until the stream has started. `None` once the queue is closed.
    pub async fn next(&mut self) -> Option<Delivery> {
        if self.current.is_none() {
            return std::future::pending().await;
        }
        if self.needs_replay_read() {
            self.hub.replay_pace().wait_for_batch().await;
        }
        if let Some(replayed) = self.next_replayed() {
            return Some(replayed);
        }
        loop {
            let delivery = self.queue.recv().await?;
            if self.is_past_seam(&delivery) {
                return Some(delivery);
            }
        }
    }

    /// The next delivery if one is ready. While resuming, only what the last replay read holds
    /// (reading more waits for the replay budget, in `next`).
    pub fn try_next(&mut self) -> Option<Delivery> {
        if self.needs_replay_read() && !self.hub.replay_pace().try_book_batch() {
            return None;
        }
        if let Some(replayed) = self.next_replayed() {
            return Some(replayed);
        }
        loop {
            let delivery = self.queue.try_recv()?;
            if self.is_past_seam(&delivery) {
                return Some(delivery);
            }
        }
    }

    /// Whether the resume must read the buffer again for its next delivery.
    fn needs_replay_read(&self) -> bool {
        self.resume
            .as_ref()
            .is_some_and(|resume| resume.pending.is_empty() && resume.caught_up.is_none())
    }

    /// Whether a live delivery is new to this session: not covered by a resume's cursor.
    fn is_past_seam(&self, delivery: &Delivery) -> bool {
        delivery.update.sequence() >= self.live_from
    }

    /// The next update of the resume, read from the buffer; `None` once it has caught up (then
    /// live deliveries start at the seam) or failed (then the queue is cut as a lagging one's).
    fn next_replayed(&mut self) -> Option<Delivery> {
        let resume = self.resume.as_mut()?;
        loop {
            if let Some(update) = resume.pending.pop_front() {
                return Some(Delivery {
                    update,
                    generation: REPLAYED,
                    matches: Matches::default(),
                });
            }
            if let Some(live_from) = resume.caught_up {
                self.live_from = live_from;
                self.resume = None;
                return None;
            }
            match self
                .hub
                .recent()
                .read(&mut resume.cursor, &mut resume.pending)
            {
                Ok(Read::Batch) => {}
                Ok(Read::CaughtUp { live_from }) => resume.caught_up = Some(live_from),
                Err(error) => {
                    debug!(session = ?self.session, %error, "resume cut");
                    self.resume = None;
                    self.queue.cut();
                    return None;
                }
            }
        }
    }

    /// This session's message for a delivery, stamped `subscriber_recv_unix_nanos`; `None` when
    /// its current filters do not match it (re-matched if it was matched under older ones).
    pub fn personalise(
        &self,
        delivery: Delivery,
        subscriber_recv_unix_nanos: u64,
    ) -> Option<OutboundUpdate> {
        let current = self.current.as_ref()?;
        let matches = if delivery.generation == current.generation {
            delivery.matches
        } else {
            current
                .filters
                .match_view(&UpdateView::new(delivery.update.update()))?
        };
        Some(OutboundUpdate::Shared(PersonalUpdate::new(
            delivery.update,
            Arc::clone(&current.filters),
            matches,
            subscriber_recv_unix_nanos,
        )))
    }

    /// Ends a lagged session: leaves the hub (if the publisher has not removed it already) and
    /// closes the queue. Returns the updates it will never send: those dropped on overflow (the
    /// queue emptied itself then) and any still queued.
    pub fn end_lagged(&mut self) -> u64 {
        self.hub.unregister(self.session);
        self.queue.dropped() + self.queue.close()
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.queue.close();
        if self.current.is_some() {
            self.hub.unregister(self.session);
        }
    }
}
