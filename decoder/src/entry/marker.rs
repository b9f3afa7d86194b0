//! Block markers: the components of a slot's entry stream that are not entry batches
//! (docs/decoder.md, format §9a; the validator's `BlockComponent` / `VersionedBlockMarker`).
//!
//! ```text
//! component := u64 entry_count ≥ 1, then the entries            (an entry batch)
//!            | u64 0, u16 marker_version, marker                 (a block marker)
//! marker v1 := u8 variant, u16 data_len, data_len bytes          (TLV: unknown variants skip)
//!   variant 0 block footer    data := u8 1, [u8;32] bank_hash, u64 producer_time_ns,
//!                                     u8 ua_len, ua_len bytes user agent, then three optional
//!                                     certificates (u8 0/1 tag each, Alpenglow)
//!                          or (earlier layout, SIMD-0307 as first proposed)
//!                                     u8 1, u64 producer_time_ns, u8 ua_len, user agent
//!   variant 1 block header    data := u8 1, u64 parent_slot, [u8;32] parent_block_id
//!   variant 2 update parent   data := u8 1, u64 new_parent_slot, [u8;32] new_parent_block_id
//!   variant 3 genesis certificate (not decoded; counted)
//! ```
//!
//! All integers little-endian. Only marker version 1 is defined: another version has no known
//! length, so the range cannot be walked past it and reading fails. Inside version 1 every variant
//! carries its length, so an unknown variant, or a known one whose data follows none of the
//! layouts above, is skipped by its length and reported as [`BlockMarker::Unknown`] or
//! [`BlockMarker::Malformed`]: a marker carries no transactions, so skipping it never loses one.

use thiserror::Error;

use crate::cursor::{Cursor, CursorError};
use crate::transaction::HASH_LEN_BYTES;

/// The only marker version the validator writes.
pub const MARKER_VERSION_V1: u16 = 1;
/// Variant ids of a version-1 marker, as the validator numbers them.
pub const VARIANT_BLOCK_FOOTER: u8 = 0;
pub const VARIANT_BLOCK_HEADER: u8 = 1;
pub const VARIANT_UPDATE_PARENT: u8 = 2;
pub const VARIANT_GENESIS_CERTIFICATE: u8 = 3;
/// The version byte inside footer, header and update-parent data.
const INNER_VERSION_V1: u8 = 1;
/// Header and update-parent data: version, slot, block id.
const PARENT_DATA_LEN: usize = 1 + 8 + HASH_LEN_BYTES;

/// Why a marker could not be read. Each variant has a stable [`label`](MarkerError::label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MarkerError {
    /// The marker's version, variant, length or data is cut short by the end of the range.
    #[error("block marker truncated: {0}")]
    Truncated(CursorError),
    /// A marker version other than 1: its length is unknown.
    #[error("block marker version {version} is not supported")]
    UnsupportedVersion { version: u16 },
}

impl MarkerError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Truncated(_) => "marker_truncated",
            Self::UnsupportedVersion { .. } => "marker_version_unsupported",
        }
    }
}

/// The producer's footer (SIMD-0307): when and by what software the block was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockFooter<'a> {
    /// Nanoseconds since the Unix epoch on the producer's clock when it finished the block.
    pub producer_time_ns: u64,
    /// Free-form user agent bytes (at most 255).
    pub user_agent: &'a [u8],
    /// The bank hash, present in the current layout only.
    pub bank_hash: Option<&'a [u8; HASH_LEN_BYTES]>,
}

/// A parent reference: the block header's parent or an update-parent's new parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParentRef<'a> {
    pub parent_slot: u64,
    pub parent_block_id: &'a [u8; HASH_LEN_BYTES],
}

/// One block marker, borrowed from the range bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockMarker<'a> {
    Footer(BlockFooter<'a>),
    /// Alpenglow block header: the block's parent.
    Header(ParentRef<'a>),
    /// Alpenglow fast leader handover: the block continues on another parent from here on.
    UpdateParent(ParentRef<'a>),
    /// Alpenglow genesis certificate; not decoded.
    GenesisCertificate {
        data: &'a [u8],
    },
    /// A known variant whose data follows none of its layouts (or names an unknown inner version).
    Malformed {
        variant: u8,
        data: &'a [u8],
    },
    /// A variant this decoder does not know.
    Unknown {
        variant: u8,
        data: &'a [u8],
    },
}

/// The kind of a marker, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    BlockFooter,
    BlockHeader,
    UpdateParent,
    GenesisCertificate,
    Malformed,
    Unknown,
}

impl MarkerKind {
    /// Stable metric label.
    pub const fn label(self) -> &'static str {
        match self {
            Self::BlockFooter => "block_footer",
            Self::BlockHeader => "block_header",
            Self::UpdateParent => "update_parent",
            Self::GenesisCertificate => "genesis_certificate",
            Self::Malformed => "malformed",
            Self::Unknown => "unknown",
        }
    }
}

impl BlockMarker<'_> {
    pub const fn kind(&self) -> MarkerKind {
        match self {
            Self::Footer(_) => MarkerKind::BlockFooter,
            Self::Header(_) => MarkerKind::BlockHeader,
            Self::UpdateParent(_) => MarkerKind::UpdateParent,
            Self::GenesisCertificate { .. } => MarkerKind::GenesisCertificate,
            Self::Malformed { .. } => MarkerKind::Malformed,
            Self::Unknown { .. } => MarkerKind::Unknown,
        }
    }
}

/// Markers seen, by kind (counted, not errors).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MarkerCounts {
    pub block_footer: u64,
    pub block_header: u64,
    pub update_parent: u64,
    pub genesis_certificate: u64,
    pub malformed: u64,
    pub unknown: u64,
}

