//! The shredstream proxy's entry stream, `shredstream.ShredstreamProxy/SubscribeEntries` (issue
//! 26): one `Entry` per completed entry batch, its bytes exactly as deshredded (the bincode
//! `Vec<Entry>`, no re-encoding), to every subscriber as soon as the batch is complete
//! (docs/entries.md).
//!
//! ```text
//! worker ─ EntriesFeed::publish(slot, bytes) ─► broadcast ring (bounded, Arc<Entry>) ─►
//!   each session: its receiver ─► tonic ─► client      (behind by more than the ring: cut)
//! ```
//! Nothing is copied while nobody subscribes: the worker asks [`EntriesFeed::wanted`] first.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use prost::bytes::Bytes;
use stream_proto::shredstream::shredstream_proxy_server::ShredstreamProxy;
use stream_proto::shredstream::{Entry, SubscribeEntriesRequest};
use tokio::sync::{broadcast, watch};
use tonic::{Request, Response, Status};

/// Entry batches a subscriber may fall behind by before it is cut (`[grpc] entries_queue`).
pub const DEFAULT_ENTRIES_QUEUE: usize = 4_096;

/// Counters of the entry stream (for `/metrics`).
#[derive(Debug, Default)]
pub struct EntriesMetrics {
    pub batches_published: AtomicU64,
    pub bytes_published: AtomicU64,
    pub sessions_started: AtomicU64,
    pub sessions_open: AtomicUsize,
    pub sessions_refused: AtomicU64,
    /// Sessions cut because they fell behind by more than the queue.
    pub lagged: AtomicU64,
    pub batches_sent: AtomicU64,
}

/// Where workers publish completed entry batches; cheap to clone.
#[derive(Debug, Clone)]
pub struct EntriesFeed {
    sender: broadcast::Sender<Arc<Entry>>,
    metrics: Arc<EntriesMetrics>,
}

impl EntriesFeed {
    /// A feed whose subscribers may fall `queue` batches behind.
    pub fn new(queue: usize) -> Self {
        let (sender, _) = broadcast::channel(queue.max(1));
        Self {
            sender,
            metrics: Arc::default(),
        }
    }

    /// Whether anybody subscribes (else [`EntriesFeed::publish`] would drop the batch): one
    /// atomic load, asked by the worker on every drain (the broadcast's own receiver count
    /// takes a lock).
    pub fn wanted(&self) -> bool {
        self.metrics.sessions_open.load(Ordering::Relaxed) > 0
    }

    /// Sends one completed batch of `slot` to every subscriber (one copy, shared).
    pub fn publish(&self, slot: u64, entries: &[u8]) {
        if !self.wanted() {
            return;
        }
        let entry = Entry {
            slot,
            entries: Bytes::copy_from_slice(entries),
        };
        self.metrics
            .batches_published
            .fetch_add(1, Ordering::Relaxed);
        self.metrics
            .bytes_published
            .fetch_add(entries.len() as u64, Ordering::Relaxed);
        let _ = self.sender.send(Arc::new(entry));
    }

    pub fn metrics(&self) -> &Arc<EntriesMetrics> {
        &self.metrics
    }
}

/// The `shredstream.ShredstreamProxy` service.
pub struct EntriesService {
    feed: EntriesFeed,
    shutdown: watch::Receiver<bool>,
    max_sessions: usize,
}

impl EntriesService {
    /// `shutdown` turning true ends every session with `UNAVAILABLE`; at most `max_sessions`
    /// streams are open at once.
    pub fn new(feed: EntriesFeed, shutdown: watch::Receiver<bool>, max_sessions: usize) -> Self {
        Self {
            feed,
            shutdown,
            max_sessions: max_sessions.max(1),
        }
    }
}

/// One session's place among the open ones, given back when dropped.
struct OpenSession(Arc<EntriesMetrics>);

impl Drop for OpenSession {
    fn drop(&mut self) {
        self.0.sessions_open.fetch_sub(1, Ordering::Relaxed);
    }
}

type EntryStream = Pin<Box<dyn tokio_stream::Stream<Item = Result<Entry, Status>> + Send>>;

#[tonic::async_trait]
impl ShredstreamProxy for EntriesService {
    type SubscribeEntriesStream = EntryStream;

    async fn subscribe_entries(
        &self,
        _request: Request<SubscribeEntriesRequest>,
    ) -> Result<Response<Self::SubscribeEntriesStream>, Status> {
        let metrics = Arc::clone(&self.feed.metrics);
        if metrics.sessions_open.fetch_add(1, Ordering::Relaxed) >= self.max_sessions {
            metrics.sessions_open.fetch_sub(1, Ordering::Relaxed);
            metrics.sessions_refused.fetch_add(1, Ordering::Relaxed);
            return Err(Status::resource_exhausted(format!(
                "too many entry subscribers: {} streams open (grpc.max_subscribers)",
                self.max_sessions
            )));
        }
        metrics.sessions_started.fetch_add(1, Ordering::Relaxed);
        let place = OpenSession(Arc::clone(&metrics));
        let receiver = self.feed.sender.subscribe();
        let stream = session(receiver, self.shutdown.clone(), place);
        Ok(Response::new(Box::pin(stream)))
    }
}

/// One subscriber's entry batches until it lags, the server shuts down or the client leaves.
fn session(
    mut receiver: broadcast::Receiver<Arc<Entry>>,
    mut shutdown: watch::Receiver<bool>,
    place: OpenSession,
) -> impl tokio_stream::Stream<Item = Result<Entry, Status>> + Send + 'static {
    async_stream::stream! {
        let place = place;
        loop {
            tokio::select! {
                biased;
                () = stopping(&mut shutdown) => {
                    yield Err(Status::unavailable("server shutting down"));
                    break;
                }
                received = receiver.recv() => match received {
                    Ok(entry) => {
                        place.0.batches_sent.fetch_add(1, Ordering::Relaxed);
                        yield Ok(Entry::clone(&entry));
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        place.0.lagged.fetch_add(1, Ordering::Relaxed);
                        yield Err(Status::resource_exhausted(format!(
                            "subscriber lagged: {missed} entry batches dropped"
                        )));
                        break;
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
            }
        }
    }
}

/// Resolves once `shutdown` turns true (never if its sender is gone without it).
async fn stopping(shutdown: &mut watch::Receiver<bool>) {
    while !*shutdown.borrow_and_update() {
        if shutdown.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tokio_stream::StreamExt;

    use super::*;

    #[tokio::test]
    async fn a_session_gets_each_batch_once_and_is_cut_when_it_lags() {
        let feed = EntriesFeed::new(2);
        feed.publish(1, b"unseen");
        assert_eq!(feed.metrics().batches_published.load(Ordering::Relaxed), 0);
        let (_stop, stopped) = watch::channel(false);
        let service = EntriesService::new(feed.clone(), stopped, 4);
        let response = service
            .subscribe_entries(Request::new(SubscribeEntriesRequest {}))
            .await
            .unwrap();
        let mut stream = response.into_inner();
        assert!(feed.wanted());
        feed.publish(7, b"batch");
        let entry = stream.next().await.unwrap().unwrap();
        assert_eq!((entry.slot, &entry.entries[..]), (7, &b"batch"[..]));
        for slot in 0..5 {
            feed.publish(slot, b"x");
        }
        let status = stream.next().await.unwrap().unwrap_err();
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        assert!(stream.next().await.is_none());
        drop(stream);
        assert_eq!(feed.metrics().sessions_open.load(Ordering::Relaxed), 0);
    }
}
