//! Length: over 600 lines because the set pool, verification, confirmation, duplicate detection and
//! the completed-set filter share the pool's private state; ~75 of the lines are tests.
//!
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
//!   the slot side can forget its shreds). A completed set stays until its owner releases it
//!   (`release_complete`, once its data shreds were copied out, or `mark_consumed` of all 32), then
//!   its key, root and chained root move to a FIFO filter of completed sets so late shreds are
//!   recognised cheaply without re-hashing and chain links to it can still be checked.

use std::collections::HashMap;

use thiserror::Error;

use crate::erasure::ErasureCoder;
use crate::leader::{LeaderCheck, LeaderSchedule};
use crate::merkle::{self, Hash, MerkleError, NodeCache};
use crate::recovery::{self, RecoveryError};
use crate::shred::{
    CODE_SHRED_LEN, DATA_SHREDS_PER_FEC_SET, SHREDS_PER_FEC_SET, SIGNATURE_LEN, ShredKind,
    ShredRef, ShredVariant,
};

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

/// Bounds of the resolver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FecConfig {
    /// Sets assembled or awaiting deshred at once. Default 1,024 (~83 MB). At the limit the oldest
    /// set is evicted.
    pub max_sets_in_flight: usize,
    /// Completed sets remembered to classify late shreds. Default 8,192 (~0.5 MB).
    pub completed_sets_remembered: usize,
    /// Check Merkle proofs, the leader's signature once per set, chained-root links, and
    /// authenticate recovered shreds. Default true. False is for trusted feeds only (a
    /// shredstream from one's own validator) and for comparing with decoders that skip this
    /// work: shreds are then grouped by set and signature bytes only, and recovered shreds are
    /// not re-authenticated and get no Merkle proofs.
    pub authenticate: bool,
    /// Without a leader schedule, shreds proving the same root that confirm a set (1..=32).
    /// Default 2: a lone forged or bit-flipped shred never moves state. 1 restores "first shred
    /// wins".
    pub unsigned_confirm_shreds: u8,
}

impl Default for FecConfig {
    fn default() -> Self {
        Self {
            max_sets_in_flight: 1024,
            completed_sets_remembered: 8192,
            authenticate: true,
            unsigned_confirm_shreds: 2,
        }
    }
}

/// Why the resolver did not store a shred. One variant per reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FecError {
    #[error("shred already received")]
    Duplicate,
    #[error("FEC set already complete")]
    SetAlreadyComplete,
    #[error("FEC set failed recovery earlier")]
    SetFailed,
    #[error("Merkle proof unusable: {0}")]
    Merkle(#[from] MerkleError),
    #[error("no leader known for the slot")]
    UnknownLeader,
    #[error("leader signature does not verify over the Merkle root")]
    BadSignature,
    #[error("Merkle root differs from the root already accepted for this FEC set")]
    MerkleRootMismatch,
    #[error("variant differs from the FEC set's")]
    InconsistentVariant,
    #[error("second version of a FEC set signed by its leader (duplicate block)")]
    DuplicateBlock,
}

impl FecError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Duplicate => "duplicate",
            Self::SetAlreadyComplete => "set_already_complete",
            Self::SetFailed => "set_failed",
            Self::Merkle(MerkleError::RaggedProof { .. }) => "ragged_proof",
            Self::Merkle(MerkleError::IndexBeyondProof { .. }) => "index_beyond_proof",
            Self::UnknownLeader => "unknown_leader",
            Self::BadSignature => "bad_signature",
            Self::MerkleRootMismatch => "merkle_root_mismatch",
            Self::InconsistentVariant => "inconsistent_variant",
            Self::DuplicateBlock => "duplicate_block",
        }
    }
}

