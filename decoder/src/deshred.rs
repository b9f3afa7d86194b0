//! Finding complete entry batches among a slot's data shreds (format §9), without waiting for the
//! slot or for whole FEC sets.
//!
//! Per slot in flight the deshredder keeps three fixed 32,768-bit sets (4 KB each): data shreds
//! present, data shreds carrying `DATA_COMPLETE`, and data shreds already emitted in a batch. When
//! a data shred arrives (received or recovered), the batch around it is complete when:
//! - **end**: the first `DATA_COMPLETE` shred at or after it is reached with no gap;
//! - **start**: is certain when the batch opens the slot (index 0) or the shred before its start
//!   carries `DATA_COMPLETE`. When that predecessor is missing (joining mid-slot), the batch is
//!   offered only if it starts on a FEC set boundary (producers start batches there) and is marked
//!   *uncertain*: the caller keeps it only if it parses exactly, every byte consumed.
//!
//! A shred with `DATA_COMPLETE` also makes the start of the batch after it certain, so that batch
//! is checked too. The deshredder holds no payload bytes: those stay in the FEC set buffers until a
//! batch is taken. Bounds: `max_slots_in_flight` slot states (12 KB each) reserved at start; when
//! all are used the lowest slot is dropped.

use crate::shred::MAX_SHREDS_PER_SLOT;

const WORDS_PER_SLOT: usize = MAX_SHREDS_PER_SLOT as usize / 64;

/// A run of data shreds `[start_index, end_index]` of one slot that forms an entry batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchSpan {
    pub slot: u64,
    pub start_index: u32,
    /// The data shred carrying `DATA_COMPLETE` that ends the batch.
    pub end_index: u32,
    /// False when the shred before `start_index` is missing; see the module documentation.
    pub start_certain: bool,
    /// The batch ends the slot (`LAST_SHRED_IN_SLOT`).
    pub last_in_slot: bool,
}

impl BatchSpan {
    pub fn shred_count(&self) -> u32 {
        self.end_index - self.start_index + 1
    }
}

/// Bounds of the deshredder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeshredConfig {
    /// Slots tracked at once. Default 128 (1.5 MB).
    pub max_slots_in_flight: usize,
}

impl Default for DeshredConfig {
    fn default() -> Self {
        Self {
            max_slots_in_flight: 128,
        }
    }
}

/// Per-slot batch tracking; see the module documentation.
pub struct Deshredder {
    slots: Vec<SlotState>,
    evicted_slots: u64,
    /// Position of the slot looked up last: consecutive shreds are mostly of one slot.
    hint: usize,
    /// `(slot, last index)` of slots released whole, a ring as long as `slots`: a shred of
    /// another version of such a slot is still recognised.
    finished: Vec<(u64, u32)>,
    next_finished: usize,
}

struct SlotState {
    slot: Option<u64>,
    present: Bitset,
    data_complete: Bitset,
    emitted: Bitset,
    last_index: Option<u32>,
    emitted_count: u32,
}

impl Deshredder {
    pub fn new(config: DeshredConfig) -> Self {
        assert!(
            config.max_slots_in_flight > 0,
            "max_slots_in_flight must be positive"
        );
        let slots = (0..config.max_slots_in_flight)
            .map(|_| SlotState {
                slot: None,
                present: Bitset::new(),
                data_complete: Bitset::new(),
                emitted: Bitset::new(),
                last_index: None,
                emitted_count: 0,
            })
            .collect();
        Self {
            slots,
            evicted_slots: 0,
            hint: 0,
            finished: Vec::with_capacity(config.max_slots_in_flight),
            next_finished: 0,
        }
    }

    /// Slots dropped because every slot state was in use.
    pub fn evicted_slots(&self) -> u64 {
        self.evicted_slots
    }

    /// The index of the slot's `LAST_SHRED_IN_SLOT` data shred, when one was inserted.
    /// Slots released whole are remembered too, as many as `max_slots_in_flight`.
    pub fn last_index(&mut self, slot: u64) -> Option<u32> {
        match self.position_of(slot) {
            Some(position) => self.slots[position].last_index,
            None => self
                .finished
                .iter()
                .find(|(finished, _)| *finished == slot)
                .map(|&(_, last)| last),
        }
    }

