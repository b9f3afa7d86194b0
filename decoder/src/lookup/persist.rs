//! A cached table as plain bytes, for the owner's persistent store (the key is stored beside it).
//!
//! ```text
//! u8   format version (1)
//! u64  deactivation_slot        u64 last_extended_slot      u8 last_extended_slot_start_index
//! u8   authority tag (0 frozen, 1 present), then 32 bytes if present
//! u8   flags: bit 0 provisional_since present, bit 1 snapshot_slot present
//! u64  provisional_since (0 if absent)                      u64 snapshot_slot (0 if absent)
//! u16  confirmed_len            u16 address count           count × 32 addresses
//! ```
//! Integers are little endian. Decoding refuses anything else, trailing bytes and non-zero absent
//! slots included, so an entry has exactly one encoding.

use thiserror::Error;

use crate::cursor::Cursor;
use crate::transaction::ADDRESS_LEN_BYTES;

use super::LOOKUP_TABLE_MAX_ADDRESSES;
use super::account::{Address, LookupTableMeta};
use super::entry::TableState;

const FORMAT_VERSION: u8 = 1;
const FLAG_PROVISIONAL: u8 = 1;
const FLAG_SNAPSHOT: u8 = 2;

/// Why stored bytes are not a cache entry; [`label`](Self::label) is the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ImportError {
    #[error("stored entry is truncated")]
    Truncated,
    #[error("stored entry has format version {version}, expected 1")]
    UnknownVersion { version: u8 },
    #[error("stored entry has a bad tag or flag byte {value}")]
    BadTag { value: u8 },
    #[error("stored entry stores a slot its flags say is absent")]
    NonCanonical,
    #[error("stored entry holds {count} addresses, at most 256")]
    TooManyAddresses { count: usize },
    #[error("stored entry confirms {confirmed_len} of {count} addresses")]
    ConfirmedPastEnd { confirmed_len: usize, count: usize },
    #[error("{count} bytes follow the stored entry")]
    TrailingBytes { count: usize },
}

impl ImportError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Truncated => "truncated",
            Self::UnknownVersion { .. } => "unknown_version",
            Self::BadTag { .. } => "bad_tag",
            Self::NonCanonical => "non_canonical",
            Self::TooManyAddresses { .. } => "too_many_addresses",
            Self::ConfirmedPastEnd { .. } => "confirmed_past_end",
            Self::TrailingBytes { .. } => "trailing_bytes",
        }
    }
}

pub(super) fn encode_entry(table: &TableState, out: &mut Vec<u8>) {
    out.clear();
    out.push(FORMAT_VERSION);
    out.extend_from_slice(&table.meta.deactivation_slot.to_le_bytes());
    out.extend_from_slice(&table.meta.last_extended_slot.to_le_bytes());
    out.push(table.meta.last_extended_slot_start_index);
    match &table.meta.authority {
        None => out.push(0),
        Some(authority) => {
            out.push(1);
            out.extend_from_slice(authority);
        }
    }
    let mut flags = 0;
    if table.provisional_since.is_some() {
        flags |= FLAG_PROVISIONAL;
    }
    if table.snapshot_slot.is_some() {
        flags |= FLAG_SNAPSHOT;
    }
    out.push(flags);
    out.extend_from_slice(&table.provisional_since.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&table.snapshot_slot.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&table.confirmed_len.to_le_bytes());
    out.extend_from_slice(&(table.addresses.len() as u16).to_le_bytes());
    out.extend(table.addresses.iter().flatten());
}

pub(super) fn decode_entry(bytes: &[u8]) -> Result<TableState, ImportError> {
    let truncated = |_| ImportError::Truncated;
    let mut cursor = Cursor::new(bytes);
    let version = cursor.take_u8("version").map_err(truncated)?;
    if version != FORMAT_VERSION {
        return Err(ImportError::UnknownVersion { version });
    }
    let meta = read_meta(&mut cursor)?;
    let flags = cursor.take_u8("flags").map_err(truncated)?;
    if flags & !(FLAG_PROVISIONAL | FLAG_SNAPSHOT) != 0 {
        return Err(ImportError::BadTag { value: flags });
    }
    let provisional_since = cursor.take_u64_le("provisional").map_err(truncated)?;
    let snapshot_slot = cursor.take_u64_le("snapshot").map_err(truncated)?;
    let provisional_since = optional(flags & FLAG_PROVISIONAL != 0, provisional_since)?;
    let snapshot_slot = optional(flags & FLAG_SNAPSHOT != 0, snapshot_slot)?;
    let confirmed_len = cursor.take_u16_le("confirmed").map_err(truncated)?;
    let addresses = read_addresses(&mut cursor)?;
    if usize::from(confirmed_len) > addresses.len() {
        return Err(ImportError::ConfirmedPastEnd {
            confirmed_len: usize::from(confirmed_len),
            count: addresses.len(),
        });
    }
    if !cursor.is_empty() {
        return Err(ImportError::TrailingBytes {
            count: cursor.remaining(),
        });
    }
    Ok(TableState {
        meta,
        addresses: addresses.to_vec(),
        confirmed_len,
        provisional_since,
        snapshot_slot,
    })
}

