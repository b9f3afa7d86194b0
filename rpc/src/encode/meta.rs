//! The `meta` member of an encoded transaction (docs/archive-rpc.md §7): the full, parsed and
//! simplified forms of the stored status metadata, token balances and rewards as printed.

use std::borrow::Cow;

use archive::proto;
use base64::Engine;
use serde::{Serialize, Serializer};

use super::{Base58, CompiledInstruction, Field, StoredKeys};
use crate::amount::real_number_string_trimmed;
use crate::parsed::{self, AccountKeys, UiInstruction};
use crate::tx_error::{self, Status, TxError};

/// Status metadata as printed (§7); which members appear depends on the form.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiMeta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_units_consumed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_units: Option<u64>,
    pub err: Option<TxError>,
    pub fee: u64,
    #[serde(skip_serializing_if = "Field::is_skip")]
    pub inner_instructions: Field<Vec<UiInnerInstructions<'a>>>,
    #[serde(skip_serializing_if = "Field::is_skip")]
    pub loaded_addresses: Field<UiLoadedAddresses<'a>>,
    #[serde(skip_serializing_if = "Field::is_skip")]
    pub log_messages: Field<&'a [String]>,
    pub post_balances: &'a [u64],
    pub post_token_balances: Vec<UiTokenBalance<'a>>,
    pub pre_balances: &'a [u64],
    pub pre_token_balances: Vec<UiTokenBalance<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_data: Option<UiReturnData<'a>>,
    #[serde(skip_serializing_if = "Field::is_skip")]
    pub rewards: Field<Vec<UiReward<'a>>>,
    pub status: StatusOwned,
}

/// The legacy `status` member (owned form of [`Status`]).
pub struct StatusOwned(pub Option<TxError>);

impl Serialize for StatusOwned {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Status(self.0.as_ref()).serialize(serializer)
    }
}

#[derive(Serialize)]
pub struct UiInnerInstructions<'a> {
    pub index: u8,
    pub instructions: InnerInstructionList<'a>,
}

/// Inner instructions: compiled (borrowed) or in the `jsonParsed` view.
#[derive(Serialize)]
#[serde(untagged)]
pub enum InnerInstructionList<'a> {
    Compiled(Vec<CompiledInstruction<'a>>),
    Parsed(Vec<UiInstruction>),
}

#[derive(Serialize)]
pub struct UiLoadedAddresses<'a> {
    pub readonly: StoredKeys<'a>,
    pub writable: StoredKeys<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiTokenBalance<'a> {
    pub account_index: u8,
    pub mint: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program_id: Option<&'a str>,
    pub ui_token_amount: UiTokenAmount<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiTokenAmount<'a> {
    pub amount: &'a str,
    pub decimals: u8,
    pub ui_amount: Option<f64>,
    pub ui_amount_string: Cow<'a, str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiReturnData<'a> {
    pub data: (String, &'static str),
    pub program_id: Base58<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiReward<'a> {
    pub commission: Option<u8>,
    pub lamports: i64,
    pub post_balance: u64,
    pub pubkey: &'a str,
    pub reward_type: Option<&'static str>,
}

/// Which meta members appear, and how inner instructions print.
#[derive(Clone, Copy)]
pub(super) enum MetaForm<'a> {
    /// `json`, `base64`, `base58`, `binary`: compiled inner instructions, `loadedAddresses`.
    Full,
    /// `jsonParsed`: parsed inner instructions, no `loadedAddresses`.
    Parsed(&'a AccountKeys<'a>),
}

/// The stored error, decoded; undecodable bytes are logged and shown as an unknown error.
pub fn meta_error(meta: &proto::TransactionStatusMeta) -> Option<TxError> {
    let bytes = &meta.err.as_ref()?.err;
    match tx_error::decode(bytes) {
        Ok(error) => Some(error),
        Err(error) => {
            tracing::warn!(%error, "stored transaction error does not decode");
            Some(TxError::Unknown(u32::MAX))
        }
    }
}

pub(super) fn full_meta<'a>(
    meta: &'a proto::TransactionStatusMeta,
    form: MetaForm<'_>,
    show_rewards: bool,
) -> UiMeta<'a> {
    let err = meta_error(meta);
    let inner_instructions = inner_instructions(meta, form);
    let loaded_addresses = match form {
        MetaForm::Full => Field::Value(UiLoadedAddresses {
            readonly: StoredKeys(&meta.loaded_readonly_addresses),
            writable: StoredKeys(&meta.loaded_writable_addresses),
        }),
        MetaForm::Parsed(_) => Field::Skip,
    };
    let log_messages = if meta.log_messages_none {
        Field::Null
    } else {
        Field::Value(meta.log_messages.as_slice())
    };
    let return_data = match (&meta.return_data, meta.return_data_none) {
        (Some(data), false) => Some(UiReturnData {
            data: (
                base64::engine::general_purpose::STANDARD.encode(&data.data),
                "base64",
            ),
            program_id: Base58(&data.program_id),
        }),
        _ => None,
    };
    UiMeta {
        compute_units_consumed: meta.compute_units_consumed,
        cost_units: meta.cost_units,
        status: StatusOwned(err),
        err,
        fee: meta.fee,
        inner_instructions,
        loaded_addresses,
        log_messages,
        post_balances: &meta.post_balances,
        post_token_balances: token_balances(&meta.post_token_balances),
        pre_balances: &meta.pre_balances,
        pre_token_balances: token_balances(&meta.pre_token_balances),
        return_data,
        rewards: if show_rewards {
            Field::Value(rewards(&meta.rewards))
        } else {
            Field::Null
        },
    }
}