    fn remember_finished(&mut self, slot: u64, last: u32) {
        if self.finished.len() < self.finished.capacity() {
            self.finished.push((slot, last));
        } else if let Some(entry) = self.finished.get_mut(self.next_finished) {
            *entry = (slot, last);
        }
        self.next_finished = (self.next_finished + 1) % self.finished.capacity().max(1);
    }

    /// Where `slot`'s state is, trying the last position found first.
    fn position_of(&mut self, slot: u64) -> Option<usize> {
        if self
            .slots
            .get(self.hint)
            .is_some_and(|state| state.slot == Some(slot))
        {
            return Some(self.hint);
        }
        let position = self
            .slots
            .iter()
            .position(|state| state.slot == Some(slot))?;
        self.hint = position;
        Some(position)
    }

    /// Records a data shred as present and returns up to two batches it completed: the one
    /// containing it and, when it carries `DATA_COMPLETE`, the one right after it.
    pub fn insert(
        &mut self,
        slot: u64,
        index: u32,
        data_complete: bool,
        last_in_slot: bool,
    ) -> [Option<BatchSpan>; 2] {
        debug_assert!(index < MAX_SHREDS_PER_SLOT);
        let state = self.state_for(slot);
        if state.present.get(index) {
            return [None, None];
        }
        state.present.set(index);
        if data_complete {
            state.data_complete.set(index);
        }
        if last_in_slot {
            state.last_index = Some(index);
        }
        let containing = state.complete_batch_containing(slot, index);
        let following = match data_complete && index + 1 < MAX_SHREDS_PER_SLOT {
            true if state.present.get(index + 1) => {
                state.complete_batch_containing(slot, index + 1)
            }
            _ => None,
        };
        [containing, following]
    }

    /// Whether data shred `index` of `slot` is present (received or recovered, not forgotten).
    pub fn is_present(&self, slot: u64, index: u32) -> bool {
        self.state(slot)
            .is_some_and(|state| index < MAX_SHREDS_PER_SLOT && state.present.get(index))
    }

    /// Whether data shred `index` of `slot` is present and carries `DATA_COMPLETE`.
    pub fn is_data_complete(&self, slot: u64, index: u32) -> bool {
        self.state(slot)
            .is_some_and(|state| index < MAX_SHREDS_PER_SLOT && state.data_complete.get(index))
    }

    /// Whether data shred `index` of `slot` was used in a batch already.
    pub fn is_emitted(&self, slot: u64, index: u32) -> bool {
        self.state(slot)
            .is_some_and(|state| index < MAX_SHREDS_PER_SLOT && state.emitted.get(index))
    }

    fn state(&self, slot: u64) -> Option<&SlotState> {
        self.slots.iter().find(|state| state.slot == Some(slot))
    }

    /// Marks a batch as emitted; a slot whose every shred up to `LAST_SHRED_IN_SLOT` was emitted
    /// is released (then true is returned).
    pub fn mark_emitted(&mut self, span: &BatchSpan) -> bool {
        let Some(state) = self
            .slots
            .iter_mut()
            .find(|state| state.slot == Some(span.slot))
        else {
            return false;
        };
        for index in span.start_index..=span.end_index {
            if !state.emitted.get(index) {
                state.emitted.set(index);
                state.emitted_count += 1;
            }
        }
        let finished = state
            .last_index
            .filter(|&last| state.emitted_count == last + 1);
        if let Some(last) = finished {
            state.reset();
            self.remember_finished(span.slot, last);
        }
        finished.is_some()
    }

    /// Forgets data shreds `[first_index, first_index + count)` of a slot (their FEC set was
    /// evicted, so their bytes are gone).
    pub fn forget(&mut self, slot: u64, first_index: u32, count: u32) {
        if let Some(state) = self.slots.iter_mut().find(|state| state.slot == Some(slot)) {
            for index in first_index..(first_index + count).min(MAX_SHREDS_PER_SLOT) {
                state.present.clear(index);
                state.data_complete.clear(index);
            }
        }
    }

