//! The worker's three feeds and what each output event becomes on them: the decoded stream
//! (`Feed`: decoded updates, slot, footer and duplicate-block notifications), the shredstream
//! proxy's entry stream (`EntriesFeed`: completed batches' bytes) and Yellowstone's deshred
//! stream (`DeshredFeed`: completed batches' transactions and slot updates). A new feed is a
//! field here and a line in each event it carries.

use ::stream::deshred::DeshredFeed;
use ::stream::encode::{duplicate_block, slot_footer, slot_notification};
use ::stream::entries::EntriesFeed;
use ::stream::service::Feed;
use decoder::Batch;
use decoder::deshred::BatchSpan;
use decoder::entry::marker::BlockMarker;
use decoder::fec::DuplicateSet;
use tracing::debug;

use super::deshred;
use crate::pipeline::lookups::WorkerLookups;

/// Where every worker publishes; cheap to clone.
#[derive(Debug, Clone)]
pub struct Feeds {
    /// The decoded stream: decoded updates and the slot, footer and duplicate-block notifications.
    pub feed: Feed,
    /// The shredstream proxy's entry stream: completed batches' bytes (`stream::entries`).
    pub entries: EntriesFeed,
    /// Yellowstone's deshred stream: every transaction of completed batches (`stream::deshred`).
    pub deshred: DeshredFeed,
}

impl Feeds {
    /// Whether a completed batch's bytes are wanted: the incremental path copies them only while
    /// an entry or deshred subscriber exists.
    pub fn want_batch_bytes(&self) -> bool {
        self.entries.wanted() || self.deshred.wanted()
    }

    /// The first shred of a slot newer than any notified before, across workers.
    pub fn slot_notified(&self, slot: u64) {
        self.feed.publish(slot_notification(slot));
        deshred::first_shred(&self.deshred, slot);
    }

    /// A leader signed two versions of one FEC set: the first is in use, the second was refused
    /// (counted by the decoder as `duplicate_block`); logged once per set with both roots and
    /// sent to every subscriber as a `DuplicateBlock` update.
    pub fn duplicate(&self, duplicate: &DuplicateSet) {
        tracing::warn!(
            slot = duplicate.key.slot,
            fec_set_index = duplicate.key.fec_set_index,
            first_root = %bs58::encode(duplicate.first_root).into_string(),
            second_root = %bs58::encode(duplicate.second_root).into_string(),
            "duplicate block: a second version of a FEC set was refused"
        );
        self.feed.publish(duplicate_block(
            duplicate.key.slot,
            duplicate.key.fec_set_index,
            &duplicate.first_root,
            &duplicate.second_root,
        ));
    }

    /// A block marker of `slot`: a footer goes to subscribers as the slot's footer notification
    /// (1 returned); an update-parent is logged (docs/decisions.md: published transactions
    /// stand); the other kinds are only counted (by the decoder, `BatchCounters::markers`).
    pub fn marker(&self, slot: u64, marker: &BlockMarker<'_>) -> u64 {
        match marker {
            BlockMarker::Footer(footer) => {
                self.feed.publish(slot_footer(
                    slot,
                    footer.producer_time_ns,
                    footer.user_agent,
                ));
                1
            }
            BlockMarker::UpdateParent(parent) => {
                debug!(
                    slot,
                    parent_slot = parent.parent_slot,
                    "update-parent marker: the leader continues the block on another parent"
                );
                0
            }
            _ => 0,
        }
    }

    /// A complete batch on the batch-wise path, after its transactions went out decoded: its
    /// bytes to the entry stream, its transactions to the deshred stream, its markers; returns
    /// the footer notifications published.
    pub fn batch(&self, lookups: &mut WorkerLookups, batch: &Batch<'_>) -> u64 {
        self.entries.publish(batch.span.slot, batch.bytes);
        deshred::publish_batch(&self.deshred, lookups, &batch.span, &batch.entries);
        let mut footers = 0;
        if batch.entries.marker_counts().total() > 0 {
            for marker in batch.entries.markers() {
                footers += self.marker(batch.span.slot, &marker);
            }
        }
        footers
    }

    /// A batch completed on the incremental path: its kept bytes to the entry stream, its
    /// transactions to the deshred stream (parsed again from those bytes: the incremental path
    /// gave them out one by one). A slot's end is told even when nobody keeps the bytes.
    pub fn batch_completed(
        &self,
        bytes: Option<&[u8]>,
        span: &BatchSpan,
        lookups: &mut WorkerLookups,
    ) {
        if let Some(bytes) = bytes {
            self.entries.publish(span.slot, bytes);
        }
        let deshred = &self.deshred;
        let batch = bytes.filter(|_| deshred.wanted()).and_then(|bytes| {
            decoder::entry::parse_entry_batch(bytes)
                .inspect_err(|error| {
                    // The incremental parse accepted these bytes: not expected.
                    debug!(
                        slot = span.slot,
                        reason = error.label(),
                        "completed batch unparsable for SubscribeDeshred"
                    );
                })
                .ok()
        });
        match batch {
            Some(batch) => deshred::publish_batch(deshred, lookups, span, &batch),
            None => deshred::slot_end(deshred, span),
        }
    }
}
