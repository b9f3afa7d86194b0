//! Length: over 600 lines because the seven node kinds of one DAG-CBOR schema, a protocol table;
//! ~35 of the lines are tests.
//!
//! The seven DAG-CBOR node kinds of an epoch CAR (format §2), decoded with `minicbor` in their
//! tuple representation (fields by position, optional trailing fields may be missing, nullable
//! fields may be `null`, integers of any width and sign), and encoded the same way for the CAR
//! writer.

use minicbor::data::{Tag, Type};
use minicbor::{Decoder, Encoder};

use crate::cid::Cid;
use crate::error::FormatError;

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

/// Positional reader over the elements of a node array.
struct Fields<'a> {
    d: Decoder<'a>,
    len: u64,
    read: u64,
}

impl<'a> Fields<'a> {
    fn required<T>(
        &mut self,
        name: &'static str,
        read: impl FnOnce(&mut Decoder<'a>) -> Result<T, FormatError>,
    ) -> Result<T, FormatError> {
        if self.read >= self.len {
            return Err(FormatError::Field(name));
        }
        self.read += 1;
        read(&mut self.d)
    }

    fn optional<T>(
        &mut self,
        read: impl FnOnce(&mut Decoder<'a>) -> Result<T, FormatError>,
    ) -> Result<Option<T>, FormatError> {
        if self.read >= self.len {
            return Ok(None);
        }
        self.read += 1;
        read(&mut self.d).map(Some)
    }

    /// Skips trailing elements this reader does not know (forward compatibility).
    fn skip_rest(&mut self) -> Result<(), FormatError> {
        while self.read < self.len {
            self.d.skip()?;
            self.read += 1;
        }
        Ok(())
    }
}

fn array_len(d: &mut Decoder<'_>) -> Result<u64, FormatError> {
    d.array()?
        .ok_or_else(|| FormatError::Cbor("indefinite-length array".into()))
}

fn int(d: &mut Decoder<'_>) -> Result<i128, FormatError> {
    Ok(i128::from(d.int()?))
}

fn uint(d: &mut Decoder<'_>, name: &'static str) -> Result<u64, FormatError> {
    u64::try_from(int(d)?).map_err(|_| FormatError::Field(name))
}

/// A 64-bit value written as a signed integer: reinterpret its bits (also accepts large uints).
fn bits64(d: &mut Decoder<'_>) -> Result<u64, FormatError> {
    let value = int(d)?;
    if let Ok(signed) = i64::try_from(value) {
        Ok(signed as u64)
    } else {
        u64::try_from(value).map_err(|_| FormatError::Field("frame hash"))
    }
}

fn nullable<'a, T>(
    d: &mut Decoder<'a>,
    read: impl FnOnce(&mut Decoder<'a>) -> Result<T, FormatError>,
) -> Result<Option<T>, FormatError> {
    if matches!(d.datatype()?, Type::Null | Type::Undefined) {
        d.skip()?;
        Ok(None)
    } else {
        read(d).map(Some)
    }
}

fn hash32(d: &mut Decoder<'_>) -> Result<[u8; 32], FormatError> {
    d.bytes()?
        .try_into()
        .map_err(|_| FormatError::Field("32-byte hash"))
}

fn link(d: &mut Decoder<'_>) -> Result<Cid, FormatError> {
    let tag = d.tag()?;
    if tag != Tag::new(TAG_LINK) {
        return Err(FormatError::Cid("link without tag 42"));
    }
    match d.bytes()?.split_first() {
        Some((0, cid)) => Cid::from_bytes(cid),
        _ => Err(FormatError::Cid(
            "link bytes without identity multibase prefix",
        )),
    }
}

/// Bounded pre-allocation for a declared length: each element needs at least one byte.
fn capacity(d: &Decoder<'_>, declared: u64) -> usize {
    let remaining = d.input().len().saturating_sub(d.position());
    usize::try_from(declared)
        .unwrap_or(usize::MAX)
        .min(remaining)
        .min(PREALLOC_MAX)
}

fn links(d: &mut Decoder<'_>) -> Result<Vec<Cid>, FormatError> {
    let len = array_len(d)?;
    let mut out = Vec::with_capacity(capacity(d, len));
    for _ in 0..len {
        out.push(link(d)?);
    }
    Ok(out)
}

fn shredding(d: &mut Decoder<'_>) -> Result<Vec<(i64, i64)>, FormatError> {
    let len = array_len(d)?;
    let mut out = Vec::with_capacity(capacity(d, len));
    for _ in 0..len {
        let pair_len = array_len(d)?;
        if pair_len < 2 {
            return Err(FormatError::Field("shredding pair"));
        }
        let entry_end = i64::try_from(int(d)?).map_err(|_| FormatError::Field("shredding"))?;
        let shred_end = i64::try_from(int(d)?).map_err(|_| FormatError::Field("shredding"))?;
        for _ in 2..pair_len {
            d.skip()?;
        }
        out.push((entry_end, shred_end));
    }
    Ok(out)
}

fn slot_meta(d: &mut Decoder<'_>) -> Result<(u64, i64, Option<u64>), FormatError> {
    let len = array_len(d)?;
    let mut f = Fields {
        d: d.clone(),
        len,
        read: 0,
    };
    let parent = f.required("parent slot", |d| uint(d, "parent slot"))?;
    let blocktime = f
        .optional(|d| {
            nullable(d, |d| {
                i64::try_from(int(d)?).map_err(|_| FormatError::Field("blocktime"))
            })
        })?
        .flatten()
        .unwrap_or(0);
    let height = f
        .optional(|d| nullable(d, |d| uint(d, "block height")))?
        .flatten();
    f.skip_rest()?;
    d.set_position(f.d.position());
    Ok((parent, blocktime, height))
}

// ------------------------------------------------------------------------------------------------
// Encoding (the CAR writer)
// ------------------------------------------------------------------------------------------------

type Enc = Encoder<Vec<u8>>;

fn enc_err<E: std::fmt::Display>(error: E) -> FormatError {
    FormatError::Cbor(format!("encode: {error}"))
}

fn put_link(e: &mut Enc, cid: &Cid) -> Result<(), FormatError> {
    let mut bytes = Vec::with_capacity(cid.as_bytes().len() + 1);
    bytes.push(0);
    bytes.extend_from_slice(cid.as_bytes());
    e.tag(Tag::new(TAG_LINK)).map_err(enc_err)?;
    e.bytes(&bytes).map_err(enc_err)?;
    Ok(())
}

fn put_links(e: &mut Enc, cids: &[Cid]) -> Result<(), FormatError> {
    e.array(cids.len() as u64).map_err(enc_err)?;
    for cid in cids {
        put_link(e, cid)?;
    }
    Ok(())
}

fn put_opt_u64(e: &mut Enc, value: Option<u64>) -> Result<(), FormatError> {
    match value {
        Some(v) => e.u64(v).map_err(enc_err)?,
        None => e.null().map_err(enc_err)?,
    };
    Ok(())
}

impl DataFrame<'_> {
    fn encode_into(&self, e: &mut Enc) -> Result<(), FormatError> {
        let len = if self.next.is_empty() { 5 } else { 6 };
        e.array(len)
            .map_err(enc_err)?
            .u64(kind::DATA_FRAME)
            .map_err(enc_err)?;
        match self.hash {
            Some(hash) => e.i64(hash as i64).map_err(enc_err)?,
            None => e.null().map_err(enc_err)?,
        };
        put_opt_u64(e, self.index)?;
        put_opt_u64(e, self.total)?;
        e.bytes(self.data).map_err(enc_err)?;
        if !self.next.is_empty() {
            put_links(e, &self.next)?;
        }
        Ok(())
    }

    /// Encodes a standalone DataFrame node.
    pub fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut e = Encoder::new(Vec::with_capacity(self.data.len() + 64));
        self.encode_into(&mut e)?;
        Ok(e.into_writer())
    }
}

