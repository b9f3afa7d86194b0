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

mod meta;

use base64::Engine;
use decoder::transaction::{MessageVersion, TransactionView, parse_transaction_exact};
use serde::{Serialize, Serializer};

pub use super::amount::real_number_string_trimmed;
pub use super::base58::{Base58, b58};
use super::error::RpcError;
use super::params::{EncodeOptions, Encoding, TransactionDetails};
use super::parsed::{self, AccountKeys, ParsedAccount, UiInstruction};
pub use super::ui_instruction::UiCompiledInstruction;
pub use meta::{
    InnerInstructionList, StatusOwned, UiInnerInstructions, UiLoadedAddresses, UiMeta,
    UiReturnData, UiReward, UiTokenAmount, UiTokenBalance, meta_error, rewards,
};
use meta::{MetaForm, full_meta, simple_meta};

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

#[cfg(test)]
mod tests {
    use super::*;

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
