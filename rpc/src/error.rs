//! JSON-RPC error objects exactly as the validator words them (docs/archive-rpc.md §2): the
//! standard codes, the Solana server codes the archive methods use, and the rate-limit error.

use serde::Serialize;

/// Parse error: the body is not JSON (or not shaped like a request at all).
pub const PARSE_ERROR: i64 = -32700;
/// JSON but not a request object.
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const BLOCK_NOT_AVAILABLE: i64 = -32004;
pub const LONG_TERM_STORAGE_SLOT_SKIPPED: i64 = -32009;
pub const TRANSACTION_HISTORY_NOT_AVAILABLE: i64 = -32011;
pub const UNSUPPORTED_TRANSACTION_VERSION: i64 = -32015;
pub const MIN_CONTEXT_SLOT_NOT_REACHED: i64 = -32016;
pub const LONG_TERM_STORAGE_UNREACHABLE: i64 = -32019;
/// Not a validator code: the product's rate-limit answer (docs/decisions.md §B).
pub const RATE_LIMITED: i64 = -32429;

/// The text of the rate-limit error.
pub const RATE_LIMIT_MESSAGE: &str = "rate limit exceeded: 100 requests per second per IP";

/// One JSON-RPC error object. Serializes as `{"code","message"}` plus `"data"` only when set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn parse_error() -> Self {
        Self::new(PARSE_ERROR, "Parse error")
    }

    pub fn invalid_request() -> Self {
        Self::new(INVALID_REQUEST, "Invalid request")
    }

    /// A request without `"jsonrpc":"2.0"` (the validator's library answers this, without the
    /// `jsonrpc` key in the response).
    pub fn unsupported_version() -> Self {
        Self::new(INVALID_REQUEST, "Unsupported JSON-RPC protocol version")
    }

    pub fn method_not_found() -> Self {
        Self::new(METHOD_NOT_FOUND, "Method not found")
    }

    pub fn internal() -> Self {
        Self::new(INTERNAL_ERROR, "Internal error")
    }

    /// -32602 with a free message (the validator's `Error::invalid_params(message)`).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// -32602 for parameters that did not deserialize: `Invalid params: <serde text>.`
    pub fn params_did_not_parse(reason: &serde_json::Error) -> Self {
        Self::invalid_params(format!("Invalid params: {reason}."))
    }

    /// -32602 for a bad base58 key or signature: `Invalid param: Invalid` / `WrongSize`.
    pub fn invalid_param(kind: ParseKeyError) -> Self {
        Self::invalid_params(format!("Invalid param: {}", kind.name()))
    }

    /// The `Invalid parameters: Expected from A to B parameters.` error of a too-long array.
    pub fn too_many_params(min: usize, max: usize, got: usize) -> Self {
        Self {
            code: INVALID_PARAMS,
            message: format!("Invalid parameters: Expected from {min} to {max} parameters."),
            data: Some(serde_json::Value::String(format!("\"Got: {got}\""))),
        }
    }

    pub fn commitment_below_confirmed() -> Self {
        Self::invalid_params("Method does not support commitment below `confirmed`")
    }

    pub fn block_not_available(slot: u64) -> Self {
        Self::new(
            BLOCK_NOT_AVAILABLE,
            format!("Block not available for slot {slot}"),
        )
    }

    pub fn slot_skipped(slot: u64) -> Self {
        Self::new(
            LONG_TERM_STORAGE_SLOT_SKIPPED,
            format!("Slot {slot} was skipped, or missing in long-term storage"),
        )
    }

    pub fn unsupported_transaction_version(version: u8) -> Self {
        Self::new(
            UNSUPPORTED_TRANSACTION_VERSION,
            format!(
                "Transaction version ({version}) is not supported by the requesting client. \
                 Please try the request again with the following configuration parameter: \
                 \"maxSupportedTransactionVersion\": {version}"
            ),
        )
    }

    pub fn min_context_slot_not_reached(context_slot: u64) -> Self {
        Self {
            code: MIN_CONTEXT_SLOT_NOT_REACHED,
            message: "Minimum context slot has not been reached".into(),
            data: Some(serde_json::json!({ "contextSlot": context_slot })),
        }
    }

    pub fn storage_unreachable() -> Self {
        Self::new(
            LONG_TERM_STORAGE_UNREACHABLE,
            "Failed to query long-term storage; please try again",
        )
    }

    /// getSignaturesForAddress reaching history this node has no address index for, with no
    /// upstream to ask (the validator's answer when its transaction history is off).
    pub fn transaction_history_not_available() -> Self {
        Self::new(
            TRANSACTION_HISTORY_NOT_AVAILABLE,
            "Transaction history is not available from this node",
        )
    }

    pub fn rate_limited() -> Self {
        Self::new(RATE_LIMITED, RATE_LIMIT_MESSAGE)
    }

    /// A proxied call whose upstream could not be reached or answered garbage.
    pub fn upstream_failed(reason: &str) -> Self {
        Self::new(
            INTERNAL_ERROR,
            format!("Internal error: upstream validator failed: {reason}"),
        )
    }
}

