//! The cluster's leader schedule held compactly: per epoch, one `u16` per slot indexing the
//! epoch's distinct leader keys, each key decompressed once (~1,500 leaders and 432,000 slots on
//! mainnet: ~0.9 MB per epoch), and the epoch arithmetic of `getEpochSchedule`.
//!
//! Built from plain data (what `getLeaderSchedule` returns: leader → slot offsets in the epoch,
//! or `getSlotLeaders`: one leader per consecutive slot), so the caller only parses JSON. A
//! lookup is a range check and an index: no hashing. [`LeaderEpochs`] holds up to
//! [`LeaderEpochs::MAX_EPOCHS`] epochs (the previous one for late shreds, the current, the next)
//! and drops the oldest as newer ones are inserted; it clones in three `Arc` increments.

use std::collections::HashMap;
use std::sync::Arc;

use ed25519_dalek::VerifyingKey;
use thiserror::Error;

use crate::leader_key::{self, LeaderKeyError};

/// Index of a slot without a leader in the schedule (never verifies).
const NO_LEADER: u16 = u16::MAX;

/// Why an epoch's schedule could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EpochLeadersError {
    #[error("slot offset {offset} is outside the epoch's {slots_in_epoch} slots")]
    OffsetOutOfEpoch { offset: u64, slots_in_epoch: u64 },
    #[error("slot offset {offset} has two leaders")]
    OffsetTwice { offset: u64 },
    #[error("{count} distinct leaders; at most 65,535 fit")]
    TooManyLeaders { count: usize },
    #[error("{slots_in_epoch} slots in the epoch; at most 2^24 are accepted")]
    EpochTooLong { slots_in_epoch: u64 },
}

/// Longest epoch accepted (mainnet: 432,000 slots); bounds the allocation an RPC answer causes.
const MAX_SLOTS_IN_EPOCH: u64 = 1 << 24;

/// The leaders of one epoch; see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochLeaders {
    epoch: u64,
    first_slot: u64,
    keys: Box<[VerifyingKey]>,
    leader_of: Box<[u16]>,
    /// Leaders of the answer whose key was unusable (their slots have no leader).
    refused: Box<[RefusedLeader]>,
}

/// A leader of a schedule answer left out because its key is not a usable ed25519 point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedLeader {
    /// The key as the answer gave it (base58).
    pub leader: String,
    pub reason: LeaderKeyError,
    /// Slots of the epoch the leader was given, now without a leader.
    pub slots: usize,
}

impl EpochLeaders {
    /// From `getLeaderSchedule`'s shape: each leader (base58) with its slot offsets relative to
    /// `first_slot`. Offsets not listed have no leader (their shreds are refused). A leader whose
    /// key is not a valid ed25519 point costs only its own slots: they are left without a leader
    /// and the leader is listed in [`refused_leaders`](Self::refused_leaders); the rest of the
    /// epoch verifies as usual.
    pub fn from_offsets<K, O>(
        epoch: u64,
        first_slot: u64,
        slots_in_epoch: u64,
        leaders: impl IntoIterator<Item = (K, O)>,
    ) -> Result<Self, EpochLeadersError>
    where
        K: AsRef<str>,
        O: AsRef<[u64]>,
    {
        let mut keyed = Vec::new();
        let mut refused = Vec::new();
        for (text, offsets) in leaders {
            let text = text.as_ref();
            match leader_key::key_from_base58(text) {
                Ok(key) => keyed.push((key, offsets)),
                Err(reason) => refused.push(RefusedLeader {
                    leader: text.to_owned(),
                    reason,
                    slots: offsets.as_ref().len(),
                }),
            }
        }
        let mut built = Self::from_key_offsets(epoch, first_slot, slots_in_epoch, keyed)?;
        built.refused = refused.into_boxed_slice();
        Ok(built)
    }

    /// As [`from_offsets`](Self::from_offsets), with keys already decoded.
    pub fn from_key_offsets<O: AsRef<[u64]>>(
        epoch: u64,
        first_slot: u64,
        slots_in_epoch: u64,
        leaders: impl IntoIterator<Item = (VerifyingKey, O)>,
    ) -> Result<Self, EpochLeadersError> {
        if slots_in_epoch > MAX_SLOTS_IN_EPOCH {
            return Err(EpochLeadersError::EpochTooLong { slots_in_epoch });
        }
        let mut builder = Builder::new(epoch, first_slot, slots_in_epoch as usize);
        for (key, offsets) in leaders {
            let index = builder.key_index(key)?;
            for &offset in offsets.as_ref() {
                let cell = usize::try_from(offset)
                    .ok()
                    .and_then(|at| builder.leader_of.get_mut(at))
                    .ok_or(EpochLeadersError::OffsetOutOfEpoch {
                        offset,
                        slots_in_epoch,
                    })?;
                if *cell != NO_LEADER {
                    return Err(EpochLeadersError::OffsetTwice { offset });
                }
                *cell = index;
            }
        }
        Ok(builder.finish())
    }

