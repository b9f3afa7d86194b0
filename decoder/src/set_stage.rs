//! `SetStage`: the first half of the shred path, datagrams in, data shreds out.
//!
//! It parses each datagram, applies the policy checks (shred version, slot window) and hands the
//! shred to the [`FecResolver`] (verify, store, recover). Every data shred that becomes present,
//! received or recovered, leaves as a [`SetEvent::DataShredReady`] carrying its payload bytes.
//! Who owns those bytes, and until when, is written down once, in [`held`]; a set released from
//! the pool keeps its key and root in the completed-set filter, so late shreds stay cheap.
//!
//! A `SetStage` sees whole FEC sets, so several of them can run side by side on disjoint shards
//! of `(slot, fec_set_index)`; the events of one slot then go to the one
//! [`SlotStage`](crate::slot_stage::SlotStage) that owns the slot. [`ShredDecoder`] is the
//! single-thread composition of the two.
//!
//! Nothing unverified moves state. A shred is first placed against the slot window (a pure check),
//! then verified by the resolver; only a *confirmed* set (its leader's signature verified, or
//! without a schedule enough of its shreds proving one root: `fec` module) hands on data shreds
//! or moves the window. A shred that fails is counted and leaves no trace.
//!
//! Slot window: the highest slot of any confirmed set anchors it. Shreds more than
//! `slot_lookback` slots below are stale and shreds more than `max_slots_ahead` above are
//! rejected, both without verification, unless no set was confirmed inside the window for
//! `window_reset_after_ns`: then such shreds are verified like any other, and the first set
//! confirmed outside the window re-anchors it there ([`SetEvent::Reanchored`]), below as well as
//! above. So a paused feed does not lock itself out, and a poisoned anchor (a forged set far
//! ahead on a trusted feed) costs at most `window_reset_after_ns` of decoding after the forger
//! stops. When the floor rises the stage releases its sets below it and says so with
//! [`SetEvent::SlotFloor`].
//!
//! [`ShredDecoder`]: crate::decoder::ShredDecoder

pub mod held;

pub use held::HeldShreds;

use crate::fec::{Completion, DuplicateSet, FecCounters, FecError, FecResolver, Inserted, SetKey};
use crate::leader::LeaderSchedule;
use crate::shred::{
    self, DATA_SHREDS_PER_FEC_SET, FLAG_DATA_COMPLETE, FLAG_LAST_SHRED_IN_SLOT, offset,
};
use crate::stage::{DecoderConfig, Rejection, ShredOutcome};

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
    /// A set of a slot above every slot seen so far was confirmed (the window's anchor rose);
    /// comes before the set's data shreds, so a slot notification can precede them.
    HighestSlot(u64),
    /// The slot window's floor rose: slots below it will not be seen again.
    SlotFloor(u64),
    /// The window was re-anchored at a set confirmed outside it (after `window_reset_after_ns`
    /// without a set confirmed inside): the highest slot is now `slot`, which may be lower than
    /// `previous`; a `HighestSlot(slot)` follows. A consumer that keeps the highest slot it
    /// notified resets it to `slot`.
    Reanchored {
        previous: Option<u64>,
        slot: u64,
    },
    /// The leader signed a second version of a FEC set (duplicate block): only the first is
    /// used, the second's shreds are refused (`duplicate_block`). Reported once per set.
    Duplicate(DuplicateSet),
}

/// See the module documentation.
pub struct SetStage {
    config: DecoderConfig,
    leaders: LeaderSchedule,
    fec: FecResolver,
    highest_slot: Option<u64>,
    /// Receive time of the last set confirmed inside the window.
    last_confirm_ns: u64,
    /// Complete sets stay in the pool until their data shreds are consumed ([`HeldShreds`]).
    hold_complete: bool,
}

/// Where a shred's slot lies against the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Inside,
    /// Outside, but the window is idle: verified like any shred, and its set may re-anchor.
    Probation,
}

impl SetStage {
    /// Reserves the resolver's pool.
    pub fn new(config: DecoderConfig, leaders: LeaderSchedule) -> Self {
        Self {
            config,
            leaders,
            fec: FecResolver::new(config.fec),
            highest_slot: None,
            last_confirm_ns: 0,
            hold_complete: false,
        }
    }

    /// A stage whose complete sets stay in the resolver's pool until a slot stage on the same
    /// thread has consumed their data shreds, reading them in place through [`HeldShreds`]
    /// instead of copying each one out ([`ShredDecoder`]'s batch mode). Complete sets then count
    /// against `fec.max_sets_in_flight` until consumed.
    ///
    /// [`ShredDecoder`]: crate::decoder::ShredDecoder
    pub fn holding(config: DecoderConfig, leaders: LeaderSchedule) -> Self {
        Self {
            hold_complete: true,
            ..Self::new(config, leaders)
        }
    }

