//! The fast path of the HTTP source's range reads for plain `http://` URLs: a small keep-alive
//! HTTP/1.1 client. A bounded process-wide pool of persistent `TcpStream`s per host (TCP_NODELAY,
//! timeouts set once at connect), one `write` per request, the response head parsed with
//! `httparse` from one read buffer, and the body read straight into the caller's buffer by
//! `Content-Length`. Per request that is a `send` and one or two `recv`s, against ureq's extra
//! liveness check (`ioctl`s around a failing `recv`) and timeout `setsockopt`s on every request
//! (docs/archive.md, "getTransaction from an HTTP source").
//!
//! Strict about answers: status 206, `Content-Length` equal to the range's length and
//! `Content-Range: bytes a-b/…` naming exactly the requested range, nothing after the body; any
//! other answer is an error and its connection is dropped. Answers it does not handle (a
//! `Transfer-Encoding`, no `Content-Length`) are [`RangeError::Unsupported`]: the caller
//! ([`crate::http`]) then reads the range with ureq. A pooled connection that turns out closed
//! before any byte of the answer (the server timed it out) is retried once on a fresh connection.
//! https and URLs it does not parse stay with ureq.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Idle connections kept per host: as many as range reads run at once (RPC workers × their
/// concurrency), as for ureq's pool in [`crate::http`].
pub const MAX_IDLE_PER_HOST: usize = 64;
/// Idle connections kept over all hosts.
pub const MAX_IDLE: usize = 256;
/// Largest response head read (status line and headers).
pub const MAX_HEAD: usize = 8 * 1024;
/// Headers parsed per answer; more is an error.
const MAX_HEADERS: usize = 32;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Read and write timeout of every socket operation (ureq's per-phase timeouts are 60 s too).
const IO_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a range read over the fast path failed.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    #[error("transport: {0}")]
    Io(#[from] io::Error),
    #[error("connection closed before the answer")]
    Closed,
    #[error("connection closed inside the answer's head")]
    TruncatedHead,
    #[error("response head larger than {MAX_HEAD} bytes")]
    HeadTooLarge,
    #[error("malformed response head: {0}")]
    Malformed(httparse::Error),
    #[error("HTTP status {0}")]
    Status(u16),
    #[error("answer not handled by the fast path: {0}")]
    Unsupported(&'static str),
    #[error("bad Content-Length")]
    BadContentLength,
    #[error("Content-Length {got}, range of {expected} bytes")]
    LengthMismatch { expected: u64, got: u64 },
    #[error("Content-Range {got:?} for bytes {first}-{last}")]
    ContentRange { got: String, first: u64, last: u64 },
    #[error("bytes after the end of the answer")]
    ExtraBytes,
    #[error("body ended after {got} of {expected} bytes")]
    ShortBody { expected: usize, got: usize },
}

impl RangeError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Io(_) => "transport",
            Self::Closed => "closed",
            Self::TruncatedHead => "truncated_head",
            Self::HeadTooLarge => "head_too_large",
            Self::Malformed(_) => "malformed",
            Self::Status(_) => "status",
            Self::Unsupported(_) => "unsupported",
            Self::BadContentLength => "bad_content_length",
            Self::LengthMismatch { .. } => "length_mismatch",
            Self::ContentRange { .. } => "content_range",
            Self::ExtraBytes => "extra_bytes",
            Self::ShortBody { .. } => "short_body",
        }
    }
}

/// A parsed `http://` URL: where to connect and what to ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `host[:port]` as written in the URL: the pool key and the `Host` header.
    authority: String,
    /// `host:port` for name resolution.
    connect: String,
    /// Path and query.
    path: String,
}

