//! The address lookup table program's account data, parsed by its published layout.
//!
//! ```text
//! offset size
//!  0      4   ProgramState tag, u32 LE: 0 Uninitialized, 1 LookupTable
//!  4      8   deactivation_slot u64 LE (u64::MAX while active)
//! 12      8   last_extended_slot u64 LE
//! 20      1   last_extended_slot_start_index u8
//! 21      1   authority Option tag: 0 None (frozen), 1 Some
//! 22     32   authority (only when the tag is 1), then a u16 of padding
//! ..     ..   zero fill up to 56 (LOOKUP_TABLE_META_SIZE)
//! 56   32×n   addresses
//! ```
//!
//! The metadata is the bincode 1 encoding of `ProgramState::LookupTable(LookupTableMeta)`, written
//! into a fixed 56-byte area; with no authority it takes 24 bytes and the rest is zero. The checks
//! are the runtime's (`AddressLookupTable::deserialize`): tags must be known, the data must hold
//! the whole metadata area, and the address area must be a whole number of addresses. One check is
//! ours: more than 256 addresses is refused, because the program can never write such a table.

use thiserror::Error;

use crate::cursor::Cursor;
use crate::transaction::ADDRESS_LEN_BYTES;

use super::{LOOKUP_TABLE_MAX_ADDRESSES, LOOKUP_TABLE_META_LEN_BYTES};

/// A 32-byte account address.
pub type Address = [u8; ADDRESS_LEN_BYTES];

/// The metadata the runtime reads when it loads addresses from a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupTableMeta {
    /// Slot of the deactivate instruction; `u64::MAX` while the table is active.
    pub deactivation_slot: u64,
    /// Slot of the last extension (0 if never extended).
    pub last_extended_slot: u64,
    /// Table length before the first extension made in `last_extended_slot`.
    pub last_extended_slot_start_index: u8,
    /// Who may extend, deactivate or close the table; `None` once frozen.
    pub authority: Option<Address>,
}

impl LookupTableMeta {
    /// The metadata the create instruction writes: active, never extended.
    pub const fn new(authority: Option<Address>) -> Self {
        Self {
            deactivation_slot: u64::MAX,
            last_extended_slot: 0,
            last_extended_slot_start_index: 0,
            authority,
        }
    }

    pub const fn is_deactivated(&self) -> bool {
        self.deactivation_slot != u64::MAX
    }
}

/// A parsed lookup-table account that borrows its addresses from the account data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupTableAccount<'a> {
    pub meta: LookupTableMeta,
    pub addresses: &'a [Address],
}

/// Why account data is not a lookup table. Each variant is one reason; [`label`](Self::label)
/// is its metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AccountError {
    /// The data ends inside the metadata fields.
    #[error("lookup table account data of {len} bytes ends inside its metadata")]
    Truncated { len: usize },
    /// `ProgramState::Uninitialized`: an account of the program that holds no table.
    #[error("lookup table account is uninitialized")]
    Uninitialized,
    /// The `ProgramState` tag is neither 0 nor 1.
    #[error("unknown lookup table account state {tag}")]
    UnknownState { tag: u32 },
    /// The authority's `Option` tag is neither 0 nor 1.
    #[error("invalid authority option tag {tag}")]
    InvalidAuthorityTag { tag: u8 },
    /// The data is shorter than the 56-byte metadata area.
    #[error("lookup table account data of {len} bytes is shorter than the 56-byte metadata")]
    MetadataAreaTruncated { len: usize },
    /// The address area is not a whole number of 32-byte addresses.
    #[error("address area of {len} bytes is not a whole number of addresses")]
    PartialAddress { len: usize },
    /// More addresses than a table can ever hold.
    #[error("{count} addresses, a table holds at most 256")]
    TooManyAddresses { count: usize },
}

impl AccountError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Truncated { .. } => "truncated",
            Self::Uninitialized => "uninitialized",
            Self::UnknownState { .. } => "unknown_state",
            Self::InvalidAuthorityTag { .. } => "invalid_authority_tag",
            Self::MetadataAreaTruncated { .. } => "metadata_area_truncated",
            Self::PartialAddress { .. } => "partial_address",
            Self::TooManyAddresses { .. } => "too_many_addresses",
        }
    }
}

