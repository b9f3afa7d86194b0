//! Servers the archive tests run next to the appliance: the range-capable static file server of
//! `testkit::file_host` (the archive's "public file host") and
//! a **stand-in** for the upstream validator (a live validator cannot run here), plain or TLS,
//! that records what it was asked.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

/// Serves files under `root` (`testkit::file_host`: HEAD, GET, GET with one `Range: bytes=a-b`,
/// keep-alive). Returns the base URL and the count of range requests answered.
pub fn file_server(root: PathBuf) -> (String, Arc<AtomicUsize>) {
    let ranges = Arc::new(AtomicUsize::new(0));
    let url = testkit::file_host::serve(root, Arc::clone(&ranges), Arc::default());
    (url, ranges)
}

/// What the stand-in upstream was asked: (JSON-RPC method, User-Agent header).
pub type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// Stand-in upstream validator: `getVersion` → `{"solana-core":"stand-in"}`,
/// `getSignaturesForAddress` → `[]`, anything else → `null`. With `tls` (certificate chain and
/// key PEM files) it speaks https. Returns its URL and the log of calls.
pub fn standin_upstream(tls: Option<(&Path, &Path)>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let config = tls.map(|(chain, key)| {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs = CertificateDer::pem_file_iter(chain)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(key).unwrap();
        Arc::new(
            rustls::ServerConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
        )
    });
    let scheme = if config.is_some() { "https" } else { "http" };
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let log = Arc::clone(&log);
            let config = config.clone();
            std::thread::spawn(move || match config {
                Some(config) => {
                    let conn = rustls::ServerConnection::new(config).unwrap();
                    let mut tls = rustls::StreamOwned::new(conn, stream);
                    let _ = serve_rpc(&mut tls, &log);
                }
                None => {
                    let mut stream = stream;
                    let _ = serve_rpc(&mut stream, &log);
                }
            });
        }
    });
    (format!("{scheme}://{addr}"), seen)
}

fn serve_rpc(stream: &mut (impl Read + Write), seen: &Seen) -> std::io::Result<()> {
    let mut reader = BufReader::new(StreamRef(stream));
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request)? == 0 {
            return Ok(());
        }
        let (mut length, mut agent) = (0usize, String::new());
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("user-agent") {
                    agent = value.trim().to_string();
                }
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body)?;
        let call: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let method = call["method"].as_str().unwrap_or_default().to_string();
        let result = match method.as_str() {
            "getVersion" => serde_json::json!({"solana-core": "stand-in"}),
            "getSignaturesForAddress" => serde_json::json!([]),
            _ => serde_json::Value::Null,
        };
        seen.lock().unwrap().push((method, agent));
        let answer =
            serde_json::json!({"jsonrpc": "2.0", "id": call["id"].clone(), "result": result})
                .to_string();
        let out = reader.get_mut();
        write!(
            out.0,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        )?;
        out.0.flush()?;
    }
}

/// Lets one stream be both read (through a `BufReader`) and written.
struct StreamRef<'a, S>(&'a mut S);

impl<S: Read> Read for StreamRef<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}
