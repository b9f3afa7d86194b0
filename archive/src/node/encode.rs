//! Encoding the node kinds in their tuple representation (the CAR writer's side of the schema).

use minicbor::Encoder;
use minicbor::data::Tag;

use super::{
    BlockNode, DataFrame, EntryNode, EpochNode, RewardsNode, SubsetNode, TAG_LINK, TransactionNode,
    kind,
};
use crate::cid::Cid;
use crate::error::FormatError;

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