impl Target {
    /// Parses a plain `http://host[:port]/path` URL; `None` for anything else (https, user info,
    /// a fragment, spaces or control characters), which stays with ureq.
    pub fn parse(url: &str) -> Option<Target> {
        let rest = url.strip_prefix("http://")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let clean = |s: &str| s.bytes().all(|b| b.is_ascii_graphic());
        if authority.is_empty()
            || authority.contains('@')
            || path.contains('#')
            || !clean(authority)
            || !clean(path)
        {
            return None;
        }
        let has_port = match authority.rfind(']') {
            // [v6] or [v6]:port
            Some(close) => authority[close + 1..].starts_with(':'),
            None => authority.contains(':'),
        };
        let connect = if has_port {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        Some(Target {
            authority: authority.to_string(),
            connect,
            path: path.to_string(),
        })
    }
}

/// What the head of a good range answer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Bytes of the head (the body starts here).
    pub len: usize,
    /// Whether the connection may be reused.
    pub keep_alive: bool,
}

/// Parses the head of the answer to `Range: bytes=first-(first+len-1)` from `bytes` (the start of
/// what the server sent): `Ok(None)` while incomplete. Never panics, whatever the bytes.
pub fn parse_head(bytes: &[u8], first: u64, len: u64) -> Result<Option<Head>, RangeError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(error) => return Err(RangeError::Malformed(error)),
    };
    let code = response.code.unwrap_or(0);
    if code != 206 {
        return Err(RangeError::Status(code));
    }
    let mut keep_alive = response.version == Some(1);
    let mut content_length = None;
    let mut content_range = None;
    for header in response.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(RangeError::Unsupported("Transfer-Encoding"));
        } else if name.eq_ignore_ascii_case("content-length") {
            let value = std::str::from_utf8(header.value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or(RangeError::BadContentLength)?;
            if content_length.is_some_and(|seen| seen != value) {
                return Err(RangeError::BadContentLength);
            }
            content_length = Some(value);
        } else if name.eq_ignore_ascii_case("content-range") {
            content_range = Some(header.value);
        } else if name.eq_ignore_ascii_case("connection") {
            let value = String::from_utf8_lossy(header.value);
            for token in value.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") && response.version == Some(0) {
                    keep_alive = true;
                }
            }
        }
    }
    let Some(content_length) = content_length else {
        return Err(RangeError::Unsupported("no Content-Length"));
    };
    if content_length != len {
        return Err(RangeError::LengthMismatch {
            expected: len,
            got: content_length,
        });
    }
    let last = first.saturating_add(len.saturating_sub(1));
    let range_ok =
        content_range.is_some_and(|value| parse_content_range(value) == Some((first, last)));
    if !range_ok {
        return Err(RangeError::ContentRange {
            got: String::from_utf8_lossy(content_range.unwrap_or_default()).into_owned(),
            first,
            last,
        });
    }
    Ok(Some(Head {
        len: head_len,
        keep_alive,
    }))
}

/// `bytes a-b/total` (or `/*`) → `(a, b)`.
fn parse_content_range(value: &[u8]) -> Option<(u64, u64)> {
    let value = std::str::from_utf8(value).ok()?.trim();
    let (unit, rest) = value.split_once(' ')?;
    if !unit.eq_ignore_ascii_case("bytes") {
        return None;
    }
    let (span, total) = rest.trim_start().split_once('/')?;
    if total != "*" {
        total.parse::<u64>().ok()?;
    }
    let (a, b) = span.split_once('-')?;
    let (a, b) = (a.parse::<u64>().ok()?, b.parse::<u64>().ok()?);
    (a <= b).then_some((a, b))
}

/// One persistent connection with its buffers.
struct Conn {
    stream: TcpStream,
    /// The request being written (reused).
    request: Vec<u8>,
    /// The start of the answer: head and whatever body came with it.
    head: Box<[u8]>,
}

