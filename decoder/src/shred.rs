//! Length: over 600 lines because ~560 lines of code (the header layout, a protocol table); the
//! rest are its tests.
//!
//! Shred wire format: the variant byte, the header layout, and `parse_shred`, which checks every
//! header field once and returns a [`ShredRef`] view whose accessors cannot fail.
//!
//! ```text
//!  data shred (1203 B)                         coding shred (1228 B)
//!  0      64  65   73   77  79  83  85 86 88    0      64  65   73   77  79  83  85  87 89
//!  | sig  |var|slot|idx |ver|fec|par|fl|size|    | sig  |var|slot|idx |ver|fec| k | m |pos|
//!  [88, 88+cap_data)  entry bytes (zero padded)  [89, 89+cap_code)  parity shard
//!  then: chained root (32 B, chained variants), Merkle proof (20 B × proof_size),
//!        retransmitter signature (64 B, resigned variants) as the last 64 bytes
//! ```
//!
//! Format reference: docs/decoder.md, "Shred wire format" §§2–6 and §10 (cited as "format §N"),
//! mirroring Agave's `ledger/src/shred/{wire,merkle,shred_data,shred_code}.rs` sanitize rules.
//! Policy beyond Agave's parser, as Firedancer's FEC resolver and Agave's fetch filter with
//! `enforce_fixed_fec_set` apply on mainnet: FEC sets are exactly 32 data + 32 coding shreds with
//! 6-entry proofs and `fec_set_index % 32 == 0`. Unchained Merkle variants (0x4_, 0x8_) are
//! accepted only when [`ParseOptions::allow_unchained`] is set; legacy variants never.

use thiserror::Error;

pub mod offset;

pub use offset::{
    CODE_HEADERS_LEN, COMMON_HEADER_LEN, DATA_HEADERS_LEN, SIGNATURE_LEN, VARIANT as VARIANT_OFFSET,
};
/// Largest UDP payload Solana sends: 1280 (IPv6 minimum MTU) − 40 (IPv6) − 8 (UDP).
pub const PACKET_DATA_SIZE: usize = 1232;
/// Coding shred payload: the packet size minus 4 bytes kept free for a repair nonce.
pub const CODE_SHRED_LEN: usize = PACKET_DATA_SIZE - 4;
/// Data shred payload: a coding shred minus its 89-byte headers plus the 88-byte data headers'
/// worth of shard, minus nothing else: 1228 − 89 + 64 = 1203, so both shard kinds have equal length.
pub const DATA_SHRED_LEN: usize = CODE_SHRED_LEN - CODE_HEADERS_LEN + SIGNATURE_LEN;
/// One Merkle proof entry: a sibling hash truncated to 20 bytes.
pub const MERKLE_PROOF_ENTRY_LEN: usize = 20;
/// The chained Merkle root of the previous FEC set.
pub const CHAINED_ROOT_LEN: usize = 32;
/// Data (and coding) shreds per slot: Agave's `MAX_DATA_SHREDS_PER_SLOT`.
pub const MAX_SHREDS_PER_SLOT: u32 = 32_768;
/// Data shreds per FEC set under the fixed-FEC-set policy.
pub const DATA_SHREDS_PER_FEC_SET: usize = 32;
/// Coding shreds per FEC set under the fixed-FEC-set policy.
pub const CODING_SHREDS_PER_FEC_SET: usize = 32;
/// Leaves of one FEC set's Merkle tree.
pub const SHREDS_PER_FEC_SET: usize = DATA_SHREDS_PER_FEC_SET + CODING_SHREDS_PER_FEC_SET;
/// Proof entries for a 64-leaf tree: ceil(log2(64)).
pub const FEC_SET_PROOF_SIZE: u8 = 6;

const _: () = assert!(DATA_SHRED_LEN == 1203);
const _: () = assert!(CODE_SHRED_LEN == 1228);
const _: () = assert!(1 << FEC_SET_PROOF_SIZE == SHREDS_PER_FEC_SET);
const _: () = assert!((MAX_SHREDS_PER_SLOT as usize).is_multiple_of(DATA_SHREDS_PER_FEC_SET));

/// Data flags (format §4): bit 6 ends an entry batch; bits 6+7 end the slot.
pub const FLAG_DATA_COMPLETE: u8 = 0x40;
pub const FLAG_LAST_SHRED_IN_SLOT: u8 = 0xC0;
const FLAG_REFERENCE_TICK_MASK: u8 = 0x3F;

