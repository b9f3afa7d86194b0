//! `Subscriber`: the session's side of the fan-out: its queue's receiving end and its current
//! registration. It turns each delivery into the session's outbound message, re-matching a
//! delivery made under filters that the session has replaced since, so that the first update
//! after a new request already reflects it. Dropping it unregisters the session.

use std::sync::Arc;

use super::encode::{OutboundUpdate, PersonalUpdate};
use super::hub::Hub;
use super::queue::{Delivery, LagObserver, SessionQueue};
use super::registration::{Registration, SessionId};
use crate::filter::{Filters, UpdateView};

/// One session's subscription.
#[derive(Debug)]
pub struct Subscriber {
    hub: Arc<Hub>,
    session: SessionId,
    queue: Arc<SessionQueue>,
    current: Option<Arc<Registration>>,
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

    /// The next delivery; pending until the stream has started. `None` once the queue is closed.
    pub async fn next(&mut self) -> Option<Delivery> {
        if self.current.is_none() {
            return std::future::pending().await;
        }
        self.queue.recv().await
    }

    /// The next delivery if one is queued.
    pub fn try_next(&mut self) -> Option<Delivery> {
        self.queue.try_recv()
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
        Some(OutboundUpdate::Personal(PersonalUpdate::new(
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
