//! A worker's drain of its slot stage after each shred it applied: what became publishable goes
//! out through [`Publisher`], per transaction as soon as its bytes are complete (incremental
//! deshredding, docs/incremental-deshred.md) or per complete entry batch (the batch-wise path,
//! `[decoder] incremental = false`). Block footers become footer notifications; batch ends are
//! counted, and a complete batch goes to the entry stream and the Yellowstone deshred stream
//! while they have subscribers. The worker's clock is read here: `capture_done` once per drain
//! that has anything, `deshred_done` per transaction.

use ::stream::deshred::DeshredFeed;
use ::stream::encode::{Placement, slot_footer};
use ::stream::entries::EntriesFeed;
use ::stream::service::Feed;
use ::stream::timing::unix_nanos;
use decoder::deshred::BatchSpan;
use decoder::entry::marker::BlockMarker;
use decoder::{BatchEnd, ReadyItem, ReadyTransaction, SlotStage};
use stream_proto::stream::ServerTiming;
use tracing::debug;

use super::lookups::WorkerLookups;
use super::publish::{Publisher, Stamps};
use crate::metrics::{Histogram, STAGES, WorkerCounters, record_timing};

/// Publishes what the shred just applied made ready, on the path `incremental` selects.
pub fn drain(
    slots: &mut SlotStage,
    counters: &mut WorkerCounters,
    lookups: &mut WorkerLookups,
    shared: &Shared<'_>,
) {
    if shared.incremental {
        drain_ready(slots, counters, lookups, shared);
    } else {
        drain_batches(slots, counters, lookups, shared);
    }
}

/// What a drain publishes with.
pub struct Shared<'a> {
    pub incremental: bool,
    pub registry: &'a decoder::dex::ProgramRegistry,
    pub feed: &'a Feed,
    /// Completed batches' bytes go here while anybody subscribes to them.
    pub entries: &'a EntriesFeed,
    /// Completed batches' transactions go here while anybody subscribes to them.
    pub deshred: &'a DeshredFeed,
}

/// The counters a publisher's callback feeds.
fn on_published<'a>(
    stage_latency: &'a mut [Histogram; STAGES.len()],
    updates_published: &'a mut u64,
) -> impl FnMut(&ServerTiming) + 'a {
    move |timing| {
        record_timing(stage_latency, timing);
        *updates_published += 1;
    }
}

/// Incremental mode: every ready transaction, marker and batch end, in the stage's order.
fn drain_ready(
    slots: &mut SlotStage,
    counters: &mut WorkerCounters,
    lookups: &mut WorkerLookups,
    shared: &Shared<'_>,
) {
    // Most shreds complete nothing: no clock read for them.
    if !slots.has_ready() {
        return;
    }
    // Items drained now were completed by the shred just applied: taken now.
    let capture_done = unix_nanos();
    // Batch bytes are copied only while an entry or deshred subscriber exists.
    slots.keep_entry_bytes(shared.entries.wanted() || shared.deshred.wanted());
    let WorkerCounters {
        decode,
        stage_latency,
        updates_published,
        transactions,
        entries,
        footer_notifications,
        transactions_before_malformed_end,
        ..
    } = counters;
    let mut publisher = Publisher {
        registry: shared.registry,
        feed: shared.feed,
        stats: decode,
        lookups,
        published: on_published(stage_latency, updates_published),
    };
    while let Some(item) = slots.next_ready() {
        match item {
            ReadyItem::Transaction(ready) => {
                *transactions += 1;
                publish_ready(&mut publisher, &ready, capture_done);
            }
            ReadyItem::Marker(ready) => {
                *footer_notifications += publish_marker(shared.feed, ready.slot, &ready.marker);
            }
            ReadyItem::BatchEnd(end) => {
                *entries += end.entries;
                if end.outcome.is_ok() {
                    publish_completed(
                        slots.last_entry_bytes(),
                        &end.span,
                        publisher.lookups,
                        shared,
                    );
                }
                if end.outcome.is_err() {
                    *transactions_before_malformed_end += end.transactions;
                    log_malformed_end(&end);
                }
            }
        }
    }
}

