//! What the resolver is configured with and what it reports: its bounds, its rejections, what
//! storing a shred did, how a set completed, its counters and duplicate blocks.

use thiserror::Error;

use crate::merkle::{Hash, MerkleError};
use crate::recovery::RecoveryError;

use super::key::SetKey;

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
