//! The tonic `stream.Stream/SubscribeDecoded` service: one session per subscriber, reading its
//! requests and the published updates (specification §4.1, §6; product decisions §A).
//!
//! ```text
//! publisher ─ Feed::publish(SubscribeUpdate) ─► bounded broadcast ring (Arc, shared by all)
//!                                                   │ one receiver per started session
//! client ─ SubscribeRequest ─► session ─ Filters::matches ─► personalised update ─► client
//! ```
//! Session rules:
//! - Nothing is sent before the first request that is not a pure ping (a request with `ping_id`
//!   and an empty `subscriptions` map); that request starts the stream. A client that then closes
//!   its side of the call (as grpcurl does after its last request) keeps receiving.
//! - A request replaces every filter at once, or, when invalid, ends the stream with
//!   `INVALID_ARGUMENT` naming the filter and value (nothing of it is applied). A pure ping keeps
//!   the filters.
//! - `ping_id` is answered with `pong` before any update produced under that request.
//! - Slot notifications pass every filter. Each transaction or delta update carries the ids of the
//!   matching filters (and, for deltas, the matching legs) and `server_timing.subscriber_recv`,
//!   stamped when the session takes it off the ring.
//! - **Bounded.** A session's queue is its window in the ring (`subscriber_queue` updates). The
//!   publisher never waits: a session that falls a whole ring behind ends with
//!   `RESOURCE_EXHAUSTED` ("subscriber lagged: N updates dropped") and the lag is counted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use stream_proto::stream::{
    self, SubscribeRequest, SubscribeUpdate, stream_server, subscribe_update::Update,
};
use tokio::sync::{broadcast, watch};
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use crate::filter::{FilterLimits, Filters};

/// Why a session ended: one variant per reason, the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisconnectReason {
    ClientClosed,
    InvalidFilter,
    Lagged,
    Shutdown,
}

impl DisconnectReason {
    pub const ALL: [DisconnectReason; 4] = [
        Self::ClientClosed,
        Self::InvalidFilter,
        Self::Lagged,
        Self::Shutdown,
    ];

    pub const fn label(self) -> &'static str {
        match self {
            Self::ClientClosed => "client_closed",
            Self::InvalidFilter => "invalid_filter",
            Self::Lagged => "lagged",
            Self::Shutdown => "shutdown",
        }
    }
}

/// Session counters (exported by the appliance's metrics endpoint).
#[derive(Debug, Default)]
pub struct StreamMetrics {
    pub sessions_started: AtomicU64,
    pub updates_sent: AtomicU64,
    pub updates_dropped_lag: AtomicU64,
    pub disconnects: [AtomicU64; DisconnectReason::ALL.len()],
}

impl StreamMetrics {
    fn disconnected(&self, reason: DisconnectReason) {
        self.disconnects[reason as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// The sending side of the published updates.
#[derive(Clone)]
pub struct Feed {
    sender: broadcast::Sender<Arc<SubscribeUpdate>>,
}

impl Feed {
    /// A ring of `capacity` updates: each subscriber's queue bound.
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "the subscriber queue must hold at least one update"
        );
        let (sender, _) = broadcast::channel(capacity);
        Self { sender }
    }

    /// Publishes an update to every started session; never waits.
    pub fn publish(&self, update: SubscribeUpdate) {
        // An error only means that no session is listening.
        let _ = self.sender.send(Arc::new(update));
    }

    pub fn subscriber_count(&self) -> usize {
        self.sender.receiver_count()
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<SubscribeUpdate>> {
        self.sender.subscribe()
    }
}

/// The service.
#[derive(Clone)]
pub struct StreamService {
    feed: Feed,
    limits: FilterLimits,
    metrics: Arc<StreamMetrics>,
    shutdown: watch::Receiver<bool>,
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
        }
    }

    /// The tonic server wrapper of this service.
    pub fn into_server(self) -> stream_server::StreamServer<Self> {
        stream_server::StreamServer::new(self)
    }
}

type UpdateStream = std::pin::Pin<Box<dyn Stream<Item = Result<SubscribeUpdate, Status>> + Send>>;

