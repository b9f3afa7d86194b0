//! The tonic service of `stream.Stream/SubscribeDecoded`, after the generated
//! `stream_server::StreamServer` (same path, same service name, same compression and message-size
//! builders) but on the shared plumbing of [`crate::grpc::method`], so that the response messages
//! are the encode-once [`OutboundUpdate`].

use std::sync::Arc;

use stream_proto::stream::SubscribeRequest;
use tonic::codegen::{CompressionEncoding, InterceptedService, StdError, http};
use tonic::{Status, Streaming};

use super::{Client, NUMBERING_HEADER, StreamService};
use crate::fanout::OutboundUpdate;
use crate::grpc::method::{self, CodecConfig, OutboundStream, Routed, StreamingMethod};

/// The gRPC method path.
pub const SUBSCRIBE_DECODED_PATH: &str = "/stream.Stream/SubscribeDecoded";

/// The stream of one session's messages.
pub type UpdateStream = OutboundStream<OutboundUpdate>;

/// The `stream.Stream` service for `tonic::transport::Server::add_service`.
#[derive(Clone)]
pub struct StreamServer {
    inner: Arc<StreamService>,
    codec: CodecConfig,
}

impl StreamServer {
    pub fn new(service: StreamService) -> Self {
        Self {
            inner: Arc::new(service),
            codec: CodecConfig::default(),
        }
    }

    /// Wraps the server with an interceptor (e.g. `x-token` authentication).
    pub fn with_interceptor<F>(
        service: StreamService,
        interceptor: F,
    ) -> InterceptedService<Self, F>
    where
        F: tonic::service::Interceptor,
    {
        InterceptedService::new(Self::new(service), interceptor)
    }

    /// Enables decompressing requests with the given encoding.
    #[must_use]
    pub fn accept_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.codec.accept_compressed(encoding);
        self
    }

    /// Compresses responses with the given encoding, if the client supports it.
    #[must_use]
    pub fn send_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.codec.send_compressed(encoding);
        self
    }

    /// Limits the size of a decoded request (tonic's default: 4 MiB).
    #[must_use]
    pub fn max_decoding_message_size(mut self, limit: usize) -> Self {
        self.codec.max_decoding_message_size(limit);
        self
    }

    /// Limits the size of an encoded response (tonic's default: unlimited).
    #[must_use]
    pub fn max_encoding_message_size(mut self, limit: usize) -> Self {
        self.codec.max_encoding_message_size(limit);
        self
    }
}

/// `SubscribeDecoded`: a session of [`StreamService::subscribe`], its numbering in the response
/// headers.
impl StreamingMethod for StreamService {
    type Request = SubscribeRequest;
    type Outbound = OutboundUpdate;

    fn open(
        &self,
        requests: Streaming<SubscribeRequest>,
        client: Client<'_>,
    ) -> Result<tonic::Response<UpdateStream>, Status> {
        let numbering = self.numbering();
        let stream = self.subscribe(requests, client)?;
        let mut response = tonic::Response::new(Box::pin(stream) as UpdateStream);
        response
            .metadata_mut()
            .insert(NUMBERING_HEADER, numbering.into());
        Ok(response)
    }
}

impl StreamServer {
    /// The streaming method's path to its session, every other path `UNIMPLEMENTED`.
    fn route<B>(&mut self, request: http::Request<B>) -> Routed
    where
        B: tonic::codegen::Body + Send + 'static,
        B::Error: Into<StdError> + Send + 'static,
    {
        if request.uri().path() != SUBSCRIBE_DECODED_PATH {
            return Box::pin(async move { Ok(method::unimplemented()) });
        }
        method::serve(Arc::clone(&self.inner), self.codec, request)
    }
}

method::tonic_service!(StreamServer, "stream.Stream");