    /// Drops every slot below `slot_floor`.
    pub fn release_slots_below(&mut self, slot_floor: u64) {
        for state in &mut self.slots {
            if state.slot.is_some_and(|slot| slot < slot_floor) {
                state.reset();
            }
        }
    }

    fn state_for(&mut self, slot: u64) -> &mut SlotState {
        let position = match self.position_of(slot) {
            Some(position) => position,
            None => {
                let free = self.slots.iter().position(|state| state.slot.is_none());
                let position = match free {
                    Some(position) => position,
                    None => {
                        // All in use: drop the lowest slot, the one least likely to still matter.
                        self.evicted_slots += 1;
                        self.slots
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, state)| state.slot)
                            .map_or(0, |(position, _)| position)
                    }
                };
                self.slots[position].reset();
                self.slots[position].slot = Some(slot);
                position
            }
        };
        &mut self.slots[position]
    }
}

impl SlotState {
    fn reset(&mut self) {
        if self.slot.take().is_some() {
            self.present.clear_all();
            self.data_complete.clear_all();
            self.emitted.clear_all();
        }
        self.last_index = None;
        self.emitted_count = 0;
    }

    fn complete_batch_containing(&self, slot: u64, index: u32) -> Option<BatchSpan> {
        // The end is the first `DATA_COMPLETE` before the first gap. Searching the gap first
        // bounds both scans by the run of present shreds (mostly one word), not by the slot's
        // 32,768 positions: this runs for every inserted shred.
        let run_end = match self.present.first_clear_in(index, MAX_SHREDS_PER_SLOT - 1) {
            Some(gap) => gap.checked_sub(1)?,
            None => MAX_SHREDS_PER_SLOT - 1,
        };
        let end_index = self.data_complete.first_set_in(index, run_end)?;
        let previous_end = match index {
            0 => None,
            _ => self.data_complete.last_set_in(0, index - 1),
        };
        let search_from = previous_end.map_or(0, |end| end + 1);
        let gap = match index {
            0 => None,
            _ if search_from >= index => None,
            _ => self.present.last_clear_in(search_from, index - 1),
        };
        let (start_index, start_certain) = match gap {
            None => (search_from, true),
            Some(missing) => (missing + 1, false),
        };
        if !start_certain && !start_index.is_multiple_of(32) {
            return None;
        }
        if self.emitted.get(start_index) {
            return None;
        }
        Some(BatchSpan {
            slot,
            start_index,
            end_index,
            start_certain,
            last_in_slot: self.last_index == Some(end_index),
        })
    }
}

/// A fixed set of 32,768 bits with range searches word by word.
struct Bitset {
    words: Box<[u64; WORDS_PER_SLOT]>,
}

impl Bitset {
    fn new() -> Self {
        Self {
            words: Box::new([0; WORDS_PER_SLOT]),
        }
    }

    fn get(&self, index: u32) -> bool {
        self.words[index as usize / 64] >> (index % 64) & 1 == 1
    }

    fn set(&mut self, index: u32) {
        self.words[index as usize / 64] |= 1 << (index % 64);
    }

    fn clear(&mut self, index: u32) {
        self.words[index as usize / 64] &= !(1 << (index % 64));
    }

    fn clear_all(&mut self) {
        self.words.fill(0);
    }

    /// First set bit in `[from, to]`.
    fn first_set_in(&self, from: u32, to: u32) -> Option<u32> {
        self.first_matching_in(from, to, false)
    }

    /// First clear bit in `[from, to]`.
    fn first_clear_in(&self, from: u32, to: u32) -> Option<u32> {
        self.first_matching_in(from, to, true)
    }

    fn first_matching_in(&self, from: u32, to: u32, clear: bool) -> Option<u32> {
        let mut index = from;
        while index <= to {
            let word_index = index as usize / 64;
            let raw = if clear {
                !self.words[word_index]
            } else {
                self.words[word_index]
            };
            let word = raw & (u64::MAX << (index % 64));
            if word != 0 {
                let found = (word_index * 64) as u32 + word.trailing_zeros();
                return (found <= to).then_some(found);
            }
            index = (word_index as u32 + 1) * 64;
        }
        None
    }

