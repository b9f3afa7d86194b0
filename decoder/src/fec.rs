//! FEC set assembly: shreds keyed by `(slot, fec_set_index)` into a fixed pool of set slots,
//! each with room for its 64 shreds, reserved at start-up.
//!
//! Promises:
//! - **No allocation per shred.** The pool (`max_sets_in_flight` × ~81 KB), its index map and the
//!   completed-set filter are sized at construction; inserting never grows them.
//! - **Authenticated before stored.** The first shred of a set fixes the set's root (the root its
//!   proof implies) after the leader signature over that root verifies; every later shred must
//!   prove the same root and carry the same signature, or it is rejected as conflicting and the
//!   first version is kept (format §10, items 5–7). A shred that fails leaves no state.
//! - **Confirmed before used.** With a leader schedule a set is confirmed by its signature. Without
//!   one (a trusted feed) a single shred proves nothing (any bytes imply some root), so a set is
//!   confirmed once `unsigned_confirm_shreds` of its shreds prove the same root; until then it
//!   hands nothing on, moves no window, and a shred proving another root replaces it (so one
//!   altered shred sent first cannot claim the set). Unconfirmed sets are evicted first.
//! - **Duplicate blocks.** A shred proving another root for a confirmed set (held or completed)
//!   whose signature by the slot's leader verifies is a second version signed by the leader: it
//!   is refused as [`FecError::DuplicateBlock`], and the first time per set the two roots are
//!   reported ([`FecResolver::take_duplicate`]). Proven nodes are cached per set
//!   (`merkle::NodeCache`), so a later shred hashes its leaf and only the joins up to the first
//!   known node, and its remaining proof entries are compared with the known siblings.
//! - **Recovery as soon as possible.** When 32 of the 64 shreds are present and a data shred is
//!   missing, the missing data shards are rebuilt, the recovered shreds get their signature,
//!   chained root, proof and retransmitter signature back, and the data half of the tree must match
//!   the authenticated proofs, or the recovered shreds are discarded and the set is marked failed
//!   (format §8; `recovery.rs`). Coding shreds are never rebuilt: nothing downstream reads them.
//! - **Bounded.** When the pool is full the set created first is evicted (its key is reported so
//!   the slot side can forget its shreds). A completed set stays until it is released
//!   (`release_complete` or `mark_consumed` of all 32: who owns a shred's bytes and until when is
//!   written down in [`crate::set_stage::held`]), then its key, root and chained root move to a
//!   FIFO filter of completed sets (`fec/completed.rs`) so late shreds are recognised cheaply
//!   without re-hashing and chain links to it can still be checked.
//!
//! Files (`fec/`): `key.rs` the set key, `outcome.rs` the bounds and what the resolver reports,
//! `set.rs` one set slot of the pool, `insert.rs` the insertion steps and version checks,
//! `completed.rs` the completed-set filter; this file the pool itself.

mod completed;
mod insert;
pub mod key;
pub mod outcome;
pub(crate) mod set;

pub use key::SetKey;
pub(crate) use key::{SetKeyMap, set_key_map};
pub use outcome::{Completion, DuplicateSet, FecConfig, FecCounters, FecError, Inserted};

use crate::erasure::ErasureCoder;
use crate::merkle::{self, Hash};
use crate::recovery;
use crate::shred::{DATA_SHREDS_PER_FEC_SET, ShredKind, ShredRef};

use completed::{CompletedSets, Done, signature_prefix};
use set::{FecSet, SetState};

/// Assembles FEC sets; see the module documentation for its promises.
pub struct FecResolver {
    sets: Vec<FecSet>,
    free: Vec<u32>,
    index: SetKeyMap<u32>,
    done: CompletedSets,
    next_sequence: u64,
    coder: ErasureCoder,
    counters: FecCounters,
    authenticate: bool,
    confirm_shreds: u32,
    duplicate: Option<DuplicateSet>,
}

