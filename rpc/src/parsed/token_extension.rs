//! Length: over 600 lines because the 21 Token-2022 extension instructions as the validator parses
//! them: a protocol table.
//!
//! Token-2022 extension instructions (outer tags 26 to 46) as the validator parses them. Each
//! extension has its own sub-tag after the outer tag and, for most, a fixed-size payload that
//! must fit exactly (the confidential families print their ciphertexts and ElGamal keys in
//! base64, like the zk-sdk's pod types).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use super::token::{insert, signers, token_amount};
use super::{Accounts, Reader, typed as ix};

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

/// Confidential transfer fee (outer tag 37). ElGamal keys and AE ciphertexts print in base64.
fn confidential_transfer_fee(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
        0 => {
            accounts.need(1)?;
            let mut r = payload(ext, 64)?;
            let authority = r.maybe_null_key()?;
            let elgamal = BASE64.encode(r.take::<32>()?);
            let mut info =
                json!({"mint": a(0)?, "withdrawWithheldAuthorityElGamalPubkey": elgamal});
            if let Some(authority) = authority {
                insert(&mut info, "authority", json!(authority));
            }
            Some(ix("initializeConfidentialTransferFeeConfig", info))
        }
        1 => {
            accounts.need(4)?;
            let mut r = payload(ext, 37)?;
            let offset = r.i8()?;
            let balance = BASE64.encode(r.take::<36>()?);
            let mut info = json!({"mint": a(0)?, "feeRecipient": a(1)?,
                                  "proofInstructionOffset": offset,
                                  "newDecryptableAvailableBalance": balance});
            let mut next = 2;
            if next < accounts.len().saturating_sub(1) {
                let key = if offset == 0 {
                    "proofContextStateAccount"
                } else {
                    "instructionsSysvar"
                };
                insert(&mut info, key, json!(a(next)?));
                next += 1;
            }
            signers(
                &mut info,
                next,
                accounts,
                "withdrawWithheldAuthority",
                "multisigWithdrawWithheldAuthority",
            )?;
            Some(ix(
                "withdrawWithheldConfidentialTransferTokensFromMint",
                info,
            ))
        }
        2 => {
            let mut r = payload(ext, 38)?;
            let count = usize::from(r.u8()?);
            let offset = r.i8()?;
            let balance = BASE64.encode(r.take::<36>()?);
            accounts.need(4 + count)?;
            let first_source = accounts.len() - count;
            let key = if offset == 0 {
                "proofContextStateAccount"
            } else {
                "instructionsSysvar"
            };
            let mut info = json!({"mint": a(0)?, "feeRecipient": a(1)?,
                                  "proofInstructionOffset": offset,
                                  "newDecryptableAvailableBalance": balance,
                                  "sourceAccounts": accounts.keys(first_source)?});
            insert(&mut info, key, json!(a(2)?));
            signers(
                &mut info,
                3,
                &accounts.slice(0, first_source)?,
                "withdrawWithheldAuthority",
                "multisigWithdrawWithheldAuthority",
            )?;
            Some(ix(
                "withdrawWithheldConfidentialTransferTokensFromAccounts",
                info,
            ))
        }
        3 => {
            accounts.need(1)?;
            Some(ix(
                "harvestWithheldConfidentialTransferTokensToMint",
                json!({"mint": a(0)?, "sourceAccounts": accounts.keys(1)?}),
            ))
        }
        sub @ (4 | 5) => {
            accounts.need(2)?;
            let mut info = json!({"account": a(0)?});
            signers(&mut info, 1, accounts, "owner", "multisigOwner")?;
            let kind = if *sub == 4 {
                "enableConfidentialTransferFeeHarvestToMint"
            } else {
                "disableConfidentialTransferFeeHarvestToMint"
            };
            Some(ix(kind, info))
        }
        _ => None,
    }
}

/// The payload shared by confidential mint and burn: a 36-byte AE ciphertext (new decryptable
/// supply or balance), two 64-byte auditor ciphertexts (not printed), three proof offsets.
struct ConfidentialAmount {
    balance: String,
    offsets: [i8; 3],
}

