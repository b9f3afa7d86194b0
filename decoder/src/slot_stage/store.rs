//! The slot stage's own store of data shred payloads: a fixed pool of groups, one per FEC set,
//! keyed by set (ownership and release rules: [`crate::set_stage::held`]).

use crate::fec::{SetKey, SetKeyMap, set_key_map};
use crate::set_stage::DataShredReady;
use crate::shred::{DATA_SHRED_LEN, DATA_SHREDS_PER_FEC_SET};

/// The data shreds of one FEC set.
struct Group {
    key: SetKey,
    in_use: bool,
    sequence: u64,
    present: u32,
    consumed: u32,
    lengths: [u16; DATA_SHREDS_PER_FEC_SET],
    first_rx_ns: [u64; DATA_SHREDS_PER_FEC_SET],
    rx_ns: [u64; DATA_SHREDS_PER_FEC_SET],
    payloads: Box<[[u8; DATA_SHRED_LEN]; DATA_SHREDS_PER_FEC_SET]>,
}

/// A fixed pool of [`Group`]s indexed by set key.
pub(super) struct ShredStore {
    groups: Vec<Group>,
    free: Vec<u32>,
    pub(super) index: SetKeyMap<u32>,
    next_sequence: u64,
}

fn key_of(slot: u64, index: u32) -> (SetKey, usize) {
    let position = index as usize % DATA_SHREDS_PER_FEC_SET;
    let key = SetKey {
        slot,
        fec_set_index: index - position as u32,
    };
    (key, position)
}

impl ShredStore {
    /// `capacity` groups; 0 for a stage that borrows its payloads.
    pub(super) fn new(capacity: usize) -> Self {
        let groups = (0..capacity)
            .map(|_| Group {
                key: SetKey {
                    slot: 0,
                    fec_set_index: 0,
                },
                in_use: false,
                sequence: 0,
                present: 0,
                consumed: 0,
                lengths: [0; DATA_SHREDS_PER_FEC_SET],
                first_rx_ns: [0; DATA_SHREDS_PER_FEC_SET],
                rx_ns: [0; DATA_SHREDS_PER_FEC_SET],
                payloads: Box::new([[0; DATA_SHRED_LEN]; DATA_SHREDS_PER_FEC_SET]),
            })
            .collect();
        Self {
            groups,
            free: (0..capacity as u32).rev().collect(),
            // Twice the bound: hashbrown then rehashes tombstones in place instead of growing.
            index: set_key_map(2 * capacity),
            next_sequence: 0,
        }
    }

    pub(super) fn get(&self, slot: u64, index: u32) -> Option<&[u8]> {
        let (key, position) = key_of(slot, index);
        let group = &self.groups[*self.index.get(&key)? as usize];
        if group.present >> position & 1 == 0 {
            return None;
        }
        Some(&group.payloads[position][..usize::from(group.lengths[position])])
    }

    /// A held payload with its set's earliest receive time and its own receive time.
    pub(super) fn get_arrival(&self, slot: u64, index: u32) -> Option<(&[u8], u64, u64)> {
        let (key, position) = key_of(slot, index);
        let group = &self.groups[*self.index.get(&key)? as usize];
        if group.present >> position & 1 == 0 {
            return None;
        }
        let length = usize::from(group.lengths[position]);
        Some((
            &group.payloads[position][..length],
            group.first_rx_ns[position],
            group.rx_ns[position],
        ))
    }

    /// Stores (or overwrites) a payload; returns the key of a group evicted to make room.
    pub(super) fn put(&mut self, shred: &DataShredReady<'_>) -> Option<SetKey> {
        let (key, position) = key_of(shred.slot, shred.index);
        let mut evicted = None;
        let slot = match self.index.get(&key) {
            Some(&slot) => slot,
            None => {
                if self.free.is_empty() {
                    evicted = self.evict_oldest();
                }
                // evict_oldest freed a group when the list was empty; the fallback is never used
                // but keeps this path free of unwrap.
                let slot = self.free.pop().unwrap_or(0);
                let group = &mut self.groups[slot as usize];
                group.key = key;
                group.in_use = true;
                group.sequence = self.next_sequence;
                group.present = 0;
                group.consumed = 0;
                self.next_sequence += 1;
                self.index.insert(key, slot);
                slot
            }
        };
        let group = &mut self.groups[slot as usize];
        group.payloads[position][..shred.payload.len()].copy_from_slice(shred.payload);
        group.lengths[position] = shred.payload.len() as u16;
        group.first_rx_ns[position] = shred.first_rx_ns;
        group.rx_ns[position] = shred.rx_ns;
        group.present |= 1 << position;
        evicted
    }

    pub(super) fn mark_consumed(&mut self, slot: u64, index: u32) {
        let (key, position) = key_of(slot, index);
        let Some(&group_slot) = self.index.get(&key) else {
            return;
        };
        let group = &mut self.groups[group_slot as usize];
        group.consumed |= 1 << position;
        if group.consumed == u32::MAX {
            self.release(&key);
        }
    }

    pub(super) fn release(&mut self, key: &SetKey) {
        if let Some(slot) = self.index.remove(key) {
            let group = &mut self.groups[slot as usize];
            group.in_use = false;
            group.present = 0;
            self.free.push(slot);
        }
    }

    pub(super) fn release_slots_below(&mut self, slot_floor: u64) {
        for slot in 0..self.groups.len() {
            let group = &self.groups[slot];
            if group.in_use && group.key.slot < slot_floor {
                let key = group.key;
                self.release(&key);
            }
        }
    }

    fn evict_oldest(&mut self) -> Option<SetKey> {
        let oldest = self
            .groups
            .iter()
            .filter(|group| group.in_use)
            .min_by_key(|group| group.sequence)
            .map(|group| group.key)?;
        self.release(&oldest);
        Some(oldest)
    }
}
