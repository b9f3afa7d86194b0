//! Length: over 600 lines because the validator's transaction rendering, field by field: a protocol
//! table; ~35 of the lines are tests.
//!
//! One archived transaction rendered as the validator renders it (docs/archive-rpc.md §6, §7):
//! the transaction in `json`, `jsonParsed`, `base64`, `base58` or legacy `binary` form (or the
//! `accounts` list of getBlock), its status metadata (full, parsed or the simplified `accounts`
//! form), and the `version` rules of `maxSupportedTransactionVersion`.
//!
//! Every object is a struct whose fields are declared in ascending byte order of their JSON names,
//! so serde writes the keys sorted, as the validator does; absent-vs-null follows the validator's
//! rules field by field ([`Field`]). The structs borrow from the stored transaction (base58 values
//! are [`Base58`], printed while serializing; lists, logs and strings are slices of the stored
//! metadata), so rendering allocates little beyond the output buffer.

use std::borrow::Cow;

use archive::proto;
use base64::Engine;
use decoder::transaction::{MessageVersion, TransactionView, parse_transaction_exact};
use serde::{Serialize, Serializer};

pub use super::base58::Base58;
use super::error::RpcError;
use super::params::{EncodeOptions, Encoding, TransactionDetails};
use super::parsed::{self, AccountKeys, ParsedAccount, UiInstruction};
use super::tx_error::{self, Status, TxError};

/// A member that is printed, printed as `null`, or left out.
#[derive(Debug, Clone)]
pub enum Field<T> {
    Value(T),
    Null,
    Skip,
}

impl<T> Field<T> {
    pub fn is_skip(&self) -> bool {
        matches!(self, Self::Skip)
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(value) => value.serialize(serializer),
            Self::Null | Self::Skip => serializer.serialize_none(),
        }
    }
}

pub fn b58(bytes: &[u8]) -> String {
    bs58::encode(bytes).into_string()
}

/// `"legacy"` or the version number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Legacy,
    Number(u8),
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Legacy => serializer.serialize_str("legacy"),
            Self::Number(number) => serializer.serialize_u8(*number),
        }
    }
}

/// The `version` member of a transaction that has metadata, or -32015 (table in §6.3).
pub fn check_version(
    version: MessageVersion,
    max_version: Option<u8>,
) -> Result<Option<Version>, RpcError> {
    let number = match version {
        MessageVersion::Legacy => return Ok(max_version.map(|_| Version::Legacy)),
        MessageVersion::V0 => 0,
    };
    match max_version {
        Some(max) if number <= max => Ok(Some(Version::Number(number))),
        _ => Err(RpcError::unsupported_transaction_version(number)),
    }
}

/// Parses the stored wire bytes; archived bytes that do not parse are corrupt data.
pub fn parse_wire(wire: &[u8]) -> Result<TransactionView<'_>, RpcError> {
    parse_transaction_exact(wire).map_err(|error| {
        tracing::warn!(%error, "archived transaction bytes do not parse");
        RpcError::internal()
    })
}

/// A transaction and its metadata, encoded (an entry of getBlock's `transactions`, and the body
/// of getTransaction's result).
#[derive(Serialize)]
pub struct EncodedWithMeta<'a> {
    pub meta: Option<UiMeta<'a>>,
    pub transaction: EncodedTransaction<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Version>,
}

/// Encodes one stored transaction. `details` is `Full` or `Accounts`; `show_rewards: false` makes
/// `meta.rewards` null (full) or absent (accounts).
pub fn encode_with_meta<'a>(
    transaction: &'a archive::Transaction,
    options: &EncodeOptions,
    show_rewards: bool,
) -> Result<EncodedWithMeta<'a>, RpcError> {
    let view = parse_wire(&transaction.wire)?;
    let Some(meta) = transaction.meta.as_ref() else {
        // Early epochs: no metadata, no version check, no `version` member.
        let keys = AccountKeys::new(&view, &[], &[]);
        let encoded = match options.details {
            TransactionDetails::Accounts => accounts_list(&view, &keys),
            _ => encode_transaction(&view, options.encoding, &keys),
        };
        return Ok(EncodedWithMeta {
            meta: None,
            transaction: encoded,
            version: None,
        });
    };
    let version = check_version(view.version(), options.max_version)?;
    let keys = AccountKeys::new(
        &view,
        &meta.loaded_writable_addresses,
        &meta.loaded_readonly_addresses,
    );
    let (encoded, ui_meta) = match options.details {
        TransactionDetails::Accounts => {
            (accounts_list(&view, &keys), simple_meta(meta, show_rewards))
        }
        _ => {
            let form = if options.encoding == Encoding::JsonParsed {
                MetaForm::Parsed(&keys)
            } else {
                MetaForm::Full
            };
            (
                encode_transaction(&view, options.encoding, &keys),
                full_meta(meta, form, show_rewards),
            )
        }
    };
    Ok(EncodedWithMeta {
        meta: Some(ui_meta),
        transaction: encoded,
        version,
    })
}

