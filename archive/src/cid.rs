//! Content identifiers (CIDs): the binary form parsed generically (version, codec, multihash code,
//! digest length, digest), the 36-byte dag-cbor/sha2-256 CIDs every archive node has, the
//! `bafkqaaa` placeholder, and the lower-case base32 text form used in index file names.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::error::FormatError;
use crate::varint;

/// Multicodec of DAG-CBOR nodes.
pub const CODEC_DAG_CBOR: u64 = 0x71;
/// Multicodec of raw bytes (the placeholder).
pub const CODEC_RAW: u64 = 0x55;
/// Multihash code of sha2-256.
pub const MH_SHA2_256: u64 = 0x12;
/// Length of a CIDv1 dag-cbor sha2-256 in binary form.
pub const NODE_CID_LEN: usize = 36;
/// Longest binary CID accepted (anything longer is not an archive CID).
pub const MAX_LEN: usize = 68;

/// A binary CID, stored inline (no allocation; `Copy`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cid {
    len: u8,
    buf: [u8; MAX_LEN],
}

impl Cid {
    /// Parses a binary CID at the start of `bytes`; returns it and the bytes it used.
    pub fn read(bytes: &[u8]) -> Result<(Cid, usize), FormatError> {
        // CIDv0: a bare sha2-256 multihash.
        if bytes.len() >= 2 && bytes[0] == 0x12 && bytes[1] == 0x20 {
            let used = 34;
            let raw = bytes.get(..used).ok_or(FormatError::Truncated("CIDv0"))?;
            return Ok((Self::from_raw(raw)?, used));
        }
        let mut pos = 0;
        let mut next = |what: &'static str| -> Result<u64, FormatError> {
            let rest = bytes.get(pos..).ok_or(FormatError::Truncated(what))?;
            let (value, used) = varint::decode(rest)?;
            pos += used;
            Ok(value)
        };
        let version = next("CID version")?;
        if version != 1 {
            return Err(FormatError::Cid("unsupported CID version"));
        }
        let _codec = next("CID codec")?;
        let _mh_code = next("CID multihash code")?;
        let digest_len = next("CID digest length")?;
        let end = usize::try_from(digest_len)
            .ok()
            .and_then(|len| pos.checked_add(len))
            .filter(|&end| end <= MAX_LEN)
            .ok_or(FormatError::Cid("CID longer than 68 bytes"))?;
        let raw = bytes
            .get(..end)
            .ok_or(FormatError::Truncated("CID digest"))?;
        Ok((Self::from_raw(raw)?, end))
    }

    /// Parses exactly one binary CID.
    pub fn from_bytes(bytes: &[u8]) -> Result<Cid, FormatError> {
        let (cid, used) = Self::read(bytes)?;
        if used != bytes.len() {
            return Err(FormatError::Cid("trailing bytes after CID"));
        }
        Ok(cid)
    }

    fn from_raw(raw: &[u8]) -> Result<Cid, FormatError> {
        if raw.len() > MAX_LEN {
            return Err(FormatError::Cid("CID longer than 68 bytes"));
        }
        let mut buf = [0u8; MAX_LEN];
        buf[..raw.len()].copy_from_slice(raw);
        Ok(Cid {
            len: raw.len() as u8,
            buf,
        })
    }

    /// The CIDv1 dag-cbor sha2-256 of `node` (how every archive node is addressed).
    pub fn for_node(node: &[u8]) -> Cid {
        let digest = Sha256::digest(node);
        let mut buf = [0u8; MAX_LEN];
        buf[..4].copy_from_slice(&[0x01, 0x71, 0x12, 0x20]);
        buf[4..NODE_CID_LEN].copy_from_slice(&digest);
        Cid {
            len: NODE_CID_LEN as u8,
            buf,
        }
    }

    /// The `bafkqaaa` placeholder (raw codec, empty identity multihash): "no rewards".
    pub const fn placeholder() -> Cid {
        let mut buf = [0u8; MAX_LEN];
        buf[0] = 0x01;
        buf[1] = 0x55;
        Cid { len: 4, buf }
    }

    /// Whether this is the `bafkqaaa` placeholder.
    pub fn is_placeholder(&self) -> bool {
        self.as_bytes() == [0x01, 0x55, 0x00, 0x00]
    }

    /// The binary form.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }

    /// The multihash digest when this is a CIDv1 dag-cbor sha2-256.
    pub fn sha256_digest(&self) -> Option<&[u8]> {
        let bytes = self.as_bytes();
        (bytes.len() == NODE_CID_LEN && bytes[..4] == [0x01, 0x71, 0x12, 0x20]).then(|| &bytes[4..])
    }

    /// Whether `node` hashes to this CID (only dag-cbor sha2-256 CIDs can verify).
    pub fn verifies(&self, node: &[u8]) -> bool {
        self.sha256_digest()
            .is_some_and(|digest| Sha256::digest(node).as_slice() == digest)
    }
}

impl fmt::Display for Cid {
    /// Multibase base32 lower-case, prefix `b` (`bafyrei...`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = data_encoding::BASE32_NOPAD.encode(self.as_bytes());
        write!(f, "b{}", text.to_ascii_lowercase())
    }
}

impl fmt::Debug for Cid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cid({self})")
    }
}

impl FromStr for Cid {
    type Err = FormatError;

    fn from_str(text: &str) -> Result<Cid, FormatError> {
        let body = text
            .strip_prefix('b')
            .ok_or(FormatError::Cid("text CID without base32 prefix 'b'"))?;
        let bytes = data_encoding::BASE32_NOPAD
            .decode(body.to_ascii_uppercase().as_bytes())
            .map_err(|_| FormatError::Cid("invalid base32 in CID text"))?;
        Cid::from_bytes(&bytes)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn placeholder_text_is_bafkqaaa() {
        assert_eq!(Cid::placeholder().to_string(), "bafkqaaa");
        let parsed: Cid = "bafkqaaa".parse().unwrap();
        assert!(parsed.is_placeholder());
    }

    #[test]
    fn text_round_trip_of_a_node_cid() {
        let text = "bafyreianr3wvyk6ulwuvtlgiu4xfzadob6wi7mwizemfhljbc5v2zvullq";
        let cid: Cid = text.parse().unwrap();
        assert_eq!(cid.as_bytes().len(), NODE_CID_LEN);
        assert_eq!(&cid.as_bytes()[..4], &[0x01, 0x71, 0x12, 0x20]);
        assert_eq!(cid.to_string(), text);
    }

    #[test]
    fn rejects_garbage() {
        assert!(Cid::read(&[]).is_err());
        assert!(Cid::read(&[0x01, 0x71, 0x12, 0xff, 0x01]).is_err());
        assert!(Cid::read(&[0x02, 0x71]).is_err());
        assert!("zabc".parse::<Cid>().is_err());
    }
}
