//! A deadline for a request's body: the body stream handed to the handlers ends with an error
//! once the deadline passes (counted from the first poll, i.e. once the headers are in), so a
//! client that announces a body and trickles or stalls it cannot hold a connection and a
//! descriptor for longer (issue "Hostile clients and damaged data").

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::HttpMessage;
use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::rt::time::{Sleep, sleep};
use actix_web::web::Bytes;
use futures_util::Stream;

/// `inner` with a deadline: after `deadline`, one `TimedOut` error and then the end.
pub struct DeadlinePayload {
    inner: Payload,
    deadline: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
    expired: bool,
}

impl DeadlinePayload {
    pub fn new(inner: Payload, deadline: Duration) -> Self {
        Self {
            inner,
            deadline,
            sleep: None,
            expired: false,
        }
    }

    /// Wraps the body of `request` (the `wrap_fn` step of the HTTP server).
    pub fn wrap(request: &mut actix_web::dev::ServiceRequest, deadline: Duration) {
        let body = Self::new(request.take_payload(), deadline);
        request.set_payload(Payload::Stream {
            payload: Box::pin(body),
        });
    }
}

impl Stream for DeadlinePayload {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.expired {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = Pin::new(&mut self.inner).poll_next(cx) {
            return Poll::Ready(item);
        }
        let deadline = self.deadline;
        let timer = self.sleep.get_or_insert_with(|| Box::pin(sleep(deadline)));
        if timer.as_mut().poll(cx).is_ready() {
            self.expired = true;
            let error = std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("request body not received within {deadline:?}"),
            );
            return Poll::Ready(Some(Err(PayloadError::Io(error))));
        }
        Poll::Pending
    }
}
