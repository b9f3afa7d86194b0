//! Turning CAR bytes into the model: a slot's contiguous byte range (format §1.4: every node of the
//! slot, ending with its Block section) into a [`Block`] with its transactions in block order, and
//! one Transaction section (plus its continuation frames) into a [`Transaction`].

use std::collections::HashMap;

use crate::car;
use crate::cid::Cid;
use crate::error::FormatError;
use crate::frame;
use crate::meta;
use crate::model::{Block, Transaction};
use crate::node::{self, BlockNode, EntryNode, Node, RewardsNode, TransactionNode};
use crate::txwire;

/// A slot range split into its nodes and decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedSlot {
    pub block: Block,
    /// CID of the Block node.
    pub block_cid: Cid,
    /// Number of entries.
    pub entry_count: usize,
}

/// Decodes the slot range `bytes` (starting at file offset `offset`). `previous_blockhash` is
/// left `None`: it lives in the parent's range and is the caller's to fill.
pub fn decode_slot_range(bytes: &[u8], offset: u64) -> Result<DecodedSlot, FormatError> {
    let mut nodes: HashMap<Cid, &[u8]> = HashMap::new();
    let mut last: Option<car::Section<'_>> = None;
    for section in car::sections(bytes, offset) {
        let section = section?;
        // Every node read is checked against its CID: damaged bytes are never served.
        if !section.cid.verifies(section.node) {
            return Err(FormatError::CidMismatch);
        }
        nodes.insert(section.cid, section.node);
        last = Some(section);
    }
    let last = last.ok_or(FormatError::Truncated("empty slot range"))?;
    let block = BlockNode::decode(last.node)?;
    let fetch = |cid: &Cid| nodes.get(cid).map(|n| n.to_vec());
    let mut transactions = Vec::new();
    let mut blockhash = None;
    for entry_cid in &block.entries {
        let entry_bytes = nodes
            .get(entry_cid)
            .ok_or_else(|| FormatError::Frames(format!("entry {entry_cid} not in slot range")))?;
        let entry = EntryNode::decode(entry_bytes)?;
        blockhash = Some(entry.hash);
        for tx_cid in &entry.transactions {
            let tx_bytes = nodes.get(tx_cid).ok_or_else(|| {
                FormatError::Frames(format!("transaction {tx_cid} not in slot range"))
            })?;
            let position = transactions.len() as u32;
            let tx = decode_transaction(tx_bytes, position, fetch)?;
            if tx.slot != block.slot {
                return Err(FormatError::Field("transaction slot differs from block"));
            }
            transactions.push(tx);
        }
    }
    let blockhash = blockhash.ok_or(FormatError::Field("block without entries"))?;
    let (rewards, num_partitions) = match &block.rewards {
        None => (Vec::new(), None),
        Some(cid) => {
            let bytes = nodes
                .get(cid)
                .ok_or_else(|| FormatError::Frames(format!("rewards {cid} not in slot range")))?;
            let node = RewardsNode::decode(bytes)?;
            let payload = frame::reassemble(&node.data, fetch)?;
            let rewards = meta::decode_rewards(&payload)?;
            (
                rewards.rewards,
                rewards.num_partitions.map(|p| p.num_partitions),
            )
        }
    };
    Ok(DecodedSlot {
        block_cid: last.cid,
        entry_count: block.entries.len(),
        block: Block {
            slot: block.slot,
            parent_slot: block.parent_slot,
            blockhash,
            previous_blockhash: None,
            block_time: (block.blocktime != 0).then_some(block.blocktime),
            block_height: block.block_height,
            rewards,
            num_partitions,
            transactions,
        },
    })
}

/// Decodes one Transaction node; `position` is used when the node has no `index`. `fetch`
/// supplies continuation frames of multi-frame payloads.
pub fn decode_transaction<F>(
    node_bytes: &[u8],
    position: u32,
    mut fetch: F,
) -> Result<Transaction, FormatError>
where
    F: FnMut(&Cid) -> Option<Vec<u8>>,
{
    let node = TransactionNode::decode(node_bytes)?;
    let wire = frame::reassemble(&node.data, &mut fetch)?.into_owned();
    let metadata = frame::reassemble(&node.metadata, &mut fetch)?;
    let meta = meta::decode_metadata(&metadata)?;
    let index = match node.index {
        Some(index) => u32::try_from(index).map_err(|_| FormatError::Field("index"))?,
        None => position,
    };
    Ok(Transaction {
        slot: node.slot,
        index,
        wire,
        meta,
    })
}

/// The first signature of a transaction's wire bytes.
pub fn signature_of(tx: &Transaction) -> Result<[u8; 64], FormatError> {
    txwire::first_signature(&tx.wire)
}

/// Checks that every section of `bytes` hashes to its CID.
pub fn verify_sections(bytes: &[u8], offset: u64) -> Result<usize, FormatError> {
    let mut count = 0;
    for section in car::sections(bytes, offset) {
        let section = section?;
        if !section.cid.verifies(section.node) {
            return Err(FormatError::CidMismatch);
        }
        node::peek_kind(section.node)?;
        count += 1;
    }
    Ok(count)
}

/// Decodes a whole node for inspection (all kinds).
pub fn decode_node(bytes: &[u8]) -> Result<Node<'_>, FormatError> {
    node::decode(bytes)
}
