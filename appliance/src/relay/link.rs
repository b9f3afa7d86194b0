//! One stream from the origin: connect, subscribe with an empty filter (and `from_slot` when
//! resuming), and hand every update to the relay with the time it was read.

use std::path::PathBuf;
use std::time::Duration;

use stream::service::{NUMBERING_HEADER, OLDEST_SLOT_HEADER};
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{SubscribeRequest, SubscribeUpdate};
use tonic::Streaming;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

/// Where the origin is and how to reach it.
#[derive(Debug, Clone)]
pub struct Origin {
    /// `http://host:port` or `https://host:port`.
    pub endpoint: String,
    /// Sent as `x-token`.
    pub token: Option<String>,
    /// PEM file of the CA that signed the origin's certificate (https; otherwise the system's
    /// roots are not consulted: tonic's TLS takes the CA given).
    pub tls_ca: Option<PathBuf>,
}

/// HTTP/2 keepalive of the link: a silent dead link is noticed within interval + timeout.
const KEEPALIVE_INTERVAL: Duration = Duration::from_millis(500);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(1);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a stream from the origin ended (the variants are the metric's `reason` labels).
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The address or the TLS settings are wrong: retried, but an operator must look.
    #[error("relay origin {0}")]
    Config(String),
    #[error("cannot connect to the relay origin: {0}")]
    Connect(String),
    /// The origin refused or ended the stream with a status other than the ones below.
    #[error("the relay origin ended the stream: {code:?}: {message}")]
    Status { code: tonic::Code, message: String },
    /// `from_slot` is older than the origin's buffer: `oldest` is the oldest slot it still has
    /// in full (when it said).
    #[error("the relay origin no longer holds the slot asked for: {message}")]
    TooOld {
        oldest: Option<u64>,
        message: String,
    },
    /// The origin does not keep recent slots (`recent_slots = 0`).
    #[error("the relay origin cannot resume: {0}")]
    ResumeOff(String),
    #[error("the relay origin closed the stream")]
    Closed,
}

impl LinkError {
    pub const LABELS: [&'static str; 6] = [
        "config",
        "connect",
        "status",
        "too_old",
        "resume_off",
        "closed",
    ];

    pub fn label(&self) -> &'static str {
        match self {
            Self::Config(_) => "config",
            Self::Connect(_) => "connect",
            Self::Status { .. } => "status",
            Self::TooOld { .. } => "too_old",
            Self::ResumeOff(_) => "resume_off",
            Self::Closed => "closed",
        }
    }

    fn from_status(status: &tonic::Status) -> Self {
        let message = status.message().to_owned();
        match status.code() {
            tonic::Code::OutOfRange => Self::TooOld {
                oldest: status
                    .metadata()
                    .get(OLDEST_SLOT_HEADER)
                    .and_then(|value| value.to_str().ok()?.parse().ok()),
                message,
            },
            tonic::Code::FailedPrecondition if message.contains("resuming is off") => {
                Self::ResumeOff(message)
            }
            code => Self::Status { code, message },
        }
    }
}

/// An open stream from the origin.
pub struct Link {
    updates: Streaming<SubscribeUpdate>,
    /// The origin's `x-stream-numbering` (absent from servers that do not send it).
    pub numbering: Option<u64>,
}

impl Link {
    /// Connects and subscribes to everything, from `from_slot` when given.
    pub async fn open(origin: &Origin, from_slot: Option<u64>) -> Result<Self, LinkError> {
        let channel = connect(origin).await?;
        let request = SubscribeRequest {
            from_slot,
            ..Default::default()
        };
        let requests =
            tokio_stream::StreamExt::chain(tokio_stream::iter([request]), tokio_stream::pending());
        let mut request = tonic::Request::new(requests);
        if let Some(token) = &origin.token {
            let value = token
                .parse()
                .map_err(|_| LinkError::Config("token is not a valid header value".into()))?;
            request.metadata_mut().insert("x-token", value);
        }
        let response = StreamClient::new(channel)
            .max_decoding_message_size(64 << 20)
            .subscribe_decoded(request)
            .await
            .map_err(|status| LinkError::from_status(&status))?;
        let numbering = response
            .metadata()
            .get(NUMBERING_HEADER)
            .and_then(|value| value.to_str().ok()?.parse().ok());
        Ok(Self {
            updates: response.into_inner(),
            numbering,
        })
    }

    /// The next update, or why the stream ended.
    pub async fn next(&mut self) -> Result<SubscribeUpdate, LinkError> {
        match self.updates.message().await {
            Ok(Some(update)) => Ok(update),
            Ok(None) => Err(LinkError::Closed),
            Err(status) => Err(LinkError::from_status(&status)),
        }
    }
}

async fn connect(origin: &Origin) -> Result<Channel, LinkError> {
    let mut endpoint = Endpoint::from_shared(origin.endpoint.clone())
        .map_err(|error| LinkError::Config(format!("address {}: {error}", origin.endpoint)))?
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true);
    if let Some(ca) = &origin.tls_ca {
        let pem = std::fs::read(ca)
            .map_err(|error| LinkError::Config(format!("CA file {}: {error}", ca.display())))?;
        let tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem));
        endpoint = endpoint
            .tls_config(tls)
            .map_err(|error| LinkError::Config(format!("TLS: {error}")))?;
    }
    endpoint
        .connect()
        .await
        .map_err(|error| LinkError::Connect(error_chain(&error)))
}

/// An error and its sources, one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
