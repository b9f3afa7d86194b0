//! Token-2022 extension instructions (outer tags 26 to 46) as the validator parses them. Each
//! extension has its own sub-tag after the outer tag and, for most, a fixed-size payload that
//! must fit exactly (the confidential families print their ciphertexts and ElGamal keys in
//! base64, like the zk-sdk's pod types). The confidential families (transfer, transfer fee,
//! mint/burn) and their proof accounts are in [`confidential`].

mod confidential;

use serde_json::{Value, json};

use super::reader::{Accounts, Reader};
use super::token_info::{insert, signers, token_amount};
use super::typed as ix;
use confidential::{
    ConfidentialAmount, confidential_mint_burn, confidential_transfer, confidential_transfer_fee,
};

/// Parses the extension instruction with outer tag `tag`; `data` is the whole instruction data.
pub fn parse(tag: u8, data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let ext = data.get(1..)?;
    match tag {
        26 => transfer_fee(ext, accounts),
        27 => confidential_transfer(ext, accounts),
        28 => default_account_state(data, accounts),
        30 => toggle(ext, accounts, "RequiredMemoTransfers"),
        33 => interest_bearing(ext, accounts),
        34 => toggle(ext, accounts, "CpiGuard"),
        36 => pointer(ext, accounts, "TransferHook", "programId"),
        37 => confidential_transfer_fee(ext, accounts),
        39 => pointer(ext, accounts, "MetadataPointer", "metadataAddress"),
        40 => pointer(ext, accounts, "GroupPointer", "groupAddress"),
        41 => pointer(ext, accounts, "GroupMemberPointer", "memberAddress"),
        42 => confidential_mint_burn(ext, accounts),
        43 => scaled_ui_amount(ext, accounts),
        44 => pausable(ext, accounts),
        46 => permissioned_burn(ext, accounts),
        _ => None,
    }
}

/// The payload of a fixed-size extension instruction: `ext` is the sub-tag and exactly `len`
/// bytes (the interface's `decode_instruction_data`).
fn payload(ext: &[u8], len: usize) -> Option<Reader<'_>> {
    (ext.len() == len + 1).then(|| Reader(&ext[1..]))
}

fn transfer_fee(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let (&sub, rest) = ext.split_first()?;
    let mut r = Reader(rest);
    Some(match sub {
        0 => {
            let (config, withdraw) = (r.coption_key()?, r.coption_key()?);
            let (basis_points, maximum_fee) = (r.u16()?, r.u64()?);
            accounts.need(1)?;
            let mut info = json!({"mint": a(0)?, "transferFeeBasisPoints": basis_points,
                                  "maximumFee": maximum_fee});
            if let Some(config) = config {
                insert(&mut info, "transferFeeConfigAuthority", json!(config));
            }
            if let Some(withdraw) = withdraw {
                insert(&mut info, "withdrawWithheldAuthority", json!(withdraw));
            }
            ix("initializeTransferFeeConfig", info)
        }
        1 => {
            let (amount, decimals, fee) = (r.u64()?, r.u8()?, r.u64()?);
            accounts.need(4)?;
            let mut info = json!({"source": a(0)?, "mint": a(1)?, "destination": a(2)?,
                                  "tokenAmount": token_amount(amount, decimals),
                                  "feeAmount": token_amount(fee, decimals)});
            signers(&mut info, 3, accounts, "authority", "multisigAuthority")?;
            ix("transferCheckedWithFee", info)
        }
        2 => {
            accounts.need(3)?;
            let mut info = json!({"mint": a(0)?, "feeRecipient": a(1)?});
            signers(
                &mut info,
                2,
                accounts,
                "withdrawWithheldAuthority",
                "multisigWithdrawWithheldAuthority",
            )?;
            ix("withdrawWithheldTokensFromMint", info)
        }
        3 => {
            let count = usize::from(r.u8()?);
            accounts.need(3 + count)?;
            let first_source = accounts.len() - count;
            let mut info = json!({"mint": a(0)?, "feeRecipient": a(1)?,
                                  "sourceAccounts": accounts.keys(first_source)?});
            signers(
                &mut info,
                2,
                &accounts.slice(0, first_source)?,
                "withdrawWithheldAuthority",
                "multisigWithdrawWithheldAuthority",
            )?;
            ix("withdrawWithheldTokensFromAccounts", info)
        }
        4 => {
            accounts.need(1)?;
            ix(
                "harvestWithheldTokensToMint",
                json!({"mint": a(0)?, "sourceAccounts": accounts.keys(1)?}),
            )
        }
        5 => {
            let (basis_points, maximum_fee) = (r.u16()?, r.u64()?);
            accounts.need(2)?;
            let mut info = json!({"mint": a(0)?, "transferFeeBasisPoints": basis_points,
                                  "maximumFee": maximum_fee});
            // The validator spells the multisig key with a lower-case `t`.
            signers(
                &mut info,
                1,
                accounts,
                "transferFeeConfigAuthority",
                "multisigtransferFeeConfigAuthority",
            )?;
            ix("setTransferFee", info)
        }
        _ => return None,
    })
}