/// Parses lookup-table account data (the owner check, against
/// [`ADDRESS_LOOKUP_TABLE_PROGRAM_ID`](super::ADDRESS_LOOKUP_TABLE_PROGRAM_ID), is the caller's).
pub fn parse_lookup_table_account(data: &[u8]) -> Result<LookupTableAccount<'_>, AccountError> {
    let truncated = |_| AccountError::Truncated { len: data.len() };
    let mut cursor = Cursor::new(data);
    match cursor.take_u32_le("program state").map_err(truncated)? {
        0 => return Err(AccountError::Uninitialized),
        1 => {}
        tag => return Err(AccountError::UnknownState { tag }),
    }
    let meta = read_meta(&mut cursor).map_err(|error| match error {
        MetaError::Truncated => AccountError::Truncated { len: data.len() },
        MetaError::AuthorityTag(tag) => AccountError::InvalidAuthorityTag { tag },
    })?;
    let Some(address_area) = data.get(LOOKUP_TABLE_META_LEN_BYTES..) else {
        return Err(AccountError::MetadataAreaTruncated { len: data.len() });
    };
    let (addresses, rest) = address_area.as_chunks::<ADDRESS_LEN_BYTES>();
    if !rest.is_empty() {
        return Err(AccountError::PartialAddress {
            len: address_area.len(),
        });
    }
    if addresses.len() > LOOKUP_TABLE_MAX_ADDRESSES {
        return Err(AccountError::TooManyAddresses {
            count: addresses.len(),
        });
    }
    Ok(LookupTableAccount { meta, addresses })
}

enum MetaError {
    Truncated,
    AuthorityTag(u8),
}

/// Reads the fields of `LookupTableMeta` in bincode order, padding included.
fn read_meta(cursor: &mut Cursor<'_>) -> Result<LookupTableMeta, MetaError> {
    let truncated = |_| MetaError::Truncated;
    let deactivation_slot = cursor.take_u64_le("deactivation slot").map_err(truncated)?;
    let last_extended_slot = cursor
        .take_u64_le("last extended slot")
        .map_err(truncated)?;
    let last_extended_slot_start_index = cursor.take_u8("start index").map_err(truncated)?;
    let authority = match cursor.take_u8("authority tag").map_err(truncated)? {
        0 => None,
        1 => Some(*cursor.take_array("authority").map_err(truncated)?),
        tag => return Err(MetaError::AuthorityTag(tag)),
    };
    cursor.take_u16_le("padding").map_err(truncated)?;
    Ok(LookupTableMeta {
        deactivation_slot,
        last_extended_slot,
        last_extended_slot_start_index,
        authority,
    })
}

/// Writes account data exactly as the program lays it out (metadata area zero-filled to 56 bytes,
/// then the addresses), replacing `out`'s contents. For stand-in clusters and tests.
pub fn encode_lookup_table_account(
    meta: &LookupTableMeta,
    addresses: &[Address],
    out: &mut Vec<u8>,
) {
    out.clear();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&meta.deactivation_slot.to_le_bytes());
    out.extend_from_slice(&meta.last_extended_slot.to_le_bytes());
    out.push(meta.last_extended_slot_start_index);
    match &meta.authority {
        None => out.push(0),
        Some(authority) => {
            out.push(1);
            out.extend_from_slice(authority);
        }
    }
    out.resize(LOOKUP_TABLE_META_LEN_BYTES, 0);
    out.extend(addresses.iter().flatten());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(authority: Option<Address>, count: usize) -> Vec<u8> {
        let meta = LookupTableMeta {
            deactivation_slot: 77,
            last_extended_slot: 66,
            last_extended_slot_start_index: 3,
            authority,
        };
        let addresses: Vec<Address> = (0..count).map(|i| [i as u8; 32]).collect();
        let mut out = Vec::new();
        encode_lookup_table_account(&meta, &addresses, &mut out);
        out
    }

    #[test]
    fn round_trips_with_and_without_authority() {
        for authority in [None, Some([9; 32])] {
            let data = sample(authority, 5);
            assert_eq!(data.len(), 56 + 5 * 32);
            let account = parse_lookup_table_account(&data).unwrap();
            assert_eq!(account.meta.authority, authority);
            assert_eq!(account.meta.deactivation_slot, 77);
            assert_eq!(account.meta.last_extended_slot, 66);
            assert_eq!(account.meta.last_extended_slot_start_index, 3);
            assert_eq!(account.addresses.len(), 5);
            assert_eq!(account.addresses[4], [4; 32]);
        }
    }

    #[test]
    fn rejects_each_malformation_with_its_label() {
        let good = sample(Some([9; 32]), 2);
        let cases: [(Vec<u8>, &str); 8] = [
            (good[..3].to_vec(), "truncated"),
            (good[..30].to_vec(), "truncated"),
            (vec![0; 56], "uninitialized"),
            ([&[2, 0, 0, 0][..], &good[4..]].concat(), "unknown_state"),
            (
                {
                    let mut bad = good.clone();
                    bad[21] = 2;
                    bad
                },
                "invalid_authority_tag",
            ),
            (good[..55].to_vec(), "truncated"),
            (sample(None, 0)[..55].to_vec(), "metadata_area_truncated"),
            (good[..good.len() - 1].to_vec(), "partial_address"),
        ];
        for (data, label) in cases {
            let error = parse_lookup_table_account(&data).unwrap_err();
            assert_eq!(error.label(), label, "{error}");
        }
        let full = sample(None, 257);
        assert_eq!(
            parse_lookup_table_account(&full),
            Err(AccountError::TooManyAddresses { count: 257 })
        );
    }
}