impl MarkerCounts {
    pub fn add(&mut self, kind: MarkerKind) {
        let counter = match kind {
            MarkerKind::BlockFooter => &mut self.block_footer,
            MarkerKind::BlockHeader => &mut self.block_header,
            MarkerKind::UpdateParent => &mut self.update_parent,
            MarkerKind::GenesisCertificate => &mut self.genesis_certificate,
            MarkerKind::Malformed => &mut self.malformed,
            MarkerKind::Unknown => &mut self.unknown,
        };
        *counter += 1;
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Self) {
        self.block_footer += other.block_footer;
        self.block_header += other.block_header;
        self.update_parent += other.update_parent;
        self.genesis_certificate += other.genesis_certificate;
        self.malformed += other.malformed;
        self.unknown += other.unknown;
    }

    pub fn total(&self) -> u64 {
        self.block_footer
            + self.block_header
            + self.update_parent
            + self.genesis_certificate
            + self.malformed
            + self.unknown
    }

    /// `(label, count)` of every kind, for metrics.
    pub fn by_label(&self) -> [(&'static str, u64); 6] {
        [
            (MarkerKind::BlockFooter.label(), self.block_footer),
            (MarkerKind::BlockHeader.label(), self.block_header),
            (MarkerKind::UpdateParent.label(), self.update_parent),
            (
                MarkerKind::GenesisCertificate.label(),
                self.genesis_certificate,
            ),
            (MarkerKind::Malformed.label(), self.malformed),
            (MarkerKind::Unknown.label(), self.unknown),
        ]
    }
}

/// Reads one marker from right after its component's zero entry count: version, variant, length
/// and data. The cursor ends after the marker's data.
pub fn read_marker<'a>(cursor: &mut Cursor<'a>) -> Result<BlockMarker<'a>, MarkerError> {
    let version = cursor
        .take_u16_le("marker version")
        .map_err(MarkerError::Truncated)?;
    if version != MARKER_VERSION_V1 {
        return Err(MarkerError::UnsupportedVersion { version });
    }
    let variant = cursor
        .take_u8("marker variant")
        .map_err(MarkerError::Truncated)?;
    let length = cursor
        .take_u16_le("marker length")
        .map_err(MarkerError::Truncated)?;
    let data = cursor
        .take(usize::from(length), "marker data")
        .map_err(MarkerError::Truncated)?;
    Ok(decode_variant(variant, data))
}

/// Bytes a marker occupies after its zero entry count, read from its first bytes: `None` while
/// fewer than its 5 prefix bytes are given or for an unsupported version.
pub fn marker_len(prefix: &[u8]) -> Option<usize> {
    let [v0, v1, _variant, l0, l1, ..] = *prefix else {
        return None;
    };
    (u16::from_le_bytes([v0, v1]) == MARKER_VERSION_V1)
        .then(|| 5 + usize::from(u16::from_le_bytes([l0, l1])))
}

fn decode_variant(variant: u8, data: &[u8]) -> BlockMarker<'_> {
    let decoded = match variant {
        VARIANT_BLOCK_FOOTER => decode_footer(data).map(BlockMarker::Footer),
        VARIANT_BLOCK_HEADER => decode_parent(data).map(BlockMarker::Header),
        VARIANT_UPDATE_PARENT => decode_parent(data).map(BlockMarker::UpdateParent),
        VARIANT_GENESIS_CERTIFICATE => Some(BlockMarker::GenesisCertificate { data }),
        _ => return BlockMarker::Unknown { variant, data },
    };
    decoded.unwrap_or(BlockMarker::Malformed { variant, data })
}

fn decode_parent(data: &[u8]) -> Option<ParentRef<'_>> {
    if data.len() != PARENT_DATA_LEN || data[0] != INNER_VERSION_V1 {
        return None;
    }
    let mut cursor = Cursor::new(&data[1..]);
    Some(ParentRef {
        parent_slot: cursor.take_u64_le("parent slot").ok()?,
        parent_block_id: cursor.take_array("parent block id").ok()?,
    })
}

/// The current layout is tried first: it cannot be mistaken for the earlier one (its user agent
/// is followed by an option tag 0 or 1). An earlier-layout footer must fill its data exactly.
fn decode_footer(data: &[u8]) -> Option<BlockFooter<'_>> {
    let (&version, body) = data.split_first()?;
    if version != INNER_VERSION_V1 {
        return None;
    }
    decode_current_footer(body).or_else(|| decode_earlier_footer(body))
}

fn decode_current_footer(body: &[u8]) -> Option<BlockFooter<'_>> {
    let mut cursor = Cursor::new(body);
    let bank_hash = cursor.take_array::<HASH_LEN_BYTES>("bank hash").ok()?;
    let producer_time_ns = cursor.take_u64_le("producer time").ok()?;
    let user_agent_len = cursor.take_u8("user agent length").ok()?;
    let user_agent = cursor
        .take(usize::from(user_agent_len), "user agent")
        .ok()?;
    // Then three `Option` tags (certificates under Alpenglow); the first must be a valid tag.
    let first_tag = cursor.take_u8("certificate tag").ok()?;
    (first_tag <= 1).then_some(BlockFooter {
        producer_time_ns,
        user_agent,
        bank_hash: Some(bank_hash),
    })
}

fn decode_earlier_footer(body: &[u8]) -> Option<BlockFooter<'_>> {
    let mut cursor = Cursor::new(body);
    let producer_time_ns = cursor.take_u64_le("producer time").ok()?;
    let user_agent_len = cursor.take_u8("user agent length").ok()?;
    (cursor.remaining() == usize::from(user_agent_len)).then(|| BlockFooter {
        producer_time_ns,
        user_agent: cursor.input().get(9..).unwrap_or_default(),
        bank_hash: None,
    })
}

#[cfg(test)]
mod tests;