/// Data or coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShredKind {
    Data,
    Code,
}

/// The decoded variant byte (format §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShredVariant {
    pub kind: ShredKind,
    /// Number of 20-byte proof entries (low nibble).
    pub proof_size: u8,
    /// Carries a 32-byte chained Merkle root.
    pub chained: bool,
    /// Carries a 64-byte retransmitter signature (last FEC set of a slot).
    pub resigned: bool,
}

impl ShredVariant {
    /// Payload length for this variant: 1203 for data, 1228 for coding.
    pub const fn payload_len(self) -> usize {
        match self.kind {
            ShredKind::Data => DATA_SHRED_LEN,
            ShredKind::Code => CODE_SHRED_LEN,
        }
    }

    /// Bytes of the tail (chained root, proof, retransmitter signature).
    const fn tail_len(self) -> usize {
        (self.chained as usize) * CHAINED_ROOT_LEN
            + self.proof_size as usize * MERKLE_PROOF_ENTRY_LEN
            + (self.resigned as usize) * SIGNATURE_LEN
    }

    /// Erasure shard length: `1139 − 32c − 20p − 64r` (format §6). Equal for data and coding
    /// shreds of one set; `None` when the tail leaves no room.
    pub const fn shard_len(self) -> Option<usize> {
        (CODE_SHRED_LEN - CODE_HEADERS_LEN).checked_sub(self.tail_len())
    }

    /// Maximum entry bytes a data shred of this variant carries: `shard_len − 24`.
    pub const fn data_capacity(self) -> Option<usize> {
        match self.shard_len() {
            Some(shard) => shard.checked_sub(DATA_HEADERS_LEN - SIGNATURE_LEN),
            None => None,
        }
    }

    /// End of the erasure shard: start of the chained root or, when unchained, of the proof.
    const fn body_end(self) -> usize {
        self.payload_len() - self.tail_len()
    }

    /// Start of the Merkle proof.
    pub const fn proof_offset(self) -> usize {
        self.body_end() + (self.chained as usize) * CHAINED_ROOT_LEN
    }

    /// The same family's variant of the other kind (0x9↔0x6, 0xB↔0x7).
    pub const fn with_kind(self, kind: ShredKind) -> Self {
        Self { kind, ..self }
    }

    /// Encodes back to the wire byte.
    pub const fn to_byte(self) -> u8 {
        let high = match (self.kind, self.chained, self.resigned) {
            (ShredKind::Code, false, _) => 0x40,
            (ShredKind::Code, true, false) => 0x60,
            (ShredKind::Code, true, true) => 0x70,
            (ShredKind::Data, false, _) => 0x80,
            (ShredKind::Data, true, false) => 0x90,
            (ShredKind::Data, true, true) => 0xB0,
        };
        high | self.proof_size
    }
}

/// Knobs of the parser that are policy, not format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Accept the obsolete unchained Merkle variants 0x4_/0x8_ (off by default, as in Agave).
    pub allow_unchained: bool,
}

/// Why a datagram is not a usable shred. One variant per reason; [`ShredError::label`] is the
/// metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ShredError {
    #[error("datagram of {len} bytes is shorter than the {needed} bytes its variant needs")]
    Truncated { len: usize, needed: usize },
    #[error("record of {len} bytes exceeds the {PACKET_DATA_SIZE}-byte packet size")]
    Oversized { len: usize },
    #[error("legacy shred variant {variant:#04x} is no longer accepted")]
    LegacyVariant { variant: u8 },
    #[error("unchained Merkle variant {variant:#04x} is disabled")]
    UnchainedVariant { variant: u8 },
    #[error("unknown shred variant {variant:#04x}")]
    UnknownVariant { variant: u8 },
    #[error("proof size {proof_size} differs from the fixed FEC set's {FEC_SET_PROOF_SIZE}")]
    BadProofSize { proof_size: u8 },
    #[error("index {index} is beyond the {MAX_SHREDS_PER_SLOT} shreds a slot may have")]
    IndexOutOfRange { index: u32 },
    #[error("fec_set_index {fec_set_index} is not a multiple of {DATA_SHREDS_PER_FEC_SET}")]
    MisalignedFecSet { fec_set_index: u32 },
    #[error("data shred index {index} is outside its FEC set starting at {fec_set_index}")]
    BadIndex { index: u32, fec_set_index: u32 },
    #[error("data size field {size} outside {DATA_HEADERS_LEN}..={max}")]
    BadSizeField { size: u16, max: usize },
    #[error("flags {flags:#04x} set LAST_SHRED_IN_SLOT without DATA_COMPLETE")]
    BadFlags { flags: u8 },
    #[error("parent_offset {parent_offset} invalid for slot {slot}")]
    BadParentOffset { parent_offset: u16, slot: u64 },
    #[error("coding header k={num_data} m={num_coding} position={position} is inconsistent")]
    BadCodingHeader {
        num_data: u16,
        num_coding: u16,
        position: u16,
    },
    #[error("erasure configuration {num_data}:{num_coding} is not the fixed 32:32")]
    UnsupportedErasureConfig { num_data: u16, num_coding: u16 },
}

