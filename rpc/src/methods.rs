//! The five archive methods answered from an [`ArchiveStore`] (docs/archive-rpc.md §4, §5, §8,
//! §9): each returns the result's JSON text, an error, or "ask the upstream validator" when the
//! slot or signature is not held here. getSignaturesForAddress's merge with the upstream lives in
//! `service`; this module answers the archive half.

use archive::{ArchiveError, ArchiveStore, SignatureInfo, SignatureQuery, SlotLookup};
use serde::Serialize;

use super::encode::{
    self, Base58, EncodedTransaction, EncodedWithMeta, UiMeta, UiReward, Version, b58,
};
use super::error::RpcError;
use super::params::{self, GetBlock, GetSignaturesForAddress, GetTransaction, TransactionDetails};
use super::parsed::AccountKeys;
use super::tx_error::{self, TxError};

/// What a local method decided.
#[derive(Debug)]
pub enum Outcome {
    /// The `result` member's JSON text.
    Result(Vec<u8>),
    Error(RpcError),
    /// Not held here: forward the call to the upstream validator (or answer the "not
    /// available" form when there is none).
    Upstream(NotHere),
}

/// What to answer for a call that is not held here when no upstream is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotHere {
    /// getBlock/getBlockTime: -32004 for this slot.
    Slot(u64),
    /// getTransaction: `null`.
    Transaction,
    /// getSlot with no epoch held.
    Archive,
}

impl NotHere {
    pub fn answer(self) -> Outcome {
        match self {
            Self::Slot(slot) => Outcome::Error(RpcError::block_not_available(slot)),
            Self::Transaction => Outcome::Result(b"null".to_vec()),
            Self::Archive => Outcome::Error(RpcError::new(
                super::error::BLOCK_NOT_AVAILABLE,
                "Block not available: the archive holds no epochs",
            )),
        }
    }
}

/// Settings of the methods that are not request parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSettings {
    /// Block time reported for slot 0 (the validator reports the genesis creation time).
    pub genesis_creation_time: i64,
}

impl Default for MethodSettings {
    fn default() -> Self {
        Self {
            genesis_creation_time: MAINNET_GENESIS_CREATION_TIME,
        }
    }
}

/// Mainnet's genesis creation time (Unix seconds).
pub const MAINNET_GENESIS_CREATION_TIME: i64 = 1_584_368_940;

fn to_json(value: &impl Serialize) -> Outcome {
    match serde_json::to_vec(value) {
        Ok(bytes) => Outcome::Result(bytes),
        Err(error) => {
            tracing::error!(%error, "result did not serialize");
            Outcome::Error(RpcError::internal())
        }
    }
}

/// A store failure: logged (once per message: file and offset), counted by the caller,
/// answered -32019 — never a wrong or empty answer.
fn storage_error(error: &ArchiveError) -> Outcome {
    crate::damage_log::log_archive_failure(error);
    Outcome::Error(RpcError::storage_unreachable())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TransactionResult<'a> {
    block_time: Option<i64>,
    meta: Option<UiMeta<'a>>,
    slot: u64,
    transaction: EncodedTransaction<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<Version>,
}

