//! The `geyser.Geyser` service on the stream's port: `SubscribeDeshred` through the shared tonic
//! plumbing of [`crate::grpc::method`] (so its responses can be the encode-once
//! [`OutboundDeshred`]), `Ping`, `GetVersion` and `GetSlot` answered by the published crate's
//! generated server, and every other method `UNIMPLEMENTED` with a message saying what this
//! server is.

use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::watch;
use tonic::codegen::{CompressionEncoding, Service, StdError, http};
use tonic::{Request, Response, Status, Streaming};
use yellowstone_grpc_proto::geyser::geyser_server::{self, Geyser};
use yellowstone_grpc_proto::geyser::{
    GetBlockHeightRequest, GetBlockHeightResponse, GetLatestBlockhashRequest,
    GetLatestBlockhashResponse, GetSlotRequest, GetSlotResponse, GetVersionRequest,
    GetVersionResponse, IsBlockhashValidRequest, IsBlockhashValidResponse, PingRequest,
    PongResponse, SubscribeDeshredRequest, SubscribeReplayInfoRequest, SubscribeReplayInfoResponse,
    SubscribeRequest, SubscribeUpdate, SubscribeUpdateDeshred,
};

use super::feed::DeshredFeed;
use super::outbound::OutboundDeshred;
use super::session::{SessionParts, session};
use crate::filter::FilterLimits;
use crate::grpc::method::{self, CodecConfig, OutboundStream, Routed, StreamingMethod};
use crate::grpc::places::{Client, OpenStream, PlaceCaps, Places};

/// The streaming method's path.
pub const SUBSCRIBE_DESHRED_PATH: &str = "/geyser.Geyser/SubscribeDeshred";

/// The version of Yellowstone's proto this server speaks (the crate it is built on).
pub const YELLOWSTONE_PROTO_VERSION: &str = "12.6.0";

/// What the sessions share.
struct Shared {
    feed: DeshredFeed,
    limits: FilterLimits,
    places: Arc<Places>,
    shutdown: watch::Receiver<bool>,
}

/// The `geyser.Geyser` service for `tonic::transport::Server::add_service`.
#[derive(Clone)]
pub struct GeyserServer {
    shared: Arc<Shared>,
    unary: geyser_server::GeyserServer<Unary>,
    codec: CodecConfig,
}

impl GeyserServer {
    /// Sessions read `feed` under `limits`, within `caps`; `shutdown` turning true ends them.
    pub fn new(
        feed: DeshredFeed,
        limits: FilterLimits,
        caps: PlaceCaps,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        let unary = geyser_server::GeyserServer::new(Unary { feed: feed.clone() });
        Self {
            shared: Arc::new(Shared {
                feed,
                limits,
                places: Arc::new(Places::new(caps)),
                shutdown,
            }),
            unary,
            codec: CodecConfig::default(),
        }
    }

    /// Enables decompressing requests with the given encoding.
    #[must_use]
    pub fn accept_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.codec.accept_compressed(encoding);
        self.unary = self.unary.accept_compressed(encoding);
        self
    }

    /// Compresses responses with the given encoding, if the client supports it.
    #[must_use]
    pub fn send_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.codec.send_compressed(encoding);
        self.unary = self.unary.send_compressed(encoding);
        self
    }
}

/// `SubscribeDeshred`: a place among the deshred sessions, then the session.
impl StreamingMethod for Shared {
    type Request = SubscribeDeshredRequest;
    type Outbound = OutboundDeshred;

    fn open(
        &self,
        requests: Streaming<SubscribeDeshredRequest>,
        client: Client<'_>,
    ) -> Result<Response<OutboundStream<OutboundDeshred>>, Status> {
        let place = OpenStream::admit(&self.places, self.feed.sessions(), client)?;
        let parts = SessionParts {
            feed: self.feed.clone(),
            limits: self.limits,
            shutdown: self.shutdown.clone(),
            place,
        };
        let stream: OutboundStream<OutboundDeshred> = Box::pin(session(requests, parts));
        Ok(Response::new(stream))
    }
}

