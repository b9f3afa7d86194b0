//! A worker's publication for Yellowstone's `SubscribeDeshred` (docs/yellowstone.md): every
//! transaction of a completed entry batch, with its data set's shred range and, for v0, its
//! loaded addresses when every lookup resolves; and the slot updates shreds tell. Built only
//! while a session is open.

use ::stream::deshred::{DataSet, DeshredFeed, DeshredTransaction, Loaded, SlotStatus, SlotUpdate};
use decoder::deshred::BatchSpan;
use decoder::entry::EntryBatch;

use super::stamps::deshred_created;
use crate::pipeline::lookups::WorkerLookups;

/// Publishes every transaction of the completed batch at `span`, and the slot's completion when
/// the batch ends it.
pub fn publish_batch(
    feed: &DeshredFeed,
    lookups: &mut WorkerLookups,
    span: &BatchSpan,
    entries: &EntryBatch<'_>,
) {
    slot_end(feed, span);
    if !feed.wanted() {
        return;
    }
    let data_set = DataSet {
        slot: span.slot,
        start_index: span.start_index,
        end_index_exclusive: span.end_index.saturating_add(1),
    };
    for transaction in entries.transactions() {
        let loaded = lookups
            .resolve_all(&transaction, span.slot)
            .map(|loaded| Loaded {
                writable: loaded.writable(),
                readonly: loaded.readonly(),
            });
        feed.publish_transaction(DeshredTransaction::new(
            &transaction,
            data_set,
            loaded,
            deshred_created(),
        ));
    }
}

/// The first shred of a slot newer than any before it.
pub fn first_shred(feed: &DeshredFeed, slot: u64) {
    feed.publish_slot(SlotUpdate {
        slot,
        parent: None,
        status: SlotStatus::SlotFirstShredReceived,
    });
}

/// A completed batch: when it ends its slot, the slot is complete.
pub fn slot_end(feed: &DeshredFeed, span: &BatchSpan) {
    if span.last_in_slot {
        feed.publish_slot(SlotUpdate {
            slot: span.slot,
            parent: None,
            status: SlotStatus::SlotCompleted,
        });
    }
}