pub fn get_transaction(store: &dyn ArchiveStore, request: &GetTransaction) -> Outcome {
    let found = match store.transaction(&request.signature) {
        Ok(Some(found)) => found,
        Ok(None) => return Outcome::Upstream(NotHere::Transaction),
        Err(error) => return storage_error(&error),
    };
    let encoded = match encode::encode_with_meta(&found.transaction, &request.options, true) {
        Ok(encoded) => encoded,
        Err(error) => return Outcome::Error(error),
    };
    to_json(&TransactionResult {
        block_time: found.block_time,
        meta: encoded.meta,
        slot: found.transaction.slot,
        transaction: encoded.transaction,
        version: encoded.version,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BlockResult<'a> {
    block_height: Option<u64>,
    block_time: Option<i64>,
    blockhash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    num_reward_partitions: Option<u64>,
    parent_slot: u64,
    previous_blockhash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    rewards: Option<Vec<UiReward<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signatures: Option<Vec<Base58<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    transactions: Option<Vec<EncodedWithMeta<'a>>>,
}

/// The archived block of a slot, found or not.
pub enum BlockLookup {
    Found(Box<archive::Block>),
    Answer(Outcome),
}

pub fn find_block(store: &dyn ArchiveStore, slot: u64) -> BlockLookup {
    match store.block(slot) {
        Ok(SlotLookup::Found(block)) => BlockLookup::Found(Box::new(block)),
        Ok(SlotLookup::Skipped) => {
            BlockLookup::Answer(Outcome::Error(RpcError::slot_skipped(slot)))
        }
        Ok(SlotLookup::NotHeld) => BlockLookup::Answer(Outcome::Upstream(NotHere::Slot(slot))),
        Err(error) => BlockLookup::Answer(storage_error(&error)),
    }
}

/// Renders a found block. `previous_blockhash` replaces the block's own when it was unknown (the
/// parent lies in an epoch not held; the caller may have asked the upstream).
pub fn render_block(
    block: &archive::Block,
    request: &GetBlock,
    settings: &MethodSettings,
    previous_blockhash: Option<[u8; 32]>,
) -> Outcome {
    let options = &request.options;
    let (transactions, signatures) = match options.details {
        TransactionDetails::Full | TransactionDetails::Accounts => {
            let encoded: Result<Vec<_>, _> = block
                .transactions
                .iter()
                .map(|tx| encode::encode_with_meta(tx, options, options.rewards))
                .collect();
            match encoded {
                Ok(encoded) => (Some(encoded), None),
                Err(error) => return Outcome::Error(error),
            }
        }
        TransactionDetails::Signatures => {
            let signatures: Result<Vec<_>, _> = block
                .transactions
                .iter()
                .map(|tx| encode::parse_wire(&tx.wire).map(|view| Base58(view.first_signature())))
                .collect();
            match signatures {
                Ok(signatures) => (None, Some(signatures)),
                Err(error) => return Outcome::Error(error),
            }
        }
        TransactionDetails::None => (None, None),
    };
    let genesis = block.slot == 0;
    let previous = block
        .previous_blockhash
        .or(previous_blockhash)
        .unwrap_or(if genesis { block.blockhash } else { [0; 32] });
    to_json(&BlockResult {
        block_height: if genesis { Some(0) } else { block.block_height },
        block_time: if genesis {
            Some(settings.genesis_creation_time)
        } else {
            block.block_time
        },
        blockhash: b58(&block.blockhash),
        num_reward_partitions: block.num_partitions,
        parent_slot: block.parent_slot,
        previous_blockhash: b58(&previous),
        rewards: options.rewards.then(|| encode::rewards(&block.rewards)),
        signatures,
        transactions,
    })
}

pub fn get_block_time(store: &dyn ArchiveStore, slot: u64, settings: &MethodSettings) -> Outcome {
    match store.block_time(slot) {
        Ok(SlotLookup::Found(_)) if slot == 0 => to_json(&settings.genesis_creation_time),
        Ok(SlotLookup::Found(time)) => to_json(&time),
        Ok(SlotLookup::Skipped) => Outcome::Error(RpcError::slot_skipped(slot)),
        Ok(SlotLookup::NotHeld) => Outcome::Upstream(NotHere::Slot(slot)),
        Err(error) => storage_error(&error),
    }
}

pub fn get_slot(store: &dyn ArchiveStore, request: &params::GetSlot) -> Outcome {
    match store.newest_slot() {
        Some(slot) => match request.min_context_slot {
            Some(min) if slot < min => Outcome::Error(RpcError::min_context_slot_not_reached(slot)),
            _ => to_json(&slot),
        },
        None => Outcome::Upstream(NotHere::Archive),
    }
}

/// One row of getSignaturesForAddress from the archive.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureRow {
    pub block_time: Option<i64>,
    pub confirmation_status: &'static str,
    pub err: Option<TxError>,
    pub memo: Option<String>,
    pub signature: String,
    pub slot: u64,
}

impl SignatureRow {
    pub fn new(info: &SignatureInfo) -> Self {
        Self {
            block_time: info.block_time,
            confirmation_status: "finalized",
            err: info.err.as_deref().map(|bytes| {
                tx_error::decode(bytes).unwrap_or_else(|error| {
                    tracing::warn!(%error, "stored transaction error does not decode");
                    TxError::Unknown(u32::MAX)
                })
            }),
            memo: info.memo.clone(),
            signature: b58(&info.signature),
            slot: info.slot,
        }
    }
}

/// Sysvar addresses are not in the long-term address index: archived history has nothing.
pub fn is_sysvar(address: &[u8; 32]) -> bool {
    b58(address).starts_with("Sysvar")
}

/// Archive rows for `address`, newest first, paged by `query`.
#[derive(Debug, Default)]
pub struct ArchiveRows {
    /// Exact up to where the archive's walk stopped.
    pub rows: Vec<SignatureRow>,
    /// The walk reached this epoch, held without an address index, before `limit` was reached:
    /// older rows are the upstream's to give (or not available).
    pub unindexed_epoch: Option<u64>,
}

/// Archive rows for `address`, newest first, paged by `query` (see [`ArchiveRows`]).
pub fn archive_signatures(
    store: &dyn ArchiveStore,
    address: &[u8; 32],
    query: &SignatureQuery,
) -> Result<ArchiveRows, ArchiveError> {
    if is_sysvar(address) {
        return Ok(ArchiveRows::default());
    }
    let page = store.signatures_page(address, query)?;
    Ok(ArchiveRows {
        rows: page.rows.iter().map(SignatureRow::new).collect(),
        unindexed_epoch: page.unindexed_epoch,
    })
}

/// getSignaturesForAddress without an upstream: the archive alone. A walk that reaches an epoch
/// held without an address index (a public-files-only source) answers -32011: the rows before
/// it would pass for the complete history.
pub fn get_signatures_for_address(
    store: &dyn ArchiveStore,
    request: &GetSignaturesForAddress,
) -> Outcome {
    if let (Some(min), Some(newest)) = (request.min_context_slot, store.newest_slot())
        && newest < min
    {
        return Outcome::Error(RpcError::min_context_slot_not_reached(newest));
    }
    let query = SignatureQuery {
        before: request.before,
        until: request.until,
        limit: request.limit,
    };
    match archive_signatures(store, &request.address, &query) {
        Ok(ArchiveRows {
            unindexed_epoch: Some(epoch),
            ..
        }) => {
            tracing::debug!(
                epoch,
                "getSignaturesForAddress reached an epoch without asig"
            );
            Outcome::Error(RpcError::transaction_history_not_available())
        }
        Ok(found) => to_json(&found.rows),
        Err(error) => storage_error(&error),
    }
}

/// The first signature of a stored transaction, for matching.
pub fn first_signature(transaction: &archive::Transaction) -> Option<[u8; 64]> {
    encode::parse_wire(&transaction.wire)
        .ok()
        .map(|view| *view.first_signature())
}

/// Account keys helper re-exported for the memory store's address index.
pub fn account_keys_of(transaction: &archive::Transaction) -> Vec<[u8; 32]> {
    let Ok(view) = encode::parse_wire(&transaction.wire) else {
        return Vec::new();
    };
    let empty: &[Vec<u8>] = &[];
    let (writable, readonly) = match &transaction.meta {
        Some(meta) => (
            meta.loaded_writable_addresses.as_slice(),
            meta.loaded_readonly_addresses.as_slice(),
        ),
        None => (empty, empty),
    };
    let keys = AccountKeys::new(&view, writable, readonly);
    (0..keys.len())
        .filter_map(|index| keys.get(index)?.try_into().ok())
        .collect()
}
