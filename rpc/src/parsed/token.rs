//! SPL Token and Token-2022 instructions as the validator parses them (`parse_token`): both
//! programs share the Token-2022 instruction layout, so one parser serves both. Data that does
//! not unpack as a token instruction is tried as a token-group and then a token-metadata
//! instruction (the interfaces Token-2022 implements), as the validator does.
//!
//! Amounts print as decimal strings; the *Checked instructions print a `tokenAmount` object
//! (`amount`, `decimals`, `uiAmount`, `uiAmountString`). An authority account followed by more
//! accounts prints as `multisig<Role>` plus `signers`.

use serde_json::{Map, Value, json};

use super::{Accounts, Reader, typed as ix};
use super::{token_extension, token_interfaces};
use crate::encode::real_number_string_trimmed;

/// The validator's `SetAuthority` authority types, by wire value.
const AUTHORITY_TYPES: [&str; 18] = [
    "mintTokens",
    "freezeAccount",
    "accountOwner",
    "closeAccount",
    "transferFeeConfig",
    "withheldWithdraw",
    "closeMint",
    "interestRate",
    "permanentDelegate",
    "confidentialTransferMint",
    "transferHookProgramId",
    "confidentialTransferFeeConfig",
    "metadataPointer",
    "groupPointer",
    "groupMemberPointer",
    "scaledUiAmount",
    "pause",
    "permissionedBurn",
];

/// Token-2022 extension types, by wire value (`u16`).
const EXTENSION_TYPES: [&str; 29] = [
    "uninitialized",
    "transferFeeConfig",
    "transferFeeAmount",
    "mintCloseAuthority",
    "confidentialTransferMint",
    "confidentialTransferAccount",
    "defaultAccountState",
    "immutableOwner",
    "memoTransfer",
    "nonTransferable",
    "interestBearingConfig",
    "cpiGuard",
    "permanentDelegate",
    "nonTransferableAccount",
    "transferHook",
    "transferHookAccount",
    "confidentialTransferFeeConfig",
    "confidentialTransferFeeAmount",
    "metadataPointer",
    "tokenMetadata",
    "groupPointer",
    "tokenGroup",
    "groupMemberPointer",
    "tokenGroupMember",
    "confidentialMintBurn",
    "scaledUiAmount",
    "pausable",
    "pausableAccount",
    "permissionedBurn",
];

/// The batch instruction tag (`Batch { data }`).
const BATCH: u8 = 255;

/// Parses a token instruction: `{"info":{...},"type":"..."}`, or `None` when the validator's
/// parser fails (the instruction then prints partially decoded).
pub fn parse(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    // The validator refuses instructions without accounts before looking at the data.
    if accounts.is_empty() {
        return None;
    }
    match data.first() {
        Some(&tag) if unpacks(tag, &data[1..]) => parse_token(tag, &data[1..], data, accounts),
        _ => token_interfaces::group(data, accounts)
            .or_else(|| token_interfaces::metadata(data, accounts)),
    }
}

/// Whether `TokenInstruction::unpack` accepts the data (then the group/metadata fallbacks are
/// never tried, even when the token parse itself fails).
fn unpacks(tag: u8, rest: &[u8]) -> bool {
    let mut reader = Reader(rest);
    match tag {
        0 | 20 => reader.u8().is_some() && reader.key().is_some() && reader.coption_key().is_some(),
        2 | 19 => reader.u8().is_some(),
        3 | 4 | 7 | 8 | 23 => reader.u64().is_some(),
        6 => {
            reader
                .u8()
                .is_some_and(|t| usize::from(t) < AUTHORITY_TYPES.len())
                && reader.coption_key().is_some()
        }
        12..=15 => reader.u64().is_some() && reader.u8().is_some(),
        16 | 18 | 35 => reader.key().is_some(),
        21 | 29 => extension_types(rest).is_some(),
        24 => std::str::from_utf8(rest).is_ok(),
        25 => reader.coption_key().is_some(),
        45 => reader.coption_u64().is_some(),
        1 | 5 | 9..=11 | 17 | 22 | 26..=28 | 30..=34 | 36..=44 | 46 | BATCH => true,
        _ => false,
    }
}

/// A list of `u16` extension types (an odd trailing byte or an unknown type fails).
fn extension_types(rest: &[u8]) -> Option<Vec<&'static str>> {
    rest.chunks(2)
        .map(|chunk| {
            let bytes: [u8; 2] = chunk.try_into().ok()?;
            EXTENSION_TYPES
                .get(usize::from(u16::from_le_bytes(bytes)))
                .copied()
        })
        .collect()
}

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