/// Why a base58 key or signature did not parse (the validator prints the variant's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseKeyError {
    /// Not base58.
    Invalid,
    /// Base58, but not the right number of bytes (or a string too long to be one).
    WrongSize,
}

impl ParseKeyError {
    pub fn name(self) -> &'static str {
        match self {
            Self::Invalid => "Invalid",
            Self::WrongSize => "WrongSize",
        }
    }
}

/// Longest base58 text of a 32-byte key.
const MAX_BASE58_KEY_LEN: usize = 44;
/// Longest base58 text of a 64-byte signature.
const MAX_BASE58_SIGNATURE_LEN: usize = 88;

/// Parses a base58 public key the way the validator does (length check first, then decode).
pub fn parse_pubkey(text: &str) -> Result<[u8; 32], ParseKeyError> {
    parse_fixed::<32>(text, MAX_BASE58_KEY_LEN)
}

/// Parses a base58 signature the way the validator does.
pub fn parse_signature(text: &str) -> Result<[u8; 64], ParseKeyError> {
    parse_fixed::<64>(text, MAX_BASE58_SIGNATURE_LEN)
}

fn parse_fixed<const N: usize>(text: &str, max_len: usize) -> Result<[u8; N], ParseKeyError> {
    if text.len() > max_len {
        return Err(ParseKeyError::WrongSize);
    }
    super::base58::decode_fixed::<N>(text).map_err(|error| match error {
        super::base58::DecodeError::Invalid => ParseKeyError::Invalid,
        super::base58::DecodeError::WrongSize => ParseKeyError::WrongSize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_the_validator_texts() {
        assert_eq!(
            serde_json::to_string(&RpcError::slot_skipped(250000007)).unwrap(),
            r#"{"code":-32009,"message":"Slot 250000007 was skipped, or missing in long-term storage"}"#
        );
        assert_eq!(
            serde_json::to_string(&RpcError::unsupported_transaction_version(0)).unwrap(),
            r#"{"code":-32015,"message":"Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0"}"#
        );
        assert_eq!(
            RpcError::commitment_below_confirmed().message,
            "Method does not support commitment below `confirmed`"
        );
    }

    #[test]
    fn key_parsing_reports_the_validator_variants() {
        assert_eq!(
            parse_pubkey("11111111111111111111111111111111"),
            Ok([0; 32])
        );
        assert_eq!(parse_pubkey("0OIl"), Err(ParseKeyError::Invalid));
        assert_eq!(parse_pubkey("abc"), Err(ParseKeyError::WrongSize));
        assert_eq!(parse_pubkey(&"1".repeat(45)), Err(ParseKeyError::WrongSize));
        assert_eq!(parse_signature(&"1".repeat(64)), Ok([0; 64]));
        assert_eq!(
            parse_signature(&"1".repeat(89)),
            Err(ParseKeyError::WrongSize)
        );
    }
}
