//! Parameters of the five archive methods, read with the validator's rules (docs/archive-rpc.md
//! §3): positional arrays whose trailing optional members may be left out, config objects (or the
//! deprecated bare encoding string), unknown config keys ignored, wrong types rejected with the
//! deserializer's own text (`Invalid params: <text>.`). The config types mirror the validator's
//! field names and shapes so that serde produces the same texts.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::envelope::Params;
use super::error::{ParseKeyError, RpcError, parse_pubkey, parse_signature};

/// Transaction encodings a client may ask for (`base64+zstd` is not one of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Encoding {
    /// Legacy base58 as a bare string.
    Binary,
    Base64,
    Base58,
    Json,
    JsonParsed,
}

/// getBlock's `transactionDetails`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TransactionDetails {
    #[default]
    Full,
    Signatures,
    None,
    Accounts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CommitmentLevel {
    Processed,
    Confirmed,
    Finalized,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitmentConfig {
    pub commitment: CommitmentLevel,
}

/// The config argument of getBlock/getTransaction: an object, or (deprecated) a bare encoding.
/// The name is part of the validator's error text ("... untagged enum RpcEncodingConfigWrapper").
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum RpcEncodingConfigWrapper<T> {
    Deprecated(Option<Encoding>),
    Current(Option<T>),
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RpcBlockConfig {
    pub encoding: Option<Encoding>,
    pub transaction_details: Option<TransactionDetails>,
    pub rewards: Option<bool>,
    #[serde(flatten)]
    pub commitment: Option<CommitmentConfig>,
    pub max_supported_transaction_version: Option<u8>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RpcTransactionConfig {
    pub encoding: Option<Encoding>,
    #[serde(flatten)]
    pub commitment: Option<CommitmentConfig>,
    pub max_supported_transaction_version: Option<u8>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RpcSignaturesForAddressConfig {
    pub before: Option<String>,
    pub until: Option<String>,
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub commitment: Option<CommitmentConfig>,
    pub min_context_slot: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RpcContextConfig {
    #[serde(flatten)]
    pub commitment: Option<CommitmentConfig>,
    pub min_context_slot: Option<u64>,
}

/// Default and largest `limit` of getSignaturesForAddress.
pub const SIGNATURES_LIMIT_MAX: usize = 1_000;

/// What getBlock and getTransaction were asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodeOptions {
    pub encoding: Encoding,
    pub details: TransactionDetails,
    pub rewards: bool,
    pub max_version: Option<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetBlock {
    pub slot: u64,
    pub options: EncodeOptions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetTransaction {
    pub signature: [u8; 64],
    pub options: EncodeOptions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetSignaturesForAddress {
    pub address: [u8; 32],
    pub before: Option<[u8; 64]>,
    pub until: Option<[u8; 64]>,
    pub limit: usize,
    pub min_context_slot: Option<u64>,
    /// `confirmed` was asked for (else finalized).
    pub confirmed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetSlot {
    pub min_context_slot: Option<u64>,
}

pub fn get_block(params: &Params) -> Result<GetBlock, RpcError> {
    let (slot, config): (u64, Option<RpcEncodingConfigWrapper<RpcBlockConfig>>) =
        with_trailing(params, 1, 2)?;
    let config = match config {
        None => RpcBlockConfig::default(),
        Some(RpcEncodingConfigWrapper::Deprecated(encoding)) => RpcBlockConfig {
            encoding,
            ..RpcBlockConfig::default()
        },
        Some(RpcEncodingConfigWrapper::Current(config)) => config.unwrap_or_default(),
    };
    at_least_confirmed(config.commitment)?;
    Ok(GetBlock {
        slot,
        options: EncodeOptions {
            encoding: config.encoding.unwrap_or(Encoding::Json),
            details: config.transaction_details.unwrap_or_default(),
            rewards: config.rewards.unwrap_or(true),
            max_version: config.max_supported_transaction_version,
        },
    })
}

pub fn get_transaction(params: &Params) -> Result<GetTransaction, RpcError> {
    let (signature, config): (
        String,
        Option<RpcEncodingConfigWrapper<RpcTransactionConfig>>,
    ) = with_trailing(params, 1, 2)?;
    let signature = parse_signature(&signature).map_err(RpcError::invalid_param)?;
    let config = match config {
        None => RpcTransactionConfig::default(),
        Some(RpcEncodingConfigWrapper::Deprecated(encoding)) => RpcTransactionConfig {
            encoding,
            ..RpcTransactionConfig::default()
        },
        Some(RpcEncodingConfigWrapper::Current(config)) => config.unwrap_or_default(),
    };
    at_least_confirmed(config.commitment)?;
    Ok(GetTransaction {
        signature,
        options: EncodeOptions {
            encoding: config.encoding.unwrap_or(Encoding::Json),
            details: TransactionDetails::Full,
            rewards: true,
            max_version: config.max_supported_transaction_version,
        },
    })
}

pub fn get_signatures_for_address(params: &Params) -> Result<GetSignaturesForAddress, RpcError> {
    let (address, config): (String, Option<RpcSignaturesForAddressConfig>) =
        with_trailing(params, 1, 2)?;
    let address = parse_pubkey(&address).map_err(RpcError::invalid_param)?;
    let config = config.unwrap_or_default();
    let signature = |text: Option<String>| -> Result<Option<[u8; 64]>, RpcError> {
        text.map(|text| parse_signature(&text))
            .transpose()
            .map_err(|e: ParseKeyError| RpcError::invalid_param(e))
    };
    let before = signature(config.before)?;
    let until = signature(config.until)?;
    let limit = config.limit.unwrap_or(SIGNATURES_LIMIT_MAX);
    if limit == 0 || limit > SIGNATURES_LIMIT_MAX {
        return Err(RpcError::invalid_params(format!(
            "Invalid limit; max {SIGNATURES_LIMIT_MAX}"
        )));
    }
    at_least_confirmed(config.commitment)?;
    Ok(GetSignaturesForAddress {
        address,
        before,
        until,
        limit,
        min_context_slot: config.min_context_slot,
        confirmed: config
            .commitment
            .is_some_and(|c| c.commitment == CommitmentLevel::Confirmed),
    })
}

pub fn get_slot(params: &Params) -> Result<GetSlot, RpcError> {
    let (config,): (Option<RpcContextConfig>,) = with_trailing(params, 0, 1)?;
    Ok(GetSlot {
        min_context_slot: config.unwrap_or_default().min_context_slot,
    })
}

pub fn get_block_time(params: &Params) -> Result<u64, RpcError> {
    let (slot,): (u64,) = positional(params)?;
    Ok(slot)
}

fn at_least_confirmed(commitment: Option<CommitmentConfig>) -> Result<(), RpcError> {
    match commitment {
        Some(CommitmentConfig {
            commitment: CommitmentLevel::Processed,
        }) => Err(RpcError::commitment_below_confirmed()),
        _ => Ok(()),
    }
}

/// Parameters of a method without optional trailing members: the whole `params` is the tuple.
fn positional<T: DeserializeOwned>(params: &Params) -> Result<T, RpcError> {
    let value = match params {
        Params::None => Value::Null,
        Params::Array(items) => Value::Array(items.clone()),
        Params::Map(map) => Value::Object(map.clone()),
    };
    serde_json::from_value(value).map_err(|e| RpcError::params_did_not_parse(&e))
}

/// Parameters of a method whose last `total - required` members are optional: an array of
/// `required..=total` items, the missing ones read as `null` (the validator's derive rules).
fn with_trailing<T: DeserializeOwned>(
    params: &Params,
    required: usize,
    total: usize,
) -> Result<T, RpcError> {
    let items: &[Value] = match params {
        Params::None => &[],
        Params::Array(items) => items,
        Params::Map(_) => return Err(RpcError::invalid_params("`params` should be an array")),
    };
    if items.len() < required {
        return Err(RpcError::invalid_params(format!(
            "`params` should have at least {required} argument(s)"
        )));
    }
    if items.len() > total {
        return Err(RpcError::too_many_params(required, total, items.len()));
    }
    let mut padded = items.to_vec();
    padded.resize(total, Value::Null);
    serde_json::from_value(Value::Array(padded)).map_err(|e| RpcError::params_did_not_parse(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> Params {
        match serde_json::from_str::<Value>(json).unwrap() {
            Value::Array(items) => Params::Array(items),
            Value::Object(map) => Params::Map(map),
            _ => Params::None,
        }
    }

    fn message(result: Result<impl std::fmt::Debug, RpcError>) -> String {
        result.unwrap_err().message
    }

    #[test]
    fn block_defaults_and_deprecated_encoding() {
        let block = get_block(&params("[5]")).unwrap();
        assert_eq!(block.slot, 5);
        assert_eq!(
            block.options,
            EncodeOptions {
                encoding: Encoding::Json,
                details: TransactionDetails::Full,
                rewards: true,
                max_version: None
            }
        );
        let block = get_block(&params(r#"[5,"base64"]"#)).unwrap();
        assert_eq!(block.options.encoding, Encoding::Base64);
        let block = get_block(&params(
            r#"[5,{"encoding":"jsonParsed","transactionDetails":"accounts","rewards":false,"maxSupportedTransactionVersion":0,"commitment":"confirmed","unknown":1}]"#,
        ))
        .unwrap();
        assert_eq!(
            block.options,
            EncodeOptions {
                encoding: Encoding::JsonParsed,
                details: TransactionDetails::Accounts,
                rewards: false,
                max_version: Some(0)
            }
        );
    }

    #[test]
    fn bad_params_carry_the_deserializer_text() {
        assert_eq!(
            message(get_block(&params(r#"["abc"]"#))),
            r#"Invalid params: invalid type: string "abc", expected u64."#
        );
        assert_eq!(
            message(get_block(&params(r#"[1,{"encoding":"base64+zstd"}]"#))),
            "Invalid params: data did not match any variant of untagged enum RpcEncodingConfigWrapper."
        );
        assert_eq!(
            message(get_block(&params("[]"))),
            "`params` should have at least 1 argument(s)"
        );
        let too_many = get_block(&params("[1,{},3]")).unwrap_err();
        assert_eq!(
            too_many.message,
            "Invalid parameters: Expected from 1 to 2 parameters."
        );
        assert_eq!(too_many.data, Some(Value::from("\"Got: 3\"")));
        assert_eq!(
            message(get_block(&params(r#"{"slot":1}"#))),
            "`params` should be an array"
        );
        assert_eq!(
            message(get_block_time(&params("[]"))),
            "Invalid params: invalid length 0, expected a tuple of size 1."
        );
    }

    #[test]
    fn processed_commitment_is_refused_where_the_validator_refuses_it() {
        let refused = "Method does not support commitment below `confirmed`";
        assert_eq!(
            message(get_block(&params(r#"[1,{"commitment":"processed"}]"#))),
            refused
        );
        let sig = "1".repeat(64);
        assert_eq!(
            message(get_transaction(&params(&format!(
                r#"["{sig}",{{"commitment":"processed"}}]"#
            )))),
            refused
        );
        assert!(get_slot(&params(r#"[{"commitment":"processed"}]"#)).is_ok());
    }

    #[test]
    fn signatures_for_address_limits_and_keys() {
        let key = "11111111111111111111111111111111";
        let query = get_signatures_for_address(&params(&format!(r#"["{key}"]"#))).unwrap();
        assert_eq!(query.limit, 1000);
        assert!(!query.confirmed);
        for limit in [0, 1001] {
            assert_eq!(
                message(get_signatures_for_address(&params(&format!(
                    r#"["{key}",{{"limit":{limit}}}]"#
                )))),
                "Invalid limit; max 1000"
            );
        }
        assert_eq!(
            message(get_signatures_for_address(&params(r#"["nope!"]"#))),
            "Invalid param: Invalid"
        );
        assert_eq!(
            message(get_signatures_for_address(&params(&format!(
                r#"["{key}",{{"before":"abc"}}]"#
            )))),
            "Invalid param: WrongSize"
        );
    }
}
