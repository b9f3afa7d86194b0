//! Address lookup table program instructions as the validator parses them (bincode data: a `u32`
//! variant tag, fixed-width fields, trailing bytes ignored).

use serde_json::{Value, json};

use super::reader::{Accounts, Reader};
use super::typed as ix;

/// Parses an address lookup table instruction, or `None` (printed partially decoded).
pub fn parse(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let mut r = Reader(data);
    let tag = r.u32()?;
    let created = match tag {
        0 => Some((r.u64()?, r.u8()?)),
        1 | 3 | 4 => None,
        2 => None,
        _ => return None,
    };
    let new_addresses = if tag == 2 {
        let count = usize::try_from(r.u64()?).ok()?;
        if count > r.0.len() / 32 {
            return None;
        }
        (0..count)
            .map(|_| r.key())
            .collect::<Option<Vec<String>>>()?
    } else {
        Vec::new()
    };
    if accounts.is_empty() {
        return None;
    }
    let a = |i: usize| accounts.get(i);
    let table = |accounts: &Accounts<'_>| -> Option<Value> {
        Some(json!({"lookupTableAccount": accounts.get(0)?,
                    "lookupTableAuthority": accounts.get(1)?}))
    };
    Some(match (tag, created) {
        (0, Some((recent_slot, bump_seed))) => {
            accounts.need(4)?;
            ix(
                "createLookupTable",
                json!({"lookupTableAccount": a(0)?, "lookupTableAuthority": a(1)?,
                       "payerAccount": a(2)?, "systemProgram": a(3)?,
                       "recentSlot": recent_slot, "bumpSeed": bump_seed}),
            )
        }
        (1, _) => {
            accounts.need(2)?;
            ix("freezeLookupTable", table(accounts)?)
        }
        (2, _) => {
            accounts.need(2)?;
            let mut info = table(accounts)?;
            let map = info.as_object_mut()?;
            map.insert("newAddresses".to_string(), json!(new_addresses));
            if accounts.len() >= 4 {
                map.insert("payerAccount".to_string(), json!(a(2)?));
                map.insert("systemProgram".to_string(), json!(a(3)?));
            }
            ix("extendLookupTable", info)
        }
        (3, _) => {
            accounts.need(2)?;
            ix("deactivateLookupTable", table(accounts)?)
        }
        (4, _) => {
            accounts.need(3)?;
            let mut info = table(accounts)?;
            info.as_object_mut()?
                .insert("recipient".to_string(), json!(a(2)?));
            ix("closeLookupTable", info)
        }
        _ => return None,
    })
}
