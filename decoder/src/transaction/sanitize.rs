//! The structural sanitize rules (1–7 in the `transaction` module doc), applied to a completed
//! wire walk in the order the reference applies them.

use super::wire::Layout;
use super::{ACCOUNT_KEYS_V0_MAX, InstructionIter, MessageVersion, TransactionError};
use crate::cursor::Cursor;

/// Applies rules 1–7 (module doc) in the reference's order.
pub(super) fn sanitize(layout: &Layout<'_>) -> Result<(), TransactionError> {
    let header = layout.header;
    let static_account_count = layout.static_account_keys.len();
    let needed = usize::from(header.num_required_signatures)
        + usize::from(header.num_readonly_unsigned_accounts);
    if needed > static_account_count {
        return Err(TransactionError::HeaderExceedsStaticKeys {
            needed,
            static_account_count,
        });
    }
    if header.num_readonly_signed_accounts >= header.num_required_signatures {
        return Err(TransactionError::NoWritableFeePayer {
            num_readonly_signed_accounts: header.num_readonly_signed_accounts,
            num_required_signatures: header.num_required_signatures,
        });
    }
    if let Some(lookup_index) = layout.empty_lookup_index {
        return Err(TransactionError::EmptyAddressTableLookup { lookup_index });
    }
    let account_count =
        static_account_count + layout.loaded_writable_count + layout.loaded_readonly_count;
    if layout.version == MessageVersion::V0 && account_count > ACCOUNT_KEYS_V0_MAX {
        return Err(TransactionError::TooManyAccountKeys {
            account_count,
            max: ACCOUNT_KEYS_V0_MAX,
        });
    }
    let summary = &layout.index_summary;
    if summary.program_id_index_end > static_account_count
        || summary.program_id_is_fee_payer
        || summary.account_index_end > account_count
    {
        find_bad_instruction(layout, account_count)?;
    }
    if layout.signatures.len() != usize::from(header.num_required_signatures) {
        return Err(TransactionError::SignatureCountMismatch {
            num_required_signatures: header.num_required_signatures,
            signature_count: layout.signatures.len(),
        });
    }
    Ok(())
}

/// Slow path of rules 5–6, run only when the summary shows a bad index: finds the first offending
/// instruction in the order the reference checks them, so the error names it.
fn find_bad_instruction(layout: &Layout<'_>, account_count: usize) -> Result<(), TransactionError> {
    let static_account_count = layout.static_account_keys.len();
    let instructions = InstructionIter {
        cursor: Cursor::new(layout.instructions),
        remaining: layout.instruction_count,
    };
    for (instruction_index, instruction) in instructions.enumerate() {
        let program_id_index = instruction.program_id_index;
        if usize::from(program_id_index) >= static_account_count {
            return Err(TransactionError::ProgramIdIndexOutOfRange {
                instruction_index,
                program_id_index,
                static_account_count,
            });
        }
        if program_id_index == 0 {
            return Err(TransactionError::ProgramIdIsFeePayer { instruction_index });
        }
        let bad_account = instruction
            .account_indices
            .iter()
            .find(|&&account_index| usize::from(account_index) >= account_count);
        if let Some(&account_index) = bad_account {
            return Err(TransactionError::AccountIndexOutOfRange {
                instruction_index,
                account_index,
                account_count,
            });
        }
    }
    debug_assert!(
        false,
        "index summary flagged an instruction that the re-walk did not find"
    );
    Ok(())
}
