//! One `SubscribeDeshred` session: the ring session of [`crate::grpc::ring`] (Yellowstone's own
//! session rules, docs/yellowstone.md: headers at once, each request replaces the filters, a ping
//! answered with a pong, a server ping every 10 s, a bad filter ending the stream with
//! `INVALID_ARGUMENT` and the reason, a session more than the feed's ring behind cut with
//! `RESOURCE_EXHAUSTED`), with the deshred feed's filters and messages.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::{broadcast, watch};
use tonic::{Status, Streaming};
use tracing::debug;
use yellowstone_grpc_proto::geyser::subscribe_update_deshred::UpdateOneof;
use yellowstone_grpc_proto::geyser::{
    SubscribeDeshredRequest, SubscribeUpdateDeshred, SubscribeUpdatePing, SubscribeUpdatePong,
};

use super::feed::DeshredFeed;
use super::filter::DeshredFilters;
use super::item::{DeshredItem, timestamp};
use super::outbound::{DeshredFrame, OutboundDeshred};
use crate::filter::FilterLimits;
use crate::grpc::metrics::StreamMetrics;
use crate::grpc::places::OpenStream;
use crate::grpc::ring::{self, RingMethod};
use crate::timing::unix_nanos;

pub use crate::grpc::ring::PING_INTERVAL;

/// What a session runs with.
pub struct SessionParts {
    pub feed: DeshredFeed,
    pub limits: FilterLimits,
    pub shutdown: watch::Receiver<bool>,
    pub place: OpenStream,
}

/// The session's stream of updates.
pub fn session(
    requests: Streaming<SubscribeDeshredRequest>,
    parts: SessionParts,
) -> impl tokio_stream::Stream<Item = Result<OutboundDeshred, Status>> + Send + 'static {
    let SessionParts {
        feed,
        limits,
        shutdown,
        place,
    } = parts;
    ring::session(
        requests,
        Arc::new(Deshred { feed, limits }),
        shutdown,
        place,
    )
}

/// `SubscribeDeshred` as a ring method: the feed's ring, its filters, its messages.
pub struct Deshred {
    pub feed: DeshredFeed,
    pub limits: FilterLimits,
}

impl RingMethod for Deshred {
    type Request = SubscribeDeshredRequest;
    type Item = DeshredItem;
    type Filters = DeshredFilters;
    type Outbound = OutboundDeshred;

    fn items(&self) -> broadcast::Receiver<Arc<DeshredItem>> {
        self.feed.subscribe()
    }

    fn sessions(&self) -> &StreamMetrics {
        self.feed.sessions()
    }

    fn pong(&self, request: &SubscribeDeshredRequest) -> Option<OutboundDeshred> {
        let ping = request.ping.as_ref()?;
        self.feed.counters().pongs.fetch_add(1, Ordering::Relaxed);
        Some(own(UpdateOneof::Pong(SubscribeUpdatePong { id: ping.id })))
    }

    fn compile(&self, request: &SubscribeDeshredRequest) -> Result<DeshredFilters, Status> {
        DeshredFilters::compile(request, &self.limits).map_err(|error| {
            debug!(reason = error.label(), %error, "deshred filter refused");
            let counters = self.feed.counters();
            counters.requests_refused.fetch_add(1, Ordering::Relaxed);
            Status::invalid_argument(format!("failed to create deshred filter: {error}"))
        })
    }

    fn deliver(&self, item: &DeshredItem, filters: &DeshredFilters) -> Option<OutboundDeshred> {
        deliver(item, filters)
    }

    fn ping(&self) -> OutboundDeshred {
        own(UpdateOneof::Ping(SubscribeUpdatePing {}))
    }

    fn lagged(&self, missed: u64) -> Status {
        Status::resource_exhausted(format!(
            "subscriber lagged: {missed} deshred updates dropped (grpc.deshred_queue)"
        ))
    }
}

/// `item` as this session gets it, if any of its filters match.
fn deliver(item: &DeshredItem, filters: &DeshredFilters) -> Option<OutboundDeshred> {
    match item {
        DeshredItem::Transaction(transaction) => {
            let names = filters.transaction_matches(transaction);
            (!names.is_empty()).then(|| {
                OutboundDeshred::Shared(DeshredFrame {
                    filters: names,
                    body: transaction.body.clone(),
                })
            })
        }
        DeshredItem::Slot(update) => {
            let names = filters.slot_matches(update);
            (!names.is_empty())
                .then(|| OutboundDeshred::Owned(Box::new(update.to_update(names, unix_nanos()))))
        }
    }
}

/// A message of the session's own, stamped now.
fn own(update: UpdateOneof) -> OutboundDeshred {
    OutboundDeshred::Owned(Box::new(SubscribeUpdateDeshred {
        filters: Vec::new(),
        update_oneof: Some(update),
        created_at: Some(timestamp(unix_nanos())),
    }))
}
