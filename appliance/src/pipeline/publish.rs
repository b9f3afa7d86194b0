//! A worker's step for one transaction whose bytes are complete: through the decoder's one entry
//! point, its lookups resolved through the shared cache (`pipeline::lookups`), its updates built
//! by `stream::encode`, stamped with the six-stage `ServerTiming` and
//! published into the feed. Both deshred paths use it: per transaction as soon as its bytes are
//! complete (incremental), or for each transaction of a complete entry batch (batch-wise). The
//! worker owns the clock: `first_read`, `capture_done` and `deshred_done` come from it, the
//! two later stamps are read here.

use ::stream::encode::{Placement, encode_resolved, stamp_timing};
use ::stream::service::Feed;
use ::stream::timing::unix_nanos;
use decoder::dex::ProgramRegistry;
use decoder::transaction::TransactionView;
use decoder::{Batch, DecodeStats, decode_transaction};
use stream_proto::stream::ServerTiming;

use super::lookups::WorkerLookups;

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
    /// The stamps in non-decreasing order whatever the clocks said (a kernel receive time may
    /// be ahead of the worker's wall clock read by a few ns on another core).
    fn ordered(self) -> Self {
        Self {
            first_read: self.first_read.min(self.capture_done),
            capture_done: self.capture_done,
            deshred_done: self.deshred_done.max(self.capture_done),
        }
    }
}

/// What a worker publishes with: the DEX registry, the feed, its decode statistics, its hook into
/// the lookup-table cache and a callback seeing each update's timing.
pub struct Publisher<'a, F: FnMut(&ServerTiming)> {
    pub registry: &'a ProgramRegistry,
    pub feed: &'a Feed,
    pub stats: &'a mut DecodeStats,
    pub lookups: &'a mut WorkerLookups,
    pub published: F,
}

impl<F: FnMut(&ServerTiming)> Publisher<'_, F> {
    /// Decodes, stamps and publishes one transaction at `placement`. The clock is read only when
    /// the transaction produces updates (`decode_done` once, `publish` per update).
    pub fn publish_transaction(
        &mut self,
        transaction: &TransactionView<'_>,
        placement: Placement,
        stamps: Stamps,
    ) {
        let decoded = decode_transaction(transaction, self.registry, self.stats);
        let loaded = self
            .lookups
            .process(transaction, placement.slot, !decoded.is_empty());
        if decoded.is_empty() {
            return;
        }
        let stamps = stamps.ordered();
        let updates = encode_resolved(transaction, &decoded, placement, loaded);
        let decode_done = unix_nanos().max(stamps.deshred_done);
        for mut update in updates {
            let timing = ServerTiming {
                first_read_unix_nanos: stamps.first_read,
                capture_done_unix_nanos: stamps.capture_done,
                deshred_done_unix_nanos: stamps.deshred_done,
                decode_done_unix_nanos: decode_done,
                publish_unix_nanos: unix_nanos().max(decode_done),
                subscriber_recv_unix_nanos: 0,
                ..Default::default()
            };
            (self.published)(&timing);
            stamp_timing(&mut update, timing);
            self.feed.publish(update);
        }
    }

    /// The batch-wise path: every transaction of `batch`, taken off the slot stage just now
    /// (`first_read` from the batch, the caller's `capture_done`, `deshred_done` read here).
    pub fn publish_batch(&mut self, batch: &Batch<'_>, capture_done: u64) {
        let stamps = Stamps {
            first_read: batch.first_rx_ns,
            capture_done,
            deshred_done: unix_nanos(),
        };
        for (tx_index, transaction) in batch.entries.transactions().enumerate() {
            let placement = Placement {
                slot: batch.span.slot,
                tx_index: tx_index as u32,
            };
            self.publish_transaction(&transaction, placement, stamps);
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