/// The `transaction` member in one of its forms.
#[derive(Serialize)]
#[serde(untagged)]
pub enum EncodedTransaction<'a> {
    LegacyBinary(Base58<'a>),
    Binary(Base58<'a>, &'static str),
    Base64(String, &'static str),
    Json(UiTransaction<'a, UiRawMessage<'a>>),
    Parsed(UiTransaction<'a, UiParsedMessage<'a>>),
    Accounts(UiAccountsList<'a>),
}

#[derive(Serialize)]
pub struct UiTransaction<'a, M> {
    pub message: M,
    pub signatures: Signatures<'a>,
}

/// A transaction's signatures, each printed in base58.
pub struct Signatures<'a>(pub &'a [[u8; 64]]);

impl Serialize for Signatures<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|s| Base58(s)))
    }
}

/// Keys printed in base58.
pub struct Keys<'a>(pub &'a [[u8; 32]]);

impl Serialize for Keys<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|k| Base58(k)))
    }
}

/// Stored keys (`Vec<u8>` each) printed in base58.
pub struct StoredKeys<'a>(pub &'a [Vec<u8>]);

impl Serialize for StoredKeys<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|k| Base58(k)))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiRawMessage<'a> {
    pub account_keys: Keys<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_table_lookups: Option<Vec<UiAddressTableLookup<'a>>>,
    pub header: UiHeader,
    pub instructions: Vec<CompiledInstruction<'a>>,
    pub recent_blockhash: Base58<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiParsedMessage<'a> {
    pub account_keys: Vec<ParsedAccount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_table_lookups: Option<Vec<UiAddressTableLookup<'a>>>,
    pub instructions: Vec<UiInstruction>,
    pub recent_blockhash: Base58<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiHeader {
    pub num_readonly_signed_accounts: u8,
    pub num_readonly_unsigned_accounts: u8,
    pub num_required_signatures: u8,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCompiledInstruction {
    pub accounts: Vec<u8>,
    pub data: String,
    pub program_id_index: u8,
    pub stack_height: Option<u32>,
}

/// A compiled instruction borrowed from the stored transaction (the same JSON as
/// [`UiCompiledInstruction`]).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompiledInstruction<'a> {
    pub accounts: &'a [u8],
    pub data: Base58<'a>,
    pub program_id_index: u8,
    pub stack_height: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiAddressTableLookup<'a> {
    pub account_key: Base58<'a>,
    pub readonly_indexes: &'a [u8],
    pub writable_indexes: &'a [u8],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiAccountsList<'a> {
    pub account_keys: Vec<ParsedAccount>,
    pub signatures: Signatures<'a>,
}

/// Top-level instructions carry stack height 1 (current validators, Agave issue #5732).
const TOP_LEVEL_STACK_HEIGHT: Option<u32> = Some(1);

fn signatures<'a>(view: &TransactionView<'a>) -> Signatures<'a> {
    Signatures(view.signatures())
}

fn lookups<'a>(view: &TransactionView<'a>) -> Option<Vec<UiAddressTableLookup<'a>>> {
    match view.version() {
        MessageVersion::Legacy => None,
        MessageVersion::V0 => Some(
            view.address_table_lookups()
                .map(|lookup| UiAddressTableLookup {
                    account_key: Base58(lookup.table),
                    readonly_indexes: lookup.readonly_indices,
                    writable_indexes: lookup.writable_indices,
                })
                .collect(),
        ),
    }
}

