//! The read contract between the archive and its consumers (JSON-RPC methods, insights backfill).
//! Implementations: epochs in a local directory or behind an HTTP base address. Calls are
//! synchronous and cheap with a warm page cache; callers on an async runtime may run them inline
//! for local files.

use crate::model::{Block, SignatureInfo, SignatureQuery, TransactionInBlock};

/// Why an archive read failed. One variant per reason (usable as a metric label).
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("i/o error reading {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("corrupt archive data in {what}: {reason}")]
    Corrupt { what: String, reason: String },
    #[error("index file missing: {path}")]
    MissingIndex { path: String },
    #[error("index does not match its CAR ({what}): {reason}")]
    IndexMismatch { what: String, reason: String },
}

impl ArchiveError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Io { .. } => "io",
            Self::Corrupt { .. } => "corrupt",
            Self::MissingIndex { .. } => "missing_index",
            Self::IndexMismatch { .. } => "index_mismatch",
        }
    }
}

/// Outcome of a lookup by slot.
#[derive(Debug, Clone, PartialEq)]
pub enum SlotLookup<T> {
    /// The slot is in a held epoch and produced a block.
    Found(T),
    /// The slot is in a held epoch but no block was produced (skipped).
    Skipped,
    /// The slot's epoch is not held here: ask the upstream validator.
    NotHeld,
}

/// Read access to archived epochs.
pub trait ArchiveStore: Send + Sync {
    /// Epoch numbers held, ascending.
    fn epochs(&self) -> Vec<u64>;
    /// The block produced in `slot`.
    fn block(&self, slot: u64) -> Result<SlotLookup<Block>, ArchiveError>;
    /// Block time of `slot` (`Found(None)` when the archive does not know it).
    fn block_time(&self, slot: u64) -> Result<SlotLookup<Option<i64>>, ArchiveError>;
    /// The transaction whose first signature is `signature`, searching held epochs newest first.
    fn transaction(&self, signature: &[u8; 64])
    -> Result<Option<TransactionInBlock>, ArchiveError>;
    /// Signatures of transactions that reference `address` (static keys and loaded addresses),
    /// newest first, paged by `query`.
    fn signatures_for_address(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<Vec<SignatureInfo>, ArchiveError>;
    /// The newest slot with a block in the held epochs (getSlot's answer).
    fn newest_slot(&self) -> Option<u64>;
}
