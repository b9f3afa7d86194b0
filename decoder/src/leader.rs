//! Who may sign a slot's shreds, and the one ed25519 check per FEC set (format §7, "Signature").
//!
//! The leader signs the 32-byte Merkle root of each FEC set; every shred of the set carries the
//! same signature, so the resolver verifies it once, on the first shred of a set, and afterwards
//! only checks that later shreds prove the same root. Keys are decompressed once, when the schedule
//! is built, so a verification costs one ed25519 verify (~40–50 µs), amortised over 64 shreds.
//! Without a schedule the feed is trusted: proofs still bind every shred to its set's root, but
//! nothing binds the root to a leader.

use std::collections::HashMap;
use std::sync::Arc;

use ed25519_dalek::{Signature, VerifyingKey};

use crate::epoch_leaders::LeaderEpochs;
use crate::leader_key;
pub use crate::leader_key::LeaderKeyError;

/// Slot → leader key. Cloning is cheap for every variant but `PerSlot` (the shared variants
/// hold `Arc`s), so a worker can take a fresh copy between datagrams.
#[derive(Debug, Clone, Default)]
pub enum LeaderSchedule {
    /// No signature checks: the feed is trusted.
    #[default]
    Unchecked,
    /// One key signs every slot (a single local leader, or a test capture).
    Fixed(VerifyingKey),
    /// Any of a few fixed keys may sign any slot (`--leader` repeated, e.g. one's own
    /// validators). A forged set costs one verification per key, so keep the list short.
    AnyOf(Arc<[VerifyingKey]>),
    /// Keys per slot; a slot missing from the map is rejected.
    PerSlot(HashMap<u64, VerifyingKey>),
    /// The cluster's schedule, per epoch (`epoch_leaders`); a slot outside the held epochs, or
    /// without a leader, is rejected.
    Epochs(LeaderEpochs),
}

/// Outcome of checking a FEC set's root against the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaderCheck {
    /// The schedule has no key for the slot.
    UnknownLeader,
    /// The signature does not verify over the root.
    BadSignature,
    /// Verified, or unchecked by configuration.
    Valid,
}

impl LeaderSchedule {
    /// Parses a base58 public key into a verifying key.
    pub fn key_from_base58(text: &str) -> Result<VerifyingKey, LeaderKeyError> {
        leader_key::key_from_base58(text)
    }

    pub fn key_from_bytes(bytes: &[u8]) -> Result<VerifyingKey, LeaderKeyError> {
        leader_key::key_from_bytes(bytes)
    }

    /// Any of `keys` may sign (`Fixed` for one key).
    pub fn any_of(keys: impl IntoIterator<Item = VerifyingKey>) -> Self {
        let keys: Vec<VerifyingKey> = keys.into_iter().collect();
        match keys.as_slice() {
            [key] => Self::Fixed(*key),
            _ => Self::AnyOf(keys.into()),
        }
    }

    pub fn is_checked(&self) -> bool {
        !matches!(self, Self::Unchecked)
    }

    /// Verifies `signature` over `root` for `slot`.
    pub fn check(&self, slot: u64, root: &[u8; 32], signature: &[u8]) -> LeaderCheck {
        let key = match self {
            Self::Unchecked => return LeaderCheck::Valid,
            Self::Fixed(key) => key,
            Self::AnyOf(keys) => return check_any(keys, root, signature),
            Self::PerSlot(map) => match map.get(&slot) {
                Some(key) => key,
                None => return LeaderCheck::UnknownLeader,
            },
            Self::Epochs(epochs) => match epochs.leader(slot) {
                Some(key) => key,
                None => return LeaderCheck::UnknownLeader,
            },
        };
        let Ok(signature) = Signature::from_slice(signature) else {
            return LeaderCheck::BadSignature;
        };
        verify(key, root, &signature)
    }
}

/// Agave verifies shred signatures through `solana_signature::Signature::verify`, which calls
/// ed25519-dalek's `verify_strict`; we accept exactly what it accepts.
fn verify(key: &VerifyingKey, root: &[u8; 32], signature: &Signature) -> LeaderCheck {
    match key.verify_strict(root, signature) {
        Ok(()) => LeaderCheck::Valid,
        Err(_) => LeaderCheck::BadSignature,
    }
}

fn check_any(keys: &[VerifyingKey], root: &[u8; 32], signature: &[u8]) -> LeaderCheck {
    if keys.is_empty() {
        return LeaderCheck::UnknownLeader;
    }
    let Ok(signature) = Signature::from_slice(signature) else {
        return LeaderCheck::BadSignature;
    };
    match keys
        .iter()
        .any(|key| verify(key, root, &signature) == LeaderCheck::Valid)
    {
        true => LeaderCheck::Valid,
        false => LeaderCheck::BadSignature,
    }
}
