//! The worker's output room: what the shred just applied to the slot stage becomes, through one
//! entry, [`drain`], which the worker calls after every shred (and `bench/pipeline_steady`
//! after every record). What became publishable goes out per transaction as soon as its bytes are
//! complete (incremental deshredding, docs/incremental-deshred.md) or per complete entry batch
//! (the batch-wise path, `[decoder] incremental = false`): each transaction decoded, stamped and
//! published ([`publish`]), block footers as footer notifications, complete batches to the entry
//! and Yellowstone deshred streams while they have subscribers ([`feeds`], [`deshred`]). Every
//! clock read of the path is in [`stamps`].
//!
//! ```text
//! drain ─ nothing ready: return (no clock read)
//!       ─ capture_done ─┬─ incremental: next_ready ─┬─ Transaction ─ Publisher ─ Feed
//!                       │                           ├─ Marker ────── Feeds::marker
//!                       │                           └─ BatchEnd ──── Feeds::batch_completed
//!                       └─ batch-wise:  next_batch ─── Publisher::publish_batch, Feeds::batch
//! ```

pub mod deshred;
pub mod feeds;
pub mod publish;
pub mod stamps;

use decoder::dex::ProgramRegistry;
use decoder::{BatchEnd, ReadyItem, ReadyTransaction, SlotStage};
use stream_proto::stream::ServerTiming;
use tracing::debug;

pub use feeds::Feeds;
use publish::Publisher;
use stamps::Stamps;

use crate::metrics::{Histogram, STAGES, WorkerCounters, record_timing};
use crate::pipeline::lookups::WorkerLookups;

/// What a drain publishes with.
#[derive(Clone, Copy)]
pub struct Output<'a> {
    /// Publish per transaction (`next_ready`) rather than per batch (`next_batch`).
    pub incremental: bool,
    pub registry: &'a ProgramRegistry,
    pub feeds: &'a Feeds,
}

/// Publishes what the shred just applied made ready, on the path `output.incremental` selects,
/// counting into the worker's `counters` (transactions, entries, footers, the published updates
/// and their stage latencies, decode statistics).
pub fn drain(
    slots: &mut SlotStage,
    counters: &mut WorkerCounters,
    lookups: &mut WorkerLookups,
    output: &Output<'_>,
) {
    let ready = match output.incremental {
        true => slots.has_ready(),
        false => slots.pending_batches() > 0,
    };
    // Most shreds complete nothing: no clock read for them.
    if !ready {
        return;
    }
    // Items drained now were completed by the shred just applied: taken now.
    let capture_done = stamps::capture_done();
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
    let mut drain = Drain {
        publisher: Publisher {
            registry: output.registry,
            feed: &output.feeds.feed,
            stats: decode,
            lookups,
            published: on_published(stage_latency, updates_published),
        },
        feeds: output.feeds,
        capture_done,
        transactions,
        entries,
        footer_notifications,
        transactions_before_malformed_end,
    };
    match output.incremental {
        true => drain.ready(slots),
        false => drain.batches(slots),
    }
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

/// One drain's publisher, feeds, `capture_done` stamp and counters.
struct Drain<'a, F: FnMut(&ServerTiming)> {
    publisher: Publisher<'a, F>,
    feeds: &'a Feeds,
    capture_done: u64,
    transactions: &'a mut u64,
    entries: &'a mut u64,
    footer_notifications: &'a mut u64,
    transactions_before_malformed_end: &'a mut u64,
}

impl<F: FnMut(&ServerTiming)> Drain<'_, F> {
    /// Incremental mode: every ready transaction, marker and batch end, in the stage's order.
    fn ready(&mut self, slots: &mut SlotStage) {
        // Batch bytes are copied only while an entry or deshred subscriber exists.
        slots.keep_entry_bytes(self.feeds.want_batch_bytes());
        while let Some(item) = slots.next_ready() {
            match item {
                ReadyItem::Transaction(ready) => {
                    *self.transactions += 1;
                    self.transaction(&ready);
                }
                ReadyItem::Marker(ready) => {
                    *self.footer_notifications += self.feeds.marker(ready.slot, &ready.marker);
                }
                ReadyItem::BatchEnd(end) => {
                    *self.entries += end.entries;
                    if end.outcome.is_ok() {
                        self.feeds.batch_completed(
                            slots.last_entry_bytes(),
                            &end.span,
                            self.publisher.lookups,
                        );
                    }
                    if end.outcome.is_err() {
                        *self.transactions_before_malformed_end += end.transactions;
                        log_malformed_end(&end);
                    }
                }
            }
        }
    }

    /// One ready transaction with the stamps of the product decisions: `first_read` from the set
    /// whose shred completed its bytes, `capture_done` when the worker took that shred,
    /// `deshred_done` now (its bytes were just parsed).
    fn transaction(&mut self, ready: &ReadyTransaction<'_>) {
        let placement = ::stream::encode::Placement {
            slot: ready.slot,
            tx_index: u32::try_from(ready.index_in_batch).unwrap_or(u32::MAX),
        };
        let stamps = Stamps::deshredded(ready.first_rx_ns, self.capture_done);
        self.publisher
            .publish_transaction(&ready.transaction, placement, stamps);
    }

    /// The batch-wise path: every complete entry batch, its transactions after one another. The
    /// `first_read` stamp is the earliest kernel receive time of the FEC set that completed the
    /// batch (SO_TIMESTAMPNS on the UDP path; the ring read time on AF_XDP).
    fn batches(&mut self, slots: &mut SlotStage) {
        while let Some(batch) = slots.next_batch() {
            *self.entries += batch.entries.entry_count();
            *self.transactions += batch.entries.transaction_count();
            self.publisher.publish_batch(&batch, self.capture_done);
            *self.footer_notifications += self.feeds.batch(self.publisher.lookups, &batch);
        }
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
