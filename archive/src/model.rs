//! What the archive hands to its readers: blocks and transactions as stored (wire bytes plus the
//! validator's status metadata), independent of the CAR/DAG-CBOR layout they were read from.
//! Rendering them as validator JSON is the JSON-RPC layer's job.

use crate::proto;

/// One produced block of an archived epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub slot: u64,
    pub parent_slot: u64,
    /// Hash of the block's last entry.
    pub blockhash: [u8; 32],
    /// The parent block's blockhash; `None` only when the parent lies in an epoch that is not held.
    pub previous_blockhash: Option<[u8; 32]>,
    /// Unix seconds; `None` when unknown (the archive stores 0 for unknown).
    pub block_time: Option<i64>,
    pub block_height: Option<u64>,
    /// Block rewards in stored order (the writer sorts them by pubkey).
    pub rewards: Vec<proto::Reward>,
    pub num_partitions: Option<u64>,
    /// Transactions in block order (entry order, then order inside each entry).
    pub transactions: Vec<Transaction>,
}

/// One transaction as stored: wire bytes plus status metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Transaction {
    pub slot: u64,
    /// 0-based position in its block.
    pub index: u32,
    /// The signed transaction exactly as sent on the wire (legacy or versioned).
    pub wire: Vec<u8>,
    /// `None` when the archive holds no metadata for it (epochs 0 to about 9).
    pub meta: Option<proto::TransactionStatusMeta>,
}

/// A transaction found by signature, with what getTransaction needs besides the transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct TransactionInBlock {
    pub transaction: Transaction,
    pub block_time: Option<i64>,
}

/// One row of getSignaturesForAddress, answerable without reading the CAR.
#[derive(Debug, Clone, PartialEq)]
pub struct SignatureInfo {
    pub signature: [u8; 64],
    pub slot: u64,
    /// Position of the transaction in its block (orders signatures inside a slot).
    pub index: u32,
    /// bincode `TransactionError` when the transaction failed.
    pub err: Option<Vec<u8>>,
    /// The memo as the validator renders it (`"[len] text; ..."`), when the transaction had one.
    pub memo: Option<String>,
    pub block_time: Option<i64>,
}

/// Paging of getSignaturesForAddress: newest first, starting below `before` (exclusive), stopping
/// at `until` (exclusive), at most `limit` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignatureQuery {
    pub before: Option<[u8; 64]>,
    pub until: Option<[u8; 64]>,
    pub limit: usize,
}
