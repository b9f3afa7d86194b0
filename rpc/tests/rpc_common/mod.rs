//! Shared parts of the JSON-RPC integration tests: the fixture archive served over real HTTP, a
//! raw HTTP/1.1 client (plain `TcpStream`, independent of the server's own client code), a
//! stand-in for the upstream validator, and a check that JSON object keys are sorted.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use front::http::{HttpOptions, MetricsRenderer};
use rpc::{Rpc, RpcConfig};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rpc")
}

pub fn fixture_json(relative: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixtures_dir().join(relative)).unwrap()).unwrap()
}

pub fn fixture_wire_b64(name: &str) -> String {
    std::fs::read_to_string(fixtures_dir().join("wire").join(name))
        .unwrap()
        .trim()
        .to_string()
}

fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// The frontend serving the fixture archive on a loopback port.
pub struct TestServer {
    pub address: SocketAddr,
    pub rpc: Rpc,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    pub fn start(config: RpcConfig) -> Self {
        let store = testkit::rpc_fixture::load(&fixtures_dir()).unwrap();
        let rpc = Rpc::new(config, Arc::new(store));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let address = free_port();
        let render: MetricsRenderer = {
            let rpc = rpc.clone();
            Arc::new(move || {
                let mut out = String::new();
                rpc.render_metrics(&mut out);
                out
            })
        };
        let options = HttpOptions {
            mounts: vec![rpc.mount()],
            workers: 1,
            ..HttpOptions::default()
        };
        let thread = front::http::serve(address, render, options, async move {
            let _ = stopped.await;
        })
        .unwrap();
        wait_for_port(address);
        Self {
            address,
            rpc,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn post(&self, body: &str) -> Response {
        http(self.address, "POST", "application/json", body.as_bytes())
    }

    /// Posts and parses the body as JSON.
    pub fn call(&self, body: &str) -> Value {
        let response = self.post(body);
        assert_eq!(response.status, 200, "body: {}", response.text());
        serde_json::from_slice(&response.body).unwrap()
    }

    /// Posts one call and returns its `result`, checking the result's keys are sorted.
    pub fn result(&self, method: &str, params: Value) -> Value {
        let body = serde_json::json!({"jsonrpc":"2.0","id":1,"method":method,"params":params});
        let response = self.post(&body.to_string());
        assert_eq!(response.status, 200);
        let text = response.text();
        assert!(
            text.starts_with(r#"{"jsonrpc":"2.0","result":"#),
            "not a result: {text}"
        );
        assert_sorted_keys(&text);
        let value: Value = serde_json::from_str(&text).unwrap();
        value["result"].clone()
    }

    /// Posts one call and returns its `error` object.
    pub fn error(&self, method: &str, params: Value) -> Value {
        let body = serde_json::json!({"jsonrpc":"2.0","id":1,"method":method,"params":params});
        let value = self.call(&body.to_string());
        assert!(value.get("result").is_none(), "not an error: {value}");
        value["error"].clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn wait_for_port(address: SocketAddr) {
    for _ in 0..200 {
        if TcpStream::connect(address).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("server on {address} did not start");
}

/// An HTTP response as read off the socket.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`), read to the end.
pub fn http(address: SocketAddr, method: &str, content_type: &str, body: &[u8]) -> Response {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let head = format!(
        "{method} / HTTP/1.1\r\nHost: {address}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_ascii_lowercase(), value.trim().to_string()))
        })
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .get("transfer-encoding")
        .is_some_and(|v| v == "chunked")
    {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..line_end]).unwrap().trim(), 16)
            .unwrap();
        raw = &raw[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

/// Asserts every JSON object inside the `result` of a response (or the whole text, when it is not
/// a response envelope) has its keys in ascending byte order, as the validator prints them.
pub fn assert_sorted_keys(text: &str) {
    let value: Value = serde_json::from_str(text).unwrap();
    let inner = match value.get("result") {
        Some(_) => {
            // Re-read the result's own text in document order.
            let raw: HashMap<String, Box<serde_json::value::RawValue>> =
                serde_json::from_str(text).unwrap();
            raw["result"].get().to_string()
        }
        None => text.to_string(),
    };
    let mut deserializer = serde_json::Deserializer::from_str(&inner);
    SortedCheck.deserialize(&mut deserializer).unwrap();
}

struct SortedCheck;

impl<'de> DeserializeSeed<'de> for SortedCheck {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(SortedVisitor)
    }
}

struct SortedVisitor;

impl<'de> Visitor<'de> for SortedVisitor {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(SortedCheck)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut previous: Option<String> = None;
        while let Some(key) = map.next_key::<String>()? {
            if let Some(previous) = &previous {
                assert!(
                    previous.as_bytes() < key.as_bytes(),
                    "keys out of order: {previous:?} before {key:?}"
                );
            }
            map.next_value_seed(SortedCheck)?;
            previous = Some(key);
        }
        Ok(())
    }
}

/// A stand-in for the upstream validator (a live mainnet validator cannot run here): an HTTP
/// JSON-RPC server that records every body it receives and answers from canned responses keyed by
/// method name (batches get an array of the canned answers). Its answers are deliberately
/// formatted unlike ours (spaces, a custom header) so pass-through can be checked byte for byte.
pub struct StandIn {
    pub address: SocketAddr,
    pub received: Arc<Mutex<Vec<Vec<u8>>>>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The stand-in's answer for `method` with request `id` (the id is spliced in as JSON).
pub fn stand_in_answer(method: &str, id: &Value, params: &Value) -> String {
    let id = id.to_string();
    match method {
        "getSignaturesForAddress" => format!(
            r#"{{"jsonrpc":"2.0","result":[{{"blockTime":1780000000,"confirmationStatus":"finalized","err":null,"memo":null,"signature":"{}","slot":400000000}}],"id":{id}}}"#,
            "5".repeat(87)
        ),
        "getBlock" => {
            let slot = params[0].as_u64().unwrap_or(0);
            format!(
                r#"{{"jsonrpc":"2.0","result":{{"blockHeight":1,"blockTime":2,"blockhash":"{}","parentSlot":{},"previousBlockhash":"{}","rewards":[]}},"id":{id}}}"#,
                upstream_blockhash(slot),
                slot.saturating_sub(1),
                upstream_blockhash(slot.saturating_sub(1))
            )
        }
        "getTransaction" => {
            format!(r#"{{"jsonrpc":"2.0","result":{{"from":"stand-in"}},"id":{id}}}"#)
        }
        _ => format!(
            r#"{{ "jsonrpc": "2.0", "result": {{ "context": {{"slot": 7}}, "value": 42 }}, "id": {id} }}"#
        ),
    }
}

/// The blockhash the stand-in reports for `slot`.
pub fn upstream_blockhash(slot: u64) -> String {
    let mut bytes = [7u8; 32];
    bytes[..8].copy_from_slice(&slot.to_le_bytes());
    bs58::encode(bytes).into_string()
}

impl StandIn {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let log = Arc::clone(&received);
        let thread = std::thread::spawn(move || {
            loop {
                if stopped.try_recv().is_ok() {
                    return;
                }
                match listener.accept() {
                    Ok((stream, _)) => {
                        let log = Arc::clone(&log);
                        std::thread::spawn(move || serve_connection(stream, &log));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        Self {
            address,
            received,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn bodies(&self) -> Vec<Vec<u8>> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves keep-alive HTTP/1.1 requests on one connection.
fn serve_connection(mut stream: TcpStream, log: &Mutex<Vec<Vec<u8>>>) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buffer = Vec::new();
    loop {
        let Some(split) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buffer[..split]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap_or(0);
        while buffer.len() < split + 4 + length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let body = buffer[split + 4..split + 4 + length].to_vec();
        buffer.drain(..split + 4 + length);
        log.lock().unwrap().push(body.clone());
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let answer = |call: &Value| {
            stand_in_answer(
                call["method"].as_str().unwrap_or(""),
                &call["id"],
                &call["params"],
            )
        };
        let reply = match &request {
            Value::Array(calls) => format!(
                "[{}]",
                calls.iter().map(answer).collect::<Vec<_>>().join(", ")
            ),
            call => answer(call),
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=stand-in\r\nContent-Length: {}\r\n\r\n{reply}",
            reply.len()
        );
        if stream.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}
