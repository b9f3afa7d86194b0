//! A session over a broadcast ring, with the session rules of Yellowstone's own server
//! (docs/yellowstone.md), for the `geyser.Geyser` methods: the response starts at once (its
//! clients send nothing before they have it) and a session without filters gets only pings; each
//! request replaces the filters, except a request with a ping, which is answered with a pong and
//! changes nothing; a refused filter ends the stream with the method's status
//! (`invalid_filter`); a server ping every [`PING_INTERVAL`]; a client that closes its side keeps
//! receiving. A session more than the ring behind is cut (`lagged`). A method provides its filter
//! and its encoder as a [`RingMethod`].

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;
use tonic::{Status, Streaming};

use super::inbound::InboundReader;
use super::metrics::{DisconnectReason, StreamMetrics};
use super::places::OpenStream;
use super::session::{Turn, turn};

/// How often the server pings an open session (Yellowstone's interval; the first at once).
pub const PING_INTERVAL: Duration = Duration::from_secs(10);

/// What a method served over a broadcast ring provides: its ring, its filters, its encoder.
pub trait RingMethod: Send + Sync + 'static {
    /// What the client sends.
    type Request: prost::Message + Default + Send + 'static;
    /// What the ring carries (published once, shared by every session).
    type Item: Send + Sync + 'static;
    /// A session's compiled filters; the default matches nothing.
    type Filters: Default + Send + 'static;
    /// What a session sends.
    type Outbound: Send + 'static;

    /// A new receiver of the ring.
    fn items(&self) -> broadcast::Receiver<Arc<Self::Item>>;
    /// The sessions' counters (sent, dropped by lag).
    fn sessions(&self) -> &StreamMetrics;
    /// The answer to a request with a ping (the request then changes nothing), or `None`.
    fn pong(&self, request: &Self::Request) -> Option<Self::Outbound>;
    /// A request's filters, or the status refusing them.
    fn compile(&self, request: &Self::Request) -> Result<Self::Filters, Status>;
    /// `item` as a session with `filters` gets it, if any of them match.
    fn deliver(&self, item: &Self::Item, filters: &Self::Filters) -> Option<Self::Outbound>;
    /// The server's ping.
    fn ping(&self) -> Self::Outbound;
    /// The status cutting a session `missed` items behind.
    fn lagged(&self, missed: u64) -> Status;
}

/// One session's stream of messages.
pub fn session<M: RingMethod>(
    requests: Streaming<M::Request>,
    method: Arc<M>,
    shutdown: watch::Receiver<bool>,
    place: OpenStream,
) -> impl tokio_stream::Stream<Item = Result<M::Outbound, Status>> + Send + 'static {
    async_stream::stream! {
        let mut place = place;
        let mut items = method.items();
        let (_reader, mut inbound) = InboundReader::spawn(requests, shutdown);
        let mut inbound_open = true;
        let mut filters = M::Filters::default();
        let mut pings = tokio::time::interval(PING_INTERVAL);
        loop {
            let step = tokio::select! {
                biased;
                event = inbound.recv(), if inbound_open => match turn(event, true, &mut place) {
                    Turn::Request(request) => apply(&*method, &request, &mut filters, &mut place),
                    Turn::Continue => Step::Nothing,
                    Turn::InboundDone => {
                        inbound_open = false;
                        Step::Nothing
                    }
                    Turn::End(status) => Step::End(status),
                },
                received = items.recv() => receive(&*method, received, &filters, &mut place),
                _ = pings.tick() => Step::Send(method.ping()),
            };
            match step {
                Step::Send(outbound) => yield Ok(outbound),
                Step::Nothing => {}
                Step::End(status) => {
                    if let Some(status) = status {
                        yield Err(status);
                    }
                    break;
                }
            }
        }
    }
}

/// What a session does next.
enum Step<T> {
    Send(T),
    Nothing,
    /// The stream ends (its end counted), with this last status when there is one.
    End(Option<Status>),
}

/// A request: its pong, or its filters in place of the session's.
fn apply<M: RingMethod>(
    method: &M,
    request: &M::Request,
    filters: &mut M::Filters,
    place: &mut OpenStream,
) -> Step<M::Outbound> {
    if let Some(pong) = method.pong(request) {
        return Step::Send(pong);
    }
    match method.compile(request) {
        Ok(compiled) => {
            *filters = compiled;
            Step::Nothing
        }
        Err(status) => Step::End(Some(place.ending(DisconnectReason::InvalidFilter, status))),
    }
}

/// An item off the ring, as this session gets it; a lag cuts the session.
fn receive<M: RingMethod>(
    method: &M,
    received: Result<Arc<M::Item>, RecvError>,
    filters: &M::Filters,
    place: &mut OpenStream,
) -> Step<M::Outbound> {
    match received {
        Ok(item) => match method.deliver(&item, filters) {
            Some(outbound) => {
                method
                    .sessions()
                    .updates_sent
                    .fetch_add(1, Ordering::Relaxed);
                Step::Send(outbound)
            }
            None => Step::Nothing,
        },
        Err(RecvError::Lagged(missed)) => {
            let sessions = method.sessions();
            sessions
                .updates_dropped_lag
                .fetch_add(missed, Ordering::Relaxed);
            Step::End(Some(
                place.ending(DisconnectReason::Lagged, method.lagged(missed)),
            ))
        }
        // Ended without a reason of its own: counted as `client_closed` when dropped.
        Err(RecvError::Closed) => Step::End(None),
    }
}
