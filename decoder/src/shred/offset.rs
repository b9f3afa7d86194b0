//! Named offsets of every shred header field (format §§2–5): the one place the decoder spells a
//! header position; everything else reads a header through these names.
//!
//! ```text
//!  data shred                                  coding shred
//!  0      64  65   73   77  79  83  85 86 88    0      64  65   73   77  79  83  85  87 89
//!  | sig  |var|slot|idx |ver|fec|par|fl|size|    | sig  |var|slot|idx |ver|fec| k | m |pos|
//! ```

/// Leader signature length (ed25519); the signature starts the shred.
pub const SIGNATURE_LEN: usize = 64;
/// Offset of the variant byte, right after the leader signature.
pub const VARIANT: usize = SIGNATURE_LEN;
/// Slot, `u64` little-endian.
pub const SLOT: usize = VARIANT + 1;
/// Shred index within the slot, `u32`.
pub const INDEX: usize = SLOT + 8;
/// Shred version (cluster id), `u16`.
pub const SHRED_VERSION: usize = INDEX + 4;
/// Index of the FEC set's first data shred, `u32`.
pub const FEC_SET_INDEX: usize = SHRED_VERSION + 2;
/// Common header: signature 64 + variant 1 + slot 8 + index 4 + version 2 + fec_set_index 4.
pub const COMMON_HEADER_LEN: usize = FEC_SET_INDEX + 4;

/// Data header (format §4): distance to the parent slot, `u16`.
pub const DATA_PARENT_OFFSET: usize = COMMON_HEADER_LEN;
/// Data header: the flags byte (`FLAG_DATA_COMPLETE`, `FLAG_LAST_SHRED_IN_SLOT`, reference tick).
pub const DATA_FLAGS: usize = DATA_PARENT_OFFSET + 2;
/// Data header: `size`, `u16`, the end of the entry bytes (headers included).
pub const DATA_SIZE: usize = DATA_FLAGS + 1;
/// Common header + parent_offset 2 + flags 1 + size 2 (format §4).
pub const DATA_HEADERS_LEN: usize = DATA_SIZE + 2;

/// Coding header (format §5): data shreds of the set, `u16`.
pub const CODE_NUM_DATA: usize = COMMON_HEADER_LEN;
/// Coding header: coding shreds of the set, `u16`.
pub const CODE_NUM_CODING: usize = CODE_NUM_DATA + 2;
/// Coding header: this shred's position among the coding shreds, `u16`.
pub const CODE_POSITION: usize = CODE_NUM_CODING + 2;
/// Common header + num_data 2 + num_coding 2 + position 2 (format §5).
pub const CODE_HEADERS_LEN: usize = CODE_POSITION + 2;

const _: () = assert!(SLOT == 65 && INDEX == 73 && SHRED_VERSION == 77 && FEC_SET_INDEX == 79);
const _: () = assert!(COMMON_HEADER_LEN == 83);
const _: () = assert!(DATA_FLAGS == 85 && DATA_SIZE == 86 && DATA_HEADERS_LEN == 88);
const _: () = assert!(CODE_NUM_CODING == 85 && CODE_POSITION == 87 && CODE_HEADERS_LEN == 89);

/// The flags byte of a data shred's payload; 0 when the payload is too short to hold one.
pub fn data_flags(payload: &[u8]) -> u8 {
    payload.get(DATA_FLAGS).copied().unwrap_or(0)
}

/// The `size` field of a data shred's payload; 0 when the payload is too short to hold one.
pub fn data_size(payload: &[u8]) -> usize {
    payload.get(DATA_SIZE..DATA_SIZE + 2).map_or(0, |size| {
        usize::from(u16::from_le_bytes([size[0], size[1]]))
    })
}
