//! The confidential Token-2022 extension families as the validator parses them: confidential
//! transfer (outer tag 27), confidential transfer fee (37) and confidential mint/burn (42), with
//! the proof accounts their zero-knowledge proofs name (ElGamal keys and AE ciphertexts print in
//! base64).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use super::payload;
use crate::parsed::reader::{Accounts, Reader};
use crate::parsed::token_info::{insert, signers};
use crate::parsed::typed as ix;

/// Confidential transfer fee (outer tag 37). ElGamal keys and AE ciphertexts print in base64.
pub(super) fn confidential_transfer_fee(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
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
        1 | 2 => withdraw_withheld(ext, accounts),
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

/// Withdraw withheld fees confidentially, from the mint (1) or from accounts (2).
fn withdraw_withheld(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
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
        _ => None,
    }
}

/// The payload shared by confidential mint and burn: a 36-byte AE ciphertext (new decryptable
/// supply or balance), two 64-byte auditor ciphertexts (not printed), three proof offsets.
pub(super) struct ConfidentialAmount {
    pub(super) balance: String,
    offsets: [i8; 3],
}

impl ConfidentialAmount {
    pub(super) fn read(ext: &[u8]) -> Option<Self> {
        let mut r = payload(ext, 36 + 64 + 64 + 3)?;
        let balance = BASE64.encode(r.take::<36>()?);
        r.take::<128>()?;
        let offsets = [r.i8()?, r.i8()?, r.i8()?];
        Some(Self { balance, offsets })
    }

    pub(super) fn insert_offsets(&self, info: &mut Value) {
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
    pub(super) fn proof_accounts(
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

/// Confidential transfer (outer tag 27), one helper per instruction group.
pub(super) fn confidential_transfer(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    match ext.first()? {
        0 | 1 => transfer_mint(ext, accounts),
        2..=4 | 14 => transfer_account(ext, accounts),
        5 | 6 => deposit_or_withdraw(ext, accounts),
        7 | 13 => transfer(ext, accounts),
        8..=12 => pending_balance_and_credits(ext, accounts),
        _ => None,
    }
}

/// The mint's confidential transfer configuration: initialize (0), update (1).
fn transfer_mint(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
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
        _ => None,
    }
}

/// A token account's confidential transfer state: configure (2), approve (3), empty (4),
/// configure with a registry (14).
fn transfer_account(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
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

/// Deposit (5) into and withdraw (6) from the confidential balance.
fn deposit_or_withdraw(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let limit = accounts.len().saturating_sub(1);
    match ext.first()? {
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
        _ => None,
    }
}

/// A confidential transfer (7) and one with a fee (13).
fn transfer(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let limit = accounts.len().saturating_sub(1);
    match ext.first()? {
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
        _ => None,
    }
}

/// Apply the pending balance (8); enable or disable confidential and non-confidential credits
/// (9 to 12).
fn pending_balance_and_credits(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    match ext.first()? {
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
        _ => None,
    }
}

/// Confidential mint/burn (outer tag 42).
pub(super) fn confidential_mint_burn(ext: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
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