impl ConfidentialAmount {
    fn read(ext: &[u8]) -> Option<Self> {
        let mut r = payload(ext, 36 + 64 + 64 + 3)?;
        let balance = BASE64.encode(r.take::<36>()?);
        r.take::<128>()?;
        let offsets = [r.i8()?, r.i8()?, r.i8()?];
        Some(Self { balance, offsets })
    }

    fn insert_offsets(&self, info: &mut Value) {
        let [equality, validity, range] = self.offsets;
        insert(info, "equalityProofInstructionOffset", json!(equality));
        insert(
            info,
            "ciphertextValidityProofInstructionOffset",
            json!(validity),
        );
        insert(info, "rangeProofInstructionOffset", json!(range));
    }

    /// The proof accounts of the equality, ciphertext-validity and range proofs.
    fn proof_accounts(
        &self,
        info: &mut Value,
        accounts: &Accounts<'_>,
        next: usize,
        limit: usize,
    ) -> Option<usize> {
        let [equality, validity, range] = self.offsets;
        proof_accounts(
            info,
            accounts,
            next,
            limit,
            &[
                (equality, "equalityProofContextStateAccount"),
                (validity, "ciphertextValidityProofContextStateAccount"),
                (range, "rangeProofContextStateAccount"),
            ],
        )
    }
}

/// Walks the optional proof accounts from `next` while `next < limit`: the instructions sysvar
/// when any proof is in an instruction (non-zero offset), then a context-state account for each
/// proof that is not. Returns the position after them.
fn proof_accounts(
    info: &mut Value,
    accounts: &Accounts<'_>,
    mut next: usize,
    limit: usize,
    proofs: &[(i8, &str)],
) -> Option<usize> {
    if proofs.iter().any(|&(offset, _)| offset != 0) && next < limit {
        insert(info, "instructionsSysvar", json!(accounts.get(next)?));
        next += 1;
    }
    for &(offset, name) in proofs {
        if offset == 0 && next < limit {
            insert(info, name, json!(accounts.get(next)?));
            next += 1;
        }
    }
    Some(next)
}

/// `proofContextStateAccount` when the proof is a context-state account (offset 0), else
/// `instructionsSysvar`.
fn proof_key(offset: i8) -> &'static str {
    if offset == 0 {
        "proofContextStateAccount"
    } else {
        "instructionsSysvar"
    }
}

/// A 36-byte authenticated-encryption ciphertext, printed in base64.
fn ae_ciphertext(r: &mut Reader<'_>) -> Option<String> {
    r.take::<36>().map(|bytes| BASE64.encode(bytes))
}

