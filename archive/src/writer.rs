//! A CAR writer producing the published layout (format §1.4): per block, post-order sections
//! (continuation frames, Transaction, Entry, ..., rewards frames, Rewards, Block), blocks in
//! increasing slot order, then Subset nodes of up to 24,000 blocks and, for a whole epoch, the
//! Epoch node; the header is written first with a placeholder root of the same size and patched
//! at the end. For tests and for operators who build epochs from their own validator's blocks.

use std::io::{Seek, SeekFrom, Write};

use prost::Message;

use crate::car;
use crate::cid::Cid;
use crate::error::FormatError;
use crate::frame;
use crate::meta::{self, StoredTransactionStatusMeta};
use crate::node::{BlockNode, EntryNode, EpochNode, RewardsNode, SubsetNode, TransactionNode};
use crate::proto;
use crate::varint;

/// Frame size limits and subset grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Largest inline first frame of a transaction payload or its metadata.
    pub first_frame_max: usize,
    /// Largest inline first frame of a rewards payload.
    pub rewards_first_frame_max: usize,
    /// Largest continuation frame.
    pub later_frame_max: usize,
    /// Blocks per Subset node.
    pub blocks_per_subset: usize,
}

impl Default for WriterOptions {
    /// The reference writer's constants since August 2025 (32 MiB objects).
    fn default() -> Self {
        const MAX_OBJECT: usize = 32 << 20;
        WriterOptions {
            first_frame_max: (MAX_OBJECT - 400) / 2,
            rewards_first_frame_max: MAX_OBJECT - 563,
            later_frame_max: MAX_OBJECT - 300,
            blocks_per_subset: 24_000,
        }
    }
}

/// Metadata of one transaction, in the encoding to store.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaInput {
    /// Empty metadata (epochs 0 to about 9).
    None,
    /// Protobuf `TransactionStatusMeta`, zstd-compressed.
    Protobuf(proto::TransactionStatusMeta),
    /// Legacy bincode `StoredTransactionStatusMeta`, zstd-compressed.
    LegacyBincode(StoredTransactionStatusMeta),
}

/// One transaction to write.
#[derive(Debug, Clone, PartialEq)]
pub struct TxInput {
    /// Signed wire bytes (legacy or versioned).
    pub wire: Vec<u8>,
    pub meta: MetaInput,
}

/// One PoH entry to write.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryInput {
    pub num_hashes: u64,
    pub hash: [u8; 32],
    pub transactions: Vec<TxInput>,
}

/// One block to write.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockInput {
    pub slot: u64,
    pub parent_slot: u64,
    /// Unix seconds, 0 = unknown.
    pub block_time: i64,
    pub block_height: Option<u64>,
    pub entries: Vec<EntryInput>,
    /// Block rewards (`None` or empty: no Rewards node). Stored sorted by pubkey.
    pub rewards: Option<proto::Rewards>,
}

/// What the CAR's root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    /// A whole epoch: Subsets, then the Epoch node as root.
    Epoch(u64),
    /// A split piece: Subsets, and one more Subset over all blocks as root.
    Piece,
}

/// Where a block landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenBlock {
    pub slot: u64,
    pub cid: Cid,
    /// Offset and size of the Block section.
    pub offset: u64,
    pub size: u64,
    /// Start of the slot's range (first section written for the block).
    pub range_start: u64,
}

/// Why writing failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("block {slot} is not after the previous block {previous}")]
    OutOfOrder { slot: u64, previous: u64 },
    #[error("no blocks written")]
    Empty,
}

impl WriteError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Io(_) => "io",
            Self::Format(_) => "format",
            Self::OutOfOrder { .. } => "out_of_order",
            Self::Empty => "empty",
        }
    }
}

/// Writes one CAR.
pub struct CarWriter<W: Write + Seek> {
    out: W,
    pos: u64,
    options: WriterOptions,
    root: RootKind,
    blocks: Vec<(u64, Cid)>,
    scratch: Vec<u8>,
}