    /// Last set bit in `[from, to]`.
    fn last_set_in(&self, from: u32, to: u32) -> Option<u32> {
        self.last_matching_in(from, to, false)
    }

    /// Last clear bit in `[from, to]`.
    fn last_clear_in(&self, from: u32, to: u32) -> Option<u32> {
        self.last_matching_in(from, to, true)
    }

    fn last_matching_in(&self, from: u32, to: u32, clear: bool) -> Option<u32> {
        let mut index = to as i64;
        while index >= i64::from(from) {
            let word_index = index as usize / 64;
            let raw = if clear {
                !self.words[word_index]
            } else {
                self.words[word_index]
            };
            let word = raw & (u64::MAX >> (63 - index % 64));
            if word != 0 {
                let found = (word_index * 64) as u32 + 63 - word.leading_zeros();
                return (found >= from).then_some(found);
            }
            index = (word_index as i64) * 64 - 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deshredder() -> Deshredder {
        Deshredder::new(DeshredConfig {
            max_slots_in_flight: 2,
        })
    }

    #[test]
    fn batch_is_emitted_when_its_last_gap_fills_in_any_order() {
        let mut deshredder = deshredder();
        assert_eq!(deshredder.insert(5, 2, true, false), [None, None]);
        assert_eq!(deshredder.insert(5, 0, false, false), [None, None]);
        let [batch, next] = deshredder.insert(5, 1, false, false);
        assert_eq!(next, None);
        let batch = batch.unwrap();
        assert_eq!(
            (batch.start_index, batch.end_index, batch.start_certain),
            (0, 2, true)
        );
        deshredder.mark_emitted(&batch);
        // The next batch's start is certain because shred 2 carries DATA_COMPLETE.
        let [batch, _] = deshredder.insert(5, 3, true, true);
        let batch = batch.unwrap();
        assert_eq!(
            (batch.start_index, batch.end_index, batch.start_certain),
            (3, 3, true)
        );
        assert!(batch.last_in_slot);
    }

    #[test]
    fn data_complete_arrival_releases_the_following_batch() {
        let mut deshredder = deshredder();
        // Batch 32..=33 is present but its predecessor 31 is missing: offered as uncertain.
        assert_eq!(deshredder.insert(9, 32, false, false), [None, None]);
        let [uncertain, _] = deshredder.insert(9, 33, true, false);
        assert!(!uncertain.unwrap().start_certain);
        // Shred 31 ends the previous batch: now 32..=33 is certain (and 0..=31 is incomplete).
        let [containing, following] = deshredder.insert(9, 31, true, false);
        assert_eq!(containing, None);
        let following = following.unwrap();
        assert_eq!((following.start_index, following.end_index), (32, 33));
        assert!(following.start_certain);
    }

    #[test]
    fn uncertain_start_must_be_a_fec_boundary() {
        let mut deshredder = deshredder();
        assert_eq!(deshredder.insert(1, 40, true, false), [None, None]);
    }

    #[test]
    fn bitset_searches() {
        let mut bits = Bitset::new();
        for index in [3u32, 64, 200, 32_767] {
            bits.set(index);
        }
        assert_eq!(bits.first_set_in(0, 32_767), Some(3));
        assert_eq!(bits.first_set_in(4, 32_767), Some(64));
        assert_eq!(bits.first_set_in(201, 32_767), Some(32_767));
        assert_eq!(bits.first_set_in(65, 199), None);
        assert_eq!(bits.first_set_in(64, 64), Some(64));
        assert_eq!(bits.last_set_in(0, 199), Some(64));
        assert_eq!(bits.last_set_in(65, 199), None);
        assert_eq!(bits.first_clear_in(64, 64), None);
        assert_eq!(bits.first_clear_in(63, 64), Some(63));
        assert_eq!(bits.last_clear_in(0, 3), Some(2));
        assert_eq!(bits.last_clear_in(3, 3), None);
        assert_eq!(bits.last_clear_in(0, 64), Some(63));
    }
}