    /// The leader schedule in use.
    pub fn leaders(&self) -> &LeaderSchedule {
        &self.leaders
    }

    /// Replaces the leader schedule (e.g. a new epoch fetched), between datagrams. Sets already
    /// open keep the verification they were opened with; new sets use `leaders`.
    pub fn set_leaders(&mut self, leaders: LeaderSchedule) {
        self.leaders = leaders;
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

    /// The payload of a data shred held in the resolver's pool (e.g. by an unconfirmed set).
    pub fn data_shred(&self, slot: u64, index: u32) -> Option<&[u8]> {
        self.fec.data_shred(slot, index)
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
        let place = match self.place(slot, rx_ns) {
            Ok(place) => place,
            Err(reason) => return reject(reason),
        };
        let inserted = match self.fec.insert(&shred, &self.leaders, rx_ns) {
            Ok(inserted) => inserted,
            Err(FecError::SetAlreadyComplete) => return ShredOutcome::Redundant { slot, kind },
            Err(error) => {
                if let Some(duplicate) = self.fec.take_duplicate() {
                    sink(SetEvent::Duplicate(duplicate));
                }
                return reject(error.into());
            }
        };
        if inserted.confirmed_now {
            self.confirmed(slot, place, rx_ns, sink);
        }
        self.after_insert(&inserted, &shred, rx_ns, sink);
        ShredOutcome::Stored {
            slot,
            fec_set_index: inserted.key.fec_set_index,
            kind,
            completion: inserted.completion,
        }
    }

    /// Places `slot` against the window; changes nothing.
    fn place(&self, slot: u64, rx_ns: u64) -> Result<Place, Rejection> {
        let Some(highest) = self.highest_slot else {
            return Ok(Place::Inside);
        };
        let floor = highest.saturating_sub(self.config.slot_lookback);
        let limit = highest.saturating_add(self.config.max_slots_ahead);
        if (floor..=limit).contains(&slot) {
            return Ok(Place::Inside);
        }
        let idle_ns = rx_ns.saturating_sub(self.last_confirm_ns);
        if rx_ns != 0 && idle_ns >= self.config.window_reset_after_ns {
            return Ok(Place::Probation);
        }
        Err(match slot < floor {
            true => Rejection::StaleSlot { slot, floor },
            false => Rejection::SlotTooFarAhead { slot, limit },
        })
    }

    /// A set of `slot` was just confirmed: it moves the window.
    fn confirmed(
        &mut self,
        slot: u64,
        place: Place,
        rx_ns: u64,
        sink: &mut impl FnMut(SetEvent<'_>),
    ) {
        self.last_confirm_ns = self.last_confirm_ns.max(rx_ns);
        if place == Place::Probation {
            // The window saw nothing confirmed for a while and this set is outside it: start over.
            let previous = self.highest_slot.take();
            sink(SetEvent::Reanchored { previous, slot });
        }
        self.advance_window(slot, sink);
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
        let recovered_data = match inserted.completion {
            Some(Completion::Complete { recovered_data }) => recovered_data,
            _ => 0,
        };
        if inserted.confirmed_now {
            // The shreds held while the set was unconfirmed (this one included) go now.
            self.hand_over(key, !recovered_data, first_rx_ns, rx_ns, sink);
        } else if inserted.confirmed && shred.is_data() {
            sink(SetEvent::DataShredReady(DataShredReady {
                slot: key.slot,
                index: shred.index(),
                flags: shred.flags(),
                first_rx_ns,
                rx_ns,
                payload: shred.payload(),
            }));
        }
        if let Some(Completion::Complete { .. }) = inserted.completion {
            self.hand_over(key, recovered_data, first_rx_ns, rx_ns, sink);
            // Every data shred of the set has been handed over: the slot side owns them now
            // (or, holding, reads them here until it has consumed them).
            if !self.hold_complete {
                self.fec.release_complete(&key);
            }
        }
    }

    /// Hands over the present data shreds of set `key` whose position bit is set in `positions`.
    fn hand_over(
        &self,
        key: SetKey,
        positions: u32,
        first_rx_ns: u64,
        rx_ns: u64,
        sink: &mut impl FnMut(SetEvent<'_>),
    ) {
        for (index, payload) in self.fec.data_shreds(&key, positions) {
            sink(SetEvent::DataShredReady(DataShredReady {
                slot: key.slot,
                index,
                flags: payload[offset::DATA_FLAGS],
                first_rx_ns,
                rx_ns,
                payload,
            }));
        }
    }
}