impl<W: Write + Seek> CarWriter<W> {
    /// Starts a CAR (writes the header with a placeholder root).
    pub fn new(mut out: W, root: RootKind, options: WriterOptions) -> Result<Self, WriteError> {
        let header = car::encode_header(&Cid::for_node(b""))?;
        out.write_all(&header)?;
        Ok(CarWriter {
            out,
            pos: header.len() as u64,
            options,
            root,
            blocks: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    fn section(&mut self, cid: &Cid, node: &[u8]) -> Result<(u64, u64), WriteError> {
        let offset = self.pos;
        self.scratch.clear();
        varint::encode(
            (cid.as_bytes().len() + node.len()) as u64,
            &mut self.scratch,
        );
        self.scratch.extend_from_slice(cid.as_bytes());
        self.out.write_all(&self.scratch)?;
        self.out.write_all(node)?;
        let size = (self.scratch.len() + node.len()) as u64;
        self.pos += size;
        Ok((offset, size))
    }

    fn node(&mut self, node: &[u8]) -> Result<(Cid, u64, u64), WriteError> {
        let cid = Cid::for_node(node);
        let (offset, size) = self.section(&cid, node)?;
        Ok((cid, offset, size))
    }

    fn continuation(&mut self, frames: &[(Cid, Vec<u8>)]) -> Result<(), WriteError> {
        for (cid, bytes) in frames {
            self.section(cid, bytes)?;
        }
        Ok(())
    }

    /// Appends one block (slots must increase).
    pub fn write_block(&mut self, block: &BlockInput) -> Result<WrittenBlock, WriteError> {
        if let Some(&(previous, _)) = self.blocks.last()
            && block.slot <= previous
        {
            return Err(WriteError::OutOfOrder {
                slot: block.slot,
                previous,
            });
        }
        let range_start = self.pos;
        let mut entry_cids = Vec::with_capacity(block.entries.len());
        let mut position: u64 = 0;
        for entry in &block.entries {
            let mut tx_cids = Vec::with_capacity(entry.transactions.len());
            for tx in &entry.transactions {
                let meta_payload = encode_meta(&tx.meta)?;
                let data = frame::split(
                    &tx.wire,
                    self.options.first_frame_max,
                    self.options.later_frame_max,
                )?;
                let metadata = frame::split(
                    &meta_payload,
                    self.options.first_frame_max,
                    self.options.later_frame_max,
                )?;
                self.continuation(&data.continuation)?;
                self.continuation(&metadata.continuation)?;
                let node = TransactionNode {
                    data: data.first,
                    metadata: metadata.first,
                    slot: block.slot,
                    index: Some(position),
                }
                .encode()?;
                tx_cids.push(self.node(&node)?.0);
                position += 1;
            }
            let node = EntryNode {
                num_hashes: entry.num_hashes,
                hash: entry.hash,
                transactions: tx_cids,
            }
            .encode()?;
            entry_cids.push(self.node(&node)?.0);
        }
        let rewards_cid = match &block.rewards {
            Some(rewards) if !rewards.rewards.is_empty() || rewards.num_partitions.is_some() => {
                let mut sorted = rewards.clone();
                sorted.rewards.sort_by(|a, b| a.pubkey.cmp(&b.pubkey));
                let payload = meta::compress(&sorted.encode_to_vec())?;
                let split = frame::split(
                    &payload,
                    self.options.rewards_first_frame_max,
                    self.options.later_frame_max,
                )?;
                self.continuation(&split.continuation)?;
                let node = RewardsNode {
                    slot: block.slot,
                    data: split.first,
                }
                .encode()?;
                Some(self.node(&node)?.0)
            }
            _ => None,
        };
        let count = entry_cids.len();
        let shredding = (0..count)
            .map(|i| (i as i64, if i + 1 == count { i as i64 } else { -1 }))
            .collect();
        let node = BlockNode {
            slot: block.slot,
            shredding,
            entries: entry_cids,
            parent_slot: block.parent_slot,
            blocktime: block.block_time,
            block_height: block.block_height,
            rewards: rewards_cid,
        }
        .encode()?;
        let (cid, offset, size) = self.node(&node)?;
        self.blocks.push((block.slot, cid));
        Ok(WrittenBlock {
            slot: block.slot,
            cid,
            offset,
            size,
            range_start,
        })
    }

    /// Writes the Subset (and Epoch) nodes, patches the header root and returns the root CID and
    /// the writer.
    pub fn finish(mut self) -> Result<(Cid, W), WriteError> {
        if self.blocks.is_empty() {
            return Err(WriteError::Empty);
        }
        let groups: Vec<Vec<(u64, Cid)>> = self
            .blocks
            .chunks(self.options.blocks_per_subset.max(1))
            .map(<[_]>::to_vec)
            .collect();
        let mut subsets = Vec::with_capacity(groups.len());
        for group in &groups {
            subsets.push(self.write_subset(group)?);
        }
        let root = match self.root {
            RootKind::Epoch(epoch) => {
                let node = EpochNode { epoch, subsets }.encode()?;
                self.node(&node)?.0
            }
            RootKind::Piece if subsets.len() == 1 => subsets[0],
            RootKind::Piece => {
                let all = self.blocks.clone();
                self.write_subset(&all)?
            }
        };
        self.out.flush()?;
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&car::encode_header(&root)?)?;
        self.out.flush()?;
        Ok((root, self.out))
    }

    fn write_subset(&mut self, group: &[(u64, Cid)]) -> Result<Cid, WriteError> {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            return Err(WriteError::Empty);
        };
        let node = SubsetNode {
            first: first.0,
            last: last.0,
            blocks: group.iter().map(|(_, cid)| *cid).collect(),
        }
        .encode()?;
        Ok(self.node(&node)?.0)
    }
}

fn encode_meta(meta: &MetaInput) -> Result<Vec<u8>, FormatError> {
    match meta {
        MetaInput::None => Ok(Vec::new()),
        MetaInput::Protobuf(meta) => meta::compress(&meta.encode_to_vec()),
        MetaInput::LegacyBincode(meta) => meta::compress(&meta::encode_legacy_meta(meta)),
    }
}
