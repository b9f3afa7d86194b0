//! System program instructions as the validator parses them (bincode `SystemInstruction`: a `u32`
//! variant tag, then the fields), one helper per instruction group.

use serde_json::{Value, json};

use super::reader::Reader;

/// The account key at a position of the instruction's accounts.
type Account<'a> = &'a dyn Fn(usize) -> Option<String>;
/// `Some` when the instruction has at least this many accounts.
type Need<'a> = &'a dyn Fn(usize) -> Option<()>;

/// The validator's parse of a System program instruction: `{"info":{...},"type":"..."}`, or
/// `None` (printed partially decoded) when the data or the account count do not fit.
pub(super) fn parse_system(
    data: &[u8],
    account: &dyn Fn(usize) -> Option<String>,
    account_count: usize,
) -> Option<Value> {
    let mut reader = Reader(data);
    let tag = reader.u32()?;
    let need = |count: usize| (account_count >= count).then_some(());
    let (kind, info) = match tag {
        0 | 2 | 3 | 11 => create_or_transfer(tag, &mut reader, account, &need)?,
        1 | 8..=10 => assign_or_allocate(tag, &mut reader, account, &need)?,
        4..=7 | 12 => nonce(tag, &mut reader, account, &need)?,
        _ => return None,
    };
    Some(json!({"info": info, "type": kind}))
}

/// `createAccount`, `transfer`, `createAccountWithSeed`, `transferWithSeed`.
fn create_or_transfer(
    tag: u32,
    reader: &mut Reader<'_>,
    account: Account<'_>,
    need: Need<'_>,
) -> Option<(&'static str, Value)> {
    Some(match tag {
        0 => {
            let (lamports, space, owner) = (reader.u64()?, reader.u64()?, reader.key()?);
            need(2)?;
            (
                "createAccount",
                json!({"source": account(0)?, "newAccount": account(1)?, "lamports": lamports,
                       "space": space, "owner": owner}),
            )
        }
        2 => {
            let lamports = reader.u64()?;
            need(2)?;
            (
                "transfer",
                json!({"source": account(0)?, "destination": account(1)?, "lamports": lamports}),
            )
        }
        3 => {
            let (base, seed) = (reader.key()?, reader.string()?);
            let (lamports, space, owner) = (reader.u64()?, reader.u64()?, reader.key()?);
            need(2)?;
            (
                "createAccountWithSeed",
                json!({"source": account(0)?, "newAccount": account(1)?, "base": base,
                       "seed": seed, "lamports": lamports, "space": space, "owner": owner}),
            )
        }
        11 => {
            let (lamports, seed, owner) = (reader.u64()?, reader.string()?, reader.key()?);
            need(3)?;
            (
                "transferWithSeed",
                json!({"source": account(0)?, "sourceBase": account(1)?,
                       "destination": account(2)?, "lamports": lamports, "sourceSeed": seed,
                       "sourceOwner": owner}),
            )
        }
        _ => return None,
    })
}

/// `assign`, `allocate`, `allocateWithSeed`, `assignWithSeed`.
fn assign_or_allocate(
    tag: u32,
    reader: &mut Reader<'_>,
    account: Account<'_>,
    need: Need<'_>,
) -> Option<(&'static str, Value)> {
    Some(match tag {
        1 => {
            let owner = reader.key()?;
            need(1)?;
            ("assign", json!({"account": account(0)?, "owner": owner}))
        }
        8 => {
            let space = reader.u64()?;
            need(1)?;
            ("allocate", json!({"account": account(0)?, "space": space}))
        }
        9 => {
            let (base, seed) = (reader.key()?, reader.string()?);
            let (space, owner) = (reader.u64()?, reader.key()?);
            need(2)?;
            (
                "allocateWithSeed",
                json!({"account": account(0)?, "base": base, "seed": seed, "space": space,
                       "owner": owner}),
            )
        }
        10 => {
            let (base, seed, owner) = (reader.key()?, reader.string()?, reader.key()?);
            need(2)?;
            (
                "assignWithSeed",
                json!({"account": account(0)?, "base": base, "seed": seed, "owner": owner}),
            )
        }
        _ => return None,
    })
}

/// The durable-nonce instructions: advance, withdraw, initialize, authorize, upgrade.
fn nonce(
    tag: u32,
    reader: &mut Reader<'_>,
    account: Account<'_>,
    need: Need<'_>,
) -> Option<(&'static str, Value)> {
    Some(match tag {
        4 => {
            need(3)?;
            (
                "advanceNonce",
                json!({"nonceAccount": account(0)?, "recentBlockhashesSysvar": account(1)?,
                       "nonceAuthority": account(2)?}),
            )
        }
        5 => {
            let lamports = reader.u64()?;
            need(5)?;
            (
                "withdrawFromNonce",
                json!({"nonceAccount": account(0)?, "destination": account(1)?,
                       "recentBlockhashesSysvar": account(2)?, "rentSysvar": account(3)?,
                       "nonceAuthority": account(4)?, "lamports": lamports}),
            )
        }
        6 => {
            let authority = reader.key()?;
            need(3)?;
            (
                "initializeNonce",
                json!({"nonceAccount": account(0)?, "recentBlockhashesSysvar": account(1)?,
                       "rentSysvar": account(2)?, "nonceAuthority": authority}),
            )
        }
        7 => {
            let authority = reader.key()?;
            need(2)?;
            (
                "authorizeNonce",
                json!({"nonceAccount": account(0)?, "nonceAuthority": account(1)?,
                       "newAuthorized": authority}),
            )
        }
        12 => {
            need(1)?;
            ("upgradeNonce", json!({"nonceAccount": account(0)?}))
        }
        _ => return None,
    })
}