impl ShredError {
    /// Stable metric label of the reason.
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Truncated { .. } => "truncated",
            Self::Oversized { .. } => "oversized",
            Self::LegacyVariant { .. } => "legacy_variant",
            Self::UnchainedVariant { .. } => "unchained_variant",
            Self::UnknownVariant { .. } => "unknown_variant",
            Self::BadProofSize { .. } => "bad_proof_size",
            Self::IndexOutOfRange { .. } => "index_out_of_range",
            Self::MisalignedFecSet { .. } => "misaligned_fec_set",
            Self::BadIndex { .. } => "bad_index",
            Self::BadSizeField { .. } => "bad_size_field",
            Self::BadFlags { .. } => "bad_flags",
            Self::BadParentOffset { .. } => "bad_parent_offset",
            Self::BadCodingHeader { .. } => "bad_coding_header",
            Self::UnsupportedErasureConfig { .. } => "unsupported_erasure_config",
        }
    }
}

/// Decodes the variant byte (format §3).
pub fn parse_variant(byte: u8, options: ParseOptions) -> Result<ShredVariant, ShredError> {
    let proof_size = byte & 0x0F;
    let (kind, chained, resigned) = match byte {
        0x5A | 0xA5 => return Err(ShredError::LegacyVariant { variant: byte }),
        _ => match byte >> 4 {
            0x6 => (ShredKind::Code, true, false),
            0x7 => (ShredKind::Code, true, true),
            0x9 => (ShredKind::Data, true, false),
            0xB => (ShredKind::Data, true, true),
            0x4 | 0x8 if !options.allow_unchained => {
                return Err(ShredError::UnchainedVariant { variant: byte });
            }
            0x4 => (ShredKind::Code, false, false),
            0x8 => (ShredKind::Data, false, false),
            _ => return Err(ShredError::UnknownVariant { variant: byte }),
        },
    };
    Ok(ShredVariant {
        kind,
        proof_size,
        chained,
        resigned,
    })
}

/// Header fields specific to the shred kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindHeader {
    Data {
        /// `slot − parent_slot`.
        parent_offset: u16,
        flags: u8,
        /// End offset of the entry bytes (88 + their count).
        size: u16,
    },
    Code {
        num_data: u16,
        num_coding: u16,
        position: u16,
    },
}

/// A parsed shred: the payload (exactly [`ShredVariant::payload_len`] bytes, trailing bytes
/// dropped) and its checked header. Every accessor is infallible.
#[derive(Debug, Clone, Copy)]
pub struct ShredRef<'a> {
    payload: &'a [u8],
    variant: ShredVariant,
    slot: u64,
    index: u32,
    shred_version: u16,
    fec_set_index: u32,
    kind_header: KindHeader,
}

