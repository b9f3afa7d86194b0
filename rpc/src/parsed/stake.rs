//! Stake program instructions as the validator parses them (bincode `StakeInstruction`: a `u32`
//! variant tag, then the fields; trailing bytes ignored).
//!
//! Older stake instructions carried clock, rent, stake-history and stake-config accounts that
//! current builders omit; the validator tells the two shapes apart by the key in the slot
//! (the clock or rent sysvar), and prints those sysvars only for the legacy shape.

use serde_json::{Map, Value, json};

use super::reader::{Accounts, Reader};
use super::typed as ix;

const CLOCK_SYSVAR: &str = "SysvarC1ock11111111111111111111111111111111";
const RENT_SYSVAR: &str = "SysvarRent111111111111111111111111111111111";

/// `"Staker"` or `"Withdrawer"` (serde form of `StakeAuthorize`).
fn stake_authorize(r: &mut Reader<'_>) -> Option<&'static str> {
    match r.u32()? {
        0 => Some("Staker"),
        1 => Some("Withdrawer"),
        _ => None,
    }
}

fn option_i64(r: &mut Reader<'_>) -> Option<Option<i64>> {
    Some(if r.bool()? { Some(r.i64()?) } else { None })
}

fn option_u64(r: &mut Reader<'_>) -> Option<Option<u64>> {
    Some(if r.bool()? { Some(r.u64()?) } else { None })
}

fn option_key(r: &mut Reader<'_>) -> Option<Option<String>> {
    Some(if r.bool()? { Some(r.key()?) } else { None })
}

/// The fields of an instruction, decoded before the accounts are looked at.
enum Fields {
    None,
    Initialize {
        staker: String,
        withdrawer: String,
        unix_timestamp: i64,
        epoch: u64,
        custodian: String,
    },
    Authorize(String, &'static str),
    Lamports(u64),
    Lockup(Map<String, Value>),
    WithSeed {
        new_authorized: Option<String>,
        authority: &'static str,
        seed: String,
        owner: String,
    },
    Authority(&'static str),
}

fn decode(tag: u32, r: &mut Reader<'_>) -> Option<Fields> {
    Some(match tag {
        0 => Fields::Initialize {
            staker: r.key()?,
            withdrawer: r.key()?,
            unix_timestamp: r.i64()?,
            epoch: r.u64()?,
            custodian: r.key()?,
        },
        1 => {
            let new = r.key()?;
            Fields::Authorize(new, stake_authorize(r)?)
        }
        3 | 4 | 16 | 17 => Fields::Lamports(r.u64()?),
        6 | 12 => {
            let mut lockup = Map::new();
            if let Some(timestamp) = option_i64(r)? {
                lockup.insert("unixTimestamp".to_string(), json!(timestamp));
            }
            if let Some(epoch) = option_u64(r)? {
                lockup.insert("epoch".to_string(), json!(epoch));
            }
            if tag == 6
                && let Some(custodian) = option_key(r)?
            {
                lockup.insert("custodian".to_string(), json!(custodian));
            }
            Fields::Lockup(lockup)
        }
        8 => {
            let new_authorized = Some(r.key()?);
            let authority = stake_authorize(r)?;
            Fields::WithSeed {
                new_authorized,
                authority,
                seed: r.string()?,
                owner: r.key()?,
            }
        }
        11 => {
            let authority = stake_authorize(r)?;
            Fields::WithSeed {
                new_authorized: None,
                authority,
                seed: r.string()?,
                owner: r.key()?,
            }
        }
        10 => Fields::Authority(stake_authorize(r)?),
        2 | 5 | 7 | 9 | 13 | 14 | 15 => Fields::None,
        _ => return None,
    })
}

/// Parses a stake instruction, or `None` (printed partially decoded): one helper per
/// instruction group.
pub fn parse(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let mut r = Reader(data);
    let tag = r.u32()?;
    let fields = decode(tag, &mut r)?;
    if accounts.is_empty() {
        return None;
    }
    match tag {
        0 | 6 | 9 | 12 => setup(tag, fields, accounts),
        1 | 10 => authorize(tag, fields, accounts),
        8 | 11 => authorize_with_seed(tag, fields, accounts),
        2 | 5 | 13..=15 => delegation(tag, accounts),
        3 | 4 | 7 | 16 | 17 => lamports(tag, fields, accounts),
        _ => None,
    }
}

/// Whether the account at `position` is `sysvar` (the legacy account shape).
fn holds(accounts: &Accounts<'_>, position: usize, sysvar: &str) -> bool {
    accounts.get(position) == Some(sysvar)
}

/// Inserts `key: value` into an info object.
fn set(info: &mut Value, key: &str, value: Value) {
    if let Some(map) = info.as_object_mut() {
        map.insert(key.to_string(), value);
    }
}

/// `initialize` (0), `setLockup` (6), `initializeChecked` (9), `setLockupChecked` (12).
fn setup(tag: u32, fields: Fields, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match (tag, fields) {
        (
            0,
            Fields::Initialize {
                staker,
                withdrawer,
                unix_timestamp,
                epoch,
                custodian,
            },
        ) => {
            let legacy = holds(accounts, 1, RENT_SYSVAR);
            need(if legacy { 2 } else { 1 })?;
            let mut info = json!({"stakeAccount": a(0)?,
                "authorized": {"staker": staker, "withdrawer": withdrawer},
                "lockup": {"unixTimestamp": unix_timestamp, "epoch": epoch,
                           "custodian": custodian}});
            if legacy {
                set(&mut info, "rentSysvar", json!(a(1)?));
            }
            ix("initialize", info)
        }
        (6, Fields::Lockup(lockup)) => {
            need(2)?;
            ix(
                "setLockup",
                json!({"stakeAccount": a(0)?, "custodian": a(1)?, "lockup": lockup}),
            )
        }
        (9, _) => {
            let legacy = holds(accounts, 1, RENT_SYSVAR);
            need(if legacy { 4 } else { 3 })?;
            let staker = if legacy { 2 } else { 1 };
            let mut info = json!({"stakeAccount": a(0)?, "staker": a(staker)?,
                                  "withdrawer": a(staker + 1)?});
            if legacy {
                set(&mut info, "rentSysvar", json!(a(1)?));
            }
            ix("initializeChecked", info)
        }
        (12, Fields::Lockup(mut lockup)) => {
            need(2)?;
            if let Some(custodian) = a(2) {
                lockup.insert("custodian".to_string(), json!(custodian));
            }
            ix(
                "setLockupChecked",
                json!({"stakeAccount": a(0)?, "custodian": a(1)?, "lockup": lockup}),
            )
        }
        _ => return None,
    })
}

/// `authorize` (1) and `authorizeChecked` (10).
fn authorize(tag: u32, fields: Fields, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match (tag, fields) {
        (1, Fields::Authorize(new, authority_type)) => {
            let legacy = holds(accounts, 1, CLOCK_SYSVAR);
            need(if legacy { 3 } else { 2 })?;
            let authority = if legacy { 2 } else { 1 };
            let mut info = json!({"stakeAccount": a(0)?, "authority": a(authority)?,
                                  "newAuthority": new, "authorityType": authority_type});
            if legacy {
                set(&mut info, "clockSysvar", json!(a(1)?));
            }
            if let Some(custodian) = a(authority + 1) {
                set(&mut info, "custodian", json!(custodian));
            }
            ix("authorize", info)
        }
        (10, Fields::Authority(authority_type)) => {
            let legacy = holds(accounts, 1, CLOCK_SYSVAR);
            need(if legacy { 4 } else { 3 })?;
            let authority = if legacy { 2 } else { 1 };
            let mut info = json!({"stakeAccount": a(0)?, "authority": a(authority)?,
                                  "newAuthority": a(authority + 1)?,
                                  "authorityType": authority_type});
            if legacy {
                set(&mut info, "clockSysvar", json!(a(1)?));
            }
            if let Some(custodian) = a(authority + 2) {
                set(&mut info, "custodian", json!(custodian));
            }
            ix("authorizeChecked", info)
        }
        _ => return None,
    })
}

/// `authorizeWithSeed` (8) and `authorizeCheckedWithSeed` (11).
fn authorize_with_seed(tag: u32, fields: Fields, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match (tag, fields) {
        (
            8,
            Fields::WithSeed {
                new_authorized,
                authority,
                seed,
                owner,
            },
        ) => {
            need(2)?;
            let mut info = json!({"stakeAccount": a(0)?, "authorityBase": a(1)?,
                                  "newAuthorized": new_authorized, "authorityType": authority,
                                  "authoritySeed": seed, "authorityOwner": owner});
            let legacy = holds(accounts, 2, CLOCK_SYSVAR);
            if legacy {
                set(&mut info, "clockSysvar", json!(a(2)?));
            }
            if let Some(custodian) = a(if legacy { 3 } else { 2 }) {
                set(&mut info, "custodian", json!(custodian));
            }
            ix("authorizeWithSeed", info)
        }
        (
            11,
            Fields::WithSeed {
                authority,
                seed,
                owner,
                ..
            },
        ) => {
            let legacy = holds(accounts, 2, CLOCK_SYSVAR);
            need(if legacy { 4 } else { 3 })?;
            let new_authorized = if legacy { 3 } else { 2 };
            let mut info = json!({"stakeAccount": a(0)?, "authorityBase": a(1)?,
                                  "newAuthorized": a(new_authorized)?,
                                  "authorityType": authority, "authoritySeed": seed,
                                  "authorityOwner": owner});
            if legacy {
                set(&mut info, "clockSysvar", json!(a(2)?));
            }
            if let Some(custodian) = a(new_authorized + 1) {
                set(&mut info, "custodian", json!(custodian));
            }
            ix("authorizeCheckedWithSeed", info)
        }
        _ => return None,
    })
}

