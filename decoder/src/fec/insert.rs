//! `FecResolver::insert` in named steps: judge a shred against the set (or the completed set) it
//! belongs to, join its set or open one (verifying its proof and the leader's signature), store
//! it, and confirm the set; with the version checks that a shred of another root goes through.

use crate::leader::{LeaderCheck, LeaderSchedule};
use crate::merkle::{self, Hash};
use crate::shred::{ShredKind, ShredRef};

use super::FecResolver;
use super::key::SetKey;
use super::outcome::{DuplicateSet, FecError, Inserted};
use super::set::SetState;

/// Where a shred goes in the pool: its set slot, whether it opened the set, and the set evicted
/// to make room.
type Placed = (u32, bool, Option<SetKey>);

impl FecResolver {
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
        self.judge_known(key, existing, shred, erasure_index, leaders)?;
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
        let (set_slot, new_set, evicted) =
            self.place(existing, shred, erasure_index, leaf, leaders, rx_ns)?;
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

    /// Step 1: a shred of a set held (`existing`) or completed recently is refused here when it is
    /// redundant, of a failed set, a repeat of its position, or another version of a complete set.
    fn judge_known(
        &mut self,
        key: SetKey,
        existing: Option<u32>,
        shred: &ShredRef<'_>,
        erasure_index: usize,
        leaders: &LeaderSchedule,
    ) -> Result<(), FecError> {
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
        Ok(())
    }

    /// Step 2: joins the held set when the shred is of its version, replaces an unconfirmed set
    /// of another version, or opens a new set once the shred's proof and signature verify.
    fn place(
        &mut self,
        existing: Option<u32>,
        shred: &ShredRef<'_>,
        erasure_index: usize,
        leaf: Hash,
        leaders: &LeaderSchedule,
        rx_ns: u64,
    ) -> Result<Placed, FecError> {
        let key = SetKey {
            slot: shred.slot(),
            fec_set_index: shred.fec_set_index(),
        };
        Ok(match existing {
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
        })
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
    pub(super) fn confirm(&mut self, set_slot: u32, leaders: &LeaderSchedule) -> bool {
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
}
