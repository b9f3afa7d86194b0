//! Per-block statistics from a validator's getBlock result (`encoding: json`, full transaction
//! details, `maxSupportedTransactionVersion: 0`). Only the fields the statistics need are
//! deserialised; keys stay borrowed base58 strings (no decoding on the hot path).

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::block_stats::{
    BlockStats, BlockStatsBuilder, TxFacts, is_writable_static, push_distinct,
};
use super::compute_budget::BudgetRequest;
use super::error::InsightsError;
use super::programs;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RpcBlock<'a> {
    parent_slot: u64,
    #[serde(default)]
    block_time: Option<i64>,
    #[serde(borrow, default)]
    transactions: Vec<RpcTxEntry<'a>>,
}

#[derive(Deserialize)]
struct RpcTxEntry<'a> {
    #[serde(borrow)]
    transaction: RpcTransaction<'a>,
    #[serde(borrow, default)]
    meta: Option<RpcMeta<'a>>,
}

#[derive(Deserialize)]
struct RpcTransaction<'a> {
    signatures: Vec<IgnoredAny>,
    #[serde(borrow)]
    message: RpcMessage<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RpcMessage<'a> {
    #[serde(borrow)]
    account_keys: Vec<&'a str>,
    header: RpcHeader,
    #[serde(borrow)]
    instructions: Vec<RpcInstruction<'a>>,
    /// Present (possibly empty) for v0 messages only.
    #[serde(default)]
    address_table_lookups: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RpcHeader {
    num_required_signatures: usize,
    num_readonly_signed_accounts: usize,
    num_readonly_unsigned_accounts: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RpcInstruction<'a> {
    program_id_index: usize,
    data: &'a str,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RpcMeta<'a> {
    #[serde(default)]
    err: Option<IgnoredAny>,
    #[serde(default)]
    compute_units_consumed: Option<u64>,
    #[serde(default)]
    cost_units: Option<u64>,
    #[serde(borrow, default)]
    loaded_addresses: Option<RpcLoaded<'a>>,
    #[serde(default)]
    inner_instructions: Option<Vec<RpcInner>>,
}

#[derive(Deserialize)]
struct RpcLoaded<'a> {
    #[serde(borrow, default)]
    writable: Vec<&'a str>,
    #[serde(borrow, default)]
    readonly: Vec<&'a str>,
}

#[derive(Deserialize)]
struct RpcInner {
    instructions: Vec<RpcInnerInstruction>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RpcInnerInstruction {
    program_id_index: usize,
}

/// Statistics of the block in `slot` from its getBlock `result` object.
pub fn stats_from_block_json(slot: u64, result: &[u8]) -> Result<BlockStats, InsightsError> {
    let block: RpcBlock<'_> = serde_json::from_slice(result)
        .map_err(|source| InsightsError::BlockJson { slot, source })?;
    stats_from_rpc_block(slot, &block)
}

/// Statistics from the `result` of a getBlock JSON-RPC response given as a whole envelope
/// (`{"jsonrpc":"2.0","result":{...},"id":..}`), parsed in one pass.
pub(crate) fn stats_from_envelope(
    slot: u64,
    body: &[u8],
) -> Result<Option<BlockStats>, InsightsError> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow, default)]
        result: Option<RpcBlock<'a>>,
    }
    let envelope: Envelope<'_> =
        serde_json::from_slice(body).map_err(|source| InsightsError::BlockJson { slot, source })?;
    envelope
        .result
        .map(|block| stats_from_rpc_block(slot, &block))
        .transpose()
}

fn stats_from_rpc_block(slot: u64, block: &RpcBlock<'_>) -> Result<BlockStats, InsightsError> {
    let mut builder = BlockStatsBuilder::new(slot, block.parent_slot, block.block_time);
    for (index, entry) in block.transactions.iter().enumerate() {
        builder.push(tx_facts(entry).ok_or(InsightsError::MalformedTransaction { slot, index })?);
    }
    Ok(builder.finish())
}

/// The facts of one transaction entry; `None` when its indexes point outside its keys.
fn tx_facts<'a>(entry: &RpcTxEntry<'a>) -> Option<TxFacts<'a>> {
    let message = &entry.transaction.message;
    let keys = &message.account_keys;
    let program_of =
        |instruction: &RpcInstruction<'a>| keys.get(instruction.program_id_index).copied();
    let is_legacy = message.address_table_lookups.is_none();
    if is_legacy
        && entry.transaction.signatures.len() <= 2
        && message.instructions.len() == 1
        && program_of(&message.instructions[0]) == Some(programs::VOTE_PROGRAM)
    {
        return Some(TxFacts {
            is_vote: true,
            ..TxFacts::default()
        });
    }
    let header = &message.header;
    let mut facts = TxFacts {
        signers: keys
            .iter()
            .take(header.num_required_signatures)
            .copied()
            .collect(),
        ok: true,
        ..TxFacts::default()
    };
    for (index, &key) in keys.iter().enumerate() {
        if is_writable_static(
            index,
            keys.len(),
            header.num_required_signatures,
            header.num_readonly_signed_accounts,
            header.num_readonly_unsigned_accounts,
        ) {
            facts.writable.push(key);
        }
    }
    let mut budget = BudgetRequest::default();
    let mut top_level = Vec::with_capacity(message.instructions.len());
    for instruction in &message.instructions {
        let program = program_of(instruction)?;
        top_level.push(program);
        push_distinct(&mut facts.programs, program);
        if program == programs::COMPUTE_BUDGET_PROGRAM {
            let mut data = [0u8; 16];
            if let Ok(len) = bs58::decode(instruction.data).onto(&mut data[..]) {
                budget.note(&data[..len]);
            }
        }
    }
    facts.priority_fee = budget.priority_fee();
    facts.unit_limit = budget.unit_limit(top_level.into_iter());
    if let Some(meta) = &entry.meta {
        facts.ok = meta.err.is_none();
        facts.units_consumed = meta.compute_units_consumed;
        facts.cost_units = meta.cost_units;
        let (loaded_writable, loaded_readonly): (&[&'a str], &[&'a str]) =
            match &meta.loaded_addresses {
                Some(loaded) => (&loaded.writable, &loaded.readonly),
                None => (&[], &[]),
            };
        facts.writable.extend_from_slice(loaded_writable);
        if let Some(inner) = &meta.inner_instructions {
            for instruction in inner.iter().flat_map(|group| &group.instructions) {
                let index = instruction.program_id_index;
                let program = keys
                    .get(index)
                    .or_else(|| loaded_writable.get(index - keys.len()))
                    .or_else(|| loaded_readonly.get(index - keys.len() - loaded_writable.len()))?;
                push_distinct(&mut facts.programs, program);
            }
        }
    }
    Some(facts)
}
