//! The tonic plumbing of `stream.Stream/SubscribeDecoded`, written by hand after the generated
//! `stream_server::StreamServer` so that the response messages are the encode-once
//! [`OutboundUpdate`] (served with `ProstCodec<OutboundUpdate, SubscribeRequest>`): same path,
//! same service name, same compression and message-size builders.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use stream_proto::stream::SubscribeRequest;
use tonic::codegen::{
    BoxFuture, CompressionEncoding, EnabledCompressionEncodings, InterceptedService, Service,
    StdError, http,
};
use tonic::server::NamedService;
use tonic::{Status, Streaming};
use tonic_prost::ProstCodec;

use super::{Client, NUMBERING_HEADER, StreamService};
use crate::fanout::OutboundUpdate;

/// The gRPC method path.
pub const SUBSCRIBE_DECODED_PATH: &str = "/stream.Stream/SubscribeDecoded";

/// The stream of one session's messages.
pub type UpdateStream =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<OutboundUpdate, Status>> + Send + 'static>>;

/// The `stream.Stream` service for `tonic::transport::Server::add_service`.
#[derive(Clone)]
pub struct StreamServer {
    inner: Arc<StreamService>,
    accept_compression_encodings: EnabledCompressionEncodings,
    send_compression_encodings: EnabledCompressionEncodings,
    max_decoding_message_size: Option<usize>,
    max_encoding_message_size: Option<usize>,
}

impl StreamServer {
    pub fn new(service: StreamService) -> Self {
        Self {
            inner: Arc::new(service),
            accept_compression_encodings: EnabledCompressionEncodings::default(),
            send_compression_encodings: EnabledCompressionEncodings::default(),
            max_decoding_message_size: None,
            max_encoding_message_size: None,
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
        self.accept_compression_encodings.enable(encoding);
        self
    }

    /// Compresses responses with the given encoding, if the client supports it.
    #[must_use]
    pub fn send_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.send_compression_encodings.enable(encoding);
        self
    }

    /// Limits the size of a decoded request (tonic's default: 4 MiB).
    #[must_use]
    pub fn max_decoding_message_size(mut self, limit: usize) -> Self {
        self.max_decoding_message_size = Some(limit);
        self
    }

    /// Limits the size of an encoded response (tonic's default: unlimited).
    #[must_use]
    pub fn max_encoding_message_size(mut self, limit: usize) -> Self {
        self.max_encoding_message_size = Some(limit);
        self
    }
}

/// The streaming method, as tonic's `Grpc::streaming` calls it.
struct SubscribeDecoded(Arc<StreamService>);

impl Service<tonic::Request<Streaming<SubscribeRequest>>> for SubscribeDecoded {
    type Response = tonic::Response<UpdateStream>;
    type Error = Status;
    type Future = BoxFuture<Self::Response, Status>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: tonic::Request<Streaming<SubscribeRequest>>) -> Self::Future {
        let ip = request.remote_addr().map(|address| address.ip());
        let (metadata, _, requests) = request.into_parts();
        let token = metadata.get("x-token").map(|value| value.as_bytes());
        let numbering = self.0.numbering();
        let stream = self
            .0
            .subscribe(requests, Client { ip, token })
            .map(|stream| -> UpdateStream { Box::pin(stream) });
        Box::pin(async move {
            stream.map(|stream| {
                let mut response = tonic::Response::new(stream);
                response
                    .metadata_mut()
                    .insert(NUMBERING_HEADER, numbering.into());
                response
            })
        })
    }
}

impl<B> Service<http::Request<B>> for StreamServer
where
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if request.uri().path() != SUBSCRIBE_DECODED_PATH {
            return Box::pin(async move { Ok(unimplemented()) });
        }
        let method = SubscribeDecoded(Arc::clone(&self.inner));
        let accept = self.accept_compression_encodings;
        let send = self.send_compression_encodings;
        let max_decoding = self.max_decoding_message_size;
        let max_encoding = self.max_encoding_message_size;
        Box::pin(async move {
            let codec = ProstCodec::<OutboundUpdate, SubscribeRequest>::default();
            let mut grpc = tonic::server::Grpc::new(codec)
                .apply_compression_config(accept, send)
                .apply_max_message_size_config(max_decoding, max_encoding);
            Ok(grpc.streaming(method, request).await)
        })
    }
}

/// gRPC's answer to an unknown method: status UNIMPLEMENTED in the headers.
fn unimplemented() -> http::Response<tonic::body::Body> {
    let mut response = http::Response::new(tonic::body::Body::default());
    let headers = response.headers_mut();
    headers.insert(
        Status::GRPC_STATUS,
        (tonic::Code::Unimplemented as i32).into(),
    );
    headers.insert(
        http::header::CONTENT_TYPE,
        tonic::metadata::GRPC_CONTENT_TYPE,
    );
    response
}

impl NamedService for StreamServer {
    const NAME: &'static str = "stream.Stream";
}
