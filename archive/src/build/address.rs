//! The address-index thread of the pass: each block's transactions arrive over a bounded channel,
//! their metadata is decoded (error, loaded addresses) and the block is added to the builder.

use std::path::Path;

use super::IndexBuildError;
use crate::index::addr::{AddressIndexBuilder, TxRecord};
use crate::meta;

/// Blocks queued between the pass and the address-index thread (each holds its transactions'
/// compressed metadata: a few hundred KB at most for ordinary blocks).
pub(super) const ADDRESS_QUEUE_BLOCKS: usize = 64;

/// One transaction as the pass hands it to the address-index thread: what the wire bytes gave,
/// and the reassembled (still compressed) metadata payload.
pub(super) struct PendingTx {
    pub(super) signature: [u8; 64],
    pub(super) slot: u64,
    pub(super) index: u32,
    pub(super) memo: Option<String>,
    pub(super) static_keys: Vec<[u8; 32]>,
    pub(super) metadata: Vec<u8>,
}

/// One block's transactions, in block order.
pub(super) struct AddressBatch {
    pub(super) block_time: i64,
    pub(super) txs: Vec<PendingTx>,
}

/// The address-index thread: decodes each transaction's metadata (error, loaded addresses) and
/// adds the block to the builder; returns the builder when the pass closes the channel.
pub(super) fn feed_addresses(
    mut builder: AddressIndexBuilder,
    queue: std::sync::mpsc::Receiver<AddressBatch>,
    path: &Path,
) -> Result<AddressIndexBuilder, IndexBuildError> {
    let format_err = |source| IndexBuildError::Format {
        path: path.to_path_buf(),
        source,
    };
    let mut records: Vec<TxRecord> = Vec::new();
    for batch in queue {
        records.clear();
        for tx in batch.txs {
            let status = meta::decode_index_fields(&tx.metadata).map_err(format_err)?;
            let mut addresses = tx.static_keys;
            let mut err = None;
            if let Some(status) = status {
                for key in status
                    .loaded_writable_addresses
                    .iter()
                    .chain(&status.loaded_readonly_addresses)
                {
                    if let Ok(key) = <[u8; 32]>::try_from(key.as_slice()) {
                        addresses.push(key);
                    }
                }
                err = status.err.map(|e| e.err);
            }
            records.push(TxRecord {
                signature: tx.signature,
                slot: tx.slot,
                index: tx.index,
                err,
                memo: tx.memo,
                addresses,
            });
        }
        builder
            .add_block(batch.block_time, &records)
            .map_err(|source| IndexBuildError::Build {
                path: path.to_path_buf(),
                source,
            })?;
    }
    Ok(builder)
}
