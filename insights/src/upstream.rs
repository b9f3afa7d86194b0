//! The upstream validator's JSON-RPC, as the ingest uses it: `getSlot` and `getBlocks` at
//! commitment confirmed, `getBlock` with full details, version 0, rewards off. A blocking HTTP/1.1
//! client (ureq, keep-alive) on the ingest thread; http or https (rustls, Mozilla's roots plus
//! the extra CAs of [`front::tls_client::UpstreamTrust`]).

use std::time::Duration;

use front::jsonrpc::{CallError, ErrorObject, JsonRpcClient};
use serde::Deserialize;

use super::block_stats::BlockStats;
use super::error::InsightsError;
use super::from_rpc::stats_from_envelope;

/// JSON-RPC error codes meaning "no block in this slot".
const SLOT_SKIPPED: i64 = -32007;
const LONG_TERM_STORAGE_SLOT_SKIPPED: i64 = -32009;

/// The answer of getBlock for one slot.
#[derive(Debug)]
pub enum FetchedBlock {
    Produced(BlockStats),
    /// Skipped (or missing): -32007 / -32009.
    Skipped,
}

/// A JSON-RPC client of the upstream validator.
pub struct Upstream {
    client: JsonRpcClient,
}

/// The insights error of a failed call (an HTTP status reads as a transport failure).
fn upstream_error(error: CallError) -> InsightsError {
    match error {
        CallError::Transport { method, reason } => {
            InsightsError::UpstreamTransport { method, reason }
        }
        CallError::Status { method, status } => InsightsError::UpstreamTransport {
            method,
            reason: format!("HTTP status {status}"),
        },
        CallError::Response { method, reason } => {
            InsightsError::UpstreamResponse { method, reason }
        }
        CallError::Rpc {
            method,
            code,
            message,
        } => InsightsError::UpstreamRpc {
            method,
            code,
            message,
        },
    }
}

impl Upstream {
    pub fn new(
        url: &str,
        timeout: Duration,
        max_response_bytes: u64,
        trust: &front::tls_client::UpstreamTrust,
    ) -> Self {
        Self {
            client: JsonRpcClient::new(url, timeout, max_response_bytes, trust),
        }
    }

    /// One call's result; a null or absent result is an unreadable answer.
    fn result<T: serde::de::DeserializeOwned>(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<T, InsightsError> {
        self.client
            .call(method, params)
            .map_err(upstream_error)?
            .ok_or(InsightsError::UpstreamResponse {
                method,
                reason: "neither result nor error".into(),
            })
    }

    /// The confirmed tip.
    pub fn slot(&self) -> Result<u64, InsightsError> {
        self.result("getSlot", serde_json::json!([{"commitment": "confirmed"}]))
    }

    /// Produced slots in `start..=end` (confirmed).
    pub fn blocks(&self, start: u64, end: u64) -> Result<Vec<u64>, InsightsError> {
        self.result(
            "getBlocks",
            serde_json::json!([start, end, {"commitment": "confirmed"}]),
        )
    }

    /// Fetches the block of `slot` and computes its statistics.
    pub fn block(&self, slot: u64) -> Result<FetchedBlock, InsightsError> {
        let body = self
            .client
            .post(
                "getBlock",
                serde_json::json!([slot, {
                    "encoding": "json",
                    "transactionDetails": "full",
                    "maxSupportedTransactionVersion": 0,
                    "rewards": false,
                    "commitment": "confirmed",
                }]),
            )
            .map_err(upstream_error)?;
        block_from_response(slot, &body)
    }
}

/// Interprets a getBlock response body.
pub fn block_from_response(slot: u64, body: &[u8]) -> Result<FetchedBlock, InsightsError> {
    if let Some(stats) = stats_from_envelope(slot, body)? {
        return Ok(FetchedBlock::Produced(stats));
    }
    #[derive(Deserialize)]
    struct ErrorOnly {
        #[serde(default)]
        error: Option<ErrorObject>,
    }
    let parsed: ErrorOnly =
        serde_json::from_slice(body).map_err(|error| InsightsError::UpstreamResponse {
            method: "getBlock",
            reason: error.to_string(),
        })?;
    match parsed.error {
        Some(error) if matches!(error.code, SLOT_SKIPPED | LONG_TERM_STORAGE_SLOT_SKIPPED) => {
            Ok(FetchedBlock::Skipped)
        }
        Some(error) => Err(InsightsError::UpstreamRpc {
            method: "getBlock",
            code: error.code,
            message: error.message,
        }),
        None => Err(InsightsError::UpstreamResponse {
            method: "getBlock",
            reason: "null result".into(),
        }),
    }
}
