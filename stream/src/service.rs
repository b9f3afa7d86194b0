//! The `stream.Stream/SubscribeDecoded` service: one session per subscriber, reading its
//! requests and the updates the fan-out hands it (proto/stream.proto; product decisions §A in
//! docs/decisions.md).
//!
//! ```text
//! publisher ─ Feed::publish(SubscribeUpdate) ─► fanout::Hub: match once, encode once
//!                                                  │ try_send into each matching session's queue
//! client ─ SubscribeRequest ─► session ─ Subscriber::personalise ─► OutboundUpdate ─► client
//! ```
//! Session rules:
//! - Nothing is sent before the first request that is not a pure ping (a request with `ping_id`
//!   and an empty `subscriptions` map); that request starts the stream. A client that then closes
//!   its side of the call (as grpcurl does after its last request) keeps receiving.
//! - A request replaces every filter at once, or, when invalid, ends the stream with
//!   `INVALID_ARGUMENT` naming the filter and value (nothing of it is applied). A pure ping keeps
//!   the filters. The next update the session sends already reflects the new filters.
//! - `ping_id` is answered with `pong` before any update produced under that request.
//! - `from_slot` (with the filters of the same request) first replays the recent-slot buffer's
//!   updates of slots from it, through the filters, in publish order, then the live stream without
//!   gap or repeat (`fanout::recent`); `OUT_OF_RANGE` when updates of that slot were evicted
//!   (`FAILED_PRECONDITION` when the server keeps no recent slots). A stream too slow to catch up
//!   is cut as a lagging one. A later request with `from_slot` starts over from that slot.
//! - Slot notifications go to every started session. Each transaction or delta update carries the
//!   ids of the matching filters (and, for deltas, the matching legs) and
//!   `server_timing.subscriber_recv`, stamped when the session takes it off its queue (never
//!   below `publish`).
//! - **Bounded.** Each session has its own queue of at most `subscriber_queue` updates and
//!   `subscriber_queue_bytes` bytes, whose oldest update is at most `subscriber_queue_max_age`
//!   old. The publisher never waits and enforces the bound itself: beyond it the session's queue
//!   is emptied and closed, the session leaves the hub and the lag is counted at once, even when
//!   the session is never polled again (a client that stopped reading blocks it by HTTP/2 flow
//!   control); the stream ends with `RESOURCE_EXHAUSTED` ("subscriber lagged: N updates
//!   dropped") as soon as it runs. At most `max_sessions` streams are open at once, and at most
//!   `max_sessions_per_ip` from one remote address; a call beyond either fails at once with
//!   `RESOURCE_EXHAUSTED` ("too many subscribers") and is counted.
//! - Every end of a stream is counted once by its reason, including a client that cancels or
//!   resets the call (`client_closed`, counted when the stream is dropped without another
//!   reason). A request the server cannot decode (e.g. over the 4 MiB message limit) ends the
//!   stream with its decoding status (`invalid_request`).
//!
//! The tonic service is in [`grpc`], on the session layer the streaming methods share
//! ([`crate::grpc`]: plumbing, places, inbound rules), so that the response type can be the
//! encode-once [`OutboundUpdate`].

pub mod grpc;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use stream_proto::stream::{SubscribeRequest, SubscribeUpdate, subscribe_update::Update};
use tokio::sync::watch;
use tokio_stream::Stream;
use tonic::{Status, Streaming};

use crate::fanout::{
    Hub, LagObserver, OutboundUpdate, QueueBounds, RecentBounds, ResumeError, Subscriber,
};
use crate::filter::{FilterLimits, Filters};
use crate::grpc::inbound::InboundReader;
use crate::grpc::places::{OpenStream, Places};
use crate::grpc::session::{Turn, turn};
use crate::timing::unix_nanos;

pub use crate::grpc::metrics::{DisconnectReason, StreamMetrics};
pub use crate::grpc::places::{Client, PlaceCaps};
/// The session layer's modules, at their former paths.
pub use crate::grpc::{inbound, places};