impl FecResolver {
    pub fn new(config: FecConfig) -> Self {
        assert!(
            config.max_sets_in_flight > 0,
            "max_sets_in_flight must be positive"
        );
        assert!(
            config.completed_sets_remembered > 0,
            "completed_sets_remembered must be positive"
        );
        let sets = (0..config.max_sets_in_flight)
            .map(|_| FecSet::empty())
            .collect();
        // A stack: `release` pushes, `open_set` pops, so the set touched last is handed out
        // first, its lines likeliest still cached. The last set built here comes first too.
        let free = (0..config.max_sets_in_flight as u32).collect();
        Self {
            sets,
            free,
            // Twice the bound: hashbrown then always rehashes tombstones in place instead of growing.
            index: set_key_map(2 * config.max_sets_in_flight),
            done: CompletedSets::new(config.completed_sets_remembered),
            next_sequence: 0,
            coder: ErasureCoder::new(),
            counters: FecCounters::default(),
            authenticate: config.authenticate,
            confirm_shreds: u32::from(config.unsigned_confirm_shreds).clamp(1, 32),
            duplicate: None,
        }
    }

    pub fn counters(&self) -> FecCounters {
        self.counters
    }

    /// Sets currently held in the pool.
    pub fn sets_in_flight(&self) -> usize {
        self.index.len()
    }

    /// The duplicate block found since the last call, if any.
    pub fn take_duplicate(&mut self) -> Option<DuplicateSet> {
        self.duplicate.take()
    }

    /// The payload of a present data shred, by slot and data index.
    pub fn data_shred(&self, slot: u64, index: u32) -> Option<&[u8]> {
        let position = index as usize % DATA_SHREDS_PER_FEC_SET;
        let key = SetKey {
            slot,
            fec_set_index: index - position as u32,
        };
        let set = &self.sets[*self.index.get(&key)? as usize];
        if set.present >> position & 1 == 0 {
            return None;
        }
        Some(&set.buffers[position][..set.variant.payload_len()])
    }