/// Parses and checks one shred datagram (format §10, items 1, 3 and 4).
pub fn parse_shred(bytes: &[u8], options: ParseOptions) -> Result<ShredRef<'_>, ShredError> {
    if bytes.len() > PACKET_DATA_SIZE {
        return Err(ShredError::Oversized { len: bytes.len() });
    }
    let Some(&variant_byte) = bytes.get(VARIANT_OFFSET) else {
        return Err(ShredError::Truncated {
            len: bytes.len(),
            needed: DATA_SHRED_LEN,
        });
    };
    let variant = parse_variant(variant_byte, options)?;
    let needed = variant.payload_len();
    if bytes.len() < needed {
        return Err(ShredError::Truncated {
            len: bytes.len(),
            needed,
        });
    }
    if variant.proof_size != FEC_SET_PROOF_SIZE {
        return Err(ShredError::BadProofSize {
            proof_size: variant.proof_size,
        });
    }
    let payload = &bytes[..needed];
    let slot = read_u64(payload, offset::SLOT);
    let index = read_u32(payload, offset::INDEX);
    let shred_version = read_u16(payload, offset::SHRED_VERSION);
    let fec_set_index = read_u32(payload, offset::FEC_SET_INDEX);
    if index >= MAX_SHREDS_PER_SLOT {
        return Err(ShredError::IndexOutOfRange { index });
    }
    let kind_header = match variant.kind {
        ShredKind::Data => check_data_header(payload, variant, slot, index, fec_set_index)?,
        ShredKind::Code => check_code_header(payload, index, fec_set_index)?,
    };
    Ok(ShredRef {
        payload,
        variant,
        slot,
        index,
        shred_version,
        fec_set_index,
        kind_header,
    })
}

fn check_data_header(
    payload: &[u8],
    variant: ShredVariant,
    slot: u64,
    index: u32,
    fec_set_index: u32,
) -> Result<KindHeader, ShredError> {
    let parent_offset = read_u16(payload, offset::DATA_PARENT_OFFSET);
    let flags = payload[offset::DATA_FLAGS];
    let size = read_u16(payload, offset::DATA_SIZE);
    // Data-capacity is positive: proof_size is fixed at 6 above, leaving 899..=995 bytes.
    let capacity = variant.data_capacity().unwrap_or(0);
    let max_size = DATA_HEADERS_LEN + capacity;
    if usize::from(size) < DATA_HEADERS_LEN || usize::from(size) > max_size {
        return Err(ShredError::BadSizeField {
            size,
            max: max_size,
        });
    }
    if flags & FLAG_LAST_SHRED_IN_SLOT == 0x80 {
        return Err(ShredError::BadFlags { flags });
    }
    // Agave `ShredData::sanitize`: parent_offset ≥ 1 except for slot 0, and parent ≤ slot.
    if (parent_offset == 0 && slot != 0) || u64::from(parent_offset) > slot {
        return Err(ShredError::BadParentOffset {
            parent_offset,
            slot,
        });
    }
    if !fec_set_index.is_multiple_of(DATA_SHREDS_PER_FEC_SET as u32) {
        return Err(ShredError::MisalignedFecSet { fec_set_index });
    }
    if index < fec_set_index || index - fec_set_index >= DATA_SHREDS_PER_FEC_SET as u32 {
        return Err(ShredError::BadIndex {
            index,
            fec_set_index,
        });
    }
    Ok(KindHeader::Data {
        parent_offset,
        flags,
        size,
    })
}

fn check_code_header(
    payload: &[u8],
    index: u32,
    fec_set_index: u32,
) -> Result<KindHeader, ShredError> {
    let num_data = read_u16(payload, offset::CODE_NUM_DATA);
    let num_coding = read_u16(payload, offset::CODE_NUM_CODING);
    let position = read_u16(payload, offset::CODE_POSITION);
    // Agave `ShredCode::sanitize` / `erasure_shard_index`: 1 ≤ k, 1 ≤ m ≤ 256, position < m,
    // and both index ranges of the set stay inside the slot.
    let bad = ShredError::BadCodingHeader {
        num_data,
        num_coding,
        position,
    };
    if num_data == 0 || num_coding == 0 || num_coding > 256 || position >= num_coding {
        return Err(bad);
    }
    let Some(first_coding_index) = index.checked_sub(u32::from(position)) else {
        return Err(bad);
    };
    let last_data = u64::from(fec_set_index) + u64::from(num_data) - 1;
    let last_coding = u64::from(first_coding_index) + u64::from(num_coding) - 1;
    if last_data >= u64::from(MAX_SHREDS_PER_SLOT) || last_coding >= u64::from(MAX_SHREDS_PER_SLOT)
    {
        return Err(ShredError::IndexOutOfRange { index });
    }
    if usize::from(num_data) != DATA_SHREDS_PER_FEC_SET
        || usize::from(num_coding) != CODING_SHREDS_PER_FEC_SET
    {
        return Err(ShredError::UnsupportedErasureConfig {
            num_data,
            num_coding,
        });
    }
    if !fec_set_index.is_multiple_of(DATA_SHREDS_PER_FEC_SET as u32) {
        return Err(ShredError::MisalignedFecSet { fec_set_index });
    }
    Ok(KindHeader::Code {
        num_data,
        num_coding,
        position,
    })
}