pub use grpc::StreamServer;

/// A lag is counted when the publisher cuts the session, not when the session next runs (it may
/// never run: a client that stopped reading blocks it).
impl LagObserver for StreamMetrics {
    fn lagged(&self, dropped: u64) {
        self.updates_dropped_lag
            .fetch_add(dropped, Ordering::Relaxed);
        self.disconnected(DisconnectReason::Lagged);
    }
}

/// The sending side of the published updates.
#[derive(Clone, Debug)]
pub struct Feed {
    hub: Arc<Hub>,
}

impl Feed {
    /// Sessions each queue at most `capacity` updates.
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "the subscriber queue must hold at least one update"
        );
        Self {
            hub: Hub::new(capacity),
        }
    }

    /// Sessions' queues bounded by `bounds` (updates, bytes, age of the oldest); no resume.
    pub fn with_bounds(bounds: QueueBounds) -> Self {
        Self {
            hub: Hub::with_bounds(bounds),
        }
    }

    /// As [`Feed::with_bounds`], keeping the updates of the recent slots `recent` allows for
    /// streams that resume (`from_slot`).
    pub fn with_recent(bounds: QueueBounds, recent: RecentBounds) -> Self {
        Self {
            hub: Hub::with_recent(bounds, recent),
        }
    }

    /// Publishes an update to every started session it matches; never waits.
    pub fn publish(&self, update: SubscribeUpdate) {
        self.hub.publish(update);
    }

    /// Started sessions.
    pub fn subscriber_count(&self) -> usize {
        self.hub.session_count()
    }

    /// The fan-out hub behind the feed.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }
}

/// Streams open at once unless configured otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// Streams open at once from one remote address unless configured otherwise.
pub const DEFAULT_MAX_SESSIONS_PER_IP: usize = 100;
/// Streams open at once with one access token unless configured otherwise (tokens on).
pub const DEFAULT_MAX_SESSIONS_PER_TOKEN: usize = 100;

/// The service.
#[derive(Clone)]
pub struct StreamService {
    feed: Feed,
    limits: FilterLimits,
    metrics: Arc<StreamMetrics>,
    shutdown: watch::Receiver<bool>,
    places: Arc<Places>,
}

impl StreamService {
    /// `shutdown` turning true ends every session with `UNAVAILABLE`, so that the server's
    /// graceful shutdown does not wait on open streams.
    pub fn new(
        feed: Feed,
        limits: FilterLimits,
        metrics: Arc<StreamMetrics>,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        Self {
            feed,
            limits,
            metrics,
            shutdown,
            places: Arc::new(Places::new(PlaceCaps {
                total: DEFAULT_MAX_SESSIONS,
                per_ip: DEFAULT_MAX_SESSIONS_PER_IP,
                per_token: None,
            })),
        }
    }

    /// The numbering of the `sequence` numbers this service's streams carry.
    pub fn numbering(&self) -> u64 {
        self.feed.hub.numbering()
    }

    fn with_caps(mut self, change: impl FnOnce(&mut PlaceCaps)) -> Self {
        let mut caps = self.places.caps();
        change(&mut caps);
        self.places = Arc::new(Places::new(caps));
        self
    }

    /// Allows at most `max_sessions` open streams (at least one).
    #[must_use]
    pub fn with_max_sessions(self, max_sessions: usize) -> Self {
        self.with_caps(|caps| caps.total = max_sessions)
    }

    /// Allows at most `max_per_ip` open streams from one remote address (at least one).
    #[must_use]
    pub fn with_max_sessions_per_ip(self, max_per_ip: usize) -> Self {
        self.with_caps(|caps| caps.per_ip = max_per_ip)
    }

    /// Allows at most `max_per_token` open streams per access token (`x-token`, at least one);
    /// for servers that authenticate (without, the token a client sends is not counted).
    #[must_use]
    pub fn with_max_sessions_per_token(self, max_per_token: usize) -> Self {
        self.with_caps(|caps| caps.per_token = Some(max_per_token))
    }

