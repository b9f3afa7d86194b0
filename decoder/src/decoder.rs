//! `ShredDecoder`: the whole shred path of one worker, datagrams in, entry batches out.
//!
//! It parses each datagram, applies the policy checks (shred version, slot window), hands the shred
//! to the FEC resolver, tells the deshredder which data shreds became present, and queues the entry
//! batches that became complete. The caller drains them with [`ShredDecoder::next_batch`], which
//! assembles the batch bytes into a buffer reserved at start and parses them strictly. Time enters
//! only as the `rx_ns` value passed with each datagram; every datagram ends in exactly one
//! [`ShredOutcome`].
//!
//! Slot window: the highest slot of any authenticated set anchors it. Shreds more than
//! `slot_lookback` slots below are stale; shreds more than `max_slots_ahead` above are rejected,
//! unless nothing was accepted for `window_reset_after_ns`, in which case the window re-anchors on
//! the next shred (a feed that paused must not lock itself out).

use std::collections::VecDeque;

use thiserror::Error;

use crate::deshred::{BatchSpan, DeshredConfig, Deshredder};
use crate::entry::{EntryBatch, EntryError, parse_entry_batch};
use crate::fec::{Completion, FecConfig, FecCounters, FecError, FecResolver, Inserted};
use crate::leader::LeaderSchedule;
use crate::shred::{
    self, DATA_HEADERS_LEN, DATA_SHREDS_PER_FEC_SET, MAX_SHREDS_PER_SLOT, ParseOptions, ShredError,
    ShredKind,
};

/// Every bound and policy switch of the decoder, with production defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecoderConfig {
    /// Accept only this shred version (cluster id); `None` accepts any.
    pub shred_version: Option<u16>,
    pub parse: ParseOptions,
    pub fec: FecConfig,
    pub deshred: DeshredConfig,
    /// Slots below `highest − slot_lookback` are stale. Default 128 (~51 s of slots).
    pub slot_lookback: u64,
    /// Slots above `highest + max_slots_ahead` are rejected. Default 2,048.
    pub max_slots_ahead: u64,
    /// Idle time after which the window re-anchors. Default 10 s.
    pub window_reset_after_ns: u64,
    /// Largest entry batch assembled; reserved at start. Default 32 MiB (a full slot's worth:
    /// 32,768 shreds × at most 1,115 entry bytes each fits in 35 MB, real batches are far smaller).
    pub max_batch_bytes: usize,
    /// Complete batches waiting for `next_batch`. Default 1,024; beyond it a batch is dropped and
    /// counted.
    pub max_pending_batches: usize,
}

impl Default for DecoderConfig {
    fn default() -> Self {
        Self {
            shred_version: None,
            parse: ParseOptions::default(),
            fec: FecConfig::default(),
            deshred: DeshredConfig::default(),
            slot_lookback: 128,
            max_slots_ahead: 2048,
            window_reset_after_ns: 10_000_000_000,
            max_batch_bytes: 32 << 20,
            max_pending_batches: 1024,
        }
    }
}

/// Why a datagram was not used. One variant per reason; `label()` is the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Rejection {
    #[error(transparent)]
    Shred(#[from] ShredError),
    #[error("shred version {found} differs from the expected {expected}")]
    WrongShredVersion { expected: u16, found: u16 },
    #[error("slot {slot} is below the window floor {floor}")]
    StaleSlot { slot: u64, floor: u64 },
    #[error("slot {slot} is beyond the window limit {limit}")]
    SlotTooFarAhead { slot: u64, limit: u64 },
    #[error(transparent)]
    Fec(#[from] FecError),
}

impl Rejection {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Shred(error) => error.label(),
            Self::WrongShredVersion { .. } => "wrong_shred_version",
            Self::StaleSlot { .. } => "stale_slot",
            Self::SlotTooFarAhead { .. } => "slot_too_far_ahead",
            Self::Fec(error) => error.label(),
        }
    }
}