/// What storing a shred did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inserted {
    pub key: SetKey,
    /// This shred opened a new set (its signature was verified, when a schedule is in use).
    pub new_set: bool,
    /// The set is confirmed (see the module documentation): its data shreds may be used.
    pub confirmed: bool,
    /// This shred confirmed the set: its data shreds present so far may be used now.
    pub confirmed_now: bool,
    /// A set evicted to make room; its data shreds are gone.
    pub evicted: Option<SetKey>,
    /// Set when this shred completed the set.
    pub completion: Option<Completion>,
}

/// How a set completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// All 32 data shreds present; `recovered_data` has a bit per data shred rebuilt.
    Complete { recovered_data: u32 },
    /// Recovery ran and was rejected; received data shreds stay valid.
    Failed(RecoveryError),
}

/// Counters of events that are not per-shred outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FecCounters {
    pub sets_completed: u64,
    pub sets_recovered: u64,
    pub sets_failed: u64,
    pub sets_evicted: u64,
    pub data_shreds_recovered: u64,
    pub chain_links_verified: u64,
    pub chain_links_broken: u64,
    /// Sets of which the leader signed a second version (reported once each).
    pub duplicate_sets: u64,
    /// Unconfirmed sets (no schedule) replaced by a shred proving another root.
    pub unconfirmed_replaced: u64,
}

/// A leader signed two roots for one FEC set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DuplicateSet {
    pub key: SetKey,
    /// The root of the version in use.
    pub first_root: Hash,
    /// The root of the refused version.
    pub second_root: Hash,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetState {
    Free,
    Collecting,
    Complete,
    Failed,
}

/// One set slot of the pool. `buffers[e]` holds the shred at erasure index `e`.
pub(crate) struct FecSet {
    pub(crate) key: SetKey,
    state: SetState,
    /// The root's signature verified against the slot's leader.
    signed: bool,
    confirmed: bool,
    /// A second signed root, once seen.
    second_root: Option<Hash>,
    sequence: u64,
    pub(crate) variant: ShredVariant,
    pub(crate) shred_version: u16,
    pub(crate) signature: [u8; SIGNATURE_LEN],
    pub(crate) root: Hash,
    pub(crate) chained_root: [u8; 32],
    pub(crate) first_coding_index: Option<u32>,
    pub(crate) present: u64,
    consumed: u32,
    first_rx_ns: u64,
    /// Boxed, like `nodes` and `buffers`: only authentication reads them, and out of line they
    /// leave the fields every shred touches in a few cache lines instead of behind 4.5 KB.
    pub(crate) leaves: Box<[Hash; SHREDS_PER_FEC_SET]>,
    /// Authenticated tree nodes, so later shreds stop hashing at the first known node.
    nodes: Box<NodeCache>,
    pub(crate) buffers: Box<[[u8; CODE_SHRED_LEN]; SHREDS_PER_FEC_SET]>,
}

impl FecSet {
    fn empty() -> Self {
        Self {
            key: SetKey {
                slot: 0,
                fec_set_index: 0,
            },
            state: SetState::Free,
            signed: false,
            confirmed: false,
            second_root: None,
            sequence: 0,
            variant: ShredVariant {
                kind: ShredKind::Data,
                proof_size: 0,
                chained: false,
                resigned: false,
            },
            shred_version: 0,
            signature: [0; SIGNATURE_LEN],
            root: [0; 32],
            chained_root: [0; 32],
            first_coding_index: None,
            present: 0,
            consumed: 0,
            first_rx_ns: 0,
            leaves: Box::new([[0; 32]; SHREDS_PER_FEC_SET]),
            nodes: Box::default(),
            buffers: Box::new([[0; CODE_SHRED_LEN]; SHREDS_PER_FEC_SET]),
        }
    }

