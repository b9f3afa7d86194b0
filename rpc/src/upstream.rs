//! The HTTP client for the upstream validator: posts a JSON-RPC body unchanged and hands back the
//! status, content type and body unchanged. hyper-util's pooled HTTP/1.1 client (already in the
//! build through tonic) over a rustls connector (`hyper-rustls`, ring provider): `http://` and
//! `https://` upstreams, trusting Mozilla's roots plus optional extra CAs
//! ([`front::tls_client::UpstreamTrust`]). One client per actix worker, since each worker runs
//! its own runtime. Bounded: a per-request timeout and a cap on the response size.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use front::tls_client::{TlsClientError, UpstreamTrust};

/// Why the upstream URL is not usable.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamConfigError {
    #[error("upstream URL {url:?} does not parse: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("upstream URL {url:?}: only http:// and https:// URLs with a host are supported")]
    Scheme { url: String },
    #[error(transparent)]
    Tls(#[from] TlsClientError),
}

impl UpstreamConfigError {
    pub fn label(&self) -> &'static str {
        match self {
            Self::BadUrl { .. } => "bad_url",
            Self::Scheme { .. } => "scheme",
            Self::Tls(e) => e.label(),
        }
    }
}

/// Why one upstream call failed.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("request failed: {0}")]
    Request(String),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("response body failed: {0}")]
    Body(String),
}

impl UpstreamError {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Request(_) => "request",
            Self::Timeout(_) => "timeout",
            Self::Body(_) => "body",
        }
    }
}

/// Where the upstream is and how long to wait for it.
#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    pub uri: Uri,
    pub timeout: Duration,
    /// Largest response accepted (a full mainnet block in JSON can be tens of MB).
    pub max_response_bytes: usize,
    /// TLS settings for an https upstream (Mozilla's roots plus the extra CAs).
    pub tls: Arc<rustls::ClientConfig>,
}

impl UpstreamConfig {
    /// Default timeout and size cap for `url`, Mozilla's roots for https.
    pub fn new(url: &str) -> Result<Self, UpstreamConfigError> {
        Self::with_trust(url, &UpstreamTrust::default())
    }

    /// Default timeout and size cap for `url`, trusting `trust` for https.
    pub fn with_trust(url: &str, trust: &UpstreamTrust) -> Result<Self, UpstreamConfigError> {
        let uri: Uri =
            url.parse().map_err(
                |e: hyper::http::uri::InvalidUri| UpstreamConfigError::BadUrl {
                    url: url.to_string(),
                    reason: e.to_string(),
                },
            )?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(UpstreamConfigError::Scheme {
                url: url.to_string(),
            });
        }
        Ok(Self {
            uri,
            timeout: Duration::from_secs(30),
            max_response_bytes: 256 << 20,
            tls: trust.rustls_config()?,
        })
    }
}

/// An upstream answer, passed on as received.
#[derive(Debug, Clone)]
pub struct UpstreamResponse {
    pub status: StatusCode,
    pub content_type: Option<HeaderValue>,
    pub body: Bytes,
}

/// A pooled client bound to one upstream.
#[derive(Clone)]
pub struct Upstream {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    config: UpstreamConfig,
}

impl Upstream {
    /// Builds the client (connections open lazily, on the runtime that uses it).
    pub fn new(config: UpstreamConfig) -> Self {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        http.enforce_http(false);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config((*config.tls).clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(64)
            .build(connector);
        Self { client, config }
    }

    /// Posts `body` as `application/json` and returns the answer unchanged.
    pub async fn post(&self, body: Bytes) -> Result<UpstreamResponse, UpstreamError> {
        let request = Request::builder()
            .method(Method::POST)
            .uri(self.config.uri.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body))
            .map_err(|e| UpstreamError::Request(e.to_string()))?;
        let call = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| UpstreamError::Request(e.to_string()))?;
            let status = response.status();
            let content_type = response.headers().get(CONTENT_TYPE).cloned();
            let body = Limited::new(response.into_body(), self.config.max_response_bytes)
                .collect()
                .await
                .map_err(|e| UpstreamError::Body(e.to_string()))?
                .to_bytes();
            Ok(UpstreamResponse {
                status,
                content_type,
                body,
            })
        };
        tokio::time::timeout(self.config.timeout, call)
            .await
            .map_err(|_| UpstreamError::Timeout(self.config.timeout))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_https_urls_are_accepted() {
        assert!(UpstreamConfig::new("http://127.0.0.1:8899").is_ok());
        assert!(UpstreamConfig::new("https://api.mainnet-beta.solana.com").is_ok());
        assert!(matches!(
            UpstreamConfig::new("ftp://example.com"),
            Err(UpstreamConfigError::Scheme { .. })
        ));
        assert!(matches!(
            UpstreamConfig::new("not a url"),
            Err(UpstreamConfigError::BadUrl { .. })
        ));
    }
}
