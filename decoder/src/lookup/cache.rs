//! A bounded lookup-table cache: table address → addresses, runtime metadata and provenance.
//!
//! Entries live in a slab linked into one least-recently-used list and are found through a
//! seeded hash index, so a lookup is O(1), allocates nothing and only relinks two nodes. The cache
//! is bounded by entry count and by charged bytes (addresses plus a fixed per-entry overhead,
//! [`ENTRY_OVERHEAD_BYTES`]); whichever bound an insert or an
//! extension passes, least recently used entries go first. Changes (upserts and removals) are
//! logged per key for the owner's persistent store, within a bound of their own.

use std::collections::HashMap;

use thiserror::Error;

use super::account::{Address, LookupTableAccount};
use super::derive::derive_table_address;
use super::entry::{
    SnapshotOutcome, StreamEffect, StreamRejection, StreamUpdate, TableState, TableView,
};
use super::instruction::LookupInstruction;
use super::persist::{ImportError, decode_entry, encode_entry};
use super::{LOOKUP_TABLE_MAX_ADDRESSES, entry::ENTRY_OVERHEAD_BYTES};

type KeyMap<V> = HashMap<Address, V, foldhash::fast::RandomState>;

const NIL: u32 = u32::MAX;

/// The cache's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheConfig {
    pub max_entries: usize,
    pub max_bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CacheConfigError {
    #[error("max_entries must be between 1 and {max}")]
    Entries { max: usize },
    #[error("max_bytes {max_bytes} is below one full table ({min} bytes)")]
    Bytes { max_bytes: usize, min: usize },
}

/// Running totals since the cache was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheCounters {
    /// Table lookups (one per address-table lookup resolved) that found the table.
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Stream-learned instructions that changed the cache.
    pub stream_updates: u64,
    /// Stream-learned instructions the program would refuse.
    pub stream_rejected: u64,
    /// Stream-learned instructions about a table not cached (the caller should fetch it).
    pub stream_unknown_table: u64,
    /// Cluster snapshots applied, and how provisional contents met them.
    pub snapshots: u64,
    pub confirmed: u64,
    pub contradicted: u64,
}

/// What to do with one key in the owner's persistent store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CacheChange {
    /// Write [`LookupTableCache::export_entry`]'s bytes.
    Upserted,
    Removed,
}

/// What a stream-learned instruction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamOutcome {
    Applied,
    /// Create of a table already cached: the program leaves it unchanged.
    Unchanged,
    /// The table is not cached: nothing learned (fetch it).
    UnknownTable,
    Rejected(StreamRejection),
}

struct Node {
    key: Address,
    table: TableState,
    prev: u32,
    next: u32,
}

/// The cache. See the module documentation.
pub struct LookupTableCache {
    config: CacheConfig,
    index: KeyMap<u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// Most and least recently used.
    head: u32,
    tail: u32,
    bytes: usize,
    counters: CacheCounters,
    changes: KeyMap<CacheChange>,
    changes_overflowed: bool,
}

impl LookupTableCache {
    /// The smallest byte bound: one table of 256 addresses.
    pub const MIN_BYTES: usize =
        ENTRY_OVERHEAD_BYTES + LOOKUP_TABLE_MAX_ADDRESSES * size_of::<Address>();

    pub fn new(config: CacheConfig) -> Result<Self, CacheConfigError> {
        let max = NIL as usize - 1;
        if config.max_entries == 0 || config.max_entries > max {
            return Err(CacheConfigError::Entries { max });
        }
        if config.max_bytes < Self::MIN_BYTES {
            return Err(CacheConfigError::Bytes {
                max_bytes: config.max_bytes,
                min: Self::MIN_BYTES,
            });
        }
        let capacity = config
            .max_entries
            .min(config.max_bytes / ENTRY_OVERHEAD_BYTES);
        Ok(Self {
            config,
            index: KeyMap::with_capacity_and_hasher(capacity, Default::default()),
            nodes: Vec::with_capacity(capacity),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            bytes: 0,
            counters: CacheCounters::default(),
            changes: KeyMap::default(),
            changes_overflowed: false,
        })
    }

    pub fn config(&self) -> CacheConfig {
        self.config
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Charged bytes, at most `max_bytes`.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn counters(&self) -> CacheCounters {
        self.counters
    }

    /// The hit path: finds a table, counts a hit or a miss and marks it most recently used.
    pub fn lookup(&mut self, key: &Address) -> Option<TableView<'_>> {
        let Some(&node) = self.index.get(key) else {
            self.counters.misses += 1;
            return None;
        };
        self.counters.hits += 1;
        self.move_to_front(node);
        Some(self.nodes[node as usize].table.view())
    }

