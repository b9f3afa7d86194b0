//! The key of a FEC set, `(slot, fec_set_index)`, and the seeded map type keyed by it (a leaf).

use std::collections::HashMap;

/// A map keyed by FEC set, probed several times per shred: foldhash with a random per-process
/// seed (the keys come off the wire, so the seed stays), not SipHash.
pub(crate) type SetKeyMap<V> = HashMap<SetKey, V, foldhash::fast::RandomState>;

/// An empty [`SetKeyMap`] with room for `capacity` keys.
pub(crate) fn set_key_map<V>(capacity: usize) -> SetKeyMap<V> {
    HashMap::with_capacity_and_hasher(capacity, foldhash::fast::RandomState::default())
}

/// Identifies a FEC set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SetKey {
    pub slot: u64,
    pub fec_set_index: u32,
}