impl TransactionNode<'_> {
    /// Encodes the node (the index is always written).
    pub fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let capacity = self.data.data.len() + self.metadata.data.len() + 64;
        let mut e = Encoder::new(Vec::with_capacity(capacity));
        let len = if self.index.is_some() { 5 } else { 4 };
        e.array(len)
            .map_err(enc_err)?
            .u64(kind::TRANSACTION)
            .map_err(enc_err)?;
        self.data.encode_into(&mut e)?;
        self.metadata.encode_into(&mut e)?;
        e.u64(self.slot).map_err(enc_err)?;
        if let Some(index) = self.index {
            e.u64(index).map_err(enc_err)?;
        }
        Ok(e.into_writer())
    }
}

impl EntryNode {
    /// Encodes the node.
    pub fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut e = Encoder::new(Vec::with_capacity(48 + 40 * self.transactions.len()));
        e.array(4)
            .map_err(enc_err)?
            .u64(kind::ENTRY)
            .map_err(enc_err)?;
        e.u64(self.num_hashes).map_err(enc_err)?;
        e.bytes(&self.hash).map_err(enc_err)?;
        put_links(&mut e, &self.transactions)?;
        Ok(e.into_writer())
    }
}

impl BlockNode {
    /// Encodes the node (`rewards: None` writes the placeholder link).
    pub fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut e = Encoder::new(Vec::with_capacity(64 + 48 * self.entries.len()));
        e.array(6)
            .map_err(enc_err)?
            .u64(kind::BLOCK)
            .map_err(enc_err)?;
        e.u64(self.slot).map_err(enc_err)?;
        e.array(self.shredding.len() as u64).map_err(enc_err)?;
        for &(entry_end, shred_end) in &self.shredding {
            e.array(2).map_err(enc_err)?;
            e.i64(entry_end)
                .map_err(enc_err)?
                .i64(shred_end)
                .map_err(enc_err)?;
        }
        put_links(&mut e, &self.entries)?;
        e.array(3).map_err(enc_err)?;
        e.u64(self.parent_slot)
            .map_err(enc_err)?
            .i64(self.blocktime)
            .map_err(enc_err)?;
        put_opt_u64(&mut e, self.block_height)?;
        put_link(&mut e, &self.rewards.unwrap_or(Cid::placeholder()))?;
        Ok(e.into_writer())
    }
}

