//! The rules every streaming session shares for what comes in: a request to apply, a client that
//! closes its side (it keeps receiving once its stream has started; before, the stream ends), a
//! request that cannot be decoded (`invalid_request`, its status), the server's shutdown
//! (`UNAVAILABLE`); each end counted once on the session's place.

use tonic::Status;

use super::inbound::Inbound;
use super::metrics::DisconnectReason;
use super::places::OpenStream;

/// What a session does with an inbound event.
#[derive(Debug)]
pub enum Turn<R> {
    /// Apply the client's request.
    Request(R),
    /// Nothing to do: the client closed its side and keeps receiving.
    Continue,
    /// Nothing more can come in (requests closed, shutdown sender gone): keep streaming.
    InboundDone,
    /// The stream ends (counted), with this last status when there is one.
    End(Option<Status>),
}

/// `event` (from [`InboundReader`](super::inbound::InboundReader)) as a session takes it; once
/// `started`, a client that closes its side keeps receiving. Ends are counted on `place`.
pub fn turn<R>(event: Option<Inbound<R>>, started: bool, place: &mut OpenStream) -> Turn<R> {
    match event {
        Some(Inbound::Request(request)) => Turn::Request(request),
        Some(Inbound::Shutdown) => Turn::End(Some(place.ending(
            DisconnectReason::Shutdown,
            Status::unavailable("server shutting down"),
        ))),
        // A client may half-close its request stream (grpcurl does) and keep receiving once it
        // has started the stream.
        Some(Inbound::Closed) if started => Turn::Continue,
        None if started => Turn::InboundDone,
        Some(Inbound::Invalid(status)) => {
            Turn::End(Some(place.ending(DisconnectReason::InvalidRequest, status)))
        }
        Some(Inbound::Closed | Inbound::Failed) | None => {
            place.ended(DisconnectReason::ClientClosed);
            Turn::End(None)
        }
    }
}