/// `data` is the whole instruction: the validator refuses it unless it is exactly three bytes.
fn default_account_state(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let [_, sub, state] = data else {
        return None;
    };
    let state = ["uninitialized", "initialized", "frozen"].get(usize::from(*state))?;
    let a = |i: usize| accounts.get(i);
    match sub {
        0 => {
            accounts.need(1)?;
            Some(ix(
                "initializeDefaultAccountState",
                json!({"mint": a(0)?, "accountState": state}),
            ))
        }
        1 => {
            accounts.need(2)?;
            let mut info = json!({"mint": a(0)?, "accountState": state});
            signers(
                &mut info,
                1,
                accounts,
                "freezeAuthority",
                "multisigFreezeAuthority",
            )?;
            Some(ix("updateDefaultAccountState", info))
        }
        _ => None,
    }
}

/// Enable/disable extensions on a token account (memo transfers, CPI guard).
fn toggle(ext: &[u8], accounts: &Accounts<'_>, name: &str) -> Option<Value> {
    accounts.need(2)?;
    let verb = match ext.first()? {
        0 => "enable",
        1 => "disable",
        _ => return None,
    };
    let mut info = json!({"account": accounts.get(0)?});
    signers(&mut info, 1, accounts, "owner", "multisigOwner")?;
    Some(ix(&format!("{verb}{name}"), info))
}

/// Pointer-style extensions: `initialize<Name>` (optional authority and address) and
/// `update<Name>` (optional address, signed by the authority).
fn pointer(ext: &[u8], accounts: &Accounts<'_>, name: &str, field: &str) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
        0 => {
            accounts.need(1)?;
            let mut r = payload(ext, 64)?;
            let (authority, address) = (r.maybe_null_key()?, r.maybe_null_key()?);
            let mut info = json!({"mint": a(0)?});
            if let Some(authority) = authority {
                insert(&mut info, "authority", json!(authority));
            }
            if let Some(address) = address {
                insert(&mut info, field, json!(address));
            }
            Some(ix(&format!("initialize{name}"), info))
        }
        1 => {
            accounts.need(2)?;
            let address = payload(ext, 32)?.maybe_null_key()?;
            let mut info = json!({"mint": a(0)?});
            if let Some(address) = address {
                insert(&mut info, field, json!(address));
            }
            signers(&mut info, 1, accounts, "authority", "multisigAuthority")?;
            Some(ix(&format!("update{name}"), info))
        }
        _ => None,
    }
}

