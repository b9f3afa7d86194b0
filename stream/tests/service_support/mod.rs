//! The stream service on a loopback port behind tonic, as the gRPC tests run it.

#![allow(dead_code)] // Each test crate uses its own subset.

use std::net::SocketAddr;
use std::sync::Arc;

use ::stream::filter::FilterLimits;
use ::stream::service::{Feed, StreamMetrics, StreamService};
use tokio::sync::watch;
use tokio_stream::wrappers::TcpListenerStream;

/// A served feed: publish on `feed`, connect to `address`, send `true` on `stop` to shut down.
pub struct Running {
    pub address: SocketAddr,
    pub feed: Feed,
    pub metrics: Arc<StreamMetrics>,
    pub stop: watch::Sender<bool>,
}

/// Serves `feed` with default filter limits; `max_sessions_per_ip` caps streams per address.
pub async fn serve_feed(feed: Feed, max_sessions_per_ip: Option<usize>) -> Running {
    let metrics = Arc::new(StreamMetrics::default());
    let (stop, stopped) = watch::channel(false);
    let mut service = StreamService::new(
        feed.clone(),
        FilterLimits::default(),
        Arc::clone(&metrics),
        stopped,
    );
    if let Some(cap) = max_sessions_per_ip {
        service = service.with_max_sessions_per_ip(cap);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service.into_server())
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    Running {
        address,
        feed,
        metrics,
        stop,
    }
}