/// Counters of the fast path (process-wide).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCounts {
    /// Range requests answered through the fast path.
    pub requests: u64,
    /// New connections opened.
    pub connects: u64,
    /// Requests sent on a pooled connection.
    pub reuses: u64,
    /// Pooled connections found closed, retried on a fresh one.
    pub stale_retries: u64,
    /// Answers the fast path does not handle, read again with ureq.
    pub fallbacks: u64,
    /// Connections closed instead of pooled because the pool was full.
    pub discards: u64,
    /// Idle connections in the pool now.
    pub idle: u64,
}

/// The bounded pool of idle connections and the counters.
#[derive(Default)]
pub struct RangeClient {
    idle: Mutex<Idle>,
    requests: AtomicU64,
    connects: AtomicU64,
    reuses: AtomicU64,
    stale_retries: AtomicU64,
    fallbacks: AtomicU64,
    discards: AtomicU64,
}

#[derive(Default)]
struct Idle {
    by_host: HashMap<String, Vec<Conn>>,
    total: usize,
}

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the fast path on (the default) or off (every range read with ureq): a process-wide
/// switch for comparisons (`rpc_fixture_server --http-client ureq`) and a way out should a
/// server's answers not suit it.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether range reads of plain `http://` URLs take the fast path.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The process-wide client.
pub fn shared() -> &'static RangeClient {
    static SHARED: OnceLock<RangeClient> = OnceLock::new();
    SHARED.get_or_init(RangeClient::default)
}