/// `delegate` (2), `deactivate` (5), `getMinimumDelegation` (13), `deactivateDelinquent` (14),
/// `redelegate` (15): no data fields.
fn delegation(tag: u32, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match tag {
        2 => {
            let legacy = holds(accounts, 2, CLOCK_SYSVAR);
            need(if legacy { 6 } else { 3 })?;
            let authority = if legacy { 5 } else { 2 };
            let mut info = json!({"stakeAccount": a(0)?, "voteAccount": a(1)?,
                                  "stakeAuthority": a(authority)?});
            if legacy {
                set(&mut info, "clockSysvar", json!(a(2)?));
                set(&mut info, "stakeHistorySysvar", json!(a(3)?));
                set(&mut info, "stakeConfigAccount", json!(a(4)?));
            }
            ix("delegate", info)
        }
        5 => {
            let legacy = holds(accounts, 1, CLOCK_SYSVAR);
            need(if legacy { 3 } else { 2 })?;
            let authority = if legacy { 2 } else { 1 };
            let mut info = json!({"stakeAccount": a(0)?, "stakeAuthority": a(authority)?});
            if legacy {
                set(&mut info, "clockSysvar", json!(a(1)?));
            }
            ix("deactivate", info)
        }
        13 => ix("getMinimumDelegation", Value::Null),
        14 => {
            need(3)?;
            ix(
                "deactivateDelinquent",
                json!({"stakeAccount": a(0)?, "voteAccount": a(1)?,
                       "referenceVoteAccount": a(2)?}),
            )
        }
        15 => {
            need(5)?;
            ix(
                "redelegate",
                json!({"stakeAccount": a(0)?, "newStakeAccount": a(1)?, "voteAccount": a(2)?,
                       "stakeConfigAccount": a(3)?, "stakeAuthority": a(4)?}),
            )
        }
        _ => return None,
    })
}

