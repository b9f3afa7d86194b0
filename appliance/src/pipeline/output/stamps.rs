//! The worker's clock: every wall-clock read of the publish path, and the six-stage
//! `ServerTiming` built from them. `first_read` comes from the receive side (the kernel's or the
//! ring's receive time of the FEC set); `capture_done`, `deshred_done`, `decode_done`, `publish`
//! and the deshred stream's creation time are read here and nowhere else in the output room.

use ::stream::timing::unix_nanos;
use stream_proto::stream::ServerTiming;

/// When the worker took the shred whose drain has something to publish: read once per drain
/// that has anything (most shreds complete nothing and read no clock).
pub fn capture_done() -> u64 {
    unix_nanos()
}

/// When a `SubscribeDeshred` transaction was built (its `created_at`).
pub fn deshred_created() -> u64 {
    unix_nanos()
}

/// The stamps the worker took for a transaction before its decode (product decisions, timing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamps {
    /// Earliest receive time of the FEC set whose shred completed the transaction's bytes.
    pub first_read: u64,
    /// When the worker took the shred that completed them.
    pub capture_done: u64,
    /// When the transaction's bytes were parsed out of the entries.
    pub deshred_done: u64,
}

impl Stamps {
    /// The stamps of bytes parsed just now: `deshred_done` is read here.
    pub fn deshredded(first_read: u64, capture_done: u64) -> Self {
        Self {
            first_read,
            capture_done,
            deshred_done: unix_nanos(),
        }
    }

    /// The stamps in non-decreasing order whatever the clocks said (a kernel receive time may
    /// be ahead of the worker's wall clock read by a few ns on another core).
    pub fn ordered(self) -> Self {
        Self {
            first_read: self.first_read.min(self.capture_done),
            capture_done: self.capture_done,
            deshred_done: self.deshred_done.max(self.capture_done),
        }
    }

    /// `decode_done`, read once per transaction that produced updates (after their encode).
    pub fn decode_done(&self) -> u64 {
        unix_nanos().max(self.deshred_done)
    }

    /// One update's timing: `publish` is read here, per update.
    pub fn timing(&self, decode_done: u64) -> ServerTiming {
        ServerTiming {
            first_read_unix_nanos: self.first_read,
            capture_done_unix_nanos: self.capture_done,
            deshred_done_unix_nanos: self.deshred_done,
            decode_done_unix_nanos: decode_done,
            publish_unix_nanos: unix_nanos().max(decode_done),
            subscriber_recv_unix_nanos: 0,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_never_decrease() {
        let late_rx = Stamps {
            first_read: 50,
            capture_done: 40,
            deshred_done: 30,
        }
        .ordered();
        assert_eq!(
            late_rx,
            Stamps {
                first_read: 40,
                capture_done: 40,
                deshred_done: 40
            }
        );
        let fine = Stamps {
            first_read: 1,
            capture_done: 2,
            deshred_done: 3,
        };
        assert_eq!(fine.ordered(), fine);
    }
}