    /// The present data shreds of set `key` whose position bit is set in `positions`, as
    /// `(index, payload)` in index order; nothing when the set is not held.
    pub fn data_shreds(
        &self,
        key: &SetKey,
        positions: u32,
    ) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        let set = self
            .index
            .get(key)
            .map(|&set_slot| &self.sets[set_slot as usize]);
        let wanted = set.map_or(0, |set| set.data_present() & positions);
        (0..DATA_SHREDS_PER_FEC_SET)
            .filter(move |position| wanted >> position & 1 == 1)
            .filter_map(move |position| {
                let set = set?;
                let payload = &set.buffers[position][..set.variant.payload_len()];
                Some((set.key.fec_set_index + position as u32, payload))
            })
    }

    /// The earliest receive time of any shred of the set holding data shred `index`.
    pub fn first_rx_ns(&self, slot: u64, index: u32) -> Option<u64> {
        let key = SetKey {
            slot,
            fec_set_index: index - index % DATA_SHREDS_PER_FEC_SET as u32,
        };
        Some(self.sets[*self.index.get(&key)? as usize].first_rx_ns)
    }

    /// Records that the deshredder has used data shred `index`; a complete set whose 32 data
    /// shreds are all used is released.
    pub fn mark_consumed(&mut self, slot: u64, index: u32) {
        let position = index % DATA_SHREDS_PER_FEC_SET as u32;
        let key = SetKey {
            slot,
            fec_set_index: index - position,
        };
        let Some(&set_slot) = self.index.get(&key) else {
            return;
        };
        let set = &mut self.sets[set_slot as usize];
        set.consumed |= 1 << position;
        if set.state == SetState::Complete && set.consumed == u32::MAX {
            self.release(set_slot, true);
        }
    }

    /// Releases a complete set whose data shreds the caller has taken (copied out) already; its
    /// key and root move to the completed-set filter. Does nothing for a set that is not complete.
    pub fn release_complete(&mut self, key: &SetKey) {
        if let Some(&set_slot) = self.index.get(key)
            && self.sets[set_slot as usize].state == SetState::Complete
        {
            self.release(set_slot, true);
        }
    }

    /// Releases every set of a slot below `slot_floor` (the deshred window moved on).
    pub fn release_slots_below(&mut self, slot_floor: u64) {
        for set_slot in 0..self.sets.len() as u32 {
            let set = &self.sets[set_slot as usize];
            if set.state != SetState::Free && set.key.slot < slot_floor {
                let completed = set.state == SetState::Complete;
                self.release(set_slot, completed);
            }
        }
    }

    /// The root of a set, if it is held or was completed recently.
    pub fn root_of(&self, key: &SetKey) -> Option<Hash> {
        match self.index.get(key) {
            Some(&set_slot) => Some(self.sets[set_slot as usize].root),
            None => self.done.root(key),
        }
    }

    /// Opens a set for `shred`, whose proof `path` (all zero when not authenticating) gave the
    /// set's root; `signed` when the root's signature verified against the slot's leader.
    fn open_set(
        &mut self,
        key: SetKey,
        shred: &ShredRef<'_>,
        path: &merkle::ProofPath,
        rx_ns: u64,
        signed: bool,
    ) -> (u32, Option<SetKey>) {
        let evicted = if self.free.is_empty() {
            self.evict_oldest()
        } else {
            None
        };
        // evict_oldest freed a slot when the list was empty, so pop succeeds; the fallback index
        // is never used but keeps this path free of unwrap.
        let set_slot = self.free.pop().unwrap_or(0);
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        let set = &mut self.sets[set_slot as usize];
        debug_assert_eq!(set.state, SetState::Free);
        set.key = key;
        set.state = SetState::Collecting;
        set.signed = signed;
        set.confirmed = false;
        set.second_root = None;
        set.sequence = sequence;
        set.variant = shred.variant().with_kind(ShredKind::Data);
        set.shred_version = shred.shred_version();
        set.signature.copy_from_slice(shred.signature());
        set.root = path[merkle::PROOF_LEVELS];
        set.chained_root = [0; 32];
        if let Some(chained) = shred.chained_root() {
            set.chained_root.copy_from_slice(chained);
        }
        set.first_coding_index = None;
        set.nodes.clear();
        set.present = 0;
        set.consumed = 0;
        set.first_rx_ns = rx_ns;
        if self.authenticate {
            set.nodes
                .record_path(shred.erasure_index(), path, shred.merkle_proof());
        }
        self.index.insert(key, set_slot);
        (set_slot, evicted)
    }

    /// Compares this set's chained root with its predecessor's root, and its root with its
    /// successor's chained root, when those sets are known (format §7, "Chained root").
    fn check_chain_links(&mut self, key: SetKey) {
        let Some(&set_slot) = self.index.get(&key) else {
            return;
        };
        let set = &self.sets[set_slot as usize];
        if !set.variant.chained || !self.authenticate {
            return;
        }
        let (root, chained_root) = (set.root, set.chained_root);
        let mut links = [None, None];
        if let Some(previous_index) = key
            .fec_set_index
            .checked_sub(DATA_SHREDS_PER_FEC_SET as u32)
        {
            let previous = SetKey {
                slot: key.slot,
                fec_set_index: previous_index,
            };
            links[0] = self
                .root_of(&previous)
                .map(|previous_root| previous_root == chained_root);
        }
        let next = SetKey {
            slot: key.slot,
            fec_set_index: key.fec_set_index + DATA_SHREDS_PER_FEC_SET as u32,
        };
        links[1] = match self.index.get(&next) {
            Some(&next_slot) => Some(self.sets[next_slot as usize].chained_root == root),
            None => self.done.chained_root(&next).map(|chained| chained == root),
        };
        for verified in links.into_iter().flatten() {
            if verified {
                self.counters.chain_links_verified += 1;
            } else {
                self.counters.chain_links_broken += 1;
            }
        }
    }

    fn store(
        &mut self,
        set_slot: u32,
        shred: &ShredRef<'_>,
        erasure_index: usize,
        leaf: Hash,
        rx_ns: u64,
    ) -> Option<Completion> {
        let authenticate = self.authenticate;
        let set = &mut self.sets[set_slot as usize];
        let payload = shred.payload();
        set.buffers[erasure_index][..payload.len()].copy_from_slice(payload);
        // Only authenticated recovery reads the leaves; a trusted feed's are all zero, and
        // writing them cost a cold cache line per shred.
        if authenticate {
            set.leaves[erasure_index] = leaf;
        }
        set.present |= 1 << erasure_index;
        set.first_rx_ns = set.first_rx_ns.min(rx_ns);
        if shred.kind() == ShredKind::Code && set.first_coding_index.is_none() {
            let position = erasure_index - DATA_SHREDS_PER_FEC_SET;
            set.first_coding_index = Some(shred.index() - position as u32);
        }
        if set.data_present() == u32::MAX {
            set.state = SetState::Complete;
            self.counters.sets_completed += 1;
            return Some(Completion::Complete { recovered_data: 0 });
        }
        if (set.present.count_ones() as usize) < DATA_SHREDS_PER_FEC_SET {
            return None;
        }
        let missing_data = !set.data_present();
        match recovery::recover(set, &self.coder, self.authenticate) {
            Ok(()) => {
                set.state = SetState::Complete;
                self.counters.sets_completed += 1;
                self.counters.sets_recovered += 1;
                self.counters.data_shreds_recovered += u64::from(missing_data.count_ones());
                Some(Completion::Complete {
                    recovered_data: missing_data,
                })
            }
            Err(error) => {
                set.state = SetState::Failed;
                self.counters.sets_failed += 1;
                Some(Completion::Failed(error))
            }
        }
    }

    fn evict_oldest(&mut self) -> Option<SetKey> {
        let oldest = self
            .sets
            .iter()
            .enumerate()
            .filter(|(_, set)| set.state != SetState::Free)
            .min_by_key(|(_, set)| (set.confirmed, set.sequence))
            .map(|(set_slot, set)| (set_slot as u32, set.key, set.state == SetState::Complete))?;
        // A complete set (held until consumed) is remembered, so its late shreds stay redundant.
        self.release(oldest.0, oldest.2);
        self.counters.sets_evicted += 1;
        Some(oldest.1)
    }

    fn release(&mut self, set_slot: u32, remember: bool) {
        let set = &mut self.sets[set_slot as usize];
        let key = set.key;
        if remember {
            let done = Done {
                root: set.root,
                chained_root: set.chained_root,
                signature: signature_prefix(&set.signature),
            };
            self.done.insert(key, done, set.second_root);
        }
        set.state = SetState::Free;
        set.present = 0;
        self.index.remove(&key);
        self.free.push(set_slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leader::LeaderSchedule;
    use crate::recovery::RecoveryError;
    use crate::shred::{ParseOptions, parse_shred};

    const FULL_SLOT: &[u8] = include_bytes!("../tests/fixtures/shreds/slot-361200000.full.bin");

    /// The 64 shreds of the slot's first FEC set, data then coding (the file's order).
    fn first_set() -> Vec<&'static [u8]> {
        // The fixture's framing: a u16 LE length, then the shred (docs/decoder.md).
        let mut records = Vec::new();
        let mut rest = FULL_SLOT;
        while records.len() < 64 {
            let (len, tail) = rest.split_at(2);
            let len = usize::from(u16::from_le_bytes([len[0], len[1]]));
            let (payload, tail) = tail.split_at(len);
            records.push(payload);
            rest = tail;
        }
        records
    }

    fn resolver_with_31_data_shreds() -> (FecResolver, u32) {
        let mut resolver = FecResolver::new(FecConfig {
            max_sets_in_flight: 2,
            completed_sets_remembered: 4,
            ..FecConfig::default()
        });
        for payload in &first_set()[..31] {
            let shred = parse_shred(payload, ParseOptions::default()).unwrap();
            let inserted = resolver
                .insert(&shred, &LeaderSchedule::Unchecked, 0)
                .unwrap();
            assert_eq!(inserted.completion, None);
        }
        let set_slot = resolver.index[&SetKey {
            slot: 361_200_000,
            fec_set_index: 0,
        }];
        (resolver, set_slot)
    }

    /// Stores a coding shred the way `store` does, after "verification", then damages its parity.
    fn plant_coding_shred(resolver: &mut FecResolver, set_slot: u32, flip: Option<usize>) {
        let payload = first_set()[32];
        let shred = parse_shred(payload, ParseOptions::default()).unwrap();
        let set = &mut resolver.sets[set_slot as usize];
        set.buffers[32][..payload.len()].copy_from_slice(payload);
        set.leaves[32] = merkle::leaf_hash(shred.merkle_leaf_input());
        set.present |= 1 << 32;
        set.first_coding_index = Some(shred.index());
        if let Some(offset) = flip {
            set.buffers[32][offset] ^= 0x01;
        }
    }

    #[test]
    fn recovery_rebuilds_the_missing_data_shred() {
        let (mut resolver, set_slot) = resolver_with_31_data_shreds();
        plant_coding_shred(&mut resolver, set_slot, None);
        let set = &mut resolver.sets[set_slot as usize];
        recovery::recover(set, &resolver.coder, true).unwrap();
        assert_eq!(&set.buffers[31][..1203], first_set()[31]);
    }

    #[test]
    fn corrupted_parity_fails_the_root_check() {
        let (mut resolver, set_slot) = resolver_with_31_data_shreds();
        // Byte 500 lies inside the parity shard [89, 1076).
        plant_coding_shred(&mut resolver, set_slot, Some(500));
        let set = &mut resolver.sets[set_slot as usize];
        assert_eq!(
            recovery::recover(set, &resolver.coder, true),
            Err(RecoveryError::RootMismatch)
        );
    }
}
