//! The bounded least-recently-used map behind the range cache ([`crate::rangecache`], bounded in
//! bytes) and the slot memo ([`crate::slotmemo`], bounded in entries): one mutex over a hash map
//! and a use-order index, each entry charged a cost against the bound, the least recently used
//! evicted first, and hit / miss / eviction counters rendered for `/metrics` under a prefix.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters and current size of an [`Lru`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LruCounts {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Sum of the costs of the entries held.
    pub cost: u64,
    pub entries: u64,
}

struct State<K, V> {
    /// Value, last-use tick, cost.
    entries: HashMap<K, (V, u64, u64)>,
    /// Last-use tick → key, oldest first.
    order: BTreeMap<u64, K>,
    tick: u64,
    cost: u64,
}

/// See the module documentation.
pub struct Lru<K, V> {
    bound: u64,
    state: Mutex<State<K, V>>,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
}

impl<K: Hash + Eq + Copy, V> Lru<K, V> {
    /// A map whose entries' costs sum to at most `bound` (0 keeps nothing).
    pub fn new(bound: u64) -> Self {
        Self {
            bound,
            state: Mutex::new(State {
                entries: HashMap::new(),
                order: BTreeMap::new(),
                tick: 0,
                cost: 0,
            }),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    pub fn bound(&self) -> u64 {
        self.bound
    }

    /// Reads the entry of `key`, marking it the most recently used. Counts nothing: the caller
    /// decides what a hit is ([`Lru::count`]).
    pub fn touch<T>(&self, key: &K, read: impl FnOnce(&V) -> T) -> Option<T> {
        let mut guard = self.state.lock().ok()?;
        let state = &mut *guard;
        state.tick += 1;
        let tick = state.tick;
        let (value, used, _) = state.entries.get_mut(key)?;
        let old = std::mem::replace(used, tick);
        let read = read(value);
        state.order.remove(&old);
        state.order.insert(tick, *key);
        Some(read)
    }

    /// Counts one look-up as a hit or a miss.
    pub fn count(&self, hit: bool) {
        let counter = if hit { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Applies `update` to the entry of `key` (marking it the most recently used), or to a new
    /// entry from `create` charged `cost`, evicting the least recently used entries to make room.
    /// A new entry costing more than the bound is not kept.
    pub fn upsert(
        &self,
        key: K,
        cost: u64,
        create: impl FnOnce() -> V,
        update: impl FnOnce(&mut V),
    ) {
        let Ok(mut guard) = self.state.lock() else {
            return;
        };
        let state = &mut *guard;
        state.tick += 1;
        let tick = state.tick;
        if let Some((value, used, _)) = state.entries.get_mut(&key) {
            update(value);
            let old = std::mem::replace(used, tick);
            state.order.remove(&old);
            state.order.insert(tick, key);
            return;
        }
        if cost > self.bound {
            return;
        }
        while state.cost + cost > self.bound {
            let Some((_, oldest)) = state.order.pop_first() else {
                break;
            };
            if let Some((_, _, gone)) = state.entries.remove(&oldest) {
                state.cost -= gone;
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
        let mut value = create();
        update(&mut value);
        state.entries.insert(key, (value, tick, cost));
        state.order.insert(tick, key);
        state.cost += cost;
    }

    pub fn counts(&self) -> LruCounts {
        let (cost, entries) = self
            .state
            .lock()
            .map(|s| (s.cost, s.entries.len() as u64))
            .unwrap_or_default();
        LruCounts {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            cost,
            entries,
        }
    }

    /// Appends the Prometheus text: `<prefix>_{hits,misses,evictions}_total` and the gauges
    /// `<prefix>_<unit>` (held cost) and `<prefix>_bound_<unit>`; `what` names the cache in the
    /// help texts.
    pub fn render(&self, out: &mut String, prefix: &str, unit: &str, what: &str) {
        use crate::prom::single;
        let c = self.counts();
        for (name, help, value) in [
            ("hits", "Lookups found in", c.hits),
            ("misses", "Lookups not found in", c.misses),
            ("evictions", "Entries evicted from", c.evictions),
        ] {
            let help = format!("{help} the {what}.");
            single(
                out,
                &format!("{prefix}_{name}_total"),
                "counter",
                &help,
                value,
            );
        }
        let held = format!("Held in the {what} ({unit}).");
        let bound = format!("Bound of the {what} ({unit}).");
        for (name, help, value) in [
            (unit.to_owned(), held, c.cost),
            (format!("bound_{unit}"), bound, self.bound),
        ] {
            single(out, &format!("{prefix}_{name}"), "gauge", &help, value);
        }
    }
}