impl RangeClient {
    /// Fills `buf` with the bytes of `target` from `first` (`buf` not empty).
    pub fn read_range(
        &self,
        target: &Target,
        buf: &mut [u8],
        first: u64,
    ) -> Result<(), RangeError> {
        let result = match self.take(&target.authority) {
            Some(conn) => {
                self.reuses.fetch_add(1, Ordering::Relaxed);
                match self.exchange(conn, target, buf, first) {
                    Err(RangeError::Closed) => {
                        self.stale_retries.fetch_add(1, Ordering::Relaxed);
                        tracing::debug!(host = %target.authority, "pooled connection closed, retrying on a new one");
                        self.exchange(self.connect(target)?, target, buf, first)
                    }
                    other => other,
                }
            }
            None => self.exchange(self.connect(target)?, target, buf, first),
        };
        if result.is_ok() {
            self.requests.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    /// Counts an answer read again with ureq.
    pub fn count_fallback(&self) {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
    }

    fn take(&self, authority: &str) -> Option<Conn> {
        let mut idle = self.idle.lock().ok()?;
        let conn = idle.by_host.get_mut(authority)?.pop()?;
        idle.total -= 1;
        Some(conn)
    }

    fn give_back(&self, authority: &str, conn: Conn) {
        let Ok(mut idle) = self.idle.lock() else {
            return;
        };
        let full = idle.total >= MAX_IDLE;
        // The map holds one list per host of the opened sources (a handful); no allocation on
        // the way back once the host is known.
        if !idle.by_host.contains_key(authority) {
            idle.by_host.insert(authority.to_string(), Vec::new());
        }
        let Some(list) = idle.by_host.get_mut(authority) else {
            return;
        };
        if full || list.len() >= MAX_IDLE_PER_HOST {
            drop(idle);
            self.discards.fetch_add(1, Ordering::Relaxed);
            return;
        }
        list.push(conn);
        idle.total += 1;
    }

    fn connect(&self, target: &Target) -> Result<Conn, RangeError> {
        let mut last_error = None;
        let addrs: Vec<SocketAddr> = target.connect.to_socket_addrs()?.collect();
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    stream.set_read_timeout(Some(IO_TIMEOUT))?;
                    stream.set_write_timeout(Some(IO_TIMEOUT))?;
                    self.connects.fetch_add(1, Ordering::Relaxed);
                    return Ok(Conn {
                        stream,
                        request: Vec::with_capacity(256),
                        head: vec![0u8; MAX_HEAD].into_boxed_slice(),
                    });
                }
                Err(error) => last_error = Some(error),
            }
        }
        Err(RangeError::Io(last_error.unwrap_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no address", target.connect),
            )
        })))
    }

    /// One request and its answer on `conn`; the connection goes back to the pool when the answer
    /// was complete and the server keeps it. `Closed`: nothing of an answer came (a stale pooled
    /// connection).
    fn exchange(
        &self,
        mut conn: Conn,
        target: &Target,
        buf: &mut [u8],
        first: u64,
    ) -> Result<(), RangeError> {
        let len = buf.len() as u64;
        let last = first + len - 1;
        conn.request.clear();
        let _ = write!(
            conn.request,
            "GET {} HTTP/1.1\r\nHost: {}\r\nRange: bytes={first}-{last}\r\nUser-Agent: shred-appliance-archive\r\n\r\n",
            target.path, target.authority
        );
        if let Err(error) = conn.stream.write_all(&conn.request) {
            return Err(if is_reset(&error) {
                RangeError::Closed
            } else {
                error.into()
            });
        }
        let mut filled = 0;
        let head = loop {
            let n = match conn.stream.read(&mut conn.head[filled..]) {
                Ok(0) if filled == 0 => return Err(RangeError::Closed),
                Ok(0) => return Err(RangeError::TruncatedHead),
                Ok(n) => n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) if filled == 0 && is_reset(&error) => return Err(RangeError::Closed),
                Err(error) => return Err(error.into()),
            };
            filled += n;
            if let Some(head) = parse_head(&conn.head[..filled], first, len)? {
                break head;
            }
            if filled == conn.head.len() {
                return Err(RangeError::HeadTooLarge);
            }
        };
        let early = filled - head.len;
        if early > buf.len() {
            return Err(RangeError::ExtraBytes);
        }
        buf[..early].copy_from_slice(&conn.head[head.len..filled]);
        let mut got = early;
        while got < buf.len() {
            match conn.stream.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(RangeError::ShortBody {
                        expected: buf.len(),
                        got,
                    });
                }
                Ok(n) => got += n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error.into()),
            }
        }
        if head.keep_alive {
            self.give_back(&target.authority, conn);
        }
        Ok(())
    }

    /// The counters.
    pub fn counts(&self) -> ClientCounts {
        let idle = self.idle.lock().map(|i| i.total as u64).unwrap_or_default();
        ClientCounts {
            requests: self.requests.load(Ordering::Relaxed),
            connects: self.connects.load(Ordering::Relaxed),
            reuses: self.reuses.load(Ordering::Relaxed),
            stale_retries: self.stale_retries.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
            discards: self.discards.load(Ordering::Relaxed),
            idle,
        }
    }

    /// Appends the Prometheus text.
    pub fn render(&self, out: &mut String) {
        let c = self.counts();
        for (name, kind, help, value) in [
            (
                "appliance_archive_http_fast_requests_total",
                "counter",
                "Range requests of remote archives answered by the keep-alive fast path.",
                c.requests,
            ),
            (
                "appliance_archive_http_fast_connects_total",
                "counter",
                "Connections the keep-alive range client opened.",
                c.connects,
            ),
            (
                "appliance_archive_http_fast_reuses_total",
                "counter",
                "Range requests sent on a pooled kept-alive connection.",
                c.reuses,
            ),
            (
                "appliance_archive_http_fast_stale_retries_total",
                "counter",
                "Pooled connections found closed, the request retried on a new one.",
                c.stale_retries,
            ),
            (
                "appliance_archive_http_fast_fallbacks_total",
                "counter",
                "Answers the fast path does not handle, read again with the general HTTP client.",
                c.fallbacks,
            ),
            (
                "appliance_archive_http_fast_pool_discards_total",
                "counter",
                "Connections closed instead of pooled because the pool was full.",
                c.discards,
            ),
            (
                "appliance_archive_http_fast_idle_connections",
                "gauge",
                "Idle connections in the pool now.",
                c.idle,
            ),
            (
                "appliance_archive_http_fast_idle_bound",
                "gauge",
                "Most idle connections the pool keeps.",
                MAX_IDLE as u64,
            ),
        ] {
            crate::prom::single(out, name, kind, help, value);
        }
    }
}

