//! The seven DAG-CBOR node kinds of an epoch CAR (format §2), decoded with `minicbor` in their
//! tuple representation (fields by position, optional trailing fields may be missing, nullable
//! fields may be `null`, integers of any width and sign), and encoded the same way for the CAR
//! writer.

mod encode;
mod fields;

use minicbor::Decoder;

use crate::cid::Cid;
use crate::error::FormatError;
use fields::{
    Fields, array_len, bits64, hash32, link, links, nullable, shredding, slot_meta, uint,
};

/// Node kinds (the first array element).
pub mod kind {
    pub const TRANSACTION: u64 = 0;
    pub const ENTRY: u64 = 1;
    pub const BLOCK: u64 = 2;
    pub const SUBSET: u64 = 3;
    pub const EPOCH: u64 = 4;
    pub const REWARDS: u64 = 5;
    pub const DATA_FRAME: u64 = 6;
}

/// CBOR tag of an IPLD link.
const TAG_LINK: u64 = 42;
/// Bound on pre-allocation from declared list lengths (lists still may be longer).
const PREALLOC_MAX: usize = 1024;

/// One chunk of a payload; the first chunk lives inline in its Transaction or Rewards node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataFrame<'a> {
    /// Checksum of the whole reassembled payload (multi-frame payloads only), as u64 bits.
    pub hash: Option<u64>,
    pub index: Option<u64>,
    pub total: Option<u64>,
    pub data: &'a [u8],
    pub next: Vec<Cid>,
}

/// Kind 0: one transaction with its wire bytes and metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionNode<'a> {
    pub data: DataFrame<'a>,
    pub metadata: DataFrame<'a>,
    pub slot: u64,
    /// Position in the block, when the CAR records it.
    pub index: Option<u64>,
}

/// Kind 1: one PoH entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryNode {
    pub num_hashes: u64,
    pub hash: [u8; 32],
    pub transactions: Vec<Cid>,
}

/// Kind 2: one produced block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockNode {
    pub slot: u64,
    /// `(entry_end_idx, shred_end_idx)`; `-1` = no shred boundary.
    pub shredding: Vec<(i64, i64)>,
    pub entries: Vec<Cid>,
    pub parent_slot: u64,
    /// Unix seconds; 0 = unknown.
    pub blocktime: i64,
    pub block_height: Option<u64>,
    /// The Rewards node; `None` for the placeholder (no rewards).
    pub rewards: Option<Cid>,
}

/// Kind 3: a group of consecutive blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsetNode {
    pub first: u64,
    pub last: u64,
    pub blocks: Vec<Cid>,
}

/// Kind 4: the epoch (root of a whole-epoch CAR).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochNode {
    pub epoch: u64,
    pub subsets: Vec<Cid>,
}

/// Kind 5: a block's rewards payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewardsNode<'a> {
    pub slot: u64,
    pub data: DataFrame<'a>,
}

/// Any node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node<'a> {
    Transaction(TransactionNode<'a>),
    Entry(EntryNode),
    Block(BlockNode),
    Subset(SubsetNode),
    Epoch(EpochNode),
    Rewards(RewardsNode<'a>),
    DataFrame(DataFrame<'a>),
}

impl Node<'_> {
    /// The kind number.
    pub fn kind(&self) -> u64 {
        match self {
            Node::Transaction(_) => kind::TRANSACTION,
            Node::Entry(_) => kind::ENTRY,
            Node::Block(_) => kind::BLOCK,
            Node::Subset(_) => kind::SUBSET,
            Node::Epoch(_) => kind::EPOCH,
            Node::Rewards(_) => kind::REWARDS,
            Node::DataFrame(_) => kind::DATA_FRAME,
        }
    }
}

/// The kind of an encoded node, read from its array header and first element.
pub fn peek_kind(bytes: &[u8]) -> Result<u64, FormatError> {
    let mut d = Decoder::new(bytes);
    array_len(&mut d)?;
    uint(&mut d, "kind")
}

/// Decodes any node.
pub fn decode(bytes: &[u8]) -> Result<Node<'_>, FormatError> {
    let mut d = Decoder::new(bytes);
    let len = array_len(&mut d)?;
    let node_kind = uint(&mut d, "kind")?;
    let mut fields = Fields { d, len, read: 1 };
    let node = match node_kind {
        kind::TRANSACTION => Node::Transaction(TransactionNode::decode_fields(&mut fields)?),
        kind::ENTRY => Node::Entry(EntryNode::decode_fields(&mut fields)?),
        kind::BLOCK => Node::Block(BlockNode::decode_fields(&mut fields)?),
        kind::SUBSET => Node::Subset(SubsetNode::decode_fields(&mut fields)?),
        kind::EPOCH => Node::Epoch(EpochNode::decode_fields(&mut fields)?),
        kind::REWARDS => Node::Rewards(RewardsNode::decode_fields(&mut fields)?),
        kind::DATA_FRAME => Node::DataFrame(DataFrame::decode_fields(&mut fields)?),
        other => return Err(FormatError::UnknownKind(other)),
    };
    Ok(node)
}