impl<'a> ShredRef<'a> {
    /// The payload, exactly `variant().payload_len()` bytes.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    pub fn signature(&self) -> &'a [u8] {
        &self.payload[..SIGNATURE_LEN]
    }

    pub fn variant(&self) -> ShredVariant {
        self.variant
    }

    pub fn kind(&self) -> ShredKind {
        self.variant.kind
    }

    pub fn is_data(&self) -> bool {
        self.variant.kind == ShredKind::Data
    }

    pub fn slot(&self) -> u64 {
        self.slot
    }

    pub fn index(&self) -> u32 {
        self.index
    }

    pub fn shred_version(&self) -> u16 {
        self.shred_version
    }

    pub fn fec_set_index(&self) -> u32 {
        self.fec_set_index
    }

    pub fn kind_header(&self) -> KindHeader {
        self.kind_header
    }

    /// Leaf position in the FEC set's Merkle tree and erasure shard order: data shreds 0..32,
    /// coding shreds 32..64 (format §7).
    pub fn erasure_index(&self) -> usize {
        match self.kind_header {
            KindHeader::Data { .. } => (self.index - self.fec_set_index) as usize,
            KindHeader::Code {
                num_data, position, ..
            } => usize::from(num_data) + usize::from(position),
        }
    }

    /// Data flags; zero for coding shreds.
    pub fn flags(&self) -> u8 {
        match self.kind_header {
            KindHeader::Data { flags, .. } => flags,
            KindHeader::Code { .. } => 0,
        }
    }

    pub fn data_complete(&self) -> bool {
        self.flags() & FLAG_DATA_COMPLETE != 0
    }

    pub fn last_in_slot(&self) -> bool {
        self.flags() & FLAG_LAST_SHRED_IN_SLOT == FLAG_LAST_SHRED_IN_SLOT
    }

    pub fn reference_tick(&self) -> u8 {
        self.flags() & FLAG_REFERENCE_TICK_MASK
    }

    /// Parent slot of a data shred (`None` for coding shreds).
    pub fn parent_slot(&self) -> Option<u64> {
        match self.kind_header {
            KindHeader::Data { parent_offset, .. } => Some(self.slot - u64::from(parent_offset)),
            KindHeader::Code { .. } => None,
        }
    }

    /// Entry bytes of a data shred, `payload[88..size)`; empty for coding and padding shreds.
    pub fn data(&self) -> &'a [u8] {
        match self.kind_header {
            KindHeader::Data { size, .. } => &self.payload[DATA_HEADERS_LEN..usize::from(size)],
            KindHeader::Code { .. } => &[],
        }
    }

    /// The erasure shard: `[64, 88 + cap_data)` of a data shred, `[89, 89 + cap_code)` of a
    /// coding shred (format §8). Both have `variant().shard_len()` bytes.
    pub fn erasure_shard(&self) -> &'a [u8] {
        let start = shard_offset(self.variant.kind);
        &self.payload[start..self.variant.body_end()]
    }

    /// The chained Merkle root, when the variant carries one.
    pub fn chained_root(&self) -> Option<&'a [u8]> {
        let start = self.variant.body_end();
        self.variant
            .chained
            .then(|| &self.payload[start..start + CHAINED_ROOT_LEN])
    }

    /// The proof entries, `proof_size × 20` bytes, bottom-up.
    pub fn merkle_proof(&self) -> &'a [u8] {
        let start = self.variant.proof_offset();
        &self.payload[start..start + usize::from(self.variant.proof_size) * MERKLE_PROOF_ENTRY_LEN]
    }

    /// The bytes hashed into this shred's Merkle leaf: `[64, proof_offset)` (format §7).
    pub fn merkle_leaf_input(&self) -> &'a [u8] {
        &self.payload[SIGNATURE_LEN..self.variant.proof_offset()]
    }

    /// The retransmitter signature of resigned variants (last 64 bytes).
    pub fn retransmitter_signature(&self) -> Option<&'a [u8]> {
        let len = self.payload.len();
        self.variant
            .resigned
            .then(|| &self.payload[len - SIGNATURE_LEN..])
    }
}