    /// From `getSlotLeaders`' shape: the leader (base58) of each slot from `first_slot` on.
    pub fn from_slot_leaders<K: AsRef<str>>(
        epoch: u64,
        first_slot: u64,
        leaders: &[K],
    ) -> Result<Self, EpochLeadersError> {
        let mut offsets: Vec<(&str, Vec<u64>)> = Vec::new();
        let mut position: HashMap<&str, usize> = HashMap::new();
        for (offset, text) in leaders.iter().enumerate() {
            let text = text.as_ref();
            let at = *position.entry(text).or_insert_with(|| {
                offsets.push((text, Vec::new()));
                offsets.len() - 1
            });
            offsets[at].1.push(offset as u64);
        }
        Self::from_offsets(epoch, first_slot, leaders.len() as u64, offsets)
    }

    pub const fn epoch(&self) -> u64 {
        self.epoch
    }

    pub const fn first_slot(&self) -> u64 {
        self.first_slot
    }

    /// Slots in the epoch.
    pub fn slots(&self) -> u64 {
        self.leader_of.len() as u64
    }

    /// First slot after the epoch.
    pub fn end_slot(&self) -> u64 {
        self.first_slot.saturating_add(self.slots())
    }

    /// Distinct leaders of the epoch.
    pub fn distinct_leaders(&self) -> usize {
        self.keys.len()
    }

    /// Leaders of the schedule answer left out for an unusable key (their slots have no leader).
    pub fn refused_leaders(&self) -> &[RefusedLeader] {
        &self.refused
    }

    /// The leader of `slot`, when the slot is in the epoch and has one.
    pub fn leader(&self, slot: u64) -> Option<&VerifyingKey> {
        let offset = usize::try_from(slot.checked_sub(self.first_slot)?).ok()?;
        let index = *self.leader_of.get(offset)?;
        self.keys.get(usize::from(index))
    }
}

/// Collects distinct keys while an epoch is built.
struct Builder {
    epoch: u64,
    first_slot: u64,
    keys: Vec<VerifyingKey>,
    known: HashMap<[u8; 32], u16>,
    leader_of: Vec<u16>,
}

impl Builder {
    fn new(epoch: u64, first_slot: u64, slots: usize) -> Self {
        Self {
            epoch,
            first_slot,
            keys: Vec::new(),
            known: HashMap::new(),
            leader_of: vec![NO_LEADER; slots],
        }
    }

    fn key_index(&mut self, key: VerifyingKey) -> Result<u16, EpochLeadersError> {
        if let Some(&index) = self.known.get(key.as_bytes()) {
            return Ok(index);
        }
        let index = u16::try_from(self.keys.len())
            .ok()
            .filter(|&index| index != NO_LEADER)
            .ok_or(EpochLeadersError::TooManyLeaders {
                count: self.keys.len() + 1,
            })?;
        self.known.insert(key.to_bytes(), index);
        self.keys.push(key);
        Ok(index)
    }

    fn finish(self) -> EpochLeaders {
        EpochLeaders {
            epoch: self.epoch,
            first_slot: self.first_slot,
            keys: self.keys.into_boxed_slice(),
            leader_of: self.leader_of.into_boxed_slice(),
            refused: Box::default(),
        }
    }
}

/// Up to three epochs of leaders; see the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderEpochs {
    epochs: [Option<Arc<EpochLeaders>>; LeaderEpochs::MAX_EPOCHS],
}

impl LeaderEpochs {
    /// Epochs held: the previous (late shreds after a boundary), the current and the next.
    pub const MAX_EPOCHS: usize = 3;

    /// Holds `epochs` (the newest three when more are given).
    pub fn new(epochs: impl IntoIterator<Item = Arc<EpochLeaders>>) -> Self {
        let mut held = Self::default();
        for epoch in epochs {
            held.insert(epoch);
        }
        held
    }

