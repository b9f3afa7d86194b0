//! SPL Token and Token-2022 instructions as the validator parses them (`parse_token`): both
//! programs share the Token-2022 instruction layout, so one parser serves both. Data that does
//! not unpack as a token instruction is tried as a token-group and then a token-metadata
//! instruction (the interfaces Token-2022 implements), as the validator does.
//!
//! Amounts print as decimal strings; the *Checked instructions print a `tokenAmount` object
//! (`amount`, `decimals`, `uiAmount`, `uiAmountString`). An authority account followed by more
//! accounts prints as `multisig<Role>` plus `signers`.

use serde_json::{Value, json};

use super::reader::{Accounts, Reader};
use super::token_info::{insert, signers, token_amount};
use super::typed as ix;
use super::{token_extension, token_interfaces};

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

/// The token instruction with tag `tag` (`rest` is the data after the tag, `data` all of it),
/// one helper per instruction group.
fn parse_token(tag: u8, rest: &[u8], data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    match tag {
        0 | 20 => initialize_mint(tag, rest, accounts),
        1 | 2 | 16 | 18 | 19 => initialize_account(tag, rest, accounts),
        3 | 4 | 7 | 8 => amount(tag, rest, accounts),
        12..=15 => checked_amount(tag, rest, accounts),
        5 | 6 | 9..=11 => authority_and_state(tag, rest, accounts),
        21 | 23 | 24 | 29 => sizes_and_ui_amounts(tag, rest, accounts),
        17 | 22 | 25 | 31 | 32 | 35 | 38 | 45 => mint_and_lamports(tag, rest, accounts),
        BATCH => parse_batch(rest, accounts),
        _ => token_extension::parse(tag, data, accounts),
    }
}

/// `initializeMint` (tag 0) and `initializeMint2` (tag 20).
fn initialize_mint(tag: u8, rest: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    let mut r = Reader(rest);
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
    Some(ix(kind, info))
}

/// `initializeAccount` (1, 2, 3) and `initializeMultisig` (1, 2).
fn initialize_account(tag: u8, rest: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    let mut r = Reader(rest);
    Some(match tag {
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
        _ => return None,
    })
}

/// `transfer`, `approve`, `mintTo`, `burn`: a plain amount, printed as a string.
fn amount(tag: u8, rest: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let amount = Reader(rest).u64()?.to_string();
    accounts.need(3)?;
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
    Some(ix(kind, info))
}

/// The *Checked amount instructions (`transferChecked`, `approveChecked`, `mintToChecked`,
/// `burnChecked`): a `tokenAmount` object.
fn checked_amount(tag: u8, rest: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    let mut r = Reader(rest);
    let amount = token_amount(r.u64()?, r.u8()?);
    Some(match tag {
        12 | 13 => {
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
        _ => {
            need(3)?;
            let mut info = json!({"account": a(0)?, "mint": a(1)?, "tokenAmount": amount});
            signers(&mut info, 2, accounts, "authority", "multisigAuthority")?;
            ix("burnChecked", info)
        }
    })
}

/// `revoke`, `setAuthority`, `closeAccount`, `freezeAccount`, `thawAccount`.
fn authority_and_state(tag: u8, rest: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    let mut r = Reader(rest);
    Some(match tag {
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
        _ => {
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
    })
}

/// `getAccountDataSize`, `amountToUiAmount`, `uiAmountToAmount`, `reallocate`.
fn sizes_and_ui_amounts(tag: u8, rest: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match tag {
        21 => {
            let types = extension_types(rest)?;
            need(1)?;
            let mut info = json!({"mint": a(0)?});
            if !types.is_empty() {
                insert(&mut info, "extensionTypes", json!(types));
            }
            ix("getAccountDataSize", info)
        }
        23 => {
            let amount = Reader(rest).u64()?.to_string();
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
        _ => {
            let types = extension_types(rest)?;
            need(4)?;
            let mut info = json!({"account": a(0)?, "payer": a(1)?, "systemProgram": a(2)?,
                                  "extensionTypes": types});
            signers(&mut info, 3, accounts, "owner", "multisigOwner")?;
            ix("reallocate", info)
        }
    })
}

/// `syncNative`, `initializeImmutableOwner`, `initializeMintCloseAuthority`,
/// `createNativeMint`, `initializeNonTransferableMint`, `initializePermanentDelegate`,
/// `withdrawExcessLamports`, `unwrapLamports`.
fn mint_and_lamports(tag: u8, rest: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    let mut r = Reader(rest);
    Some(match tag {
        17 => {
            need(1)?;
            ix("syncNative", json!({"account": a(0)?}))
        }
        22 => {
            need(1)?;
            ix("initializeImmutableOwner", json!({"account": a(0)?}))
        }
        25 => {
            let authority = r.coption_key()?;
            need(1)?;
            ix(
                "initializeMintCloseAuthority",
                json!({"mint": a(0)?, "newAuthority": authority}),
            )
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
        _ => lamports(tag, &mut r, accounts)?,
    })
}

/// `withdrawExcessLamports` (tag 38) and `unwrapLamports` (tag 45).
fn lamports(tag: u8, r: &mut Reader<'_>, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let amount = if tag == 45 { r.coption_u64()? } else { None };
    accounts.need(3)?;
    let mut info = json!({"source": a(0)?, "destination": a(1)?});
    if let Some(amount) = amount {
        insert(&mut info, "amount", json!(amount.to_string()));
    }
    signers(&mut info, 2, accounts, "authority", "multisigAuthority")?;
    let kind = if tag == 45 {
        "unwrapLamports"
    } else {
        "withdrawExcessLamports"
    };
    Some(ix(kind, info))
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