/// Confidential transfer (outer tag 27).
fn confidential_transfer(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let limit = accounts.len().saturating_sub(1);
    match ext.first()? {
        0 => {
            accounts.need(1)?;
            let mut r = payload(ext, 65)?;
            let authority = r.maybe_null_key()?;
            let auto_approve = r.u8()? != 0;
            let auditor = r.take::<32>()?;
            let auditor = (auditor != [0; 32]).then(|| BASE64.encode(auditor));
            let mut info = json!({"mint": a(0)?, "autoApproveNewAccounts": auto_approve,
                                  "auditorElGamalPubkey": auditor});
            if let Some(authority) = authority {
                insert(&mut info, "authority", json!(authority));
            }
            Some(ix("initializeConfidentialTransferMint", info))
        }
        1 => {
            accounts.need(2)?;
            let mut r = payload(ext, 33)?;
            let auto_approve = r.u8()? != 0;
            let auditor = r.take::<32>()?;
            let auditor = (auditor != [0; 32]).then(|| BASE64.encode(auditor));
            Some(ix(
                "updateConfidentialTransferMint",
                json!({"mint": a(0)?, "confidentialTransferMintAuthority": a(1)?,
                       "autoApproveNewAccounts": auto_approve,
                       "auditorElGamalPubkey": auditor}),
            ))
        }
        2 => {
            accounts.need(4)?;
            let mut r = payload(ext, 45)?;
            let (balance, counter, offset) = (ae_ciphertext(&mut r)?, r.u64()?, r.i8()?);
            let mut info = json!({"account": a(0)?, "mint": a(1)?,
                                  "decryptableZeroBalance": balance,
                                  "maximumPendingBalanceCreditCounter": counter,
                                  "proofInstructionOffset": offset});
            insert(&mut info, proof_key(offset), json!(a(2)?));
            signers(&mut info, 3, accounts, "owner", "multisigOwner")?;
            Some(ix("configureConfidentialTransferAccount", info))
        }
        3 => {
            accounts.need(3)?;
            Some(ix(
                "approveConfidentialTransferAccount",
                json!({"account": a(0)?, "mint": a(1)?,
                       "confidentialTransferAuditorAuthority": a(2)?}),
            ))
        }
        4 => {
            accounts.need(3)?;
            let offset = payload(ext, 1)?.i8()?;
            let mut info = json!({"account": a(0)?, "proofInstructionOffset": offset});
            insert(&mut info, proof_key(offset), json!(a(1)?));
            signers(&mut info, 2, accounts, "owner", "multisigOwner")?;
            Some(ix("emptyConfidentialTransferAccount", info))
        }
        5 => {
            accounts.need(3)?;
            let mut r = payload(ext, 9)?;
            let (amount, decimals) = (r.u64()?, r.u8()?);
            let mut info = json!({"account": a(0)?, "mint": a(1)?, "amount": amount,
                                  "decimals": decimals});
            signers(&mut info, 2, accounts, "owner", "multisigOwner")?;
            Some(ix("depositConfidentialTransfer", info))
        }
        6 => {
            accounts.need(4)?;
            let mut r = payload(ext, 47)?;
            let (amount, decimals, balance) = (r.u64()?, r.u8()?, ae_ciphertext(&mut r)?);
            let (equality, range) = (r.i8()?, r.i8()?);
            let mut info = json!({"account": a(0)?, "mint": a(1)?, "amount": amount,
                                  "decimals": decimals,
                                  "newDecryptableAvailableBalance": balance,
                                  "equalityProofInstructionOffset": equality,
                                  "rangeProofInstructionOffset": range});
            let next = proof_accounts(
                &mut info,
                accounts,
                2,
                limit,
                &[
                    (equality, "equalityProofContextStateAccount"),
                    (range, "rangeProofContextStateAccount"),
                ],
            )?;
            signers(&mut info, next, accounts, "owner", "multisigOwner")?;
            Some(ix("withdrawConfidentialTransfer", info))
        }
        7 => {
            accounts.need(4)?;
            let transfer = ConfidentialAmount::read(ext)?;
            let mut info = json!({"source": a(0)?, "mint": a(1)?, "destination": a(2)?,
                                  "newSourceDecryptableAvailableBalance": transfer.balance});
            transfer.insert_offsets(&mut info);
            let next = transfer.proof_accounts(&mut info, accounts, 3, limit)?;
            signers(&mut info, next, accounts, "owner", "multisigOwner")?;
            Some(ix("confidentialTransfer", info))
        }
        8 => {
            accounts.need(2)?;
            let mut r = payload(ext, 44)?;
            let (counter, balance) = (r.u64()?, ae_ciphertext(&mut r)?);
            let mut info = json!({"account": a(0)?, "newDecryptableAvailableBalance": balance,
                                  "expectedPendingBalanceCreditCounter": counter});
            signers(&mut info, 1, accounts, "owner", "multisigOwner")?;
            Some(ix("applyPendingConfidentialTransferBalance", info))
        }
        sub @ 9..=12 => {
            accounts.need(2)?;
            let kind = match sub {
                9 => "enableConfidentialTransferConfidentialCredits",
                10 => "disableConfidentialTransferConfidentialCredits",
                11 => "enableConfidentialTransferNonConfidentialCredits",
                _ => "disableConfidentialTransferNonConfidentialCredits",
            };
            let mut info = json!({"account": a(0)?});
            signers(&mut info, 1, accounts, "owner", "multisigOwner")?;
            Some(ix(kind, info))
        }
        13 => {
            accounts.need(4)?;
            let mut r = payload(ext, 36 + 128 + 5)?;
            let balance = ae_ciphertext(&mut r)?;
            r.take::<128>()?;
            let offsets = [r.i8()?, r.i8()?, r.i8()?, r.i8()?, r.i8()?];
            let names = [
                "equalityProofContextStateAccount",
                "transferAmountCiphertextValidityProofContextStateAccount",
                "feeSigmaProofContextStateAccount",
                "feeCiphertextValidityProofContextStateAccount",
                "rangeProofContextStateAccount",
            ];
            let [equality, amount_validity, fee_sigma, fee_validity, range] = offsets;
            let mut info = json!({"source": a(0)?, "mint": a(1)?, "destination": a(2)?,
                "newSourceDecryptableAvailableBalance": balance,
                "equalityProofInstructionOffset": equality,
                "transferAmountCiphertextValidityProofInstructionOffset": amount_validity,
                "feeCiphertextValidityProofInstructionOffset": fee_validity,
                "feeSigmaProofInstructionOffset": fee_sigma,
                "rangeProofInstructionOffset": range});
            let proofs: Vec<(i8, &str)> = offsets.into_iter().zip(names).collect();
            let next = proof_accounts(&mut info, accounts, 3, limit, &proofs)?;
            signers(&mut info, next, accounts, "owner", "multisigOwner")?;
            Some(ix("confidentialTransferWithFee", info))
        }
        14 => {
            accounts.need(3)?;
            Some(ix(
                "configureConfidentialAccountWithRegistry",
                json!({"account": a(0)?, "mint": a(1)?, "registry": a(2)?}),
            ))
        }
        _ => None,
    }
}

