//! A bounded memo of per-slot facts derived from a CAR when the small per-slot tables are not
//! published (a public-files-only source: no `slot-ranges.raw`, no `slot-to-blockhash`): a
//! slot's byte range (or "no block") and its blockhash. Deriving them costs compact-index lookups
//! and small CAR reads; the memo keeps the answers, least recently used first out, bounded in
//! entries ([`configure`], `[archive] slot_memo_entries`). One memo per process ([`shared`]),
//! keyed by the piece's id (a new id for every opened CAR, so a replaced epoch never meets the
//! old facts) and the slot, with counters for `/metrics` ([`SlotMemo::render`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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

#[derive(Default)]
struct State {
    entries: HashMap<Key, (SlotFacts, u64)>,
    /// Use tick → key, oldest first.
    order: BTreeMap<u64, Key>,
    tick: u64,
}

/// An entry-bounded LRU map of slot facts.
pub struct SlotMemo {
    bound: usize,
    state: Mutex<State>,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
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
            bound,
            state: Mutex::new(State::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    /// The fact `pick` takes from the slot's entry, counted as a hit when known, else a miss.
    pub fn get<T>(
        &self,
        piece: u64,
        slot: u64,
        pick: impl Fn(&SlotFacts) -> Option<T>,
    ) -> Option<T> {
        let found = self.touch(&(piece, slot)).and_then(|facts| pick(&facts));
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Records facts of a slot (`update` fills in what was learnt), evicting the least recently
    /// used slots beyond the bound.
    pub fn update(&self, piece: u64, slot: u64, update: impl FnOnce(&mut SlotFacts)) {
        if self.bound == 0 {
            return;
        }
        let Ok(mut guard) = self.state.lock() else {
            return;
        };
        let state = &mut *guard;
        state.tick += 1;
        let tick = state.tick;
        let key = (piece, slot);
        if let Some((facts, used)) = state.entries.get_mut(&key) {
            update(facts);
            let old = std::mem::replace(used, tick);
            state.order.remove(&old);
            state.order.insert(tick, key);
            return;
        }
        while state.entries.len() >= self.bound {
            let Some((_, oldest)) = state.order.pop_first() else {
                break;
            };
            if state.entries.remove(&oldest).is_some() {
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
        let mut facts = SlotFacts::default();
        update(&mut facts);
        state.entries.insert(key, (facts, tick));
        state.order.insert(tick, key);
    }

    fn touch(&self, key: &Key) -> Option<SlotFacts> {
        let mut guard = self.state.lock().ok()?;
        let state = &mut *guard;
        state.tick += 1;
        let tick = state.tick;
        let (facts, used) = state.entries.get_mut(key)?;
        let old = std::mem::replace(used, tick);
        let facts = *facts;
        state.order.remove(&old);
        state.order.insert(tick, *key);
        Some(facts)
    }

    /// Current counters.
    pub fn counts(&self) -> MemoCounts {
        let entries = self
            .state
            .lock()
            .map(|s| s.entries.len() as u64)
            .unwrap_or_default();
        MemoCounts {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            entries,
        }
    }

    /// The configured bound in entries.
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// Appends the Prometheus text.
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write;
        let c = self.counts();
        let _ = writeln!(
            out,
            "# TYPE archive_slot_memo_hits_total counter\narchive_slot_memo_hits_total {}",
            c.hits
        );
        let _ = writeln!(
            out,
            "# TYPE archive_slot_memo_misses_total counter\narchive_slot_memo_misses_total {}",
            c.misses
        );
        let _ = writeln!(
            out,
            "# TYPE archive_slot_memo_evictions_total counter\narchive_slot_memo_evictions_total {}",
            c.evictions
        );
        let _ = writeln!(
            out,
            "# TYPE archive_slot_memo_entries gauge\narchive_slot_memo_entries {}",
            c.entries
        );
        let _ = writeln!(
            out,
            "# TYPE archive_slot_memo_bound_entries gauge\narchive_slot_memo_bound_entries {}",
            self.bound
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
            "archive_slot_memo_hits_total 0\n",
            "archive_slot_memo_misses_total 0\n",
            "archive_slot_memo_evictions_total 0\n",
            "archive_slot_memo_entries 0\n",
            "archive_slot_memo_bound_entries 9\n",
        ] {
            assert!(out.contains(name), "{out}");
        }
    }
}
