//! `SetStage`: the first half of the shred path, datagrams in, data shreds out.
//!
//! It parses each datagram, applies the policy checks (shred version, slot window) and hands the
//! shred to the [`FecResolver`] (verify, store, recover). Every data shred that becomes present,
//! received or recovered, leaves as a [`SetEvent::DataShredReady`] carrying its payload bytes (a
//! borrow of the resolver's pool, valid during the callback: a caller on another thread copies
//! it). Once a complete set's data shreds have all been handed over the set is released at once,
//! its key and root kept in the completed-set filter, so late shreds stay cheap.
//!
//! A `SetStage` sees whole FEC sets, so several of them can run side by side on disjoint shards
//! of `(slot, fec_set_index)`; the events of one slot then go to the one
//! [`SlotStage`](crate::slot_stage::SlotStage) that owns the slot. [`ShredDecoder`] is the
//! single-thread composition of the two.
//!
//! Slot window: the highest slot of any authenticated set anchors it. Shreds more than
//! `slot_lookback` slots below are stale; shreds more than `max_slots_ahead` above are rejected,
//! unless nothing was accepted for `window_reset_after_ns`, in which case the window re-anchors on
//! the next shred (a feed that paused must not lock itself out). When the floor rises the stage
//! releases its sets below it and says so with [`SetEvent::SlotFloor`].
//!
//! [`ShredDecoder`]: crate::decoder::ShredDecoder

use crate::decoder::{DecoderConfig, Rejection, ShredOutcome};
use crate::fec::{Completion, FecCounters, FecError, FecResolver, Inserted, SetKey};
use crate::leader::LeaderSchedule;
use crate::shred::{self, DATA_SHREDS_PER_FEC_SET, FLAG_DATA_COMPLETE, FLAG_LAST_SHRED_IN_SLOT};

/// A data shred that became present in its FEC set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataShredReady<'a> {
    pub slot: u64,
    pub index: u32,
    /// The shred's flags byte (`FLAG_DATA_COMPLETE`, `FLAG_LAST_SHRED_IN_SLOT`, reference tick).
    pub flags: u8,
    /// Earliest receive time of any shred of its FEC set so far.
    pub first_rx_ns: u64,
    /// Receive time of the shred that made it present (itself, or the one completing recovery).
    pub rx_ns: u64,
    /// The whole data shred, headers included.
    pub payload: &'a [u8],
}

impl DataShredReady<'_> {
    pub const fn data_complete(&self) -> bool {
        self.flags & FLAG_DATA_COMPLETE != 0
    }

    pub const fn last_in_slot(&self) -> bool {
        self.flags & FLAG_LAST_SHRED_IN_SLOT == FLAG_LAST_SHRED_IN_SLOT
    }

    /// The FEC set holding the shred.
    pub const fn set_key(&self) -> SetKey {
        SetKey {
            slot: self.slot,
            fec_set_index: self.index - self.index % DATA_SHREDS_PER_FEC_SET as u32,
        }
    }
}

/// What a `SetStage` tells the slot side, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetEvent<'a> {
    DataShredReady(DataShredReady<'a>),
    /// The set was evicted before completing: its data shreds handed over so far are void.
    SetEvicted(SetKey),
    /// A set of a slot above every slot seen so far was authenticated (the window's anchor
    /// rose); comes before the set's data shreds, so a slot notification can precede them.
    HighestSlot(u64),
    /// The slot window's floor rose: slots below it will not be seen again.
    SlotFloor(u64),
}

/// See the module documentation.
pub struct SetStage {
    config: DecoderConfig,
    leaders: LeaderSchedule,
    fec: FecResolver,
    highest_slot: Option<u64>,
    last_accept_ns: u64,
}

impl SetStage {
    /// Reserves the resolver's pool.
    pub fn new(config: DecoderConfig, leaders: LeaderSchedule) -> Self {
        Self {
            config,
            leaders,
            fec: FecResolver::new(config.fec),
            highest_slot: None,
            last_accept_ns: 0,
        }
    }

    pub fn config(&self) -> &DecoderConfig {
        &self.config
    }

    pub fn fec_counters(&self) -> FecCounters {
        self.fec.counters()
    }

    /// Sets held (collecting, or failed and kept to refuse their shreds).
    pub fn sets_in_flight(&self) -> usize {
        self.fec.sets_in_flight()
    }

    /// Highest slot of any authenticated FEC set so far.
    pub fn highest_slot(&self) -> Option<u64> {
        self.highest_slot
    }

    /// Anchors the slot window before any shred arrives (e.g. at the cluster's root).
    pub fn set_reference_slot(&mut self, slot: u64) {
        self.highest_slot = Some(slot);
    }

    /// The signed Merkle root of a FEC set held or completed recently.
    pub fn fec_set_root(&self, slot: u64, fec_set_index: u32) -> Option<[u8; 32]> {
        self.fec.root_of(&SetKey {
            slot,
            fec_set_index,
        })
    }

    /// Processes one datagram received at `rx_ns`; `sink` gets the events it caused, in order.
    pub fn ingest(
        &mut self,
        datagram: &[u8],
        rx_ns: u64,
        sink: &mut impl FnMut(SetEvent<'_>),
    ) -> ShredOutcome {
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
            self.advance_window(slot, sink);
        }
        self.after_insert(&inserted, &shred, rx_ns, sink);
        ShredOutcome::Stored {
            slot,
            fec_set_index: inserted.key.fec_set_index,
            kind,
            completion: inserted.completion,
        }
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

    fn advance_window(&mut self, slot: u64, sink: &mut impl FnMut(SetEvent<'_>)) {
        if self.highest_slot.is_some_and(|highest| highest >= slot) {
            return;
        }
        let previous_floor = self
            .highest_slot
            .map(|h| h.saturating_sub(self.config.slot_lookback));
        self.highest_slot = Some(slot);
        sink(SetEvent::HighestSlot(slot));
        let floor = slot.saturating_sub(self.config.slot_lookback);
        if previous_floor.is_none_or(|previous| previous < floor) {
            self.fec.release_slots_below(floor);
            sink(SetEvent::SlotFloor(floor));
        }
    }

    fn after_insert(
        &mut self,
        inserted: &Inserted,
        shred: &shred::ShredRef<'_>,
        rx_ns: u64,
        sink: &mut impl FnMut(SetEvent<'_>),
    ) {
        if let Some(evicted) = inserted.evicted {
            sink(SetEvent::SetEvicted(evicted));
        }
        let key = inserted.key;
        let first_rx_ns = self
            .fec
            .first_rx_ns(key.slot, key.fec_set_index)
            .unwrap_or(rx_ns);
        if shred.is_data() {
            sink(SetEvent::DataShredReady(DataShredReady {
                slot: key.slot,
                index: shred.index(),
                flags: shred.flags(),
                first_rx_ns,
                rx_ns,
                payload: shred.payload(),
            }));
        }
        if let Some(Completion::Complete { recovered_data }) = inserted.completion {
            for position in
                (0..DATA_SHREDS_PER_FEC_SET as u32).filter(|p| recovered_data >> p & 1 == 1)
            {
                let index = key.fec_set_index + position;
                if let Some(payload) = self.fec.data_shred(key.slot, index) {
                    sink(SetEvent::DataShredReady(DataShredReady {
                        slot: key.slot,
                        index,
                        flags: payload[85],
                        first_rx_ns,
                        rx_ns,
                        payload,
                    }));
                }
            }
            // Every data shred of the set has been handed over: the slot side owns them now.
            self.fec.release_complete(&key);
        }
    }
}