/// A slot present when its flag is set; absent ones are stored as 0, so each entry has exactly
/// one encoding.
fn optional(present: bool, slot: u64) -> Result<Option<u64>, ImportError> {
    match (present, slot) {
        (true, slot) => Ok(Some(slot)),
        (false, 0) => Ok(None),
        (false, _) => Err(ImportError::NonCanonical),
    }
}

fn read_meta(cursor: &mut Cursor<'_>) -> Result<LookupTableMeta, ImportError> {
    let truncated = |_| ImportError::Truncated;
    let deactivation_slot = cursor.take_u64_le("deactivation").map_err(truncated)?;
    let last_extended_slot = cursor.take_u64_le("extended").map_err(truncated)?;
    let last_extended_slot_start_index = cursor.take_u8("start").map_err(truncated)?;
    let authority = match cursor.take_u8("authority tag").map_err(truncated)? {
        0 => None,
        1 => Some(*cursor.take_array("authority").map_err(truncated)?),
        value => return Err(ImportError::BadTag { value }),
    };
    Ok(LookupTableMeta {
        deactivation_slot,
        last_extended_slot,
        last_extended_slot_start_index,
        authority,
    })
}

fn read_addresses<'a>(cursor: &mut Cursor<'a>) -> Result<&'a [Address], ImportError> {
    let count = usize::from(
        cursor
            .take_u16_le("count")
            .map_err(|_| ImportError::Truncated)?,
    );
    if count > LOOKUP_TABLE_MAX_ADDRESSES {
        return Err(ImportError::TooManyAddresses { count });
    }
    let bytes = cursor
        .take(count * ADDRESS_LEN_BYTES, "addresses")
        .map_err(|_| ImportError::Truncated)?;
    Ok(bytes.as_chunks::<ADDRESS_LEN_BYTES>().0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TableState {
        TableState {
            meta: LookupTableMeta {
                deactivation_slot: 9,
                last_extended_slot: 8,
                last_extended_slot_start_index: 1,
                authority: Some([5; 32]),
            },
            addresses: vec![[1; 32], [2; 32]],
            confirmed_len: 1,
            provisional_since: Some(8),
            snapshot_slot: None,
        }
    }

    #[test]
    fn round_trips_and_has_one_encoding() {
        let mut bytes = Vec::new();
        encode_entry(&sample(), &mut bytes);
        assert_eq!(bytes.len(), 1 + 8 + 8 + 1 + 33 + 1 + 8 + 8 + 2 + 2 + 64);
        assert_eq!(decode_entry(&bytes), Ok(sample()));
        let snapshot_at = 1 + 8 + 8 + 1 + 33 + 1 + 8;
        let mut absent_but_set = bytes.clone();
        absent_but_set[snapshot_at] = 1;
        assert_eq!(
            decode_entry(&absent_but_set),
            Err(ImportError::NonCanonical)
        );
    }

    #[test]
    fn rejects_each_malformation_with_its_label() {
        let mut good = Vec::new();
        encode_entry(&sample(), &mut good);
        let edit = |at: usize, value: u8| {
            let mut bytes = good.clone();
            bytes[at] = value;
            bytes
        };
        let count_at = good.len() - 64 - 2;
        let cases = [
            (good[..good.len() - 1].to_vec(), "truncated"),
            (edit(0, 2), "unknown_version"),
            (edit(18, 2), "bad_tag"),
            (edit(51, 4), "bad_tag"),
            (edit(count_at - 2, 3), "confirmed_past_end"),
            ([&good[..], &[0]].concat(), "trailing_bytes"),
            (
                [&good[..count_at], &257u16.to_le_bytes()[..]].concat(),
                "too_many_addresses",
            ),
        ];
        for (bytes, label) in cases {
            assert_eq!(decode_entry(&bytes).unwrap_err().label(), label);
        }
    }
}