    /// The tonic server of this service (with builders for compression and message sizes).
    pub fn into_server(self) -> StreamServer {
        StreamServer::new(self)
    }

    /// One subscriber's stream of updates, or `RESOURCE_EXHAUSTED` when `max_sessions` streams
    /// are open already, or `max_sessions_per_ip` from the client's address, or
    /// `max_sessions_per_token` with its token.
    pub fn subscribe(
        &self,
        requests: Streaming<SubscribeRequest>,
        client: Client<'_>,
    ) -> Result<impl Stream<Item = Result<OutboundUpdate, Status>> + Send + 'static, Status> {
        let place = OpenStream::admit(&self.places, &self.metrics, client)?;
        Ok(session(
            requests,
            Arc::clone(&self.feed.hub),
            self.limits,
            Arc::clone(&self.metrics),
            self.shutdown.clone(),
            place,
        ))
    }
}

/// Queued deliveries a session sends in one turn before it looks at requests, shutdown and lag
/// again.
const DRAIN_PER_TURN: usize = 64;

/// One subscriber's stream of updates.
fn session(
    requests: Streaming<SubscribeRequest>,
    hub: Arc<Hub>,
    limits: FilterLimits,
    metrics: Arc<StreamMetrics>,
    shutdown: watch::Receiver<bool>,
    place: OpenStream,
) -> impl Stream<Item = Result<OutboundUpdate, Status>> + Send + 'static {
    async_stream::stream! {
        // Dropped with the stream: the place among the open streams is given back, and the end
        // is counted (as `client_closed` unless a reason was recorded).
        let mut place = place;
        let observer: Arc<dyn LagObserver> = metrics.clone();
        let mut subscriber = Subscriber::observed(hub, Some(observer));
        let queue = subscriber.queue();
        // Requests and shutdown come through the reader (aborted when the stream is dropped), so
        // that a turn woken by an update polls two queues and nothing else.
        let (_reader, mut inbound) = InboundReader::spawn(requests, shutdown);
        let mut inbound_open = true;
        loop {
            // A full queue has woken the session (it holds updates), so the lag is seen here or
            // in the drain below without a wake-up of its own.
            if queue.is_lagged() {
                yield Err(lagged(&mut subscriber, &mut place));
                break;
            }
            tokio::select! {
                biased;
                event = inbound.recv(), if inbound_open => {
                    let request = match turn(event, subscriber.is_started(), &mut place) {
                        Turn::Request(request) => request,
                        Turn::Continue => continue,
                        Turn::InboundDone => {
                            inbound_open = false;
                            continue;
                        }
                        Turn::End(status) => {
                            if let Some(status) = status {
                                yield Err(status);
                            }
                            break;
                        }
                    };
                    match apply(&mut subscriber, &request, &limits, &mut place) {
                        Ok(pong) => if let Some(pong) = pong {
                            yield Ok(pong);
                        },
                        Err(status) => {
                            yield Err(status);
                            break;
                        }
                    }
                }
                delivery = subscriber.next() => {
                    let Some(delivery) = delivery else {
                        // Closed by the publisher on overflow: ended at the top of the loop.
                        if queue.is_lagged() {
                            continue;
                        }
                        place.ended(DisconnectReason::Shutdown);
                        break;
                    };
                    // What is already queued goes out in this turn (up to DRAIN_PER_TURN): one
                    // `select!` and one wake-up for a burst instead of one per update, and tonic
                    // coalesces the messages into fewer HTTP/2 writes.
                    let mut next = Some(delivery);
                    let mut taken = 0;
                    while let Some(delivery) = next.take() {
                        if let Some(personal) = subscriber.personalise(delivery, unix_nanos()) {
                            metrics.updates_sent.fetch_add(1, Ordering::Relaxed);
                            yield Ok(personal);
                        }
                        taken += 1;
                        if taken < DRAIN_PER_TURN && !queue.is_lagged() {
                            next = subscriber.try_next();
                        }
                    }
                }
            }
        }
    }
}

