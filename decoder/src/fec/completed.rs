//! The FIFO-bounded filter of completed sets: what is remembered of a set once it leaves the
//! pool, so late shreds are recognised without re-hashing and chain links can still be checked.

use crate::merkle::Hash;
use crate::shred::SIGNATURE_LEN;

use super::key::{SetKey, SetKeyMap, set_key_map};

/// Bytes of a set's signature kept for completed sets: a late shred with other bytes is another
/// version (or junk), one with these is redundant (a forger matching them only gets discarded).
pub(super) const SIGNATURE_PREFIX_LEN: usize = 16;

pub(super) fn signature_prefix(signature: &[u8; SIGNATURE_LEN]) -> [u8; SIGNATURE_PREFIX_LEN] {
    let mut prefix = [0; SIGNATURE_PREFIX_LEN];
    prefix.copy_from_slice(&signature[..SIGNATURE_PREFIX_LEN]);
    prefix
}

/// What is remembered of every completed set (80 bytes).
#[derive(Debug, Clone, Copy)]
pub(super) struct Done {
    pub(super) root: Hash,
    pub(super) chained_root: [u8; 32],
    pub(super) signature: [u8; SIGNATURE_PREFIX_LEN],
}

/// A FIFO-bounded record of completed sets: roots, chained roots, signature prefixes, and the
/// second versions seen (rare: kept in a map of their own, so that every set's entry stays small).
pub(super) struct CompletedSets {
    ring: Vec<Option<SetKey>>,
    next: usize,
    roots: SetKeyMap<Done>,
    /// Second roots of remembered sets (duplicate blocks); a key leaves with its set.
    second_roots: SetKeyMap<Hash>,
}

impl CompletedSets {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            ring: vec![None; capacity],
            next: 0,
            roots: set_key_map(2 * capacity),
            second_roots: set_key_map(0),
        }
    }

    pub(super) fn get(&self, key: &SetKey) -> Option<&Done> {
        self.roots.get(key)
    }

    pub(super) fn root(&self, key: &SetKey) -> Option<Hash> {
        self.roots.get(key).map(|done| done.root)
    }

    pub(super) fn chained_root(&self, key: &SetKey) -> Option<[u8; 32]> {
        self.roots.get(key).map(|done| done.chained_root)
    }

    pub(super) fn second_root(&self, key: &SetKey) -> Option<Hash> {
        self.second_roots.get(key).copied()
    }

    pub(super) fn set_second_root(&mut self, key: &SetKey, root: Hash) {
        if self.roots.contains_key(key) {
            self.second_roots.insert(*key, root);
        }
    }

    pub(super) fn insert(&mut self, key: SetKey, done: Done, second_root: Option<Hash>) {
        if self.roots.contains_key(&key) {
            return;
        }
        if let Some(old) = self.ring[self.next].replace(key) {
            self.roots.remove(&old);
            if !self.second_roots.is_empty() {
                self.second_roots.remove(&old);
            }
        }
        self.roots.insert(key, done);
        if let Some(root) = second_root {
            self.second_roots.insert(key, root);
        }
        self.next = (self.next + 1) % self.ring.len();
    }
}