    /// Finds a table without counting or touching the recency order.
    pub fn peek(&self, key: &Address) -> Option<TableView<'_>> {
        let node = *self.index.get(key)?;
        Some(self.nodes[node as usize].table.view())
    }

    pub fn contains(&self, key: &Address) -> bool {
        self.index.contains_key(key)
    }

    /// The cached keys, most recently used first.
    pub fn keys(&self) -> impl Iterator<Item = &Address> + '_ {
        let mut node = self.head;
        std::iter::from_fn(move || {
            let current = self.nodes.get(node as usize)?;
            node = current.next;
            Some(&current.key)
        })
    }

    /// Applies the table's account as the cluster returned it (already parsed and owner-checked)
    /// at `context_slot`.
    pub fn apply_snapshot(
        &mut self,
        key: &Address,
        account: &LookupTableAccount<'_>,
        context_slot: u64,
    ) -> SnapshotOutcome {
        self.counters.snapshots += 1;
        if account.addresses.len() > LOOKUP_TABLE_MAX_ADDRESSES {
            // Not a table the program can write (the parser refuses it): keep the bounds.
            self.apply_absent(key, context_slot);
            return SnapshotOutcome::Invalid;
        }
        let outcome = match self.index.get(key) {
            None => {
                self.insert(*key, TableState::from_snapshot(account, context_slot));
                SnapshotOutcome::Inserted
            }
            Some(&node) => self.update(
                node,
                |table| table.merge_snapshot(account, context_slot),
                |outcome| *outcome != SnapshotOutcome::Unchanged,
            ),
        };
        match outcome {
            SnapshotOutcome::Confirmed => self.counters.confirmed += 1,
            SnapshotOutcome::Contradicted => self.counters.contradicted += 1,
            _ => {}
        }
        outcome
    }

    /// The cluster has no such table at `context_slot` (no account, another owner, or data that
    /// is not a table). Drops the entry unless the stream created or changed it after that slot;
    /// returns whether it was dropped. Dropping provisional contents counts as contradicted.
    pub fn apply_absent(&mut self, key: &Address, context_slot: u64) -> bool {
        let Some(&node) = self.index.get(key) else {
            return false;
        };
        match self.nodes[node as usize].table.provisional_since {
            Some(since) if since > context_slot => return false,
            Some(_) => self.counters.contradicted += 1,
            None => {}
        }
        self.remove_node(node);
        true
    }

    /// Applies one instruction of the lookup table program seen in a transaction of `slot`.
    pub fn apply_stream(
        &mut self,
        key: &Address,
        update: &StreamUpdate<'_>,
        slot: u64,
    ) -> StreamOutcome {
        let outcome = match self.index.get(key) {
            _ if !names_derived_address(key, update) => {
                StreamOutcome::Rejected(StreamRejection::NotDerivedAddress)
            }
            None => match update.instruction {
                LookupInstruction::Create { .. } => {
                    self.insert(*key, TableState::created(update.authority, slot));
                    StreamOutcome::Applied
                }
                _ => StreamOutcome::UnknownTable,
            },
            Some(&node) => self.apply_stream_to(node, update, slot),
        };
        match outcome {
            StreamOutcome::Applied => self.counters.stream_updates += 1,
            StreamOutcome::Rejected(_) => self.counters.stream_rejected += 1,
            StreamOutcome::UnknownTable => self.counters.stream_unknown_table += 1,
            StreamOutcome::Unchanged => {}
        }
        outcome
    }

    fn apply_stream_to(
        &mut self,
        node: u32,
        update: &StreamUpdate<'_>,
        slot: u64,
    ) -> StreamOutcome {
        let effect = self.update(
            node,
            |table| table.apply_stream(update, slot),
            |effect| *effect == Ok(StreamEffect::Changed),
        );
        match effect {
            Ok(StreamEffect::Changed) => StreamOutcome::Applied,
            Ok(StreamEffect::Unchanged) => StreamOutcome::Unchanged,
            Ok(StreamEffect::Closed) => {
                self.remove_node(node);
                StreamOutcome::Applied
            }
            Err(rejection) => StreamOutcome::Rejected(rejection),
        }
    }

    /// Counts a stream-learned instruction refused before it reached a table (see `learn`).
    pub(super) fn count_stream_rejection(&mut self, _rejection: StreamRejection) {
        self.counters.stream_rejected += 1;
    }

    /// Drops a table; returns whether it was cached.
    pub fn remove(&mut self, key: &Address) -> bool {
        let Some(&node) = self.index.get(key) else {
            return false;
        };
        self.remove_node(node);
        true
    }

    /// Writes one entry as plain bytes (see `persist`) into `out`, replacing its contents;
    /// returns whether the key is cached.
    pub fn export_entry(&self, key: &Address, out: &mut Vec<u8>) -> bool {
        let Some(&node) = self.index.get(key) else {
            return false;
        };
        encode_entry(&self.nodes[node as usize].table, out);
        true
    }

    /// Loads an entry written by [`export_entry`](Self::export_entry), replacing any cached one.
    /// Counts nothing and logs no change (it comes from the store).
    pub fn import_entry(&mut self, key: &Address, bytes: &[u8]) -> Result<(), ImportError> {
        let table = decode_entry(bytes)?;
        if let Some(&node) = self.index.get(key) {
            self.remove_node(node);
        }
        self.insert(*key, table);
        self.changes.remove(key);
        Ok(())
    }

    /// Moves the change log into `out` (appending) and returns `false` if it overflowed since the
    /// last drain: then some changes were lost and the owner must rewrite its whole store from
    /// [`keys`](Self::keys) and [`export_entry`](Self::export_entry).
    pub fn drain_changes(&mut self, out: &mut Vec<(Address, CacheChange)>) -> bool {
        out.extend(self.changes.drain());
        !std::mem::take(&mut self.changes_overflowed)
    }

    fn log_change(&mut self, key: Address, change: CacheChange) {
        if self.changes.len() >= 2 * self.config.max_entries && !self.changes.contains_key(&key) {
            self.changes.clear();
            self.changes_overflowed = true;
        }
        self.changes.insert(key, change);
    }

    /// Runs `change` on a cached table, then re-charges its bytes, logs the change if `changed`
    /// says so, and restores the bounds.
    fn update<R>(
        &mut self,
        node: u32,
        change: impl FnOnce(&mut TableState) -> R,
        changed: impl FnOnce(&R) -> bool,
    ) -> R {
        let entry = &mut self.nodes[node as usize];
        let old_bytes = entry.table.charged_bytes();
        let result = change(&mut entry.table);
        self.bytes = self.bytes - old_bytes + entry.table.charged_bytes();
        let key = entry.key;
        self.move_to_front(node);
        if changed(&result) {
            self.log_change(key, CacheChange::Upserted);
        }
        self.evict_over_bounds();
        result
    }

    fn insert(&mut self, key: Address, table: TableState) {
        self.bytes += table.charged_bytes();
        let node = Node {
            key,
            table,
            prev: NIL,
            next: NIL,
        };
        let index = match self.free.pop() {
            Some(index) => {
                self.nodes[index as usize] = node;
                index
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.index.insert(key, index);
        self.link_front(index);
        self.log_change(key, CacheChange::Upserted);
        self.evict_over_bounds();
    }

    /// Evicts least recently used entries until both bounds hold. The most recently used entry
    /// (the one just touched) always fits: `max_bytes` admits one full table.
    fn evict_over_bounds(&mut self) {
        while (self.index.len() > self.config.max_entries || self.bytes > self.config.max_bytes)
            && self.tail != self.head
        {
            self.counters.evictions += 1;
            self.remove_node(self.tail);
        }
    }

    fn remove_node(&mut self, node: u32) {
        self.unlink(node);
        let entry = &mut self.nodes[node as usize];
        self.bytes -= entry.table.charged_bytes();
        // Give the address buffer back now: a free slot holds no heap memory.
        entry.table.addresses = Vec::new();
        let key = entry.key;
        self.index.remove(&key);
        self.free.push(node);
        self.log_change(key, CacheChange::Removed);
    }

    fn move_to_front(&mut self, node: u32) {
        if self.head != node {
            self.unlink(node);
            self.link_front(node);
        }
    }

    fn link_front(&mut self, node: u32) {
        let old_head = self.head;
        {
            let entry = &mut self.nodes[node as usize];
            entry.prev = NIL;
            entry.next = old_head;
        }
        match self.nodes.get_mut(old_head as usize) {
            Some(head) => head.prev = node,
            None => self.tail = node,
        }
        self.head = node;
    }

    fn unlink(&mut self, node: u32) {
        let (prev, next) = {
            let entry = &self.nodes[node as usize];
            (entry.prev, entry.next)
        };
        match self.nodes.get_mut(prev as usize) {
            Some(before) => before.next = next,
            None => self.head = next,
        }
        match self.nodes.get_mut(next as usize) {
            Some(after) => after.prev = prev,
            None => self.tail = prev,
        }
    }
}

/// A create must name the address derived from its authority, slot and bump (the program
/// checks it before anything else); other instructions name any cached table.
fn names_derived_address(key: &Address, update: &StreamUpdate<'_>) -> bool {
    match update.instruction {
        LookupInstruction::Create {
            recent_slot,
            bump_seed,
        } => derive_table_address(update.authority, recent_slot, bump_seed) == Some(*key),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup::account::LookupTableMeta;

    fn account(addresses: &[Address]) -> LookupTableAccount<'_> {
        LookupTableAccount {
            meta: LookupTableMeta::new(None),
            addresses,
        }
    }

    fn keys(cache: &LookupTableCache) -> Vec<u8> {
        cache.keys().map(|key| key[0]).collect()
    }

    #[test]
    fn evicts_the_least_recently_used_entry_first() {
        let config = CacheConfig {
            max_entries: 3,
            max_bytes: 1 << 20,
        };
        let mut cache = LookupTableCache::new(config).unwrap();
        for key in 1..=3u8 {
            cache.apply_snapshot(&[key; 32], &account(&[[key; 32]]), 1);
        }
        assert_eq!(keys(&cache), [3, 2, 1]);
        assert!(cache.lookup(&[1; 32]).is_some());
        assert!(cache.lookup(&[9; 32]).is_none());
        assert_eq!(keys(&cache), [1, 3, 2]);
        cache.apply_snapshot(&[4; 32], &account(&[]), 1);
        assert_eq!(keys(&cache), [4, 1, 3]);
        let counters = cache.counters();
        assert_eq!(
            (counters.hits, counters.misses, counters.evictions),
            (1, 1, 1)
        );
        assert_eq!(cache.bytes(), 3 * ENTRY_OVERHEAD_BYTES + 2 * 32);
        assert!(cache.remove(&[1; 32]));
        cache.apply_snapshot(&[5; 32], &account(&[[5; 32]]), 1);
        assert_eq!(keys(&cache), [5, 4, 3]);
        assert_eq!(cache.nodes.len(), 4, "the freed slot was reused");
    }

    #[test]
    fn the_byte_bound_evicts_as_tables_grow() {
        let config = CacheConfig {
            max_entries: 100,
            max_bytes: LookupTableCache::MIN_BYTES + ENTRY_OVERHEAD_BYTES + 32,
        };
        let mut cache = LookupTableCache::new(config).unwrap();
        cache.apply_snapshot(&[1; 32], &account(&[[0; 32]]), 1);
        let full = vec![[2; 32]; 256];
        cache.apply_snapshot(&[2; 32], &account(&full), 1);
        assert_eq!(cache.len(), 2);
        cache.apply_snapshot(&[3; 32], &account(&[]), 1);
        assert_eq!(keys(&cache), [3, 2]);
        assert!(cache.bytes() <= config.max_bytes);
    }

    #[test]
    fn a_snapshot_of_more_than_256_addresses_is_not_a_table() {
        let config = CacheConfig {
            max_entries: 4,
            max_bytes: LookupTableCache::MIN_BYTES,
        };
        let mut cache = LookupTableCache::new(config).unwrap();
        cache.apply_snapshot(&[1; 32], &account(&[[1; 32]]), 1);
        let oversized = vec![[2; 32]; 257];
        let outcome = cache.apply_snapshot(&[1; 32], &account(&oversized), 2);
        assert_eq!(outcome, SnapshotOutcome::Invalid);
        assert!(cache.is_empty());
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn refuses_bounds_that_hold_no_full_table() {
        let config = CacheConfig {
            max_entries: 1,
            max_bytes: LookupTableCache::MIN_BYTES - 1,
        };
        assert!(matches!(
            LookupTableCache::new(config),
            Err(CacheConfigError::Bytes { .. })
        ));
        let config = CacheConfig {
            max_entries: 0,
            max_bytes: 1 << 20,
        };
        assert!(LookupTableCache::new(config).is_err());
    }

    #[test]
    fn absence_drops_confirmed_entries_but_not_newer_stream_ones() {
        let config = CacheConfig {
            max_entries: 4,
            max_bytes: 1 << 20,
        };
        let mut cache = LookupTableCache::new(config).unwrap();
        cache.apply_snapshot(&[1; 32], &account(&[]), 1);
        assert!(cache.apply_absent(&[1; 32], 5));
        let (table, bump_seed) = (0..=255u8)
            .rev()
            .find_map(|bump| derive_table_address(&[9; 32], 1, bump).map(|t| (t, bump)))
            .unwrap();
        let create = |bump_seed| StreamUpdate {
            instruction: LookupInstruction::Create {
                recent_slot: 1,
                bump_seed,
            },
            authority: &[9; 32],
            authority_signed: false,
        };
        assert_eq!(
            cache.apply_stream(&table, &create(bump_seed.wrapping_add(1)), 10),
            StreamOutcome::Rejected(StreamRejection::NotDerivedAddress)
        );
        assert_eq!(
            cache.apply_stream(&table, &create(bump_seed), 10),
            StreamOutcome::Applied
        );
        assert!(!cache.apply_absent(&table, 9));
        assert!(cache.apply_absent(&table, 10));
        assert_eq!(cache.counters().contradicted, 1);
        let mut changes = Vec::new();
        assert!(cache.drain_changes(&mut changes));
        changes.sort();
        let mut want = [
            ([1; 32], CacheChange::Removed),
            (table, CacheChange::Removed),
        ];
        want.sort();
        assert_eq!(changes, want);
    }
}
