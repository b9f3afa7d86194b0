//! The associated token account program's instructions as the validator parses them: empty data
//! is `create` (the original instruction had none); otherwise exactly one Borsh enum byte.

use serde_json::{Value, json};

use super::reader::Accounts;
use super::typed as ix;

/// Parses an associated-token-account instruction, or `None` (printed partially decoded).
pub fn parse(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    if accounts.is_empty() {
        return None;
    }
    let a = |i: usize| accounts.get(i);
    let kind = match data {
        [] | [0] => "create",
        [1] => "createIdempotent",
        [2] => {
            accounts.need(7)?;
            return Some(ix(
                "recoverNested",
                json!({"nestedSource": a(0)?, "nestedMint": a(1)?, "destination": a(2)?,
                       "nestedOwner": a(3)?, "ownerMint": a(4)?, "wallet": a(5)?,
                       "tokenProgram": a(6)?}),
            ));
        }
        _ => return None,
    };
    accounts.need(6)?;
    Some(ix(
        kind,
        json!({"source": a(0)?, "account": a(1)?, "wallet": a(2)?, "mint": a(3)?,
               "systemProgram": a(4)?, "tokenProgram": a(5)?}),
    ))
}