#[tonic::async_trait]
impl stream_server::Stream for StreamService {
    type SubscribeDecodedStream = UpdateStream;

    async fn subscribe_decoded(
        &self,
        request: Request<Streaming<SubscribeRequest>>,
    ) -> Result<Response<Self::SubscribeDecodedStream>, Status> {
        self.metrics
            .sessions_started
            .fetch_add(1, Ordering::Relaxed);
        let session = session(
            request.into_inner(),
            self.feed.clone(),
            self.limits,
            Arc::clone(&self.metrics),
            self.shutdown.clone(),
        );
        Ok(Response::new(Box::pin(session)))
    }
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}

fn pong(ping_id: i32) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Pong(ping_id)),
    }
}

/// One subscriber's stream of updates.
fn session(
    mut requests: Streaming<SubscribeRequest>,
    feed: Feed,
    limits: FilterLimits,
    metrics: Arc<StreamMetrics>,
    mut shutdown: watch::Receiver<bool>,
) -> impl Stream<Item = Result<SubscribeUpdate, Status>> {
    async_stream::stream! {
        let mut filters: Option<Filters> = None;
        let mut updates: Option<broadcast::Receiver<Arc<SubscribeUpdate>>> = None;
        // A client may half-close its request stream (grpcurl does) and keep receiving.
        let mut requests_open = true;
        loop {
            if *shutdown.borrow() {
                metrics.disconnected(DisconnectReason::Shutdown);
                yield Err(Status::unavailable("server shutting down"));
                break;
            }
            tokio::select! {
                _ = shutdown.changed() => continue,
                request = requests.message(), if requests_open => {
                    let request = match request {
                        Ok(Some(request)) => request,
                        Ok(None) if updates.is_some() => {
                            requests_open = false;
                            continue;
                        }
                        Ok(None) | Err(_) => {
                            metrics.disconnected(DisconnectReason::ClientClosed);
                            break;
                        }
                    };
                    let pure_ping = request.ping_id.is_some() && request.subscriptions.is_empty();
                    if !pure_ping {
                        match Filters::compile(&request.subscriptions, &limits) {
                            Ok(compiled) => filters = Some(compiled),
                            Err(error) => {
                                metrics.disconnected(DisconnectReason::InvalidFilter);
                                yield Err(Status::invalid_argument(error.to_string()));
                                break;
                            }
                        }
                        if updates.is_none() {
                            updates = Some(feed.subscribe());
                        }
                    }
                    if let Some(ping_id) = request.ping_id {
                        yield Ok(pong(ping_id));
                    }
                }
                received = next_update(&mut updates) => {
                    match received {
                        Ok(update) => {
                            let Some(filters) = filters.as_ref() else { continue };
                            if let Some(personal) = personalise(&update, filters, unix_nanos()) {
                                metrics.updates_sent.fetch_add(1, Ordering::Relaxed);
                                yield Ok(personal);
                            }
                        }
                        Err(broadcast::error::RecvError::Lagged(missed)) => {
                            metrics.updates_dropped_lag.fetch_add(missed, Ordering::Relaxed);
                            metrics.disconnected(DisconnectReason::Lagged);
                            yield Err(Status::resource_exhausted(format!(
                                "subscriber lagged: {missed} updates dropped"
                            )));
                            break;
                        }
                        Err(broadcast::error::RecvError::Closed) => {
                            metrics.disconnected(DisconnectReason::Shutdown);
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// The next update of a started session; never resolves before the stream starts.
async fn next_update(
    updates: &mut Option<broadcast::Receiver<Arc<SubscribeUpdate>>>,
) -> Result<Arc<SubscribeUpdate>, broadcast::error::RecvError> {
    match updates {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// The subscriber's copy of a published update: matched filters and legs, and the
/// `subscriber_recv` stamp; `None` when the filters do not match.
pub fn personalise(
    update: &SubscribeUpdate,
    filters: &Filters,
    subscriber_recv_unix_nanos: u64,
) -> Option<SubscribeUpdate> {
    let matched = filters.matches(update)?;
    let mut personal = update.clone();
    let stamp = |timing: &mut Option<stream::ServerTiming>| {
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