impl SubsetNode {
    /// Encodes the node.
    pub fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut e = Encoder::new(Vec::with_capacity(32 + 40 * self.blocks.len()));
        e.array(4)
            .map_err(enc_err)?
            .u64(kind::SUBSET)
            .map_err(enc_err)?;
        e.u64(self.first)
            .map_err(enc_err)?
            .u64(self.last)
            .map_err(enc_err)?;
        put_links(&mut e, &self.blocks)?;
        Ok(e.into_writer())
    }
}

impl EpochNode {
    /// Encodes the node.
    pub fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut e = Encoder::new(Vec::with_capacity(32 + 40 * self.subsets.len()));
        e.array(3)
            .map_err(enc_err)?
            .u64(kind::EPOCH)
            .map_err(enc_err)?;
        e.u64(self.epoch).map_err(enc_err)?;
        put_links(&mut e, &self.subsets)?;
        Ok(e.into_writer())
    }
}

impl RewardsNode<'_> {
    /// Encodes the node.
    pub fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut e = Encoder::new(Vec::with_capacity(self.data.data.len() + 64));
        e.array(3)
            .map_err(enc_err)?
            .u64(kind::REWARDS)
            .map_err(enc_err)?;
        e.u64(self.slot).map_err(enc_err)?;
        self.data.encode_into(&mut e)?;
        Ok(e.into_writer())
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