/// Confidential mint/burn (outer tag 42).
fn confidential_mint_burn(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
        0 => {
            accounts.need(1)?;
            let mut r = payload(ext, 68)?;
            let pubkey = BASE64.encode(r.take::<32>()?);
            let supply = BASE64.encode(r.take::<36>()?);
            Some(ix(
                "initializeConfidentialMintBurnMint",
                json!({"mint": a(0)?, "supplyElGamalPubkey": pubkey,
                       "decryptableSupply": supply}),
            ))
        }
        1 => {
            accounts.need(3)?;
            let mut r = payload(ext, 33)?;
            let pubkey = BASE64.encode(r.take::<32>()?);
            let offset = r.i8()?;
            let mut info = json!({"mint": a(0)?, "newSupplyElGamalPubkey": pubkey,
                                  "proofInstructionOffset": offset});
            if 1 < accounts.len().saturating_sub(1) {
                let key = if offset == 0 {
                    "proofContextStateAccount"
                } else {
                    "instructionsSysvar"
                };
                insert(&mut info, key, json!(a(1)?));
            }
            signers(&mut info, 2, accounts, "owner", "multisigOwner")?;
            Some(ix("rotateConfidentialMintBurnSupplyElGamalPubkey", info))
        }
        2 => {
            accounts.need(2)?;
            let supply = BASE64.encode(payload(ext, 36)?.take::<36>()?);
            let mut info = json!({"mint": a(0)?, "newDecryptableSupply": supply});
            signers(&mut info, 1, accounts, "owner", "multisigOwner")?;
            Some(ix("updateConfidentialMintBurnDecryptableSupply", info))
        }
        sub @ (3 | 4) => {
            accounts.need(3)?;
            let amount = ConfidentialAmount::read(ext)?;
            let (kind, field) = if *sub == 3 {
                ("confidentialMint", "newDecryptableSupply")
            } else {
                ("confidentialBurn", "newDecryptableAvailableBalance")
            };
            let mut info = json!({"destination": a(0)?, "mint": a(1)?});
            insert(&mut info, field, json!(amount.balance));
            amount.insert_offsets(&mut info);
            let limit = accounts.len().saturating_sub(1);
            let next = amount.proof_accounts(&mut info, accounts, 2, limit)?;
            signers(&mut info, next, accounts, "owner", "multisigOwner")?;
            Some(ix(kind, info))
        }
        5 => {
            accounts.need(2)?;
            let mut info = json!({"mint": a(0)?});
            signers(&mut info, 1, accounts, "owner", "multisigOwner")?;
            Some(ix("applyPendingBurn", info))
        }
        _ => None,
    }
}
