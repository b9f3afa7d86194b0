//! A blocking JSON-RPC 2.0 client of an upstream validator (ureq, HTTP/1.1 keep-alive, http or
//! https with [`UpstreamTrust`]), every answer bounded in size and time: the one client behind the
//! insights ingest and the leader-schedule fetcher.

use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::tls_client::UpstreamTrust;

/// Why a call failed; variants double as metric labels.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("{method}: {reason}")]
    Transport {
        method: &'static str,
        reason: String,
    },
    #[error("{method}: HTTP status {status}")]
    Status { method: &'static str, status: u16 },
    #[error("{method}: unreadable answer: {reason}")]
    Response {
        method: &'static str,
        reason: String,
    },
    #[error("{method}: error {code}: {message}")]
    Rpc {
        method: &'static str,
        code: i64,
        message: String,
    },
}

impl CallError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Transport { .. } => "transport",
            Self::Status { .. } => "status",
            Self::Response { .. } => "response",
            Self::Rpc { .. } => "rpc",
        }
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Deserialize)]
pub struct ErrorObject {
    pub code: i64,
    #[serde(default)]
    pub message: String,
}

#[derive(Deserialize)]
struct Envelope<T> {
    #[serde(default = "Option::default")]
    result: Option<T>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

/// The client of one upstream URL.
pub struct JsonRpcClient {
    agent: ureq::Agent,
    url: String,
    max_response_bytes: u64,
}

impl JsonRpcClient {
    pub fn new(
        url: &str,
        timeout: Duration,
        max_response_bytes: u64,
        trust: &UpstreamTrust,
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

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Posts one call and returns the answer's body, unparsed (at most the size bound).
    pub fn post(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<Vec<u8>, CallError> {
        let request =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let transport = |error: ureq::Error| CallError::Transport {
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
            return Err(CallError::Status {
                method,
                status: status.as_u16(),
            });
        }
        response
            .body_mut()
            .with_config()
            .limit(self.max_response_bytes)
            .read_to_vec()
            .map_err(transport)
    }

    /// One call's `result` (`None` when it is null or absent), or its error object as an error.
    pub fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<Option<T>, CallError> {
        let body = self.post(method, params)?;
        let envelope: Envelope<T> =
            serde_json::from_slice(&body).map_err(|error| CallError::Response {
                method,
                reason: error.to_string(),
            })?;
        match envelope.error {
            Some(error) => Err(CallError::Rpc {
                method,
                code: error.code,
                message: error.message,
            }),
            None => Ok(envelope.result),
        }
    }
}