fn interest_bearing(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
        0 => {
            accounts.need(1)?;
            let mut r = payload(ext, 34)?;
            let (authority, rate) = (r.maybe_null_key()?, r.i16()?);
            Some(ix(
                "initializeInterestBearingConfig",
                json!({"mint": a(0)?, "rateAuthority": authority, "rate": rate}),
            ))
        }
        1 => {
            accounts.need(2)?;
            let rate = payload(ext, 2)?.i16()?;
            let mut info = json!({"mint": a(0)?, "newRate": rate});
            signers(
                &mut info,
                1,
                accounts,
                "rateAuthority",
                "multisigRateAuthority",
            )?;
            Some(ix("updateInterestBearingConfigRate", info))
        }
        _ => None,
    }
}

fn scaled_ui_amount(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
        0 => {
            accounts.need(1)?;
            let mut r = payload(ext, 40)?;
            let (authority, multiplier) = (r.maybe_null_key()?, r.f64()?);
            Some(ix(
                "initializeScaledUiAmountConfig",
                json!({"mint": a(0)?, "authority": authority,
                       "multiplier": multiplier.to_string()}),
            ))
        }
        1 => {
            accounts.need(2)?;
            let mut r = payload(ext, 16)?;
            let (multiplier, timestamp) = (r.f64()?, r.i64()?);
            let mut info = json!({"mint": a(0)?, "newMultiplier": multiplier.to_string(),
                                  "newMultiplierTimestamp": timestamp});
            signers(&mut info, 1, accounts, "authority", "multisigAuthority")?;
            Some(ix("updateMultiplier", info))
        }
        _ => None,
    }
}

fn pausable(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let kind = match ext.first()? {
        0 => {
            accounts.need(1)?;
            // A plain key here (all zeroes print as the system program's address).
            let authority = payload(ext, 32)?.key()?;
            return Some(ix(
                "initializePausableConfig",
                json!({"mint": a(0)?, "authority": authority}),
            ));
        }
        1 => "pause",
        2 => "resume",
        _ => return None,
    };
    accounts.need(2)?;
    let mut info = json!({"mint": a(0)?});
    signers(&mut info, 1, accounts, "authority", "multisigAuthority")?;
    Some(ix(kind, info))
}

fn permissioned_burn(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
        0 => {
            accounts.need(1)?;
            let authority = payload(ext, 32)?.key()?;
            Some(ix(
                "initializePermissionedBurnConfig",
                json!({"mint": a(0)?, "authority": authority}),
            ))
        }
        sub @ (1 | 2) => {
            accounts.need(4)?;
            let mut info = json!({"account": a(0)?, "mint": a(1)?,
                                  "permissionedBurnAuthority": a(2)?});
            let kind = if *sub == 1 {
                let amount = payload(ext, 8)?.u64()?;
                insert(&mut info, "amount", json!(amount.to_string()));
                "permissionedBurn"
            } else {
                let mut r = payload(ext, 9)?;
                let (amount, decimals) = (r.u64()?, r.u8()?);
                insert(&mut info, "tokenAmount", token_amount(amount, decimals));
                "permissionedBurnChecked"
            };
            signers(&mut info, 3, accounts, "authority", "multisigAuthority")?;
            Some(ix(kind, info))
        }
        3 => {
            accounts.need(4)?;
            let burn = ConfidentialAmount::read(ext)?;
            let mut info = json!({"account": a(0)?, "mint": a(1)?,
                                  "newDecryptableAvailableBalance": burn.balance});
            burn.insert_offsets(&mut info);
            // The permissioned burn authority and the owner are the trailing accounts.
            let limit = accounts.len().saturating_sub(2);
            let mut next = burn.proof_accounts(&mut info, accounts, 2, limit)?;
            if next < accounts.len().saturating_sub(1) {
                insert(&mut info, "permissionedBurnAuthority", json!(a(next)?));
                next += 1;
            }
            signers(&mut info, next, accounts, "authority", "multisigAuthority")?;
            Some(ix("permissionedConfidentialBurn", info))
        }
        _ => None,
    }
}