    fn data_present(&self) -> u32 {
        self.present as u32
    }
}

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

    /// Checks and stores one parsed shred received at `rx_ns`.
    pub fn insert(
        &mut self,
        shred: &ShredRef<'_>,
        leaders: &LeaderSchedule,
        rx_ns: u64,
    ) -> Result<Inserted, FecError> {
        let key = SetKey {
            slot: shred.slot(),
            fec_set_index: shred.fec_set_index(),
        };
        let erasure_index = shred.erasure_index();
        let existing = self.index.get(&key).copied();
        if let Some(set_slot) = existing {
            let set = &self.sets[set_slot as usize];
            match set.state {
                // Held until consumed: judged as a late shred of a completed set.
                SetState::Complete if set.signature[..] == *shred.signature() => {
                    return Err(FecError::SetAlreadyComplete);
                }
                SetState::Complete => {
                    let (first_root, known) = (set.root, set.second_root);
                    return Err(
                        match self.late_shred(key, first_root, known, shred, leaders) {
                            Ok(root) => {
                                self.sets[set_slot as usize].second_root = Some(root);
                                FecError::DuplicateBlock
                            }
                            Err(error) => error,
                        },
                    );
                }
                SetState::Failed => return Err(FecError::SetFailed),
                SetState::Collecting | SetState::Free => {}
            }
            // The same position again, of the same version (another version is judged below).
            if set.present >> erasure_index & 1 == 1 && set.signature[..] == *shred.signature() {
                return Err(FecError::Duplicate);
            }
        } else if let Some(done) = self.done.get(&key) {
            // Most late shreds are the version in use: a 16-byte comparison, no copy, no hash.
            if shred.signature().starts_with(&done.signature) {
                return Err(FecError::SetAlreadyComplete);
            }
            let (first_root, known) = (done.root, self.done.second_root(&key));
            return Err(
                match self.late_shred(key, first_root, known, shred, leaders) {
                    Ok(root) => {
                        self.done.set_second_root(&key, root);
                        FecError::DuplicateBlock
                    }
                    Err(error) => error,
                },
            );
        }
        // The shred will be hashed or copied into the pool and is usually out of cache: ask for
        // all its lines at once (bench/README.md, "Cold lines"). Redundant shreds, rejected
        // above, never get this far.
        gf256::prefetch(shred.payload());
        // And the pool lines it will be copied to, when its set is already held (+1.8 % on the
        // lossy path, `decoder_ab.sh`: bench/README.md, "The kernel again, measured in one
        // process").
        if let Some(set_slot) = existing {
            let destination = &self.sets[set_slot as usize].buffers[erasure_index];
            gf256::prefetch(&destination[..shred.payload().len()]);
        }
        let leaf = if self.authenticate {
            merkle::leaf_hash(shred.merkle_leaf_input())
        } else {
            [0; 32]
        };
        let (set_slot, new_set, evicted) = match existing {
            Some(set_slot) if self.same_version(set_slot, shred, erasure_index, &leaf) => {
                let set = &self.sets[set_slot as usize];
                if set.variant != shred.variant().with_kind(ShredKind::Data)
                    || set.shred_version != shred.shred_version()
                {
                    return Err(FecError::InconsistentVariant);
                }
                (set_slot, false, None)
            }
            Some(set_slot) => {
                let path = self.other_version(set_slot, shred, erasure_index, leaf, leaders)?;
                // The held set was unconfirmed: the new version replaces it.
                self.release(set_slot, false);
                self.counters.unconfirmed_replaced += 1;
                let signed = leaders.is_checked();
                let (set_slot, evicted) = self.open_set(key, shred, &path, rx_ns, signed);
                (set_slot, true, evicted)
            }
            None if !self.authenticate => {
                let path = [[0; 32]; merkle::PROOF_LEVELS + 1];
                let (set_slot, evicted) = self.open_set(key, shred, &path, rx_ns, false);
                (set_slot, true, evicted)
            }
            None => {
                let path = merkle::proof_path(leaf, erasure_index, shred.merkle_proof())?;
                let root = path[merkle::PROOF_LEVELS];
                match leaders.check(key.slot, &root, shred.signature()) {
                    LeaderCheck::Valid => {}
                    LeaderCheck::UnknownLeader => return Err(FecError::UnknownLeader),
                    LeaderCheck::BadSignature => return Err(FecError::BadSignature),
                }
                let signed = leaders.is_checked();
                let (set_slot, evicted) = self.open_set(key, shred, &path, rx_ns, signed);
                (set_slot, true, evicted)
            }
        };
        let completion = self.store(set_slot, shred, erasure_index, leaf, rx_ns);
        let confirmed_now = self.confirm(set_slot, leaders);
        Ok(Inserted {
            key,
            new_set,
            confirmed: self.sets[set_slot as usize].confirmed,
            confirmed_now,
            evicted,
            completion,
        })
    }

    /// The duplicate block found since the last call, if any.
    pub fn take_duplicate(&mut self) -> Option<DuplicateSet> {
        self.duplicate.take()
    }

    /// The shred carries the set's signature and proves the set's root.
    fn same_version(
        &mut self,
        set_slot: u32,
        shred: &ShredRef<'_>,
        erasure_index: usize,
        leaf: &Hash,
    ) -> bool {
        let set = &mut self.sets[set_slot as usize];
        let root = set.root;
        set.signature[..] == *shred.signature()
            && (!self.authenticate
                || set
                    .nodes
                    .verify(erasure_index, leaf, shred.merkle_proof(), &root))
    }

    /// A shred of another version than the held set's. Returns its proof path when it may
    /// replace the set (the set is unconfirmed, the feed trusted); otherwise the rejection.
    fn other_version(
        &mut self,
        set_slot: u32,
        shred: &ShredRef<'_>,
        erasure_index: usize,
        leaf: Hash,
        leaders: &LeaderSchedule,
    ) -> Result<merkle::ProofPath, FecError> {
        if !self.authenticate {
            return Err(FecError::MerkleRootMismatch);
        }
        let path = merkle::proof_path(leaf, erasure_index, shred.merkle_proof())?;
        let root = path[merkle::PROOF_LEVELS];
        let set = &self.sets[set_slot as usize];
        let (key, first_root, known) = (set.key, set.root, set.second_root);
        if !set.confirmed {
            // Nothing of it was handed on: a version that passes the current rules replaces it.
            return match leaders.check(key.slot, &root, shred.signature()) {
                LeaderCheck::Valid => Ok(path),
                LeaderCheck::UnknownLeader => Err(FecError::UnknownLeader),
                LeaderCheck::BadSignature => Err(FecError::BadSignature),
            };
        }
        if !set.signed || !leaders.is_checked() {
            // Without a verified first root, another root cannot be judged: the first stays.
            return Err(FecError::MerkleRootMismatch);
        }
        match self.second_version(key, first_root, known, root, shred.signature(), leaders) {
            Ok(()) => {
                self.sets[set_slot as usize].second_root = Some(root);
                Err(FecError::DuplicateBlock)
            }
            Err(error) => Err(error),
        }
    }

    /// A late shred of a completed set (`first_root` in use, `known` second root) that does not
    /// carry the set's signature, checked as a possible second version: `Ok` with its root when
    /// it is a new one signed by the leader (the caller records it), the rejection otherwise.
    fn late_shred(
        &mut self,
        key: SetKey,
        first_root: Hash,
        known: Option<Hash>,
        shred: &ShredRef<'_>,
        leaders: &LeaderSchedule,
    ) -> Result<Hash, FecError> {
        if !self.authenticate || !leaders.is_checked() {
            // Without a schedule another signature cannot be judged: the first version stays.
            return Err(FecError::MerkleRootMismatch);
        }
        let leaf = merkle::leaf_hash(shred.merkle_leaf_input());
        let path = merkle::proof_path(leaf, shred.erasure_index(), shred.merkle_proof())?;
        let root = path[merkle::PROOF_LEVELS];
        self.second_version(key, first_root, known, root, shred.signature(), leaders)?;
        Ok(root)
    }

    /// Judges `root`, proven by a shred of a set whose version in use has `first_root`: `Ok` when
    /// it is a second version signed by the slot's leader seen for the first time (counted and
    /// queued for [`take_duplicate`](Self::take_duplicate)); the rejection otherwise.
    fn second_version(
        &mut self,
        key: SetKey,
        first_root: Hash,
        known: Option<Hash>,
        root: Hash,
        signature: &[u8],
        leaders: &LeaderSchedule,
    ) -> Result<(), FecError> {
        if root == first_root {
            return Err(FecError::MerkleRootMismatch);
        }
        if known == Some(root) {
            return Err(FecError::DuplicateBlock);
        }
        match leaders.check(key.slot, &root, signature) {
            LeaderCheck::Valid => {}
            LeaderCheck::UnknownLeader => return Err(FecError::UnknownLeader),
            LeaderCheck::BadSignature => return Err(FecError::BadSignature),
        }
        if known.is_some() {
            // A third version: refused and counted as a rejection, reported no more.
            return Err(FecError::DuplicateBlock);
        }
        self.counters.duplicate_sets += 1;
        self.duplicate = Some(DuplicateSet {
            key,
            first_root,
            second_root: root,
        });
        Ok(())
    }

    /// Confirms the set when it just met its rule (module documentation); true when it did.
    fn confirm(&mut self, set_slot: u32, leaders: &LeaderSchedule) -> bool {
        let set = &mut self.sets[set_slot as usize];
        if set.confirmed {
            return false;
        }
        let by_count = !leaders.is_checked() && set.present.count_ones() >= self.confirm_shreds;
        if !(set.signed || by_count) {
            return false;
        }
        set.confirmed = true;
        let key = set.key;
        self.check_chain_links(key);
        true
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

/// Bytes of a set's signature kept for completed sets: a late shred with other bytes is another
/// version (or junk), one with these is redundant (a forger matching them only gets discarded).
const SIGNATURE_PREFIX_LEN: usize = 16;

fn signature_prefix(signature: &[u8; SIGNATURE_LEN]) -> [u8; SIGNATURE_PREFIX_LEN] {
    let mut prefix = [0; SIGNATURE_PREFIX_LEN];
    prefix.copy_from_slice(&signature[..SIGNATURE_PREFIX_LEN]);
    prefix
}

/// What is remembered of every completed set (80 bytes).
#[derive(Debug, Clone, Copy)]
struct Done {
    root: Hash,
    chained_root: [u8; 32],
    signature: [u8; SIGNATURE_PREFIX_LEN],
}

/// A FIFO-bounded record of completed sets: roots, chained roots, signature prefixes, and the
/// second versions seen (rare: kept in a map of their own, so that every set's entry stays small).
struct CompletedSets {
    ring: Vec<Option<SetKey>>,
    next: usize,
    roots: SetKeyMap<Done>,
    /// Second roots of remembered sets (duplicate blocks); a key leaves with its set.
    second_roots: SetKeyMap<Hash>,
}

impl CompletedSets {
    fn new(capacity: usize) -> Self {
        Self {
            ring: vec![None; capacity],
            next: 0,
            roots: set_key_map(2 * capacity),
            second_roots: set_key_map(0),
        }
    }

    fn get(&self, key: &SetKey) -> Option<&Done> {
        self.roots.get(key)
    }

    fn root(&self, key: &SetKey) -> Option<Hash> {
        self.roots.get(key).map(|done| done.root)
    }

    fn chained_root(&self, key: &SetKey) -> Option<[u8; 32]> {
        self.roots.get(key).map(|done| done.chained_root)
    }

    fn second_root(&self, key: &SetKey) -> Option<Hash> {
        self.second_roots.get(key).copied()
    }

    fn set_second_root(&mut self, key: &SetKey, root: Hash) {
        if self.roots.contains_key(key) {
            self.second_roots.insert(*key, root);
        }
    }

    fn insert(&mut self, key: SetKey, done: Done, second_root: Option<Hash>) {
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

#[cfg(test)]
mod tests {
    use super::*;
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
