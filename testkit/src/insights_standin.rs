//! A STAND-IN for the upstream validator's JSON-RPC (no validator can run in tests or benches):
//! a real HTTP/1.1 server on loopback answering `getSlot`, `getBlocks` and `getBlock` from fixture
//! blocks (getBlock `result` objects as a validator returns them). The chain either holds the
//! fixtures once, or is paced: the confirmed tip advances one slot per interval and slots past the
//! fixtures reuse them cyclically (the served JSON keeps the fixture's own `parentSlot`). It also
//! records when each getBlock answer was written, for freshness measurements.
//!
//! Not for production: one thread per connection (bounded), minimal HTTP parsing.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Most concurrent connections served.
const MAX_CONNECTIONS: usize = 64;
/// Largest request body accepted.
const MAX_BODY_BYTES: usize = 64 * 1024;
/// getBlock serve times remembered.
const SERVED_LOG: usize = 100_000;

/// How the confirmed tip moves.
#[derive(Debug, Clone, Copy)]
pub enum Pace {
    /// Every fixture slot is confirmed from the start; the chain ends with the fixtures.
    AllAtOnce,
    /// `initial` slots are confirmed at start, then one more every `per_slot`, forever.
    Paced { initial: u64, per_slot: Duration },
}

/// The stand-in's chain: fixture blocks by slot offset.
pub struct StandinChain {
    first_slot: u64,
    /// `result` JSON of each slot's block; `None` for a skipped slot.
    blocks: Vec<Option<Arc<[u8]>>>,
    pace: Pace,
    started: Instant,
    served: Mutex<VecDeque<(u64, Instant)>>,
}

impl StandinChain {
    pub fn new(first_slot: u64, blocks: Vec<Option<Vec<u8>>>, pace: Pace) -> Self {
        Self {
            first_slot,
            blocks: blocks
                .into_iter()
                .map(|block| block.map(Arc::from))
                .collect(),
            pace,
            started: Instant::now(),
            served: Mutex::new(VecDeque::new()),
        }
    }

    /// Loads `dir/chain.json` (`{"first_slot":N,"last_slot":M}`) and `dir/blocks/<slot>.json` for
    /// every produced slot (a missing file is a skipped slot).
    pub fn load(dir: &Path, pace: Pace) -> std::io::Result<Self> {
        let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("chain.json"))?)?;
        let slot = |name: &str| {
            manifest[name]
                .as_u64()
                .ok_or_else(|| std::io::Error::other(format!("chain.json lacks {name}")))
        };
        let (first, last) = (slot("first_slot")?, slot("last_slot")?);
        let mut blocks = Vec::new();
        for slot in first..=last {
            let path = dir.join("blocks").join(format!("{slot}.json"));
            blocks.push(std::fs::read(&path).ok());
        }
        Ok(Self::new(first, blocks, pace))
    }

    /// The confirmed tip now.
    pub fn tip(&self) -> u64 {
        let count = self.blocks.len() as u64;
        match self.pace {
            Pace::AllAtOnce => self.first_slot + count.saturating_sub(1),
            Pace::Paced { initial, per_slot } => {
                let advanced = self.started.elapsed().as_nanos() / per_slot.as_nanos().max(1);
                self.first_slot + initial.saturating_sub(1) + advanced as u64
            }
        }
    }

    /// The block of `slot` (`Some(None)`: skipped; `None`: outside the chain).
    pub fn block(&self, slot: u64) -> Option<Option<&Arc<[u8]>>> {
        let offset = slot.checked_sub(self.first_slot)?;
        let count = self.blocks.len() as u64;
        if count == 0 {
            return None;
        }
        let index = match self.pace {
            Pace::AllAtOnce if offset >= count => return None,
            Pace::AllAtOnce => offset,
            Pace::Paced { .. } => offset % count,
        };
        Some(self.blocks[index as usize].as_ref())
    }

    /// Produced slots in `start..=end`, capped at the tip.
    pub fn produced(&self, start: u64, end: u64) -> Vec<u64> {
        let end = end.min(self.tip());
        (start.max(self.first_slot)..=end)
            .filter(|&slot| matches!(self.block(slot), Some(Some(_))))
            .collect()
    }

    /// When the getBlock answer for `slot` was last written out.
    pub fn served_at(&self, slot: u64) -> Option<Instant> {
        let served = self.served.lock().ok()?;
        served
            .iter()
            .rev()
            .find(|(known, _)| *known == slot)
            .map(|(_, at)| *at)
    }

    fn note_served(&self, slot: u64) {
        if let Ok(mut served) = self.served.lock() {
            if served.len() == SERVED_LOG {
                served.pop_front();
            }
            served.push_back((slot, Instant::now()));
        }
    }

    /// The response body to one JSON-RPC request.
    pub fn answer(&self, request: &Value) -> Vec<u8> {
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let params = request.get("params").and_then(Value::as_array);
        let param = |index: usize| {
            params
                .and_then(|params| params.get(index))
                .and_then(Value::as_u64)
        };
        let error = |code: i64, message: String| {
            json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})
                .to_string()
                .into_bytes()
        };
        let result = |value: Value| {
            json!({"jsonrpc": "2.0", "result": value, "id": id})
                .to_string()
                .into_bytes()
        };
        match request.get("method").and_then(Value::as_str) {
            Some("getSlot") => result(json!(self.tip())),
            Some("getBlocks") => match (param(0), param(1)) {
                (Some(start), end) => {
                    let end = end.unwrap_or(u64::MAX).min(start.saturating_add(499_999));
                    result(json!(self.produced(start, end)))
                }
                _ => error(-32602, "Invalid params: expected start slot".into()),
            },
            Some("getBlock") => {
                let Some(slot) = param(0) else {
                    return error(-32602, "Invalid params: expected slot".into());
                };
                if slot > self.tip() {
                    return error(-32004, format!("Block not available for slot {slot}"));
                }
                match self.block(slot) {
                    Some(Some(block)) => {
                        let mut body = Vec::with_capacity(block.len() + 64);
                        body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"result\":");
                        body.extend_from_slice(block);
                        body.extend_from_slice(b",\"id\":");
                        body.extend_from_slice(id.to_string().as_bytes());
                        body.push(b'}');
                        body
                    }
                    Some(None) => error(
                        -32007,
                        format!(
                            "Slot {slot} was skipped, or missing due to ledger jump to recent snapshot"
                        ),
                    ),
                    None => error(-32004, format!("Block not available for slot {slot}")),
                }
            }
            _ => error(-32601, "Method not found".into()),
        }
    }
}

