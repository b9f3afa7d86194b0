//! Per-block statistics from an archive block (wire transactions plus stored status metadata),
//! equal to those computed from the same block's getBlock JSON: keys are rendered as base58 and
//! fed through the same builder.

use archive::Block;
use decoder::transaction::{MessageVersion, parse_transaction_exact};

use super::block_stats::{
    BlockStats, BlockStatsBuilder, TxFacts, is_writable_static, push_distinct,
};
use super::compute_budget::BudgetRequest;
use super::error::InsightsError;
use super::programs;

/// Base58 renderings of one transaction's keys: static, loaded writable, loaded read-only.
struct TxKeys {
    static_keys: Vec<String>,
    loaded_writable: Vec<String>,
    loaded_readonly: Vec<String>,
}

impl TxKeys {
    fn get(&self, index: usize) -> Option<&str> {
        self.static_keys
            .iter()
            .chain(&self.loaded_writable)
            .chain(&self.loaded_readonly)
            .nth(index)
            .map(String::as_str)
    }
}

/// Statistics of an archived block.
pub fn stats_from_archive_block(block: &Block) -> Result<BlockStats, InsightsError> {
    let slot = block.slot;
    let mut keys = Vec::with_capacity(block.transactions.len());
    for transaction in &block.transactions {
        let view = parse_transaction_exact(&transaction.wire).map_err(|_| {
            InsightsError::MalformedTransaction {
                slot,
                index: transaction.index as usize,
            }
        })?;
        let encode = |bytes: &[u8]| bs58::encode(bytes).into_string();
        let meta = transaction.meta.as_ref();
        keys.push(TxKeys {
            static_keys: view
                .static_account_keys()
                .iter()
                .map(|key| encode(key))
                .collect(),
            loaded_writable: meta
                .map(|meta| {
                    meta.loaded_writable_addresses
                        .iter()
                        .map(|key| encode(key))
                        .collect()
                })
                .unwrap_or_default(),
            loaded_readonly: meta
                .map(|meta| {
                    meta.loaded_readonly_addresses
                        .iter()
                        .map(|key| encode(key))
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
    let mut builder = BlockStatsBuilder::new(slot, block.parent_slot, block.block_time);
    for (transaction, keys) in block.transactions.iter().zip(&keys) {
        let index = transaction.index as usize;
        let malformed = InsightsError::MalformedTransaction { slot, index };
        let view = parse_transaction_exact(&transaction.wire).map_err(|_| malformed)?;
        let facts = tx_facts(&view, transaction.meta.as_ref(), keys)
            .ok_or(InsightsError::MalformedTransaction { slot, index })?;
        builder.push(facts);
    }
    Ok(builder.finish())
}

fn tx_facts<'a>(
    view: &decoder::transaction::TransactionView<'_>,
    meta: Option<&archive::proto::TransactionStatusMeta>,
    keys: &'a TxKeys,
) -> Option<TxFacts<'a>> {
    let program_of = |index: u8| keys.static_keys.get(usize::from(index)).map(String::as_str);
    if view.version() == MessageVersion::Legacy
        && view.signature_count() <= 2
        && view.instruction_count() == 1
    {
        let only = view.instructions().next()?;
        if program_of(only.program_id_index) == Some(programs::VOTE_PROGRAM) {
            return Some(TxFacts {
                is_vote: true,
                ..TxFacts::default()
            });
        }
    }
    let header = view.header();
    let required = usize::from(header.num_required_signatures);
    let key_count = keys.static_keys.len();
    let mut facts = TxFacts {
        signers: keys
            .static_keys
            .iter()
            .take(required)
            .map(String::as_str)
            .collect(),
        ok: true,
        ..TxFacts::default()
    };
    for (index, key) in keys.static_keys.iter().enumerate() {
        if is_writable_static(
            index,
            key_count,
            required,
            usize::from(header.num_readonly_signed_accounts),
            usize::from(header.num_readonly_unsigned_accounts),
        ) {
            facts.writable.push(key.as_str());
        }
    }
    let mut budget = BudgetRequest::default();
    let mut top_level = Vec::with_capacity(view.instruction_count());
    for instruction in view.instructions() {
        let program = program_of(instruction.program_id_index)?;
        top_level.push(program);
        push_distinct(&mut facts.programs, program);
        if program == programs::COMPUTE_BUDGET_PROGRAM {
            budget.note(instruction.data);
        }
    }
    facts.priority_fee = budget.priority_fee();
    facts.unit_limit = budget.unit_limit(top_level.into_iter());
    if let Some(meta) = meta {
        facts.ok = meta.err.is_none();
        facts.units_consumed = meta.compute_units_consumed;
        facts.cost_units = meta.cost_units;
        facts
            .writable
            .extend(keys.loaded_writable.iter().map(String::as_str));
        for instruction in meta
            .inner_instructions
            .iter()
            .flat_map(|group| &group.instructions)
        {
            let program = keys.get(instruction.program_id_index as usize)?;
            push_distinct(&mut facts.programs, program);
        }
    }
    Some(facts)
}