/// The peer closed or reset the connection.
fn is_reset(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    const GOOD: &[u8] = b"HTTP/1.1 206 Partial Content\r\nServer: t\r\nContent-Length: 5\r\nContent-Range: bytes 10-14/100\r\n\r\nhello";

    #[test]
    fn parses_a_good_head_and_its_length() {
        let head = parse_head(GOOD, 10, 5).unwrap().unwrap();
        assert_eq!(head.len, GOOD.len() - 5);
        assert!(head.keep_alive);
        // Every strict prefix of the head is incomplete.
        for cut in 0..head.len {
            assert!(
                parse_head(&GOOD[..cut], 10, 5).unwrap().is_none(),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn refuses_what_is_not_exactly_the_range() {
        let with = |status: &str, headers: &str| {
            format!("HTTP/1.1 {status}\r\n{headers}\r\n").into_bytes()
        };
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (with("200 OK", "Content-Length: 5\r\n"), "status"),
            (with("404 Not Found", "Content-Length: 0\r\n"), "status"),
            (
                with(
                    "416 Range Not Satisfiable",
                    "Content-Range: bytes */100\r\n",
                ),
                "status",
            ),
            (
                with(
                    "206 P",
                    "Content-Length: 6\r\nContent-Range: bytes 10-15/100\r\n",
                ),
                "length_mismatch",
            ),
            (
                with(
                    "206 P",
                    "Content-Length: 5\r\nContent-Range: bytes 11-15/100\r\n",
                ),
                "content_range",
            ),
            (with("206 P", "Content-Length: 5\r\n"), "content_range"),
            (
                with(
                    "206 P",
                    "Content-Length: 5\r\nContent-Range: items 10-14/100\r\n",
                ),
                "content_range",
            ),
            (
                with(
                    "206 P",
                    "Content-Length: x\r\nContent-Range: bytes 10-14/100\r\n",
                ),
                "bad_content_length",
            ),
            (
                with(
                    "206 P",
                    "Content-Length: 5\r\nContent-Length: 6\r\nContent-Range: bytes 10-14/100\r\n",
                ),
                "bad_content_length",
            ),
            (
                with(
                    "206 P",
                    "Transfer-Encoding: chunked\r\nContent-Range: bytes 10-14/100\r\n",
                ),
                "unsupported",
            ),
            (
                with("206 P", "Content-Range: bytes 10-14/100\r\n"),
                "unsupported",
            ),
            (b"HTTP/1.1 2x6 P\r\n\r\n".to_vec(), "malformed"),
            (b"garbage\r\n\r\n".to_vec(), "malformed"),
        ];
        for (bytes, label) in cases {
            let error = parse_head(&bytes, 10, 5).unwrap_err();
            assert_eq!(error.label(), label, "{}", String::from_utf8_lossy(&bytes));
        }
        let star = with(
            "206 P",
            "Content-Length: 5\r\nContent-Range: bytes 10-14/*\r\n",
        );
        assert!(parse_head(&star, 10, 5).unwrap().is_some());
    }

    #[test]
    fn connection_close_and_http_1_0_are_not_pooled() {
        let close = b"HTTP/1.1 206 P\r\nConnection: close\r\nContent-Length: 5\r\nContent-Range: bytes 10-14/100\r\n\r\n";
        assert!(!parse_head(close, 10, 5).unwrap().unwrap().keep_alive);
        let old = b"HTTP/1.0 206 P\r\nContent-Length: 5\r\nContent-Range: bytes 10-14/100\r\n\r\n";
        assert!(!parse_head(old, 10, 5).unwrap().unwrap().keep_alive);
        let old_kept = b"HTTP/1.0 206 P\r\nConnection: Keep-Alive\r\nContent-Length: 5\r\nContent-Range: bytes 10-14/100\r\n\r\n";
        assert!(parse_head(old_kept, 10, 5).unwrap().unwrap().keep_alive);
    }

    #[test]
    fn targets_of_plain_http_only() {
        let t = Target::parse("http://127.0.0.1:8080/5/epoch-5.car").unwrap();
        assert_eq!(
            (t.authority.as_str(), t.connect.as_str(), t.path.as_str()),
            ("127.0.0.1:8080", "127.0.0.1:8080", "/5/epoch-5.car")
        );
        let t = Target::parse("http://files.example/a?b=1").unwrap();
        assert_eq!(
            (t.connect.as_str(), t.path.as_str()),
            ("files.example:80", "/a?b=1")
        );
        let t = Target::parse("http://[::1]/x").unwrap();
        assert_eq!(t.connect, "[::1]:80");
        let t = Target::parse("http://[::1]:81").unwrap();
        assert_eq!((t.connect.as_str(), t.path.as_str()), ("[::1]:81", "/"));
        for url in [
            "https://h/x",
            "http://user@h/x",
            "http:///x",
            "http://h/a b",
            "http://h/x#f",
            "ftp://h/x",
        ] {
            assert_eq!(Target::parse(url), None, "{url}");
        }
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600), first in any::<u64>(), len in 1u64..u64::MAX) {
            let _ = parse_head(&bytes, first, len);
        }

        #[test]
        fn mutated_good_heads_never_panic(cut in 0usize..GOOD.len(), byte in any::<u8>(), at in 0usize..GOOD.len()) {
            let mut bytes = GOOD.to_vec();
            bytes[at] = byte;
            let _ = parse_head(&bytes[..cut], 10, 5);
            let _ = parse_head(&bytes, 10, 5);
        }

        #[test]
        fn content_ranges_round_trip(a in any::<u64>(), span in 0u64..1 << 40, total in any::<u64>()) {
            let b = a.saturating_add(span);
            let text = format!("bytes {a}-{b}/{total}");
            prop_assert_eq!(parse_content_range(text.as_bytes()), Some((a, b)));
            let url = format!("http://h/{}", String::from_utf8_lossy(&text.into_bytes()));
            let _ = Target::parse(&url);
        }

        #[test]
        fn heads_are_accepted_only_for_the_asked_range(
            first in 0u64..1 << 40,
            len in 1u64..1 << 30,
            answered_first in 0u64..1 << 40,
            answered_len in 1u64..1 << 30,
            same in any::<bool>(),
            upper in any::<bool>(),
            extra in proptest::collection::vec(("[A-Za-z][A-Za-z-]{0,12}", "[ -~]{0,20}"), 0..6),
        ) {
            let (a, n) = if same { (first, len) } else { (answered_first, answered_len) };
            let (cl, cr) = if upper { ("CONTENT-LENGTH", "CONTENT-RANGE") } else { ("content-length", "content-range") };
            let mut text = format!("HTTP/1.1 206 Partial Content\r\n{cl}: {n}\r\n{cr}: bytes {a}-{}/*\r\n", a + n - 1);
            for (name, value) in &extra {
                let lower = name.to_ascii_lowercase();
                if ["content-length", "content-range", "transfer-encoding", "connection"].contains(&lower.as_str()) {
                    continue;
                }
                text.push_str(&format!("{name}: {}\r\n", value.trim()));
            }
            text.push_str("\r\n");
            let head_len = text.len();
            text.push_str("body");
            let got = parse_head(text.as_bytes(), first, len);
            if (a, n) == (first, len) {
                prop_assert_eq!(got.unwrap(), Some(Head { len: head_len, keep_alive: true }));
            } else {
                prop_assert!(got.is_err());
            }
        }

        #[test]
        fn urls_never_panic(url in "\\PC{0,60}") {
            let _ = Target::parse(&url);
            let _ = Target::parse(&format!("http://{url}"));
        }
    }
}
