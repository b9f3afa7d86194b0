//! The read contract between the archive and its consumers (JSON-RPC methods, insights backfill).
//! Implementations: epochs in a local directory or behind an HTTP base address. Calls are
//! synchronous and cheap with a warm page cache; callers on an async runtime may run them inline
//! for local files.

use crate::model::{Block, SignatureInfo, SignatureQuery, TransactionInBlock};

/// A getSignaturesForAddress page that may stop short at an epoch held without an address index.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SignaturePage {
    /// Rows, newest first: exact up to where the walk stopped.
    pub rows: Vec<SignatureInfo>,
    /// The walk needed this epoch (newest such) before `limit` was reached, but it is held
    /// without an address index: older rows are not known here (ask the upstream).
    pub unindexed_epoch: Option<u64>,
}

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
    /// getSignaturesForAddress reached an epoch held without our address index (a source that
    /// publishes only the public files).
    #[error("epoch {epoch} is held without an address index")]
    NoAddressIndex { epoch: u64 },
}

impl ArchiveError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Io { .. } => "io",
            Self::Corrupt { .. } => "corrupt",
            Self::MissingIndex { .. } => "missing_index",
            Self::IndexMismatch { .. } => "index_mismatch",
            Self::NoAddressIndex { .. } => "no_address_index",
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
    /// Like [`ArchiveStore::signatures_for_address`], but a walk that reaches an epoch held
    /// without an address index returns the rows found before it and names the epoch instead of
    /// failing ([`ArchiveError::NoAddressIndex`]).
    fn signatures_page(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<SignaturePage, ArchiveError> {
        match self.signatures_for_address(address, query) {
            Ok(rows) => Ok(SignaturePage {
                rows,
                unindexed_epoch: None,
            }),
            Err(ArchiveError::NoAddressIndex { epoch }) => Ok(SignaturePage {
                rows: Vec::new(),
                unindexed_epoch: Some(epoch),
            }),
            Err(e) => Err(e),
        }
    }
    /// The newest slot with a block in the held epochs (getSlot's answer).
    fn newest_slot(&self) -> Option<u64>;
}
