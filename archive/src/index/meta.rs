//! The "indexmeta" key/value block (format §3.1) inside compactindexsized headers, the sig-exists
//! header and our own index headers: `u8 count`, then `u8 key_len, key, u8 value_len, value`.

use crate::cid::Cid;
use crate::error::FormatError;

/// Key/value pairs in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexMeta {
    pub pairs: Vec<(Vec<u8>, Vec<u8>)>,
}

impl IndexMeta {
    /// The standard keys: `kind` (when given), `epoch`, `rootCid`, `network`.
    pub fn standard(kind: Option<&str>, epoch: u64, root: &Cid, network: &str) -> Self {
        let mut pairs = Vec::with_capacity(4);
        if let Some(kind) = kind {
            pairs.push((b"kind".to_vec(), kind.as_bytes().to_vec()));
        }
        pairs.push((b"epoch".to_vec(), epoch.to_le_bytes().to_vec()));
        pairs.push((b"rootCid".to_vec(), root.as_bytes().to_vec()));
        pairs.push((b"network".to_vec(), network.as_bytes().to_vec()));
        IndexMeta { pairs }
    }

    /// Parses a block at the start of `bytes`; returns it and the bytes used.
    pub fn parse(bytes: &[u8]) -> Result<(IndexMeta, usize), FormatError> {
        let count = *bytes.first().ok_or(FormatError::Truncated("indexmeta"))?;
        let mut pos = 1;
        let mut pairs = Vec::with_capacity(usize::from(count));
        let take = |pos: &mut usize| -> Result<Vec<u8>, FormatError> {
            let len = usize::from(*bytes.get(*pos).ok_or(FormatError::Truncated("indexmeta"))?);
            let value = bytes
                .get(*pos + 1..*pos + 1 + len)
                .ok_or(FormatError::Truncated("indexmeta"))?;
            *pos += 1 + len;
            Ok(value.to_vec())
        };
        for _ in 0..count {
            let key = take(&mut pos)?;
            let value = take(&mut pos)?;
            pairs.push((key, value));
        }
        Ok((IndexMeta { pairs }, pos))
    }

    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), FormatError> {
        let count = u8::try_from(self.pairs.len())
            .map_err(|_| FormatError::Index("more than 255 metadata pairs".into()))?;
        out.push(count);
        for (key, value) in &self.pairs {
            for part in [key, value] {
                let len = u8::try_from(part.len())
                    .map_err(|_| FormatError::Index("metadata item over 255 bytes".into()))?;
                out.push(len);
                out.extend_from_slice(part);
            }
        }
        Ok(())
    }

    /// Encoded length.
    pub fn encoded_len(&self) -> usize {
        1 + self
            .pairs
            .iter()
            .map(|(k, v)| 2 + k.len() + v.len())
            .sum::<usize>()
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key.as_bytes())
            .map(|(_, v)| v.as_slice())
    }

    pub fn kind(&self) -> Option<&str> {
        self.get("kind").and_then(|v| std::str::from_utf8(v).ok())
    }

    pub fn epoch(&self) -> Option<u64> {
        self.get("epoch")
            .and_then(|v| v.try_into().ok())
            .map(u64::from_le_bytes)
    }

    pub fn root_cid(&self) -> Option<Cid> {
        self.get("rootCid").and_then(|v| Cid::from_bytes(v).ok())
    }

    pub fn network(&self) -> Option<&str> {
        self.get("network")
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Checks epoch and root against what the CAR says (the reference's consistency rule).
    pub fn check(&self, what: &str, epoch: u64, root: &Cid) -> Result<(), FormatError> {
        if self.epoch() != Some(epoch) {
            return Err(FormatError::IndexMeta(format!(
                "{what}: epoch {:?}, CAR holds epoch {epoch}",
                self.epoch()
            )));
        }
        if self.root_cid().as_ref() != Some(root) {
            return Err(FormatError::IndexMeta(format!(
                "{what}: rootCid {:?}, CAR root is {root}",
                self.root_cid()
            )));
        }
        Ok(())
    }
}
