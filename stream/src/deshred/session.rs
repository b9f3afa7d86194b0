//! One `SubscribeDeshred` session, with the rules of Yellowstone's own server (docs/yellowstone.md):
//! the response starts at once (its clients send nothing before they have it) and a session
//! without filters gets only pings; each request replaces the filters, except a request with
//! `ping`, which is answered with `pong` and changes nothing; a bad filter ends the stream with
//! `INVALID_ARGUMENT` and the reason; a server ping every 10 s; a client that closes its side
//! keeps receiving. A session more than the feed's ring behind is cut with `RESOURCE_EXHAUSTED`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

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
use super::outbound::OutboundDeshred;
use crate::filter::FilterLimits;
use crate::service::DisconnectReason;
use crate::service::inbound::{Inbound, InboundReader};
use crate::service::places::OpenStream;
use crate::timing::unix_nanos;

/// How often the server pings an open session (Yellowstone's interval; the first at once).
pub const PING_INTERVAL: Duration = Duration::from_secs(10);

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
    async_stream::stream! {
        let SessionParts { feed, limits, shutdown, mut place } = parts;
        let mut items = feed.subscribe();
        let (_reader, mut inbound) = InboundReader::spawn(requests, shutdown);
        let mut inbound_open = true;
        let mut filters = DeshredFilters::default();
        let mut pings = tokio::time::interval(PING_INTERVAL);
        loop {
            tokio::select! {
                biased;
                event = inbound.recv(), if inbound_open => match event {
                    Some(Inbound::Request(request)) => {
                        if let Some(ping) = request.ping {
                            feed.counters().pongs.fetch_add(1, Ordering::Relaxed);
                            yield Ok(own(UpdateOneof::Pong(SubscribeUpdatePong { id: ping.id })));
                            continue;
                        }
                        match DeshredFilters::compile(&request, &limits) {
                            Ok(compiled) => filters = compiled,
                            Err(error) => {
                                debug!(reason = error.label(), %error, "deshred filter refused");
                                feed.counters().requests_refused.fetch_add(1, Ordering::Relaxed);
                                place.ended(DisconnectReason::InvalidFilter);
                                yield Err(Status::invalid_argument(format!(
                                    "failed to create deshred filter: {error}"
                                )));
                                break;
                            }
                        }
                    }
                    // Half-closed: keep streaming (the reader still watches the shutdown).
                    Some(Inbound::Closed) => {}
                    Some(Inbound::Shutdown) => {
                        place.ended(DisconnectReason::Shutdown);
                        yield Err(Status::unavailable("server shutting down"));
                        break;
                    }
                    Some(Inbound::Invalid(status)) => {
                        place.ended(DisconnectReason::InvalidRequest);
                        yield Err(status);
                        break;
                    }
                    Some(Inbound::Failed) => break,
                    None => inbound_open = false,
                },
                received = items.recv() => match received {
                    Ok(item) => {
                        if let Some(update) = deliver(&item, &filters) {
                            feed.sessions().updates_sent.fetch_add(1, Ordering::Relaxed);
                            yield Ok(update);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        feed.sessions().updates_dropped_lag.fetch_add(missed, Ordering::Relaxed);
                        place.ended(DisconnectReason::Lagged);
                        yield Err(Status::resource_exhausted(format!(
                            "subscriber lagged: {missed} deshred updates dropped (grpc.deshred_queue)"
                        )));
                        break;
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                _ = pings.tick() => yield Ok(own(UpdateOneof::Ping(SubscribeUpdatePing {}))),
            }
        }
    }
}

/// `item` as this session gets it, if any of its filters match.
fn deliver(item: &Arc<DeshredItem>, filters: &DeshredFilters) -> Option<OutboundDeshred> {
    match item.as_ref() {
        DeshredItem::Transaction(transaction) => {
            let names = filters.transaction_matches(transaction);
            (!names.is_empty()).then(|| OutboundDeshred::Shared {
                filters: names,
                body: transaction.body.clone(),
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