fn parse_token(tag: u8, rest: &[u8], data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    let mut r = Reader(rest);
    let parsed = match tag {
        0 | 20 => {
            let (decimals, mint_authority, freeze) = (r.u8()?, r.key()?, r.coption_key()?);
            let mut info = if tag == 0 {
                need(2)?;
                json!({"mint": a(0)?, "decimals": decimals, "mintAuthority": mint_authority,
                       "rentSysvar": a(1)?})
            } else {
                need(1)?;
                json!({"mint": a(0)?, "decimals": decimals, "mintAuthority": mint_authority})
            };
            if let Some(freeze) = freeze {
                insert(&mut info, "freezeAuthority", json!(freeze));
            }
            let kind = if tag == 0 {
                "initializeMint"
            } else {
                "initializeMint2"
            };
            ix(kind, info)
        }
        1 => {
            need(4)?;
            ix(
                "initializeAccount",
                json!({"account": a(0)?, "mint": a(1)?, "owner": a(2)?, "rentSysvar": a(3)?}),
            )
        }
        16 => {
            let owner = r.key()?;
            need(3)?;
            ix(
                "initializeAccount2",
                json!({"account": a(0)?, "mint": a(1)?, "owner": owner, "rentSysvar": a(2)?}),
            )
        }
        18 => {
            let owner = r.key()?;
            need(2)?;
            ix(
                "initializeAccount3",
                json!({"account": a(0)?, "mint": a(1)?, "owner": owner}),
            )
        }
        2 => {
            let m = r.u8()?;
            need(3)?;
            ix(
                "initializeMultisig",
                json!({"multisig": a(0)?, "rentSysvar": a(1)?, "signers": accounts.keys(2)?,
                       "m": m}),
            )
        }
        19 => {
            let m = r.u8()?;
            need(2)?;
            ix(
                "initializeMultisig2",
                json!({"multisig": a(0)?, "signers": accounts.keys(1)?, "m": m}),
            )
        }
        3 | 4 | 7 | 8 => {
            let amount = r.u64()?.to_string();
            need(3)?;
            let (kind, mut info, owner, multisig) = match tag {
                3 => (
                    "transfer",
                    json!({"source": a(0)?, "destination": a(1)?, "amount": amount}),
                    "authority",
                    "multisigAuthority",
                ),
                4 => (
                    "approve",
                    json!({"source": a(0)?, "delegate": a(1)?, "amount": amount}),
                    "owner",
                    "multisigOwner",
                ),
                7 => (
                    "mintTo",
                    json!({"mint": a(0)?, "account": a(1)?, "amount": amount}),
                    "mintAuthority",
                    "multisigMintAuthority",
                ),
                _ => (
                    "burn",
                    json!({"account": a(0)?, "mint": a(1)?, "amount": amount}),
                    "authority",
                    "multisigAuthority",
                ),
            };
            signers(&mut info, 2, accounts, owner, multisig)?;
            ix(kind, info)
        }
        5 => {
            need(2)?;
            let mut info = json!({"source": a(0)?});
            signers(&mut info, 1, accounts, "owner", "multisigOwner")?;
            ix("revoke", info)
        }
        6 => {
            let authority_type = usize::from(r.u8()?);
            let new_authority = r.coption_key()?;
            need(2)?;
            let owned = if matches!(authority_type, 2 | 3) {
                "account"
            } else {
                "mint"
            };
            let mut info = json!({"authorityType": AUTHORITY_TYPES.get(authority_type)?,
                                  "newAuthority": new_authority});
            insert(&mut info, owned, json!(a(0)?));
            signers(&mut info, 1, accounts, "authority", "multisigAuthority")?;
            ix("setAuthority", info)
        }
        9..=11 => {
            need(3)?;
            let (kind, mut info, owner, multisig) = match tag {
                9 => (
                    "closeAccount",
                    json!({"account": a(0)?, "destination": a(1)?}),
                    "owner",
                    "multisigOwner",
                ),
                10 => (
                    "freezeAccount",
                    json!({"account": a(0)?, "mint": a(1)?}),
                    "freezeAuthority",
                    "multisigFreezeAuthority",
                ),
                _ => (
                    "thawAccount",
                    json!({"account": a(0)?, "mint": a(1)?}),
                    "freezeAuthority",
                    "multisigFreezeAuthority",
                ),
            };
            signers(&mut info, 2, accounts, owner, multisig)?;
            ix(kind, info)
        }
        12 | 13 => {
            let amount = token_amount(r.u64()?, r.u8()?);
            need(4)?;
            let (kind, third, owner, multisig) = if tag == 12 {
                (
                    "transferChecked",
                    "destination",
                    "authority",
                    "multisigAuthority",
                )
            } else {
                ("approveChecked", "delegate", "owner", "multisigOwner")
            };
            let mut info = json!({"source": a(0)?, "mint": a(1)?, "tokenAmount": amount});
            insert(&mut info, third, json!(a(2)?));
            signers(&mut info, 3, accounts, owner, multisig)?;
            ix(kind, info)
        }
        14 => {
            let amount = token_amount(r.u64()?, r.u8()?);
            need(3)?;
            let mut info = json!({"mint": a(0)?, "account": a(1)?, "tokenAmount": amount});
            signers(
                &mut info,
                2,
                accounts,
                "mintAuthority",
                "multisigMintAuthority",
            )?;
            ix("mintToChecked", info)
        }
        15 => {
            let amount = token_amount(r.u64()?, r.u8()?);
            need(3)?;
            let mut info = json!({"account": a(0)?, "mint": a(1)?, "tokenAmount": amount});
            signers(&mut info, 2, accounts, "authority", "multisigAuthority")?;
            ix("burnChecked", info)
        }
        17 => {
            need(1)?;
            ix("syncNative", json!({"account": a(0)?}))
        }
        21 => {
            let types = extension_types(rest)?;
            need(1)?;
            let mut info = json!({"mint": a(0)?});
            if !types.is_empty() {
                insert(&mut info, "extensionTypes", json!(types));
            }
            ix("getAccountDataSize", info)
        }
        22 => {
            need(1)?;
            ix("initializeImmutableOwner", json!({"account": a(0)?}))
        }
        23 => {
            let amount = r.u64()?.to_string();
            need(1)?;
            ix("amountToUiAmount", json!({"mint": a(0)?, "amount": amount}))
        }
        24 => {
            let ui_amount = std::str::from_utf8(rest).ok()?;
            need(1)?;
            ix(
                "uiAmountToAmount",
                json!({"mint": a(0)?, "uiAmount": ui_amount}),
            )
        }
        25 => {
            let authority = r.coption_key()?;
            need(1)?;
            ix(
                "initializeMintCloseAuthority",
                json!({"mint": a(0)?, "newAuthority": authority}),
            )
        }
        29 => {
            let types = extension_types(rest)?;
            need(4)?;
            let mut info = json!({"account": a(0)?, "payer": a(1)?, "systemProgram": a(2)?,
                                  "extensionTypes": types});
            signers(&mut info, 3, accounts, "owner", "multisigOwner")?;
            ix("reallocate", info)
        }
        31 => {
            need(3)?;
            ix(
                "createNativeMint",
                json!({"payer": a(0)?, "nativeMint": a(1)?, "systemProgram": a(2)?}),
            )
        }
        32 => {
            need(1)?;
            ix("initializeNonTransferableMint", json!({"mint": a(0)?}))
        }
        35 => {
            let delegate = r.key()?;
            need(1)?;
            ix(
                "initializePermanentDelegate",
                json!({"mint": a(0)?, "delegate": delegate}),
            )
        }
        38 => {
            need(3)?;
            let mut info = json!({"source": a(0)?, "destination": a(1)?});
            signers(&mut info, 2, accounts, "authority", "multisigAuthority")?;
            ix("withdrawExcessLamports", info)
        }
        45 => {
            let amount = r.coption_u64()?;
            need(3)?;
            let mut info = json!({"source": a(0)?, "destination": a(1)?});
            if let Some(amount) = amount {
                insert(&mut info, "amount", json!(amount.to_string()));
            }
            signers(&mut info, 2, accounts, "authority", "multisigAuthority")?;
            ix("unwrapLamports", info)
        }
        BATCH => parse_batch(rest, accounts)?,
        _ => token_extension::parse(tag, data, accounts)?,
    };
    Some(parsed)
}

/// `Batch`: per inner instruction a `u8` account count, a `u8` data length and the data; the
/// outer accounts are the inner instructions' accounts in order. Nested batches fail.
fn parse_batch(mut data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let mut instructions = Vec::new();
    let mut account_cursor = 0usize;
    while !data.is_empty() {
        let (&count, tail) = data.split_first()?;
        let (&len, tail) = tail.split_first()?;
        let inner_data = tail.get(..usize::from(len))?;
        data = &tail[usize::from(len)..];
        let end = account_cursor + usize::from(count);
        let inner_accounts = accounts.slice(account_cursor, end)?;
        account_cursor = end;
        if inner_data.first() == Some(&BATCH) {
            return None;
        }
        instructions.push(parse(inner_data, &inner_accounts)?);
    }
    Some(ix("batch", json!({"instructions": instructions})))
}