/// The status ending a session the publisher cut for its lag (counted there already).
fn lagged(subscriber: &mut Subscriber, place: &mut OpenStream) -> Status {
    let dropped = subscriber.end_lagged();
    place.counted();
    Status::resource_exhausted(format!("subscriber lagged: {dropped} updates dropped"))
}

/// A request: its filters replace the session's (unless it is a pure ping: `ping_id`, no
/// subscriptions, no `from_slot`), `from_slot` resumes; its pong, or the status ending the stream.
fn apply(
    subscriber: &mut Subscriber,
    request: &SubscribeRequest,
    limits: &FilterLimits,
    place: &mut OpenStream,
) -> Result<Option<OutboundUpdate>, Status> {
    let pure_ping = request.ping_id.is_some()
        && request.subscriptions.is_empty()
        && request.from_slot.is_none();
    if !pure_ping {
        match Filters::compile(&request.subscriptions, limits) {
            Ok(compiled) => subscriber.replace(compiled),
            Err(error) => {
                let status = Status::invalid_argument(error.to_string());
                return Err(place.ending(DisconnectReason::InvalidFilter, status));
            }
        }
    }
    if let Some(from_slot) = request.from_slot
        && let Err(error) = subscriber.resume(from_slot)
    {
        return Err(place.ending(DisconnectReason::ResumeRefused, resume_status(&error)));
    }
    Ok(request.ping_id.map(OutboundUpdate::pong))
}

/// Trailer of an `OUT_OF_RANGE` refusal of `from_slot`: the oldest slot whose updates are all
/// still kept.
pub const OLDEST_SLOT_HEADER: &str = "x-resume-oldest-slot";

/// Response header naming the numbering of the stream's `sequence` numbers ([`Hub::numbering`]),
/// in decimal.
pub const NUMBERING_HEADER: &str = "x-stream-numbering";

/// The status ending a stream whose `from_slot` cannot be served.
fn resume_status(error: &ResumeError) -> Status {
    match error {
        ResumeError::TooOld {
            oldest_complete, ..
        } => {
            let mut status = Status::out_of_range(error.to_string());
            // For programs (a relay resumes from there): the slot the message names.
            status
                .metadata_mut()
                .insert(OLDEST_SLOT_HEADER, (*oldest_complete).into());
            status
        }
        ResumeError::Disabled | ResumeError::Overtaken { .. } => {
            Status::failed_precondition(error.to_string())
        }
    }
}

/// The per-session path this module used before the fan-out (one deep clone and one full encode
/// per subscriber): kept as the baseline of `bench/benches/fanout.rs`. The subscriber's copy of
/// a published update, with matched filters and legs and the `subscriber_recv` stamp; `None`
/// when the filters do not match.
pub fn personalise(
    update: &SubscribeUpdate,
    filters: &Filters,
    subscriber_recv_unix_nanos: u64,
) -> Option<SubscribeUpdate> {
    let matched = filters.matches(update)?;
    let mut personal = update.clone();
    let stamp = |timing: &mut Option<stream_proto::stream::ServerTiming>| {
        if let Some(timing) = timing.as_mut() {
            timing.subscriber_recv_unix_nanos =
                subscriber_recv_unix_nanos.max(timing.publish_unix_nanos);
        }
    };
    match personal.update.as_mut() {
        Some(Update::Transaction(transaction)) => {
            transaction.matched_filters = matched.filter_ids;
            stamp(&mut transaction.server_timing);
        }
        Some(Update::Delta(delta)) => {
            delta.matched_leg_indices = matched.leg_indices;
            if let Some(envelope) = delta.envelope.as_mut() {
                envelope.matched_filters = matched.filter_ids;
                stamp(&mut envelope.server_timing);
            }
        }
        _ => {}
    }
    Some(personal)
}
