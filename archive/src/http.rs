//! Remote files behind an HTTP base address (the public file host's layout, format §5): one `HEAD`
//! for the size (fallback: `GET` of byte 0 and its `Content-Range`), then every positioned read is
//! a `GET` with `Range: bytes=a-b` over a shared keep-alive agent (timeouts per phase: 10 s
//! connect, 60 s send, response, body), retried up to 3 times with
//! back-off from 100 ms; a short or non-206 answer is an error. Range reads of plain `http://`
//! URLs go through the keep-alive client of [`crate::rangeclient`] (answers it does not handle,
//! such as chunked ones, are read again with ureq); https and the `HEAD`s stay with ureq. Index
//! buckets read through [`ReadAt::read_shared`] are kept in the process-wide bounded range cache.
//! http and https (rustls with the ring provider, Mozilla's roots). Also the catalog's probes ([`HttpClient::exists`],
//! [`HttpClient::get_text`]).

use std::io::{self, Read};
use std::sync::Arc;
use std::time::Duration;

use crate::rangecache::RangeCache;

use crate::readat::ReadAt;
use crate::store::ArchiveError;

/// Attempts per request.
const ATTEMPTS: u32 = 3;
/// Idle keep-alive connections kept per host and in all: as many as requests run at once (RPC
/// workers × their concurrency; ureq's default is 3 per host).
const MAX_IDLE_PER_HOST: usize = 64;
const MAX_IDLE_CONNECTIONS: usize = 256;
/// Largest single range read (a slot range or a section is far smaller).
const MAX_READ: u64 = 256 << 20;

/// Why a remote file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("HTTP status {0}")]
    Status(u16),
    #[error("transport: {0}")]
    Transport(String),
    #[error("no usable size (Content-Length / Content-Range)")]
    NoSize,
}

impl HttpError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Status(_) => "status",
            Self::Transport(_) => "transport",
            Self::NoSize => "no_size",
        }
    }

    /// As an archive error about `url` (404 = a missing index or CAR).
    pub fn into_archive_error(self, url: &str) -> ArchiveError {
        match self {
            Self::Status(404) => ArchiveError::MissingIndex {
                path: url.to_string(),
            },
            other => ArchiveError::Io {
                what: url.to_string(),
                source: io::Error::other(other.to_string()),
            },
        }
    }
}

fn transport(error: ureq::Error) -> HttpError {
    match error {
        ureq::Error::StatusCode(code) => HttpError::Status(code),
        other => HttpError::Transport(other.to_string()),
    }
}

/// A shared keep-alive HTTP agent.
#[derive(Clone)]
pub struct HttpClient {
    agent: ureq::Agent,
}

impl Default for HttpClient {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpClient {
    pub fn new() -> Self {
        // Timeouts per phase, none for name resolution: with any timeout covering resolution
        // (a global one included) ureq resolves every request's host on a new thread, even for an
        // IP literal and a pooled connection (one thread per range request). Without one the
        // resolution is a plain `getaddrinfo` (instant for literals; the system resolver's own
        // timeouts apply to names).
        let phase = Some(Duration::from_secs(60));
        let config = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_send_request(phase)
            .timeout_recv_response(phase)
            .timeout_recv_body(phase)
            .max_idle_connections(MAX_IDLE_CONNECTIONS)
            .max_idle_connections_per_host(MAX_IDLE_PER_HOST)
            .build();
        HttpClient {
            agent: config.into(),
        }
    }

    /// `HEAD url`: `true` on 200, `false` on 404, an error otherwise (the catalog's "is it
    /// published" probe).
    pub fn exists(&self, url: &str) -> Result<bool, HttpError> {
        match self.agent.head(url).call() {
            Ok(response) if response.status().as_u16() == 200 => Ok(true),
            Ok(response) => Err(HttpError::Status(response.status().as_u16())),
            Err(ureq::Error::StatusCode(404)) => Ok(false),
            Err(other) => Err(transport(other)),
        }
    }