/// Where the erasure shard begins inside a shred of `kind`.
pub const fn shard_offset(kind: ShredKind) -> usize {
    match kind {
        ShredKind::Data => SIGNATURE_LEN,
        ShredKind::Code => CODE_HEADERS_LEN,
    }
}

/// Reads the slot of a datagram without parsing it, for cheap routing (sharding by slot) before the
/// full parse. `None` when the datagram is too short.
pub fn peek_slot_and_fec_set(bytes: &[u8]) -> Option<(u64, u32)> {
    if bytes.len() < COMMON_HEADER_LEN {
        return None;
    }
    Some((
        read_u64(bytes, offset::SLOT),
        read_u32(bytes, offset::FEC_SET_INDEX),
    ))
}

// The readers below are called only with offsets inside the fixed headers of a payload whose
// length was checked against the variant's size (≥ 1203 > 89), so the slices are in bounds.
fn read_u16(bytes: &[u8], offset: usize) -> u16 {
    u16::from_le_bytes([bytes[offset], bytes[offset + 1]])
}

fn read_u32(bytes: &[u8], offset: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[offset..offset + 4]);
    u32::from_le_bytes(word)
}

fn read_u64(bytes: &[u8], offset: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[offset..offset + 8]);
    u64::from_le_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(byte: u8) -> ShredVariant {
        parse_variant(byte, ParseOptions::default()).unwrap()
    }

    #[test]
    fn geometry_matches_the_spec_table() {
        // format §6, "Concrete layouts for the standard 32:32 set".
        let data = variant(0x96);
        assert_eq!(data.data_capacity(), Some(963));
        assert_eq!(data.shard_len(), Some(987));
        assert_eq!(data.proof_offset(), 1083);
        let data_resigned = variant(0xB6);
        assert_eq!(data_resigned.data_capacity(), Some(899));
        assert_eq!(data_resigned.proof_offset(), 1019);
        let code = variant(0x66);
        assert_eq!(code.shard_len(), Some(987));
        assert_eq!(code.proof_offset(), 1108);
        let code_resigned = variant(0x76);
        assert_eq!(code_resigned.shard_len(), Some(923));
        assert_eq!(code_resigned.proof_offset(), 1044);
        let unchained = parse_variant(
            0x86,
            ParseOptions {
                allow_unchained: true,
            },
        )
        .unwrap();
        assert_eq!(unchained.data_capacity(), Some(995));
        assert_eq!(unchained.proof_offset(), 1083);
    }

    #[test]
    fn variant_byte_round_trips() {
        for byte in [0x96u8, 0xB6, 0x66, 0x76] {
            assert_eq!(variant(byte).to_byte(), byte);
        }
        assert_eq!(variant(0x96).with_kind(ShredKind::Code).to_byte(), 0x66);
        assert_eq!(variant(0xB6).with_kind(ShredKind::Code).to_byte(), 0x76);
    }

    #[test]
    fn variant_policy() {
        let options = ParseOptions::default();
        assert_eq!(
            parse_variant(0xA5, options),
            Err(ShredError::LegacyVariant { variant: 0xA5 })
        );
        assert_eq!(
            parse_variant(0x5A, options),
            Err(ShredError::LegacyVariant { variant: 0x5A })
        );
        assert_eq!(
            parse_variant(0x86, options),
            Err(ShredError::UnchainedVariant { variant: 0x86 })
        );
        assert_eq!(
            parse_variant(0x00, options),
            Err(ShredError::UnknownVariant { variant: 0 })
        );
        assert_eq!(
            parse_variant(0xFF, options),
            Err(ShredError::UnknownVariant { variant: 0xFF })
        );
        assert!(
            parse_variant(
                0x46,
                ParseOptions {
                    allow_unchained: true
                }
            )
            .is_ok()
        );
    }

    #[test]
    fn short_and_long_inputs() {
        let options = ParseOptions::default();
        assert_eq!(
            parse_shred(&[], options).unwrap_err(),
            ShredError::Truncated {
                len: 0,
                needed: DATA_SHRED_LEN
            }
        );
        assert_eq!(
            parse_shred(&[0u8; 1233], options).unwrap_err(),
            ShredError::Oversized { len: 1233 }
        );
        let mut code = [0u8; 1203];
        code[VARIANT_OFFSET] = 0x66;
        assert_eq!(
            parse_shred(&code, options).unwrap_err(),
            ShredError::Truncated {
                len: 1203,
                needed: 1228
            }
        );
    }
}