macro_rules! typed_decode {
    ($ty:ty, $kind:expr, $name:literal) => {
        impl $ty {
            /// Decodes a node that must be of this kind.
            pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
                let mut d = Decoder::new(bytes);
                let len = array_len(&mut d)?;
                let found = uint(&mut d, "kind")?;
                if found != $kind {
                    return Err(FormatError::UnexpectedKind {
                        expected: $name,
                        found,
                    });
                }
                Self::decode_fields(&mut Fields { d, len, read: 1 })
            }
        }
    };
}

typed_decode!(EntryNode, kind::ENTRY, "Entry");
typed_decode!(BlockNode, kind::BLOCK, "Block");
typed_decode!(SubsetNode, kind::SUBSET, "Subset");
typed_decode!(EpochNode, kind::EPOCH, "Epoch");

impl<'a> TransactionNode<'a> {
    /// Decodes a node that must be a Transaction.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let mut d = Decoder::new(bytes);
        let len = array_len(&mut d)?;
        let found = uint(&mut d, "kind")?;
        if found != kind::TRANSACTION {
            return Err(FormatError::UnexpectedKind {
                expected: "Transaction",
                found,
            });
        }
        Self::decode_fields(&mut Fields { d, len, read: 1 })
    }

    fn decode_fields(f: &mut Fields<'a>) -> Result<Self, FormatError> {
        let data = f.required("transaction data", DataFrame::decode_inline)?;
        let metadata = f.required("transaction metadata", DataFrame::decode_inline)?;
        let slot = f.required("transaction slot", |d| uint(d, "slot"))?;
        let index = f.optional(|d| nullable(d, |d| uint(d, "index")))?.flatten();
        Ok(TransactionNode {
            data,
            metadata,
            slot,
            index,
        })
    }
}

impl<'a> RewardsNode<'a> {
    /// Decodes a node that must be a Rewards node.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let mut d = Decoder::new(bytes);
        let len = array_len(&mut d)?;
        let found = uint(&mut d, "kind")?;
        if found != kind::REWARDS {
            return Err(FormatError::UnexpectedKind {
                expected: "Rewards",
                found,
            });
        }
        Self::decode_fields(&mut Fields { d, len, read: 1 })
    }

    fn decode_fields(f: &mut Fields<'a>) -> Result<Self, FormatError> {
        let slot = f.required("rewards slot", |d| uint(d, "slot"))?;
        let data = f.required("rewards data", DataFrame::decode_inline)?;
        Ok(RewardsNode { slot, data })
    }
}

impl<'a> DataFrame<'a> {
    /// Decodes a standalone DataFrame node.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let mut d = Decoder::new(bytes);
        Self::decode_inline(&mut d)
    }

    /// Decodes a DataFrame array at the decoder's position (inline in a parent node).
    fn decode_inline(d: &mut Decoder<'a>) -> Result<Self, FormatError> {
        let len = array_len(d)?;
        let found = uint(d, "kind")?;
        if found != kind::DATA_FRAME {
            return Err(FormatError::UnexpectedKind {
                expected: "DataFrame",
                found,
            });
        }
        let mut f = Fields {
            d: d.clone(),
            len,
            read: 1,
        };
        let frame = Self::decode_fields(&mut f)?;
        f.skip_rest()?;
        d.set_position(f.d.position());
        Ok(frame)
    }

    fn decode_fields(f: &mut Fields<'a>) -> Result<Self, FormatError> {
        let hash = f.required("frame hash", |d| nullable(d, bits64))?;
        let index = f.required("frame index", |d| nullable(d, |d| uint(d, "frame index")))?;
        let total = f.required("frame total", |d| nullable(d, |d| uint(d, "frame total")))?;
        let data = f.required("frame data", |d| Ok(d.bytes()?))?;
        let next = f
            .optional(|d| nullable(d, links))?
            .flatten()
            .unwrap_or_default();
        Ok(DataFrame {
            hash,
            index,
            total,
            data,
            next,
        })
    }
}