    /// `GET url` of a small text file (at most `max` bytes): `None` on 404.
    pub fn get_text(&self, url: &str, max: u64) -> Result<Option<String>, HttpError> {
        match self.agent.get(url).call() {
            Ok(response) => {
                let mut text = String::new();
                response
                    .into_body()
                    .into_reader()
                    .take(max)
                    .read_to_string(&mut text)
                    .map_err(|e| HttpError::Transport(e.to_string()))?;
                Ok(Some(text))
            }
            Err(ureq::Error::StatusCode(404)) => Ok(None),
            Err(other) => Err(transport(other)),
        }
    }

    /// Learns the size of `url`.
    pub fn open(&self, url: &str) -> Result<HttpFile, HttpError> {
        let head = self.agent.head(url).call().map_err(transport)?;
        let len = head
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let len = match len {
            Some(len) => len,
            None => {
                let response = self
                    .agent
                    .get(url)
                    .header("Range", "bytes=0-0")
                    .call()
                    .map_err(transport)?;
                response
                    .headers()
                    .get("content-range")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.rsplit('/').next())
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or(HttpError::NoSize)?
            }
        };
        Ok(HttpFile {
            fast: crate::rangeclient::Target::parse(url),
            agent: self.agent.clone(),
            url: url.to_string(),
            len,
            id: crate::rangecache::next_file_id(),
            cache: crate::rangecache::shared(),
        })
    }
}

/// One remote file read with range requests.
pub struct HttpFile {
    /// Where the fast path sends range requests (plain `http://` URLs); `None`: ureq only.
    fast: Option<crate::rangeclient::Target>,
    agent: ureq::Agent,
    url: String,
    len: u64,
    /// Key of this file in the range cache.
    id: u64,
    cache: Arc<RangeCache>,
}

impl HttpFile {
    fn fetch(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let Some(target) = self.fast.as_ref().filter(|_| crate::rangeclient::enabled()) else {
            return self.fetch_ureq(buf, offset);
        };
        let client = crate::rangeclient::shared();
        match client.read_range(target, buf, offset) {
            Ok(()) => Ok(()),
            Err(crate::rangeclient::RangeError::Unsupported(what)) => {
                tracing::debug!(url = %self.url, what, "range answer not for the fast path, reading it with ureq");
                client.count_fallback();
                self.fetch_ureq(buf, offset)
            }
            Err(error) => Err(io::Error::other(format!("{}: {error}", self.url))),
        }
    }

    fn fetch_ureq(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let last = offset + buf.len() as u64 - 1;
        let response = self
            .agent
            .get(&self.url)
            .header("Range", format!("bytes={offset}-{last}"))
            .call()
            .map_err(|e| io::Error::other(transport(e).to_string()))?;
        if response.status().as_u16() != 206 {
            return Err(io::Error::other(format!(
                "{}: status {} to a range request",
                self.url,
                response.status()
            )));
        }
        let mut body = response.into_body().into_reader();
        body.read_exact(buf)?;
        // Read on to the end of the body: ureq returns the connection to its pool only when the
        // body reader has seen the end (stopping after exactly `len` bytes closed the connection,
        // so every range request connected anew, with a resolver thread).
        let mut extra = [0u8; 1];
        if body.read(&mut extra)? != 0 {
            return Err(io::Error::other(format!(
                "{}: range answer longer than {} bytes",
                self.url,
                buf.len()
            )));
        }
        Ok(())
    }
}

impl ReadAt for HttpFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        if buf.len() as u64 > MAX_READ || offset + buf.len() as u64 > self.len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {} bytes at {offset} past the end of {}",
                    buf.len(),
                    self.url
                ),
            ));
        }
        let mut delay = Duration::from_millis(100);
        let mut attempt = 1;
        loop {
            match self.fetch(buf, offset) {
                Ok(()) => return Ok(()),
                Err(error) if attempt < ATTEMPTS => {
                    tracing::debug!(url = %self.url, %error, attempt, "range read failed, retrying");
                    std::thread::sleep(delay);
                    delay *= 2;
                    attempt += 1;
                }
                Err(error) => return Err(error),
            }
        }
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn prefers_bulk(&self) -> bool {
        true
    }

    fn read_shared(&self, offset: u64, len: usize) -> io::Result<Arc<[u8]>> {
        self.cache
            .get_or_load(self.id, offset, len, || self.read_vec(offset, len))
    }
}