    /// Adds an epoch, replacing one with the same number; when all places are taken the oldest
    /// epoch goes, unless `epoch` is older than all of them (then it is returned, not held).
    /// Returns the epoch that left.
    pub fn insert(&mut self, epoch: Arc<EpochLeaders>) -> Option<Arc<EpochLeaders>> {
        let place = self
            .epochs
            .iter()
            .position(|held| held.as_ref().is_some_and(|h| h.epoch == epoch.epoch))
            .or_else(|| self.epochs.iter().position(Option::is_none));
        if let Some(place) = place {
            return self.epochs[place].replace(epoch);
        }
        let oldest = (0..Self::MAX_EPOCHS).min_by_key(|&place| {
            self.epochs[place]
                .as_ref()
                .map_or(u64::MAX, |held| held.epoch)
        })?;
        if self.epochs[oldest]
            .as_ref()
            .is_some_and(|held| held.epoch > epoch.epoch)
        {
            return Some(epoch);
        }
        self.epochs[oldest].replace(epoch)
    }

    /// Drops every epoch numbered below `epoch`.
    pub fn retain_from(&mut self, epoch: u64) {
        for held in &mut self.epochs {
            if held.as_ref().is_some_and(|h| h.epoch < epoch) {
                *held = None;
            }
        }
    }

    /// The epochs held, in no particular order.
    pub fn epochs(&self) -> impl Iterator<Item = &Arc<EpochLeaders>> {
        self.epochs.iter().flatten()
    }

    /// The leader of `slot`, when an epoch held covers it.
    pub fn leader(&self, slot: u64) -> Option<&VerifyingKey> {
        self.epochs().find_map(|epoch| epoch.leader(slot))
    }
}

/// The cluster's epoch arithmetic, the fields of `getEpochSchedule` (Agave's `EpochSchedule`):
/// during warm-up epoch `e` has `32 · 2^e` slots, from `first_normal_epoch` on
/// `slots_per_epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochSchedule {
    pub slots_per_epoch: u64,
    pub warmup: bool,
    pub first_normal_epoch: u64,
    pub first_normal_slot: u64,
}

/// Slots of the first warm-up epoch (Agave's `MINIMUM_SLOTS_PER_EPOCH`).
const MINIMUM_SLOTS_PER_EPOCH: u64 = 32;

impl EpochSchedule {
    /// Slots in `epoch`.
    pub fn slots_in_epoch(&self, epoch: u64) -> u64 {
        if self.warmup && epoch < self.first_normal_epoch {
            let shift = u32::try_from(epoch).unwrap_or(u32::MAX);
            MINIMUM_SLOTS_PER_EPOCH.saturating_mul(2u64.saturating_pow(shift))
        } else {
            self.slots_per_epoch
        }
    }

    /// First slot of `epoch`.
    pub fn first_slot(&self, epoch: u64) -> u64 {
        if self.warmup && epoch < self.first_normal_epoch {
            let shift = u32::try_from(epoch).unwrap_or(u32::MAX);
            (2u64.saturating_pow(shift).saturating_sub(1)).saturating_mul(MINIMUM_SLOTS_PER_EPOCH)
        } else {
            let normal = epoch.saturating_sub(self.first_normal_epoch);
            normal
                .saturating_mul(self.slots_per_epoch)
                .saturating_add(self.first_normal_slot)
        }
    }