impl EntryNode {
    fn decode_fields(f: &mut Fields<'_>) -> Result<Self, FormatError> {
        let num_hashes = f.required("entry numHashes", |d| uint(d, "numHashes"))?;
        let hash = f.required("entry hash", hash32)?;
        let transactions = f.required("entry transactions", links)?;
        Ok(EntryNode {
            num_hashes,
            hash,
            transactions,
        })
    }

    /// Reads only the PoH hash of an encoded Entry (the index builder's fast path).
    pub fn decode_hash(bytes: &[u8]) -> Result<[u8; 32], FormatError> {
        let mut d = Decoder::new(bytes);
        let len = array_len(&mut d)?;
        let found = uint(&mut d, "kind")?;
        if found != kind::ENTRY || len < 3 {
            return Err(FormatError::UnexpectedKind {
                expected: "Entry",
                found,
            });
        }
        uint(&mut d, "numHashes")?;
        hash32(&mut d)
    }
}

impl BlockNode {
    fn decode_fields(f: &mut Fields<'_>) -> Result<Self, FormatError> {
        let slot = f.required("block slot", |d| uint(d, "slot"))?;
        let shredding = f.required("block shredding", shredding)?;
        let entries = f.required("block entries", links)?;
        let (parent_slot, blocktime, block_height) = f.required("block meta", slot_meta)?;
        let rewards = f
            .optional(|d| nullable(d, link))?
            .flatten()
            .filter(|cid| !cid.is_placeholder());
        Ok(BlockNode {
            slot,
            shredding,
            entries,
            parent_slot,
            blocktime,
            block_height,
            rewards,
        })
    }
}

impl SubsetNode {
    fn decode_fields(f: &mut Fields<'_>) -> Result<Self, FormatError> {
        let first = f.required("subset first", |d| uint(d, "first"))?;
        let last = f.required("subset last", |d| uint(d, "last"))?;
        let blocks = f.required("subset blocks", links)?;
        Ok(SubsetNode {
            first,
            last,
            blocks,
        })
    }
}

impl EpochNode {
    fn decode_fields(f: &mut Fields<'_>) -> Result<Self, FormatError> {
        let epoch = f.required("epoch number", |d| uint(d, "epoch"))?;
        let subsets = f.required("epoch subsets", links)?;
        Ok(EpochNode { epoch, subsets })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn negative_and_null_fields_decode() {
        // [6, -2, 0, 2, h'0102', [link]] written by hand (CBOR diagnostic per RFC 8949).
        let mut bytes = vec![0x86, 0x06, 0x21, 0x00, 0x02, 0x42, 0x01, 0x02, 0x81];
        bytes.extend_from_slice(&[0xd8, 0x2a, 0x45, 0x00, 0x01, 0x55, 0x00, 0x00]);
        let frame = DataFrame::decode(&bytes).unwrap();
        assert_eq!(frame.hash, Some(u64::MAX - 1)); // -2 as two's complement bits
        assert_eq!(frame.index, Some(0));
        assert_eq!(frame.total, Some(2));
        assert_eq!(frame.data, &[1, 2]);
        assert!(frame.next[0].is_placeholder());
        // [6, null, null, null, h''] and the same with a missing optional `next`.
        let single = [0x85, 0x06, 0xf6, 0xf6, 0xf6, 0x40];
        let frame = DataFrame::decode(&single).unwrap();
        assert_eq!(frame, DataFrame::default());
    }

    #[test]
    fn block_meta_may_lack_height() {
        // [2, 5, [], [], [4, 0], link(bafkqaaa)]
        let bytes = [
            0x86, 0x02, 0x05, 0x80, 0x80, 0x82, 0x04, 0x00, 0xd8, 0x2a, 0x45, 0x00, 0x01, 0x55,
            0x00, 0x00,
        ];
        let block = BlockNode::decode(&bytes).unwrap();
        assert_eq!(block.slot, 5);
        assert_eq!(block.parent_slot, 4);
        assert_eq!(block.block_height, None);
        assert_eq!(block.rewards, None);
    }
}
