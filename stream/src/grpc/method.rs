//! The hand-written tonic plumbing of a streaming method whose responses are encode-once
//! messages (written after tonic's generated servers, so that the response type can be an
//! [`Outbound`](super::outbound::Outbound) served with `ProstCodec<Outbound, Request>`): a method
//! provides [`StreamingMethod::open`], and a service routes its path to [`serve`] with its
//! [`CodecConfig`] (compression and message sizes, as the generated builders set them); the
//! service itself is tonic's `Service` and `NamedService` by [`tonic_service!`].

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tonic::codegen::{
    BoxFuture, CompressionEncoding, EnabledCompressionEncodings, Service, StdError, http,
};
use tonic::{Status, Streaming};
use tonic_prost::ProstCodec;

use super::places::Client;

/// The stream of one session's messages.
pub type OutboundStream<T> =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send + 'static>>;

/// What a streaming method provides to be served: its request and response messages, and how a
/// call opens a session.
pub trait StreamingMethod: Send + Sync + 'static {
    /// What the client sends.
    type Request: prost::Message + Default + Send + 'static;
    /// What a session sends.
    type Outbound: prost::Message + Send + 'static;

    /// The session of `client`'s call (its response headers with it), or the status refusing
    /// the call at once.
    fn open(
        &self,
        requests: Streaming<Self::Request>,
        client: Client<'_>,
    ) -> Result<tonic::Response<OutboundStream<Self::Outbound>>, Status>;
}

/// Compression and message-size settings of a service's streaming method.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodecConfig {
    accept: EnabledCompressionEncodings,
    send: EnabledCompressionEncodings,
    max_decoding: Option<usize>,
    max_encoding: Option<usize>,
}

impl CodecConfig {
    /// Enables decompressing requests with the given encoding.
    pub fn accept_compressed(&mut self, encoding: CompressionEncoding) {
        self.accept.enable(encoding);
    }

    /// Compresses responses with the given encoding, if the client supports it.
    pub fn send_compressed(&mut self, encoding: CompressionEncoding) {
        self.send.enable(encoding);
    }

    /// Limits the size of a decoded request (tonic's default: 4 MiB).
    pub fn max_decoding_message_size(&mut self, limit: usize) {
        self.max_decoding = Some(limit);
    }

    /// Limits the size of an encoded response (tonic's default: unlimited).
    pub fn max_encoding_message_size(&mut self, limit: usize) {
        self.max_encoding = Some(limit);
    }
}

/// A service's answer to one call.
pub type Routed = BoxFuture<http::Response<tonic::body::Body>, Infallible>;

/// Answers `request`, a call of `method`'s path, through tonic's `Grpc::streaming`.
pub fn serve<M, B>(method: Arc<M>, config: CodecConfig, request: http::Request<B>) -> Routed
where
    M: StreamingMethod,
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    Box::pin(async move {
        let codec = ProstCodec::<M::Outbound, M::Request>::default();
        let mut grpc = tonic::server::Grpc::new(codec)
            .apply_compression_config(config.accept, config.send)
            .apply_max_message_size_config(config.max_decoding, config.max_encoding);
        Ok(grpc.streaming(Call(method), request).await)
    })
}

/// The streaming method, as tonic's `Grpc::streaming` calls it: the client's address and
/// `x-token` taken from the call, then [`StreamingMethod::open`].
struct Call<M>(Arc<M>);

impl<M: StreamingMethod> Service<tonic::Request<Streaming<M::Request>>> for Call<M> {
    type Response = tonic::Response<OutboundStream<M::Outbound>>;
    type Error = Status;
    type Future = BoxFuture<Self::Response, Status>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: tonic::Request<Streaming<M::Request>>) -> Self::Future {
        let ip = request.remote_addr().map(|address| address.ip());
        let (metadata, _, requests) = request.into_parts();
        let token = metadata.get("x-token").map(|value| value.as_bytes());
        let opened = self.0.open(requests, Client { ip, token });
        Box::pin(async move { opened })
    }
}

/// gRPC's answer to an unknown method: status UNIMPLEMENTED in the headers.
pub fn unimplemented() -> http::Response<tonic::body::Body> {
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

/// Makes `$server` the tonic service `$name` (`package.Service`), as tonic's generated servers
/// are: ready at once, each call answered by the server's inherent
/// `route(&mut self, http::Request<B>) -> BoxFuture<http::Response<Body>, Infallible>`.
macro_rules! tonic_service {
    ($server:ty, $name:expr) => {
        impl<B> tonic::codegen::Service<tonic::codegen::http::Request<B>> for $server
        where
            B: tonic::codegen::Body + Send + 'static,
            B::Error: Into<tonic::codegen::StdError> + Send + 'static,
        {
            type Response = tonic::codegen::http::Response<tonic::body::Body>;
            type Error = std::convert::Infallible;
            type Future = tonic::codegen::BoxFuture<Self::Response, Self::Error>;

            fn poll_ready(
                &mut self,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<(), Self::Error>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn call(&mut self, request: tonic::codegen::http::Request<B>) -> Self::Future {
                self.route(request)
            }
        }

        impl tonic::server::NamedService for $server {
            const NAME: &'static str = $name;
        }
    };
}

pub(crate) use tonic_service;
