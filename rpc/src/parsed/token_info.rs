//! The members of a token instruction's `info` that the token, Token-2022 extension and
//! token-interface parsers share: the token amount object, the authority or multisig signers, and
//! inserting a member.

use serde_json::{Map, Value, json};

use super::reader::Accounts;
use crate::amount::real_number_string_trimmed;

/// `{"amount","decimals","uiAmount","uiAmountString"}` as the validator prints a token amount
/// without interest-bearing or scaled configuration.
pub fn token_amount(amount: u64, decimals: u8) -> Value {
    let ui_amount = 10_u64
        .checked_pow(u32::from(decimals))
        .map(|divisor| amount as f64 / divisor as f64);
    json!({
        "amount": amount.to_string(),
        "decimals": decimals,
        "uiAmount": ui_amount,
        "uiAmountString": real_number_string_trimmed(amount, decimals),
    })
}

/// Adds the authority of an instruction: `owner` when it is the last account, else the multisig
/// account as `multisig` plus the remaining accounts as `signers`.
pub fn signers(
    info: &mut Value,
    last_nonsigner: usize,
    accounts: &Accounts<'_>,
    owner: &str,
    multisig: &str,
) -> Option<()> {
    let map: &mut Map<String, Value> = info.as_object_mut()?;
    if accounts.len() > last_nonsigner + 1 {
        let signers: Vec<String> = accounts.keys(last_nonsigner + 1)?;
        map.insert(multisig.to_string(), json!(accounts.get(last_nonsigner)?));
        map.insert("signers".to_string(), json!(signers));
    } else {
        map.insert(owner.to_string(), json!(accounts.get(last_nonsigner)?));
    }
    Some(())
}

/// Inserts `key: value` into an info object.
pub fn insert(info: &mut Value, key: &str, value: Value) {
    if let Some(map) = info.as_object_mut() {
        map.insert(key.to_string(), value);
    }
}