/// The running stand-in server.
pub struct StandinServer {
    pub address: SocketAddr,
    pub chain: Arc<StandinChain>,
    shutdown: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StandinServer {
    /// Serves `chain` on `127.0.0.1:<port>` (0: any free port).
    pub fn start(chain: StandinChain, port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let chain = Arc::new(chain);
        let shutdown = Arc::new(AtomicBool::new(false));
        let thread = {
            let chain = Arc::clone(&chain);
            let shutdown = Arc::clone(&shutdown);
            std::thread::Builder::new()
                .name("standin-rpc".into())
                .spawn(move || accept_loop(&listener, &chain, &shutdown))?
        };
        Ok(Self {
            address,
            chain,
            shutdown,
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl Drop for StandinServer {
    fn drop(&mut self) {
        self.shutdown.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, chain: &Arc<StandinChain>, shutdown: &Arc<AtomicBool>) {
    let open = Arc::new(AtomicUsize::new(0));
    while !shutdown.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, _)) => {
                if open.load(Ordering::Acquire) >= MAX_CONNECTIONS {
                    continue;
                }
                open.fetch_add(1, Ordering::AcqRel);
                let (chain, shutdown, open) =
                    (Arc::clone(chain), Arc::clone(shutdown), Arc::clone(&open));
                let spawned = std::thread::Builder::new()
                    .name("standin-conn".into())
                    .spawn(move || {
                        let _ = serve_connection(stream, &chain, &shutdown);
                        open.fetch_sub(1, Ordering::AcqRel);
                    });
                if spawned.is_err() {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

fn serve_connection(
    stream: TcpStream,
    chain: &StandinChain,
    shutdown: &AtomicBool,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_millis(200)))?;
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while !shutdown.load(Ordering::Acquire) {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(error) => return Err(error),
        }
        if line.trim().is_empty() {
            continue;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 {
                return Ok(());
            }
            let header = header.trim();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        if length > MAX_BODY_BYTES {
            writer.write_all(
                b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )?;
            return Ok(());
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body)?;
        let (status, answer) = match serde_json::from_slice::<Value>(&body) {
            Ok(request) => ("200 OK", chain.answer(&request)),
            Err(_) => (
                "200 OK",
                br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}"#
                    .to_vec(),
            ),
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            answer.len()
        );
        writer.write_all(head.as_bytes())?;
        writer.write_all(&answer)?;
        writer.flush()?;
        if let Ok(request) = serde_json::from_slice::<Value>(&body)
            && request.get("method").and_then(Value::as_str) == Some("getBlock")
            && let Some(slot) = request
                .get("params")
                .and_then(|params| params.get(0))
                .and_then(Value::as_u64)
        {
            chain.note_served(slot);
        }
    }
    Ok(())
}
