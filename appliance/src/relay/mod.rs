//! `run --relay URL`: the second tier. The relay subscribes to another appliance's stream (its
//! origin) with an empty filter and publishes every update into its own feed, so its subscribers
//! get the same filters, pings, slot notifications, lag policy and `from_slot` as on the origin.
//! Each update keeps the origin's `ServerTiming` and gets the relay's receive and publish stamps.
//! When the link breaks the relay reconnects with `from_slot` = the last slot it took and drops
//! what it already has ([`dedupe`]), so its subscribers see no gap and no repeat. docs/relay.md.

pub mod counters;
pub mod dedupe;
pub mod link;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use stream::service::Feed;
use stream::timing::unix_nanos;
use stream_proto::stream::subscribe_update::Update;
use stream_proto::stream::{ServerTiming, SubscribeUpdate};
use tokio::sync::watch;
use tracing::{info, warn};

use counters::RelayCounters;
use dedupe::{Dedupe, Verdict};
use link::{Link, LinkError, Origin};

/// The first pause before reconnecting, doubled after each failed attempt up to
/// [`RECONNECT_MAX`].
const RECONNECT_MIN: Duration = Duration::from_millis(50);
const RECONNECT_MAX: Duration = Duration::from_secs(2);

/// Relays `origin` into `feed` until `stopped` turns true.
pub async fn run(
    origin: Origin,
    feed: Feed,
    counters: Arc<RelayCounters>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut relay = Relay {
        origin,
        feed,
        counters,
        dedupe: Dedupe::new(),
        pause: RECONNECT_MIN,
    };
    let mut from_slot = None;
    loop {
        let ended = tokio::select! {
            ended = relay.stream(from_slot) => ended,
            _ = stopped.changed() => return,
        };
        relay.counters.connected.store(0, Ordering::Relaxed);
        relay.counters.link_lost(&ended);
        let retry = relay.after(&ended);
        from_slot = retry.from_slot;
        if retry.wait {
            let pause = relay.pause;
            relay.pause = (relay.pause * 2).min(RECONNECT_MAX);
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                _ = stopped.changed() => return,
            }
        }
    }
}

/// The next attempt: from which slot, and whether to pause first.
struct Retry {
    from_slot: Option<u64>,
    wait: bool,
}

struct Relay {
    origin: Origin,
    feed: Feed,
    counters: Arc<RelayCounters>,
    dedupe: Dedupe,
    pause: Duration,
}

impl Relay {
    /// Opens a stream from `from_slot` and relays it until it ends.
    async fn stream(&mut self, from_slot: Option<u64>) -> LinkError {
        let mut link = match Link::open(&self.origin, from_slot).await {
            Ok(link) => link,
            Err(error) => return error,
        };
        self.counters.connects.fetch_add(1, Ordering::Relaxed);
        self.counters.connected.store(1, Ordering::Relaxed);
        self.pause = RECONNECT_MIN;
        if self.dedupe.connected(link.numbering) {
            self.counters
                .numbering_changes
                .fetch_add(1, Ordering::Relaxed);
            info!(
                numbering = ?link.numbering,
                "relay origin is another process than before: repeats are found by content"
            );
        }
        info!(origin = %self.origin.endpoint, ?from_slot, "relay stream open");
        loop {
            match link.next().await {
                Ok(update) => self.take(update, unix_nanos()),
                Err(error) => return error,
            }
        }
    }

    /// Publishes `update` (read at `received`) unless the relay has it already.
    fn take(&mut self, mut update: SubscribeUpdate, received: u64) {
        self.counters.received.fetch_add(1, Ordering::Relaxed);
        let verdict = self.dedupe.admit(&update);
        self.counters.count(verdict);
        if verdict != Verdict::New {
            return;
        }
        if let Some(slot) = self.dedupe.resume_slot() {
            self.counters.last_slot.store(slot, Ordering::Relaxed);
        }
        self.counters
            .content_keys
            .store(self.dedupe.key_count() as u64, Ordering::Relaxed);
        stamp_relay(&mut update, received, unix_nanos());
        self.feed.publish(update);
    }

    /// What to do after the stream ended with `ended`.
    fn after(&self, ended: &LinkError) -> Retry {
        let resume = self.dedupe.resume_slot();
        match ended {
            LinkError::TooOld { oldest, message } => {
                self.counters.gaps.fetch_add(1, Ordering::Relaxed);
                warn!(
                    last_slot = ?resume,
                    resumes_from = ?oldest,
                    %message,
                    "relay gap: the origin no longer holds the slots after the last one taken"
                );
                Retry {
                    from_slot: *oldest,
                    wait: false,
                }
            }
            LinkError::ResumeOff(message) => {
                self.counters.gaps.fetch_add(1, Ordering::Relaxed);
                warn!(%message, "relay gap: the origin cannot resume; continuing live");
                Retry {
                    from_slot: None,
                    wait: false,
                }
            }
            error => {
                warn!(%error, reason = error.label(), "relay link lost; reconnecting");
                Retry {
                    from_slot: resume,
                    wait: true,
                }
            }
        }
    }
}

/// Adds the relay's receive and publish stamps to the origin's `ServerTiming`.
fn stamp_relay(update: &mut SubscribeUpdate, received: u64, publish: u64) {
    let timing = match update.update.as_mut() {
        Some(Update::Transaction(transaction)) => transaction.server_timing.as_mut(),
        Some(Update::Delta(delta)) => delta
            .envelope
            .as_mut()
            .and_then(|envelope| envelope.server_timing.as_mut()),
        _ => None,
    };
    if let Some(timing) = timing {
        stamp(timing, received, publish);
    }
}

fn stamp(timing: &mut ServerTiming, received: u64, publish: u64) {
    timing.relay_receive_unix_nanos = received;
    timing.relay_publish_unix_nanos = publish.max(received);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use stream_proto::stream::{DecodedTransaction, DeltaUpdate};

    use super::*;

    #[test]
    fn the_relay_stamps_transactions_and_delta_envelopes_and_keeps_the_origin_stamps() {
        let origin = ServerTiming {
            first_read_unix_nanos: 1,
            publish_unix_nanos: 5,
            subscriber_recv_unix_nanos: 6,
            ..Default::default()
        };
        let transaction = DecodedTransaction {
            server_timing: Some(origin),
            ..Default::default()
        };
        let mut updates = [
            SubscribeUpdate {
                update: Some(Update::Transaction(transaction.clone())),
                sequence: 1,
            },
            SubscribeUpdate {
                update: Some(Update::Delta(DeltaUpdate {
                    envelope: Some(transaction),
                    ..Default::default()
                })),
                sequence: 2,
            },
        ];
        for update in &mut updates {
            stamp_relay(update, 100, 90);
            let timing = match update.update.as_ref() {
                Some(Update::Transaction(transaction)) => transaction.server_timing,
                Some(Update::Delta(delta)) => delta.envelope.as_ref().unwrap().server_timing,
                _ => None,
            }
            .unwrap();
            assert_eq!(
                (timing.first_read_unix_nanos, timing.publish_unix_nanos),
                (1, 5)
            );
            // A publish stamp never precedes the receive stamp (clock steps).
            assert_eq!(
                (
                    timing.relay_receive_unix_nanos,
                    timing.relay_publish_unix_nanos
                ),
                (100, 100)
            );
        }
    }
}