/// The one outcome of each datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShredOutcome {
    /// Authenticated and stored; `completion` is set when it completed its FEC set.
    Stored {
        slot: u64,
        fec_set_index: u32,
        kind: ShredKind,
        completion: Option<Completion>,
    },
    /// Well formed, but its FEC set was already complete (not re-verified: it is not needed).
    Redundant { slot: u64, kind: ShredKind },
    /// Not used; `slot` and `kind` when the header was readable.
    Rejected {
        slot: Option<u64>,
        kind: Option<ShredKind>,
        reason: Rejection,
    },
}

/// Batch-level events that are not per-datagram outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCounters {
    pub batches_emitted: u64,
    /// Certain-start batches whose bytes did not parse.
    pub batches_invalid: u64,
    /// Uncertain-start batches that did not parse exactly (kept for a later retry).
    pub batches_uncertain_rejected: u64,
    /// Batches whose shreds were evicted before assembly.
    pub batches_incomplete: u64,
    pub batches_too_large: u64,
    pub batches_dropped_queue_full: u64,
}

/// A complete, strictly parsed entry batch.
#[derive(Debug)]
pub struct Batch<'a> {
    pub span: BatchSpan,
    /// Earliest receive time of the FEC set whose shred completed the batch.
    pub first_rx_ns: u64,
    /// Receive time of the shred that completed the batch.
    pub completed_rx_ns: u64,
    pub bytes: &'a [u8],
    pub entries: EntryBatch<'a>,
}

#[derive(Debug, Clone, Copy)]
struct PendingBatch {
    span: BatchSpan,
    first_rx_ns: u64,
    completed_rx_ns: u64,
}

/// See the module documentation.
pub struct ShredDecoder {
    config: DecoderConfig,
    leaders: LeaderSchedule,
    fec: FecResolver,
    deshred: Deshredder,
    pending: VecDeque<PendingBatch>,
    batch_bytes: Vec<u8>,
    highest_slot: Option<u64>,
    last_accept_ns: u64,
    counters: BatchCounters,
}

impl ShredDecoder {
    /// Reserves every buffer the decoder will use.
    pub fn new(config: DecoderConfig, leaders: LeaderSchedule) -> Self {
        assert!(
            config.max_pending_batches > 0,
            "max_pending_batches must be positive"
        );
        assert!(
            config.max_batch_bytes > 0,
            "max_batch_bytes must be positive"
        );
        Self {
            config,
            leaders,
            fec: FecResolver::new(config.fec),
            deshred: Deshredder::new(config.deshred),
            pending: VecDeque::with_capacity(config.max_pending_batches),
            batch_bytes: Vec::with_capacity(config.max_batch_bytes),
            highest_slot: None,
            last_accept_ns: 0,
            counters: BatchCounters::default(),
        }
    }

    pub fn config(&self) -> &DecoderConfig {
        &self.config
    }

    pub fn fec_counters(&self) -> FecCounters {
        self.fec.counters()
    }

    pub fn batch_counters(&self) -> BatchCounters {
        self.counters
    }

    pub fn sets_in_flight(&self) -> usize {
        self.fec.sets_in_flight()
    }

    pub fn pending_batches(&self) -> usize {
        self.pending.len()
    }

    /// Highest slot of any authenticated FEC set so far.
    pub fn highest_slot(&self) -> Option<u64> {
        self.highest_slot
    }

    /// The payload of a data shred still held (received or recovered), for repair serving and
    /// tests.
    pub fn data_shred(&self, slot: u64, index: u32) -> Option<&[u8]> {
        self.fec.data_shred(slot, index)
    }

    /// The signed Merkle root of a FEC set held or completed recently.
    pub fn fec_set_root(&self, slot: u64, fec_set_index: u32) -> Option<[u8; 32]> {
        self.fec.root_of(&crate::fec::SetKey {
            slot,
            fec_set_index,
        })
    }