impl GeyserServer {
    /// `SubscribeDeshred` to its session, every other path to the generated server.
    fn route<B>(&mut self, request: http::Request<B>) -> Routed
    where
        B: tonic::codegen::Body + Send + 'static,
        B::Error: Into<StdError> + Send + 'static,
    {
        if request.uri().path() != SUBSCRIBE_DESHRED_PATH {
            return self.unary.call(request);
        }
        method::serve(Arc::clone(&self.shared), self.codec, request)
    }
}

method::tonic_service!(GeyserServer, "geyser.Geyser");

/// The unary methods (and `Subscribe`, which needs a validator).
struct Unary {
    feed: DeshredFeed,
}

/// A method this server does not serve, and why.
fn not_here(method: &str) -> Status {
    Status::unimplemented(format!(
        "{method}: this is a Solana shred appliance; it serves geyser.Geyser/SubscribeDeshred \
         (transactions from shreds, before execution), Ping, GetVersion and GetSlot. \
         {method} needs a validator's bank (Yellowstone's geyser plugin)"
    ))
}

type SubscribeStream =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<SubscribeUpdate, Status>> + Send + 'static>>;
type UnusedDeshredStream = Pin<
    Box<dyn tokio_stream::Stream<Item = Result<SubscribeUpdateDeshred, Status>> + Send + 'static>,
>;

#[tonic::async_trait]
impl Geyser for Unary {
    type SubscribeStream = SubscribeStream;
    type SubscribeDeshredStream = UnusedDeshredStream;

    async fn subscribe(
        &self,
        _request: Request<Streaming<SubscribeRequest>>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        Err(not_here("Subscribe"))
    }

    async fn subscribe_deshred(
        &self,
        _request: Request<Streaming<SubscribeDeshredRequest>>,
    ) -> Result<Response<Self::SubscribeDeshredStream>, Status> {
        // Routed to the encode-once session by `GeyserServer` before this server sees it.
        Err(Status::internal(
            "SubscribeDeshred is served by GeyserServer",
        ))
    }

    async fn subscribe_replay_info(
        &self,
        _request: Request<SubscribeReplayInfoRequest>,
    ) -> Result<Response<SubscribeReplayInfoResponse>, Status> {
        Err(not_here("SubscribeReplayInfo"))
    }

    async fn ping(&self, request: Request<PingRequest>) -> Result<Response<PongResponse>, Status> {
        Ok(Response::new(PongResponse {
            count: request.into_inner().count,
        }))
    }

    async fn get_latest_blockhash(
        &self,
        _request: Request<GetLatestBlockhashRequest>,
    ) -> Result<Response<GetLatestBlockhashResponse>, Status> {
        Err(not_here("GetLatestBlockhash"))
    }

    async fn get_block_height(
        &self,
        _request: Request<GetBlockHeightRequest>,
    ) -> Result<Response<GetBlockHeightResponse>, Status> {
        Err(not_here("GetBlockHeight"))
    }

    async fn get_slot(
        &self,
        _request: Request<GetSlotRequest>,
    ) -> Result<Response<GetSlotResponse>, Status> {
        Ok(Response::new(GetSlotResponse {
            slot: self.feed.highest_slot(),
        }))
    }

    async fn is_blockhash_valid(
        &self,
        _request: Request<IsBlockhashValidRequest>,
    ) -> Result<Response<IsBlockhashValidResponse>, Status> {
        Err(not_here("IsBlockhashValid"))
    }

    async fn get_version(
        &self,
        _request: Request<GetVersionRequest>,
    ) -> Result<Response<GetVersionResponse>, Status> {
        Ok(Response::new(GetVersionResponse {
            version: version_json(),
        }))
    }
}

/// `GetVersion`'s JSON string, in the shape Yellowstone's plugin gives (`version`, `extra`).
fn version_json() -> String {
    format!(
        concat!(
            r#"{{"version":{{"package":"appliance","version":"{}","proto":"{}"}},"#,
            r#""extra":{{"server":"solana shred appliance","source":"shreds, before execution"}}}}"#
        ),
        env!("CARGO_PKG_VERSION"),
        YELLOWSTONE_PROTO_VERSION
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_version_is_json_in_yellowstones_shape() {
        let value: serde_json::Value = serde_json::from_str(&version_json()).unwrap();
        assert_eq!(value["version"]["proto"], YELLOWSTONE_PROTO_VERSION);
        assert_eq!(value["version"]["package"], "appliance");
        assert!(value["extra"].is_object());
    }
}