    /// The epoch holding `slot`.
    pub fn epoch_of(&self, slot: u64) -> u64 {
        if slot < self.first_normal_slot {
            // Warm-up: epoch e starts at 32 · (2^e − 1).
            let scaled = slot / MINIMUM_SLOTS_PER_EPOCH + 1;
            u64::from(u64::BITS - 1 - scaled.leading_zeros())
        } else {
            (slot - self.first_normal_slot)
                .checked_div(self.slots_per_epoch)
                .unwrap_or(0)
                .saturating_add(self.first_normal_epoch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;

    fn key(seed: u8) -> VerifyingKey {
        SigningKey::from_bytes(&[seed; 32]).verifying_key()
    }

    fn b58(key: &VerifyingKey) -> String {
        bs58::encode(key.as_bytes()).into_string()
    }

    #[test]
    fn offsets_map_slots_to_their_leader_and_gaps_to_none() {
        let (a, b) = (key(1), key(2));
        let epoch = EpochLeaders::from_offsets(
            7,
            1_000,
            8,
            [(b58(&a), vec![0, 1, 2, 3]), (b58(&b), vec![4, 5])],
        )
        .unwrap();
        assert_eq!(epoch.distinct_leaders(), 2);
        assert_eq!(epoch.leader(1_000), Some(&a));
        assert_eq!(epoch.leader(1_005), Some(&b));
        assert_eq!(epoch.leader(1_006), None, "offset 6 has no leader");
        assert_eq!(epoch.leader(999), None);
        assert_eq!(epoch.leader(1_008), None);
        assert_eq!(epoch.end_slot(), 1_008);
    }

    #[test]
    fn bad_schedules_are_refused() {
        let a = b58(&key(1));
        let out = EpochLeaders::from_offsets(0, 0, 4, [(a.as_str(), vec![4])]);
        assert!(matches!(
            out,
            Err(EpochLeadersError::OffsetOutOfEpoch { offset: 4, .. })
        ));
        let twice = EpochLeaders::from_offsets(0, 0, 4, [(a.as_str(), [1]), (a.as_str(), [1])]);
        assert_eq!(twice, Err(EpochLeadersError::OffsetTwice { offset: 1 }));
    }

    #[test]
    fn an_unusable_key_costs_only_its_own_slots() {
        let (a, b) = (key(1), key(2));
        // Base58 that is not a key at all, and 32 bytes that are not a point on the curve
        // (y = 2 has no x: 2^2 - 1 over 121666/121665 * 4 + 1 is not a square).
        let mut off_curve = [0u8; 32];
        off_curve[0] = 2;
        assert!(VerifyingKey::from_bytes(&off_curve).is_err());
        let off_curve = bs58::encode(off_curve).into_string();
        let leaders = [
            (b58(&a), vec![0, 1]),
            ("0OIl".to_owned(), vec![2]),
            (off_curve.clone(), vec![3, 4]),
            (b58(&b), vec![5]),
        ];
        let epoch = EpochLeaders::from_offsets(9, 100, 6, leaders).unwrap();
        assert_eq!(epoch.leader(101), Some(&a));
        assert_eq!(
            epoch.leader(105),
            Some(&b),
            "the leaders after the bad ones still count"
        );
        for slot in 102..105 {
            assert_eq!(epoch.leader(slot), None, "slot {slot} has no leader");
        }
        let refused: Vec<(&str, usize)> = epoch
            .refused_leaders()
            .iter()
            .map(|refused| (refused.leader.as_str(), refused.slots))
            .collect();
        assert_eq!(refused, [("0OIl", 1), (off_curve.as_str(), 2)]);
    }

    #[test]
    fn slot_leaders_are_grouped_by_key() {
        let (a, b) = (b58(&key(1)), b58(&key(2)));
        let epoch = EpochLeaders::from_slot_leaders(3, 96, &[&a, &a, &b, &a]).unwrap();
        assert_eq!(epoch.distinct_leaders(), 2);
        assert_eq!(epoch.leader(98), Some(&key(2)));
        assert_eq!(epoch.leader(99), Some(&key(1)));
    }

    #[test]
    fn held_epochs_keep_the_newest_three() {
        let epoch = |n: u64| {
            let keys = [(key(n as u8), vec![0u64])];
            Arc::new(EpochLeaders::from_key_offsets(n, n * 10, 10, keys).unwrap())
        };
        let mut held = LeaderEpochs::new([epoch(1), epoch(2), epoch(3)]);
        assert_eq!(held.leader(10), Some(&key(1)));
        assert_eq!(held.insert(epoch(4)).map(|e| e.epoch()), Some(1));
        assert_eq!(held.leader(10), None);
        assert_eq!(held.leader(40), Some(&key(4)));
        assert_eq!(held.insert(epoch(0)).map(|e| e.epoch()), Some(0), "too old");
        held.retain_from(4);
        assert_eq!(held.epochs().count(), 1);
    }

    #[test]
    fn epoch_arithmetic_matches_agave() {
        let mainnet = EpochSchedule {
            slots_per_epoch: 432_000,
            warmup: false,
            first_normal_epoch: 0,
            first_normal_slot: 0,
        };
        assert_eq!(mainnet.epoch_of(361_200_000), 836);
        assert_eq!(mainnet.first_slot(836), 361_152_000);
        let warm = EpochSchedule {
            slots_per_epoch: 8_192,
            warmup: true,
            first_normal_epoch: 8,
            first_normal_slot: 8_160,
        };
        assert_eq!(warm.slots_in_epoch(0), 32);
        assert_eq!(warm.first_slot(1), 32);
        assert_eq!(warm.first_slot(8), 8_160);
        assert_eq!(warm.epoch_of(31), 0);
        assert_eq!(warm.epoch_of(32), 1);
        assert_eq!(warm.epoch_of(8_159), 7);
        assert_eq!(warm.epoch_of(8_160 + 8_192), 9);
    }
}