/// `split` (3), `withdraw` (4), `merge` (7), `moveStake` (16), `moveLamports` (17).
fn lamports(tag: u32, fields: Fields, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match (tag, fields) {
        (3, Fields::Lamports(lamports)) => {
            need(3)?;
            ix(
                "split",
                json!({"stakeAccount": a(0)?, "newSplitAccount": a(1)?,
                       "stakeAuthority": a(2)?, "lamports": lamports}),
            )
        }
        (4, Fields::Lamports(lamports)) => {
            let legacy = holds(accounts, 2, CLOCK_SYSVAR);
            need(if legacy { 5 } else { 3 })?;
            let authority = if legacy { 4 } else { 2 };
            let mut info = json!({"stakeAccount": a(0)?, "destination": a(1)?,
                                  "withdrawAuthority": a(authority)?, "lamports": lamports});
            if legacy {
                set(&mut info, "clockSysvar", json!(a(2)?));
                set(&mut info, "stakeHistorySysvar", json!(a(3)?));
            }
            if let Some(custodian) = a(authority + 1) {
                set(&mut info, "custodian", json!(custodian));
            }
            ix("withdraw", info)
        }
        (7, _) => {
            let legacy = holds(accounts, 2, CLOCK_SYSVAR);
            need(if legacy { 5 } else { 3 })?;
            let authority = if legacy { 4 } else { 2 };
            let mut info = json!({"destination": a(0)?, "source": a(1)?,
                                  "stakeAuthority": a(authority)?});
            if legacy {
                set(&mut info, "clockSysvar", json!(a(2)?));
                set(&mut info, "stakeHistorySysvar", json!(a(3)?));
            }
            ix("merge", info)
        }
        (16 | 17, Fields::Lamports(lamports)) => {
            need(3)?;
            let kind = if tag == 16 {
                "moveStake"
            } else {
                "moveLamports"
            };
            ix(
                kind,
                json!({"source": a(0)?, "destination": a(1)?, "stakeAuthority": a(2)?,
                       "lamports": lamports}),
            )
        }
        _ => return None,
    })
}
