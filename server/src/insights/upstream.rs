//! The upstream validator's JSON-RPC, as the ingest uses it: `getSlot` and `getBlocks` at
//! commitment confirmed, `getBlock` with full details, version 0, rewards off. A blocking HTTP/1.1
//! client (ureq, keep-alive) on the ingest thread; http or https (rustls, Mozilla's roots plus
//! the extra CAs of [`crate::tls_client::UpstreamTrust`]).

use std::time::Duration;

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
    agent: ureq::Agent,
    url: String,
    max_response_bytes: u64,
}

#[derive(Deserialize)]
struct RpcError {
    code: i64,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct Envelope<T> {
    #[serde(default = "Option::default")]
    result: Option<T>,
    #[serde(default)]
    error: Option<RpcError>,
}

impl Upstream {
    pub fn new(
        url: &str,
        timeout: Duration,
        max_response_bytes: u64,
        trust: &crate::tls_client::UpstreamTrust,
    ) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .tls_config(trust.ureq_tls())
            .http_status_as_error(false)
            .build();
        Self {
            agent: ureq::Agent::new_with_config(config),
            url: url.to_owned(),
            max_response_bytes,
        }
    }

    fn call(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<Vec<u8>, InsightsError> {
        let request =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let transport = |error: ureq::Error| InsightsError::UpstreamTransport {
            method,
            reason: error.to_string(),
        };
        let mut response = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .send(request.to_string())
            .map_err(transport)?;
        let status = response.status();
        if !status.is_success() {
            return Err(InsightsError::UpstreamTransport {
                method,
                reason: format!("HTTP status {status}"),
            });
        }
        response
            .body_mut()
            .with_config()
            .limit(self.max_response_bytes)
            .read_to_vec()
            .map_err(transport)
    }

    fn result<T: serde::de::DeserializeOwned>(
        method: &'static str,
        body: &[u8],
    ) -> Result<T, InsightsError> {
        let envelope: Envelope<T> =
            serde_json::from_slice(body).map_err(|error| InsightsError::UpstreamResponse {
                method,
                reason: error.to_string(),
            })?;
        if let Some(error) = envelope.error {
            return Err(InsightsError::UpstreamRpc {
                method,
                code: error.code,
                message: error.message,
            });
        }
        envelope.result.ok_or(InsightsError::UpstreamResponse {
            method,
            reason: "neither result nor error".into(),
        })
    }

    /// The confirmed tip.
    pub fn slot(&self) -> Result<u64, InsightsError> {
        let body = self.call("getSlot", serde_json::json!([{"commitment": "confirmed"}]))?;
        Self::result("getSlot", &body)
    }

    /// Produced slots in `start..=end` (confirmed).
    pub fn blocks(&self, start: u64, end: u64) -> Result<Vec<u64>, InsightsError> {
        let body = self.call(
            "getBlocks",
            serde_json::json!([start, end, {"commitment": "confirmed"}]),
        )?;
        Self::result("getBlocks", &body)
    }

    /// Fetches the block of `slot` and computes its statistics.
    pub fn block(&self, slot: u64) -> Result<FetchedBlock, InsightsError> {
        let body = self.call(
            "getBlock",
            serde_json::json!([slot, {
                "encoding": "json",
                "transactionDetails": "full",
                "maxSupportedTransactionVersion": 0,
                "rewards": false,
                "commitment": "confirmed",
            }]),
        )?;
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
        error: Option<RpcError>,
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