/// The transaction in the requested encoding.
pub fn encode_transaction<'a>(
    view: &TransactionView<'a>,
    encoding: Encoding,
    keys: &AccountKeys<'_>,
) -> EncodedTransaction<'a> {
    match encoding {
        Encoding::Binary => EncodedTransaction::LegacyBinary(Base58(view.bytes())),
        Encoding::Base58 => EncodedTransaction::Binary(Base58(view.bytes()), "base58"),
        Encoding::Base64 => EncodedTransaction::Base64(
            base64::engine::general_purpose::STANDARD.encode(view.bytes()),
            "base64",
        ),
        Encoding::Json => {
            let header = view.header();
            EncodedTransaction::Json(UiTransaction {
                message: UiRawMessage {
                    account_keys: Keys(view.static_account_keys()),
                    address_table_lookups: lookups(view),
                    header: UiHeader {
                        num_readonly_signed_accounts: header.num_readonly_signed_accounts,
                        num_readonly_unsigned_accounts: header.num_readonly_unsigned_accounts,
                        num_required_signatures: header.num_required_signatures,
                    },
                    instructions: view
                        .instructions()
                        .map(|ix| CompiledInstruction {
                            accounts: ix.account_indices,
                            data: Base58(ix.data),
                            program_id_index: ix.program_id_index,
                            stack_height: TOP_LEVEL_STACK_HEIGHT,
                        })
                        .collect(),
                    recent_blockhash: Base58(view.recent_blockhash()),
                },
                signatures: signatures(view),
            })
        }
        Encoding::JsonParsed => EncodedTransaction::Parsed(UiTransaction {
            message: UiParsedMessage {
                account_keys: keys.parsed_accounts(),
                address_table_lookups: lookups(view),
                instructions: view
                    .instructions()
                    .map(|ix| {
                        parsed::instruction(
                            ix.program_id_index,
                            ix.account_indices,
                            ix.data,
                            keys,
                            TOP_LEVEL_STACK_HEIGHT,
                        )
                    })
                    .collect(),
                recent_blockhash: Base58(view.recent_blockhash()),
            },
            signatures: signatures(view),
        }),
    }
}

fn accounts_list<'a>(view: &TransactionView<'a>, keys: &AccountKeys<'_>) -> EncodedTransaction<'a> {
    EncodedTransaction::Accounts(UiAccountsList {
        account_keys: keys.parsed_accounts(),
        signatures: signatures(view),
    })
}

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
enum MetaForm<'a> {
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

fn full_meta<'a>(
    meta: &'a proto::TransactionStatusMeta,
    form: MetaForm<'_>,
    show_rewards: bool,
) -> UiMeta<'a> {
    let err = meta_error(meta);
    let inner_instructions = if meta.inner_instructions_none {
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
    };
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

/// The simplified meta of `transactionDetails: accounts` (§4.3).
fn simple_meta(meta: &proto::TransactionStatusMeta, show_rewards: bool) -> UiMeta<'_> {
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

/// `amount / 10^decimals` as a decimal string without trailing zeros or a trailing dot.
pub fn real_number_string_trimmed(amount: u64, decimals: u8) -> String {
    let digits = amount.to_string();
    let decimals = usize::from(decimals);
    if decimals == 0 {
        return digits;
    }
    let padded = if digits.len() <= decimals {
        format!("{}{digits}", "0".repeat(decimals + 1 - digits.len()))
    } else {
        digits
    };
    let (whole, fraction) = padded.split_at(padded.len() - decimals);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{fraction}")
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_amount_strings() {
        assert_eq!(real_number_string_trimmed(1_500_000, 6), "1.5");
        assert_eq!(real_number_string_trimmed(0, 6), "0");
        assert_eq!(real_number_string_trimmed(0, 0), "0");
        assert_eq!(real_number_string_trimmed(42, 0), "42");
        assert_eq!(real_number_string_trimmed(5, 3), "0.005");
        assert_eq!(real_number_string_trimmed(1_000, 3), "1");
        assert_eq!(real_number_string_trimmed(123_456_789, 4), "12345.6789");
    }

    #[test]
    fn version_table() {
        use MessageVersion::{Legacy, V0};
        assert_eq!(check_version(Legacy, None).unwrap(), None);
        assert_eq!(
            check_version(Legacy, Some(0)).unwrap(),
            Some(Version::Legacy)
        );
        assert_eq!(
            check_version(V0, Some(0)).unwrap(),
            Some(Version::Number(0))
        );
        assert_eq!(
            check_version(V0, Some(5)).unwrap(),
            Some(Version::Number(0))
        );
        assert_eq!(check_version(V0, None).unwrap_err().code, -32015);
    }
}