/// The `innerInstructions` member: compiled (full form) or parsed (`jsonParsed`), `null` when
/// the stored metadata has none.
fn inner_instructions<'a>(
    meta: &'a proto::TransactionStatusMeta,
    form: MetaForm<'_>,
) -> Field<Vec<UiInnerInstructions<'a>>> {
    if meta.inner_instructions_none {
        Field::Null
    } else {
        Field::Value(
            meta.inner_instructions
                .iter()
                .map(|inner| UiInnerInstructions {
                    index: inner.index as u8,
                    instructions: match form {
                        MetaForm::Full => InnerInstructionList::Compiled(
                            inner
                                .instructions
                                .iter()
                                .map(|ix| CompiledInstruction {
                                    accounts: &ix.accounts,
                                    data: Base58(&ix.data),
                                    program_id_index: ix.program_id_index as u8,
                                    stack_height: ix.stack_height,
                                })
                                .collect(),
                        ),
                        MetaForm::Parsed(keys) => InnerInstructionList::Parsed(
                            inner
                                .instructions
                                .iter()
                                .map(|ix| {
                                    parsed::instruction(
                                        ix.program_id_index as u8,
                                        &ix.accounts,
                                        &ix.data,
                                        keys,
                                        ix.stack_height,
                                    )
                                })
                                .collect(),
                        ),
                    },
                })
                .collect(),
        )
    }
}

/// The simplified meta of `transactionDetails: accounts` (§4.3).
pub(super) fn simple_meta(meta: &proto::TransactionStatusMeta, show_rewards: bool) -> UiMeta<'_> {
    let err = meta_error(meta);
    UiMeta {
        compute_units_consumed: None,
        cost_units: None,
        status: StatusOwned(err),
        err,
        fee: meta.fee,
        inner_instructions: Field::Skip,
        loaded_addresses: Field::Skip,
        log_messages: Field::Skip,
        post_balances: &meta.post_balances,
        post_token_balances: token_balances(&meta.post_token_balances),
        pre_balances: &meta.pre_balances,
        pre_token_balances: token_balances(&meta.pre_token_balances),
        return_data: None,
        rewards: if show_rewards {
            Field::Value(rewards(&meta.rewards))
        } else {
            Field::Skip
        },
    }
}

fn token_balances(balances: &[proto::TokenBalance]) -> Vec<UiTokenBalance<'_>> {
    static NO_AMOUNT: proto::UiTokenAmount = proto::UiTokenAmount {
        ui_amount: 0.0,
        decimals: 0,
        amount: String::new(),
        ui_amount_string: String::new(),
    };
    balances
        .iter()
        .map(|balance| {
            let amount = balance.ui_token_amount.as_ref().unwrap_or(&NO_AMOUNT);
            let decimals = amount.decimals as u8;
            let ui_amount_string = if amount.ui_amount_string.is_empty() {
                Cow::Owned(real_number_string_trimmed(
                    amount.amount.parse().unwrap_or(0),
                    decimals,
                ))
            } else {
                Cow::Borrowed(amount.ui_amount_string.as_str())
            };
            UiTokenBalance {
                account_index: balance.account_index as u8,
                mint: &balance.mint,
                owner: (!balance.owner.is_empty()).then_some(balance.owner.as_str()),
                program_id: (!balance.program_id.is_empty()).then_some(balance.program_id.as_str()),
                ui_token_amount: UiTokenAmount {
                    amount: &amount.amount,
                    decimals,
                    ui_amount: (amount.ui_amount.abs() > f64::EPSILON).then_some(amount.ui_amount),
                    ui_amount_string,
                },
            }
        })
        .collect()
}

/// Rewards as printed: capitalised type names, commission parsed from its stored string.
pub fn rewards(rewards: &[proto::Reward]) -> Vec<UiReward<'_>> {
    rewards
        .iter()
        .map(|reward| UiReward {
            commission: reward.commission.parse().ok(),
            lamports: reward.lamports,
            post_balance: reward.post_balance,
            pubkey: &reward.pubkey,
            reward_type: match proto::RewardType::try_from(reward.reward_type) {
                Ok(proto::RewardType::Fee) => Some("Fee"),
                Ok(proto::RewardType::Rent) => Some("Rent"),
                Ok(proto::RewardType::Staking) => Some("Staking"),
                Ok(proto::RewardType::Voting) => Some("Voting"),
                Ok(proto::RewardType::Unspecified) | Err(_) => None,
            },
        })
        .collect()
}