    /// Anchors the slot window before any shred arrives (e.g. at the cluster's root).
    pub fn set_reference_slot(&mut self, slot: u64) {
        self.highest_slot = Some(slot);
    }

    /// Processes one datagram received at `rx_ns`.
    pub fn ingest(&mut self, datagram: &[u8], rx_ns: u64) -> ShredOutcome {
        let shred = match shred::parse_shred(datagram, self.config.parse) {
            Ok(shred) => shred,
            Err(error) => {
                let slot = shred::peek_slot_and_fec_set(datagram).map(|(slot, _)| slot);
                return ShredOutcome::Rejected {
                    slot,
                    kind: None,
                    reason: error.into(),
                };
            }
        };
        let (slot, kind) = (shred.slot(), shred.kind());
        let reject = |reason: Rejection| ShredOutcome::Rejected {
            slot: Some(slot),
            kind: Some(kind),
            reason,
        };
        if let Some(expected) = self.config.shred_version
            && shred.shred_version() != expected
        {
            return reject(Rejection::WrongShredVersion {
                expected,
                found: shred.shred_version(),
            });
        }
        if let Err(reason) = self.check_window(slot, rx_ns) {
            return reject(reason);
        }
        let inserted = match self.fec.insert(&shred, &self.leaders, rx_ns) {
            Ok(inserted) => inserted,
            Err(FecError::SetAlreadyComplete) => return ShredOutcome::Redundant { slot, kind },
            Err(error) => return reject(error.into()),
        };
        self.last_accept_ns = rx_ns;
        if inserted.new_set {
            self.advance_window(slot);
        }
        self.after_insert(&inserted, &shred, rx_ns);
        ShredOutcome::Stored {
            slot,
            fec_set_index: inserted.key.fec_set_index,
            kind,
            completion: inserted.completion,
        }
    }

