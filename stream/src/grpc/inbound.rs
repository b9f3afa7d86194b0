//! The reader of one session's inbound side: a small task that reads the client's requests and
//! watches the server's shutdown, and hands both to the session as [`Inbound`] events.
//!
//! The session's own task is woken for every update it sends (thousands a second with many
//! subscribers). Were it to also poll the HTTP/2 request stream and the shared shutdown watch in
//! each of those turns, each wake-up would take the connection's stream lock and register (and
//! drop) a waiter under the watch's lock, shared by every session. With the reader, a turn polls
//! two queues (no lock) and the reader runs only when a request or the shutdown arrives.

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tonic::Streaming;

/// Events the reader holds for a session that has not taken them yet; beyond that the reader
/// waits, and so does the client's request stream (HTTP/2 flow control).
const INBOUND_EVENTS: usize = 4;

/// What happened on a session's inbound side (requests of type `R`).
#[derive(Debug)]
pub enum Inbound<R> {
    /// The client sent a request.
    Request(R),
    /// The client closed its side of the call (it may still receive).
    Closed,
    /// The request stream failed (reset, broken connection).
    Failed,
    /// A request could not be taken (over the message size limit, not a valid message): the
    /// status the stream ends with.
    Invalid(tonic::Status),
    /// The server is shutting down.
    Shutdown,
}

/// The reader task; aborted when dropped (the session ended).
#[derive(Debug)]
pub struct InboundReader(JoinHandle<()>);

impl Drop for InboundReader {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl InboundReader {
    /// Spawns the reader on the current runtime; the receiver yields its events in order and
    /// ends once nothing more can come.
    pub fn spawn<R: prost::Message + Default + Send + 'static>(
        requests: Streaming<R>,
        shutdown: watch::Receiver<bool>,
    ) -> (Self, mpsc::Receiver<Inbound<R>>) {
        let (events, receiver) = mpsc::channel(INBOUND_EVENTS);
        let task = tokio::spawn(read(requests, shutdown, events));
        (Self(task), receiver)
    }
}

async fn read<R: prost::Message + Default + Send + 'static>(
    mut requests: Streaming<R>,
    mut shutdown: watch::Receiver<bool>,
    events: mpsc::Sender<Inbound<R>>,
) {
    let mut requests_open = true;
    let mut shutdown_open = true;
    while requests_open || shutdown_open {
        if *shutdown.borrow_and_update() {
            // The session may be gone already; nothing more to do either way.
            let _ = events.send(Inbound::Shutdown).await;
            return;
        }
        let event = tokio::select! {
            biased;
            changed = shutdown.changed(), if shutdown_open => {
                // A dropped sender can no longer stop sessions: stop watching it.
                shutdown_open = changed.is_ok();
                continue;
            }
            request = requests.message(), if requests_open => match request {
                Ok(Some(request)) => Inbound::Request(request),
                Ok(None) => {
                    requests_open = false;
                    Inbound::Closed
                }
                Err(status) => {
                    requests_open = false;
                    refused(status)
                }
            },
        };
        let failed = matches!(event, Inbound::Failed | Inbound::Invalid(_));
        if events.send(event).await.is_err() || failed {
            return;
        }
    }
}

/// A request stream's error as an event: a request the server refuses (tonic's size limit gives
/// `OUT_OF_RANGE`, a malformed message `INTERNAL`) ends the stream with a clear status; anything
/// else is the client or its connection going away.
fn refused<R>(status: tonic::Status) -> Inbound<R> {
    match status.code() {
        tonic::Code::OutOfRange | tonic::Code::ResourceExhausted => Inbound::Invalid(
            tonic::Status::resource_exhausted(format!("request refused: {}", status.message())),
        ),
        tonic::Code::Internal | tonic::Code::InvalidArgument => Inbound::Invalid(
            tonic::Status::invalid_argument(format!("request refused: {}", status.message())),
        ),
        _ => Inbound::Failed,
    }
}
