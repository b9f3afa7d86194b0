//! `getMultipleAccounts` of lookup tables from the cluster (`--rpc`), in the validator's shapes:
//! `{"context":{"slot":N},"value":[null | {"data":["<base64>","base64"],"owner":"…",…}]}`, at
//! most [`MAX_BATCH`] tables a request; each answer owner-checked, parsed and applied to the cache.

use base64::Engine;
use decoder::lookup::{
    ADDRESS_LOOKUP_TABLE_PROGRAM_ID, Address, LookupTableCache, parse_lookup_table_account,
};
use front::jsonrpc::{CallError, JsonRpcClient};
use serde::Deserialize;

/// Most accounts one `getMultipleAccounts` request may name (the validator's limit).
pub const MAX_BATCH: usize = 100;

#[derive(Deserialize)]
struct Answer {
    context: Context,
    value: Vec<Option<Account>>,
}

#[derive(Deserialize)]
struct Context {
    slot: u64,
}

#[derive(Deserialize)]
struct Account {
    data: Vec<String>,
    owner: String,
}

/// What the cluster said about one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableAnswer {
    /// The account's data (owner checked; parsed when applied).
    Found(Vec<u8>),
    /// No such account.
    Absent,
    /// An account of another program.
    WrongOwner,
    /// Data not in base64 or not a lookup table.
    InvalidData,
}

impl TableAnswer {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Found(_) => "found",
            Self::Absent => "absent",
            Self::WrongOwner => "wrong_owner",
            Self::InvalidData => "invalid_data",
        }
    }
}

/// The answers for `tables` (same order) and the context slot they were read at.
pub fn fetch_tables(
    client: &JsonRpcClient,
    tables: &[Address],
) -> Result<(u64, Vec<TableAnswer>), CallError> {
    let keys: Vec<String> = tables
        .iter()
        .map(|table| bs58::encode(table).into_string())
        .collect();
    let params = serde_json::json!([keys, {"encoding": "base64", "commitment": "confirmed"}]);
    let answer: Answer =
        client
            .call("getMultipleAccounts", params)?
            .ok_or(CallError::Response {
                method: "getMultipleAccounts",
                reason: "no result".into(),
            })?;
    if answer.value.len() != tables.len() {
        return Err(CallError::Response {
            method: "getMultipleAccounts",
            reason: format!("{} accounts for {} keys", answer.value.len(), tables.len()),
        });
    }
    let answers = answer.value.into_iter().map(table_answer).collect();
    Ok((answer.context.slot, answers))
}

fn table_answer(account: Option<Account>) -> TableAnswer {
    let Some(account) = account else {
        return TableAnswer::Absent;
    };
    let owner = bs58::decode(&account.owner).into_vec().ok();
    if owner.as_deref() != Some(&ADDRESS_LOOKUP_TABLE_PROGRAM_ID[..]) {
        return TableAnswer::WrongOwner;
    }
    let bytes = match account.data.as_slice() {
        [data, encoding] if encoding == "base64" => {
            base64::engine::general_purpose::STANDARD.decode(data).ok()
        }
        _ => None,
    };
    match bytes {
        Some(bytes) if parse_lookup_table_account(&bytes).is_ok() => TableAnswer::Found(bytes),
        _ => TableAnswer::InvalidData,
    }
}

/// Applies one answer read at `context_slot` to the cache.
pub fn apply(cache: &mut LookupTableCache, table: &Address, answer: &TableAnswer, slot: u64) {
    match answer {
        TableAnswer::Found(bytes) => match parse_lookup_table_account(bytes) {
            Ok(account) => {
                cache.apply_snapshot(table, &account, slot);
            }
            Err(_) => {
                cache.apply_absent(table, slot);
            }
        },
        TableAnswer::Absent | TableAnswer::WrongOwner | TableAnswer::InvalidData => {
            cache.apply_absent(table, slot);
        }
    }
}