    /// Takes the next complete batch, assembled and strictly parsed. Batches that fail are
    /// counted and skipped.
    pub fn next_batch(&mut self) -> Option<Batch<'_>> {
        let (pending, entry_count, transaction_count) = loop {
            let pending = self.pending.pop_front()?;
            if !self.assemble(&pending.span) {
                continue;
            }
            // Only owned counts leave this match, so the batch buffer is free again for the next
            // iteration; the view is rebuilt from them below without a second walk.
            match parse_entry_batch(&self.batch_bytes) {
                Ok(entries) => {
                    break (pending, entries.entry_count(), entries.transaction_count());
                }
                Err(error) => self.note_parse_failure(&pending.span, &error),
            }
        };
        self.consume(&pending.span);
        self.counters.batches_emitted += 1;
        let bytes = self.batch_bytes.as_slice();
        Some(Batch {
            span: pending.span,
            first_rx_ns: pending.first_rx_ns,
            completed_rx_ns: pending.completed_rx_ns,
            bytes,
            entries: EntryBatch::from_validated(bytes, entry_count, transaction_count),
        })
    }

    fn check_window(&mut self, slot: u64, rx_ns: u64) -> Result<(), Rejection> {
        let Some(highest) = self.highest_slot else {
            return Ok(());
        };
        let floor = highest.saturating_sub(self.config.slot_lookback);
        if slot < floor {
            return Err(Rejection::StaleSlot { slot, floor });
        }
        let limit = highest.saturating_add(self.config.max_slots_ahead);
        if slot > limit {
            let idle_ns = rx_ns.saturating_sub(self.last_accept_ns);
            if idle_ns < self.config.window_reset_after_ns || rx_ns == 0 {
                return Err(Rejection::SlotTooFarAhead { slot, limit });
            }
            // The feed paused long enough that the old anchor means nothing: start over.
            self.highest_slot = None;
        }
        Ok(())
    }

    fn advance_window(&mut self, slot: u64) {
        if self.highest_slot.is_some_and(|highest| highest >= slot) {
            return;
        }
        let previous_floor = self
            .highest_slot
            .map(|h| h.saturating_sub(self.config.slot_lookback));
        self.highest_slot = Some(slot);
        let floor = slot.saturating_sub(self.config.slot_lookback);
        if previous_floor.is_none_or(|previous| previous < floor) {
            self.fec.release_slots_below(floor);
            self.deshred.release_slots_below(floor);
        }
    }

    fn after_insert(&mut self, inserted: &Inserted, shred: &shred::ShredRef<'_>, rx_ns: u64) {
        if let Some(evicted) = inserted.evicted {
            self.deshred.forget(
                evicted.slot,
                evicted.fec_set_index,
                DATA_SHREDS_PER_FEC_SET as u32,
            );
        }
        if shred.is_data() {
            self.note_data_present(
                shred.slot(),
                shred.index(),
                shred.data_complete(),
                shred.last_in_slot(),
                rx_ns,
            );
        }
        if let Some(Completion::Complete { recovered_data }) = inserted.completion {
            let key = inserted.key;
            for position in
                (0..DATA_SHREDS_PER_FEC_SET as u32).filter(|p| recovered_data >> p & 1 == 1)
            {
                let index = key.fec_set_index + position;
                let flags = self
                    .fec
                    .data_shred(key.slot, index)
                    .map_or(0, |payload| payload[85]);
                self.note_data_present(
                    key.slot,
                    index,
                    flags & shred::FLAG_DATA_COMPLETE != 0,
                    flags & shred::FLAG_LAST_SHRED_IN_SLOT == shred::FLAG_LAST_SHRED_IN_SLOT,
                    rx_ns,
                );
            }
        }
    }

    fn note_data_present(
        &mut self,
        slot: u64,
        index: u32,
        data_complete: bool,
        last_in_slot: bool,
        rx_ns: u64,
    ) {
        debug_assert!(index < MAX_SHREDS_PER_SLOT);
        let spans = self
            .deshred
            .insert(slot, index, data_complete, last_in_slot);
        for span in spans.into_iter().flatten() {
            if self.pending.iter().any(|pending| pending.span == span) {
                continue;
            }
            if self.pending.len() == self.config.max_pending_batches {
                self.counters.batches_dropped_queue_full += 1;
                continue;
            }
            let first_rx_ns = self.fec.first_rx_ns(slot, index).unwrap_or(rx_ns);
            self.pending.push_back(PendingBatch {
                span,
                first_rx_ns,
                completed_rx_ns: rx_ns,
            });
        }
    }

    /// Copies the batch's entry bytes into the batch buffer; false when it cannot.
    fn assemble(&mut self, span: &BatchSpan) -> bool {
        self.batch_bytes.clear();
        for index in span.start_index..=span.end_index {
            let Some(payload) = self.fec.data_shred(span.slot, index) else {
                self.counters.batches_incomplete += 1;
                return false;
            };
            // Stored shreds passed `parse_shred`, so `size` lies in 88..=88 + capacity.
            let size = usize::from(u16::from_le_bytes([payload[86], payload[87]]));
            let data = &payload[DATA_HEADERS_LEN..size];
            if self.batch_bytes.len() + data.len() > self.config.max_batch_bytes {
                self.counters.batches_too_large += 1;
                self.consume(span);
                return false;
            }
            self.batch_bytes.extend_from_slice(data);
        }
        true
    }

    fn note_parse_failure(&mut self, span: &BatchSpan, _error: &EntryError) {
        if span.start_certain {
            self.counters.batches_invalid += 1;
            self.consume(span);
        } else {
            // The true start may lie earlier; leave the shreds for when the predecessor arrives.
            self.counters.batches_uncertain_rejected += 1;
        }
    }

    fn consume(&mut self, span: &BatchSpan) {
        self.deshred.mark_emitted(span);
        for index in span.start_index..=span.end_index {
            self.fec.mark_consumed(span.slot, index);
        }
    }
}