/// A batch completed on the incremental path: its kept bytes to the entry stream, its
/// transactions to the deshred stream (parsed again from those bytes: the incremental path gave
/// them out one by one). A slot's end is told even when nobody keeps the bytes.
fn publish_completed(
    bytes: Option<&[u8]>,
    span: &BatchSpan,
    lookups: &mut WorkerLookups,
    shared: &Shared<'_>,
) {
    if let Some(bytes) = bytes {
        shared.entries.publish(span.slot, bytes);
    }
    let deshred = shared.deshred;
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
        Some(batch) => super::deshred::publish_batch(deshred, lookups, span, &batch),
        None => super::deshred::slot_end(deshred, span),
    }
}

/// One ready transaction with the stamps of the product decisions: `first_read` from the set
/// whose shred completed its bytes, `capture_done` when the worker took that shred,
/// `deshred_done` now (its bytes were just parsed).
fn publish_ready<F: FnMut(&ServerTiming)>(
    publisher: &mut Publisher<'_, F>,
    ready: &ReadyTransaction<'_>,
    capture_done: u64,
) {
    let placement = Placement {
        slot: ready.slot,
        tx_index: u32::try_from(ready.index_in_batch).unwrap_or(u32::MAX),
    };
    let stamps = Stamps {
        first_read: ready.first_rx_ns,
        capture_done,
        deshred_done: unix_nanos(),
    };
    publisher.publish_transaction(&ready.transaction, placement, stamps);
}

/// The batch-wise path: every complete entry batch, its transactions after one another. The
/// `first_read` stamp is the earliest kernel receive time of the FEC set that completed the
/// batch (SO_TIMESTAMPNS on the UDP path; the ring read time on AF_XDP).
fn drain_batches(
    slots: &mut SlotStage,
    counters: &mut WorkerCounters,
    lookups: &mut WorkerLookups,
    shared: &Shared<'_>,
) {
    // Most datagrams complete no batch: no clock read for them.
    if slots.pending_batches() == 0 {
        return;
    }
    let capture_done = unix_nanos();
    let WorkerCounters {
        decode,
        stage_latency,
        updates_published,
        transactions,
        entries,
        footer_notifications,
        ..
    } = counters;
    let mut publisher = Publisher {
        registry: shared.registry,
        feed: shared.feed,
        stats: decode,
        lookups,
        published: on_published(stage_latency, updates_published),
    };
    while let Some(batch) = slots.next_batch() {
        *entries += batch.entries.entry_count();
        *transactions += batch.entries.transaction_count();
        publisher.publish_batch(&batch, capture_done);
        shared.entries.publish(batch.span.slot, batch.bytes);
        super::deshred::publish_batch(
            shared.deshred,
            publisher.lookups,
            &batch.span,
            &batch.entries,
        );
        if batch.entries.marker_counts().total() > 0 {
            for marker in batch.entries.markers() {
                *footer_notifications += publish_marker(shared.feed, batch.span.slot, &marker);
            }
        }
    }
}

/// A block marker of `slot`: a footer goes to subscribers as the slot's footer notification (1
/// returned); an update-parent is logged (docs/decisions.md: published transactions stand); the
/// other kinds are only counted (by the decoder, `BatchCounters::markers`).
fn publish_marker(feed: &Feed, slot: u64, marker: &BlockMarker<'_>) -> u64 {
    match marker {
        BlockMarker::Footer(footer) => {
            feed.publish(slot_footer(
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

/// A batch that turned out malformed after some of its transactions went out (they stay
/// published: docs/decisions.md).
fn log_malformed_end(end: &BatchEnd) {
    if let Err(error) = end.outcome {
        debug!(
            slot = end.span.slot,
            start_index = end.span.start_index,
            published = end.transactions,
            reason = error.label(),
            "entry batch malformed after some of its transactions were published"
        );
    }
}
