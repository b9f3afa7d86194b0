//! Learning lookup tables from the stream: the lookup table program's top-level instructions of a
//! decoded transaction, applied to the cache before replay.
//!
//! Only top-level instructions are visible before replay; a table changed through a cross-program
//! invocation is learned from the cluster. Call [`learn_from_transaction`] after
//! [`resolve_lookups`](super::resolve_lookups) for the same transaction: the runtime loads a
//! transaction's addresses before it executes, and the instruction's table or authority may itself
//! be a loaded address. A transaction that fails at replay changes nothing on chain, but before
//! replay we cannot know it fails unless one of its lookup-table instructions is malformed (then
//! nothing of it is applied); the rest is provisional and corrected by the next cluster snapshot.

use crate::transaction::TransactionView;

use super::ADDRESS_LOOKUP_TABLE_PROGRAM_ID;
use super::account::Address;
use super::cache::{LookupTableCache, StreamOutcome};
use super::entry::{StreamRejection, StreamUpdate};
use super::instruction::{
    AUTHORITY_ACCOUNT_POSITION, InstructionError, LookupInstruction, TABLE_ACCOUNT_POSITION,
    parse_lookup_instruction,
};
use super::resolve::LoadedAddresses;

/// One top-level call of the lookup table program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupProgramCall<'a> {
    /// Position in the transaction's instructions.
    pub instruction_index: usize,
    pub account_indices: &'a [u8],
    pub instruction: Result<LookupInstruction<'a>, InstructionError>,
}

/// The transaction's top-level calls of the lookup table program, in order.
pub fn lookup_program_calls<'a>(
    transaction: &TransactionView<'a>,
) -> impl Iterator<Item = LookupProgramCall<'a>> + 'a {
    let static_keys = transaction.static_account_keys();
    transaction
        .instructions()
        .enumerate()
        .filter(move |(_, instruction)| {
            static_keys.get(usize::from(instruction.program_id_index))
                == Some(&ADDRESS_LOOKUP_TABLE_PROGRAM_ID)
        })
        .map(|(instruction_index, instruction)| LookupProgramCall {
            instruction_index,
            account_indices: instruction.account_indices,
            instruction: parse_lookup_instruction(instruction.data),
        })
}

/// What [`learn_from_transaction`] did with a transaction's lookup-table calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LearnSummary {
    pub calls: u32,
    pub applied: u32,
    pub unchanged: u32,
    pub rejected: u32,
    /// Calls about a table not cached (reported to the caller's callback).
    pub unknown_table: u32,
    /// Calls whose table or authority is a loaded address of an unresolved lookup.
    pub unnamed_account: u32,
    /// Malformed calls: the transaction fails at replay, so none of its calls was applied.
    pub malformed: u32,
}

/// Applies the transaction's lookup-table calls of `slot` to the cache, in order. `loaded` is the
/// transaction's resolution; `on_unknown_table` receives each table the cache does not hold.
pub fn learn_from_transaction(
    transaction: &TransactionView<'_>,
    slot: u64,
    loaded: &LoadedAddresses,
    cache: &mut LookupTableCache,
    mut on_unknown_table: impl FnMut(&Address),
) -> LearnSummary {
    let mut summary = LearnSummary::default();
    for call in lookup_program_calls(transaction) {
        summary.calls += 1;
        summary.malformed += u32::from(call.instruction.is_err());
    }
    if summary.calls == 0 || summary.malformed > 0 {
        return summary;
    }
    for call in lookup_program_calls(transaction) {
        let Ok(instruction) = call.instruction else {
            continue;
        };
        match apply_call(transaction, &call, instruction, slot, loaded, cache) {
            Err(CallError::Unnamed) => summary.unnamed_account += 1,
            Err(CallError::Rejected) | Ok(StreamOutcome::Rejected(_)) => summary.rejected += 1,
            Ok(StreamOutcome::Applied) => summary.applied += 1,
            Ok(StreamOutcome::Unchanged) => summary.unchanged += 1,
            Ok(StreamOutcome::UnknownTable) => {
                summary.unknown_table += 1;
                if let Some(table) = account_at(transaction, &call, loaded, TABLE_ACCOUNT_POSITION)
                {
                    on_unknown_table(table);
                }
            }
        }
    }
    summary
}

enum CallError {
    Unnamed,
    Rejected,
}

fn apply_call(
    transaction: &TransactionView<'_>,
    call: &LookupProgramCall<'_>,
    instruction: LookupInstruction<'_>,
    slot: u64,
    loaded: &LoadedAddresses,
    cache: &mut LookupTableCache,
) -> Result<StreamOutcome, CallError> {
    let (Some(&table_index), Some(&authority_index)) = (
        call.account_indices.get(TABLE_ACCOUNT_POSITION),
        call.account_indices.get(AUTHORITY_ACCOUNT_POSITION),
    ) else {
        cache.count_stream_rejection(StreamRejection::MissingAccount);
        return Err(CallError::Rejected);
    };
    let static_keys = transaction.static_account_keys();
    let (Some(table), Some(authority)) = (
        loaded.account_key(static_keys, table_index).address(),
        loaded.account_key(static_keys, authority_index).address(),
    ) else {
        return Err(CallError::Unnamed);
    };
    let update = StreamUpdate {
        instruction,
        authority,
        // Only static keys sign: the first num_required_signatures of them.
        authority_signed: authority_index < transaction.header().num_required_signatures,
    };
    Ok(cache.apply_stream(table, &update, slot))
}

fn account_at<'a>(
    transaction: &TransactionView<'a>,
    call: &LookupProgramCall<'_>,
    loaded: &'a LoadedAddresses,
    position: usize,
) -> Option<&'a Address> {
    let index = *call.account_indices.get(position)?;
    loaded
        .account_key(transaction.static_account_keys(), index)
        .address()
}
