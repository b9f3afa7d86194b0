//! A bounded memo of per-slot facts derived from a CAR when the small per-slot tables are not
//! published (a public-files-only source: no `slot-ranges.raw`, no `slot-to-blockhash`): a
//! slot's byte range (or "no block") and its blockhash. Deriving them costs compact-index lookups
//! and small CAR reads; the memo keeps the answers, least recently used first out, bounded in
//! entries ([`configure`], `[archive] slot_memo_entries`). One memo per process ([`shared`]),
//! keyed by the piece's id (a new id for every opened CAR, so a replaced epoch never meets the
//! old facts) and the slot, with counters for `/metrics` ([`SlotMemo::render`]).

use std::sync::{Arc, OnceLock};

use crate::lru::Lru;

/// Default bound of the shared memo, in entries (about 150 bytes each with the map and LRU order).
pub const DEFAULT_ENTRIES: usize = 65_536;

/// (piece id, slot).
type Key = (u64, u64);

/// What is known about one slot of one piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SlotFacts {
    /// `Some(None)`: no block in this slot; `Some(Some((offset, len)))`: the slot's byte range.
    pub range: Option<Option<(u64, u32)>>,
    /// The block's blockhash (last entry's hash).
    pub blockhash: Option<[u8; 32]>,
}

/// An entry-bounded LRU map of slot facts.
pub struct SlotMemo {
    lru: Lru<Key, SlotFacts>,
}

/// Counter values (for tests and logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoCounts {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub entries: u64,
}

static SHARED: OnceLock<Arc<SlotMemo>> = OnceLock::new();

/// Sets the bound of the process-wide memo; only the first call (or the first use) counts.
/// Returns whether this call set it.
pub fn configure(bound: usize) -> bool {
    SHARED.set(Arc::new(SlotMemo::new(bound))).is_ok()
}

/// The process-wide memo (created with [`DEFAULT_ENTRIES`] if [`configure`] was not called).
pub fn shared() -> Arc<SlotMemo> {
    Arc::clone(SHARED.get_or_init(|| Arc::new(SlotMemo::new(DEFAULT_ENTRIES))))
}

impl SlotMemo {
    /// A memo of at most `bound` slots (0 = keeps nothing).
    pub fn new(bound: usize) -> Self {
        SlotMemo {
            lru: Lru::new(bound as u64),
        }
    }

    /// The fact `pick` takes from the slot's entry, counted as a hit when known, else a miss.
    pub fn get<T>(
        &self,
        piece: u64,
        slot: u64,
        pick: impl Fn(&SlotFacts) -> Option<T>,
    ) -> Option<T> {
        let found = self.lru.touch(&(piece, slot), &pick).flatten();
        self.lru.count(found.is_some());
        found
    }

    /// Records facts of a slot: `update` is applied to its entry (a new one if absent), so facts
    /// learnt at different times merge.
    pub fn update(&self, piece: u64, slot: u64, update: impl FnOnce(&mut SlotFacts)) {
        self.lru
            .upsert((piece, slot), 1, SlotFacts::default, update);
    }

    /// Current counters.
    pub fn counts(&self) -> MemoCounts {
        let c = self.lru.counts();
        MemoCounts {
            hits: c.hits,
            misses: c.misses,
            evictions: c.evictions,
            entries: c.entries,
        }
    }

    /// The configured bound in entries.
    pub fn bound(&self) -> usize {
        self.lru.bound() as usize
    }

    /// Appends the Prometheus text.
    pub fn render(&self, out: &mut String) {
        self.lru.render(
            out,
            "appliance_archive_slot_memo",
            "entries",
            "memo of slot lookups",
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn range(facts: &SlotFacts) -> Option<Option<(u64, u32)>> {
        facts.range
    }

    fn hash(facts: &SlotFacts) -> Option<[u8; 32]> {
        facts.blockhash
    }

    #[test]
    fn hits_misses_merging_and_least_recent_eviction() {
        let memo = SlotMemo::new(2);
        assert_eq!(memo.get(1, 10, range), None);
        memo.update(1, 10, |f| f.range = Some(Some((5, 7))));
        memo.update(1, 11, |f| f.range = Some(None));
        // Facts of one slot merge; the blockhash is still unknown for slot 11.
        memo.update(1, 10, |f| f.blockhash = Some([3; 32]));
        assert_eq!(memo.get(1, 11, hash), None);
        assert_eq!(memo.get(1, 10, range), Some(Some((5, 7))));
        assert_eq!(memo.get(1, 10, hash), Some([3; 32]));
        // Slot 10 is the most recently used: a third slot evicts slot 11.
        memo.update(2, 10, |f| f.range = Some(None));
        assert_eq!(memo.get(1, 11, range), None);
        assert_eq!(memo.get(1, 10, range), Some(Some((5, 7))));
        assert_eq!(memo.get(2, 10, range), Some(None));
        let c = memo.counts();
        assert_eq!((c.hits, c.misses, c.evictions, c.entries), (4, 3, 1, 2));
    }

    #[test]
    fn zero_bound_keeps_nothing_and_names_render() {
        let memo = SlotMemo::new(0);
        memo.update(1, 1, |f| f.range = Some(None));
        assert_eq!(memo.get(1, 1, range), None);
        assert_eq!(memo.counts().entries, 0);
        let mut out = String::new();
        SlotMemo::new(9).render(&mut out);
        for name in [
            "appliance_archive_slot_memo_hits_total 0\n",
            "appliance_archive_slot_memo_misses_total 0\n",
            "appliance_archive_slot_memo_evictions_total 0\n",
            "appliance_archive_slot_memo_entries 0\n",
            "appliance_archive_slot_memo_bound_entries 9\n",
        ] {
            assert!(out.contains(name), "{out}");
        }
    }
}
