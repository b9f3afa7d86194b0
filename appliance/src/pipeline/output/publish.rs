//! A worker's step for one transaction whose bytes are complete: through the decoder's one entry
//! point, its lookups resolved through the shared cache (`pipeline::lookups`), its updates built
//! by `stream::encode`, stamped with the six-stage `ServerTiming` (`output::stamps`) and
//! published into the decoded stream's feed. Both deshred paths use it: per transaction as soon
//! as its bytes are complete (incremental), or for each transaction of a complete entry batch
//! (batch-wise).

use ::stream::encode::{Placement, encode_resolved, stamp_timing};
use ::stream::service::Feed;
use decoder::dex::ProgramRegistry;
use decoder::transaction::TransactionView;
use decoder::{Batch, DecodeStats, decode_transaction};
use stream_proto::stream::ServerTiming;

use super::stamps::Stamps;
use crate::pipeline::lookups::WorkerLookups;

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
        let decode_done = stamps.decode_done();
        for mut update in updates {
            let timing = stamps.timing(decode_done);
            (self.published)(&timing);
            stamp_timing(&mut update, timing);
            self.feed.publish(update);
        }
    }

    /// The batch-wise path: every transaction of `batch`, taken off the slot stage just now
    /// (`first_read` from the batch, the caller's `capture_done`, `deshred_done` read now).
    pub fn publish_batch(&mut self, batch: &Batch<'_>, capture_done: u64) {
        let stamps = Stamps::deshredded(batch.first_rx_ns, capture_done);
        for (tx_index, transaction) in batch.entries.transactions().enumerate() {
            let placement = Placement {
                slot: batch.span.slot,
                tx_index: tx_index as u32,
            };
            self.publish_transaction(&transaction, placement, stamps);
        }
    }
}
