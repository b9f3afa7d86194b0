//! The address lookup table program's instructions, from signed instruction bytes.
//!
//! The data is the bincode 1 encoding (fixed-width integers, little endian) of the program's
//! `ProgramInstruction` enum; the program reads it with a 1,232-byte limit and ignores trailing
//! bytes, and so does [`parse_lookup_instruction`]:
//!
//! ```text
//! u32 variant  0 CreateLookupTable     u64 recent_slot, u8 bump_seed
//!              1 FreezeLookupTable
//!              2 ExtendLookupTable     u64 count, count × [u8; 32] new addresses
//!              3 DeactivateLookupTable
//!              4 CloseLookupTable
//! ```
//!
//! Accounts, the same position for every instruction: 0 the table (writable), 1 the authority
//! (a signer except for create, where it only seeds the address); then create: 2 payer,
//! 3 system program; extend: 2 optional payer, 3 optional system program; close: 2 recipient.

use thiserror::Error;

use crate::cursor::Cursor;
use crate::transaction::ADDRESS_LEN_BYTES;

use super::account::Address;

/// Position of the table in every instruction's accounts.
pub const TABLE_ACCOUNT_POSITION: usize = 0;
/// Position of the authority in every instruction's accounts.
pub const AUTHORITY_ACCOUNT_POSITION: usize = 1;

/// One decoded instruction; extend's addresses borrow from the instruction data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupInstruction<'a> {
    Create { recent_slot: u64, bump_seed: u8 },
    Freeze,
    Extend { new_addresses: &'a [Address] },
    Deactivate,
    Close,
}

impl LookupInstruction<'_> {
    /// Stable name, for logs and metric labels.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Create { .. } => "create",
            Self::Freeze => "freeze",
            Self::Extend { .. } => "extend",
            Self::Deactivate => "deactivate",
            Self::Close => "close",
        }
    }

    /// Whether the program requires the authority (account 1) to sign.
    pub const fn authority_must_sign(&self) -> bool {
        !matches!(self, Self::Create { .. })
    }
}

/// Why instruction data is not a lookup-table instruction; [`label`](Self::label) is the metric
/// label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum InstructionError {
    #[error("lookup table instruction data of {len} bytes is truncated")]
    Truncated { len: usize },
    #[error("unknown lookup table instruction {variant}")]
    UnknownVariant { variant: u32 },
}

impl InstructionError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Truncated { .. } => "truncated",
            Self::UnknownVariant { .. } => "unknown_variant",
        }
    }
}

/// Decodes one instruction of the address lookup table program.
pub fn parse_lookup_instruction(data: &[u8]) -> Result<LookupInstruction<'_>, InstructionError> {
    let truncated = |_| InstructionError::Truncated { len: data.len() };
    let mut cursor = Cursor::new(data);
    let instruction = match cursor.take_u32_le("variant").map_err(truncated)? {
        0 => LookupInstruction::Create {
            recent_slot: cursor.take_u64_le("recent slot").map_err(truncated)?,
            bump_seed: cursor.take_u8("bump seed").map_err(truncated)?,
        },
        1 => LookupInstruction::Freeze,
        2 => LookupInstruction::Extend {
            new_addresses: read_addresses(&mut cursor).map_err(truncated)?,
        },
        3 => LookupInstruction::Deactivate,
        4 => LookupInstruction::Close,
        variant => return Err(InstructionError::UnknownVariant { variant }),
    };
    Ok(instruction)
}

/// A bincode `Vec<Pubkey>`: u64 count, then the addresses. A count that cannot fit is a
/// truncation, found with one comparison.
fn read_addresses<'a>(
    cursor: &mut Cursor<'a>,
) -> Result<&'a [Address], crate::cursor::CursorError> {
    let count = cursor.take_u64_le("address count")?;
    let len_bytes = usize::try_from(count)
        .unwrap_or(usize::MAX)
        .saturating_mul(ADDRESS_LEN_BYTES);
    let bytes = cursor.take(len_bytes, "new addresses")?;
    Ok(bytes.as_chunks::<ADDRESS_LEN_BYTES>().0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_variant_and_ignores_trailing_bytes() {
        let mut create = vec![0, 0, 0, 0];
        create.extend_from_slice(&123u64.to_le_bytes());
        create.extend_from_slice(&[254, 0xAA]);
        assert_eq!(
            parse_lookup_instruction(&create),
            Ok(LookupInstruction::Create {
                recent_slot: 123,
                bump_seed: 254
            })
        );
        let mut extend = vec![2, 0, 0, 0];
        extend.extend_from_slice(&2u64.to_le_bytes());
        extend.extend_from_slice(&[[1; 32], [2; 32]].concat());
        let Ok(LookupInstruction::Extend { new_addresses }) = parse_lookup_instruction(&extend)
        else {
            panic!("extend");
        };
        assert_eq!(new_addresses, &[[1; 32], [2; 32]]);
        for (variant, name) in [(1u8, "freeze"), (3, "deactivate"), (4, "close")] {
            let data = [variant, 0, 0, 0];
            assert_eq!(parse_lookup_instruction(&data).unwrap().name(), name);
        }
    }

    #[test]
    fn rejects_truncations_and_unknown_variants() {
        assert_eq!(
            parse_lookup_instruction(&[0, 0, 0]).unwrap_err().label(),
            "truncated"
        );
        assert_eq!(
            parse_lookup_instruction(&[0, 0, 0, 0, 1])
                .unwrap_err()
                .label(),
            "truncated"
        );
        let mut huge = vec![2, 0, 0, 0];
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            parse_lookup_instruction(&huge).unwrap_err().label(),
            "truncated"
        );
        assert_eq!(
            parse_lookup_instruction(&[5, 0, 0, 0]),
            Err(InstructionError::UnknownVariant { variant: 5 })
        );
    }
}
