//! A STAND-IN for a cluster's JSON-RPC as the appliance's leader-schedule fetcher uses it (no
//! validator runs in tests): a real HTTP/1.1 server on loopback (std::net, one thread per
//! connection, `Content-Length` bodies, `Connection: close`) answering `getEpochSchedule`,
//! `getEpochInfo`, `getLeaderSchedule`, `getClusterNodes` and `getSlot` in the validator's
//! response shapes (JSON-RPC 2.0, the validator's field names), and `getMultipleAccounts` /
//! `getAccountInfo` of the accounts it holds (`base64` encoding: `data` as `[base64, "base64"]`,
//! `owner`, `lamports`, `executable`, `rentEpoch`, `space`, under `context.slot`). The schedule is configurable
//! (small epochs, no warm-up) and the server can go down, answer garbage or oversized bodies.
//!
//! Not for production: minimal HTTP parsing, bounded request bodies.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// Largest request body accepted.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// How the stand-in answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    /// Valid answers.
    Up,
    /// Accepts and closes every connection without an answer.
    Down,
    /// HTTP 200 with a body that is not JSON.
    Garbage,
    /// HTTP 200 announcing and sending a body of this many bytes.
    Oversized(usize),
}

/// The cluster the stand-in describes.
#[derive(Debug, Clone)]
pub struct ClusterState {
    pub slots_per_epoch: u64,
    /// The confirmed slot `getEpochInfo` and `getSlot` report.
    pub slot: u64,
    /// Leader (base58) by absolute slot; `getLeaderSchedule` answers the epoch's part of it.
    pub leaders: BTreeMap<u64, String>,
    /// Epochs `getLeaderSchedule` answers `null` for (not known yet).
    pub unknown_epochs: Vec<u64>,
    /// `shredVersion` of each node of `getClusterNodes`.
    pub node_shred_versions: Vec<u16>,
    /// Accounts by base58 address, for `getMultipleAccounts` and `getAccountInfo`.
    pub accounts: BTreeMap<String, StandinAccount>,
    pub behavior: Behavior,
    /// How long each request waits before its answer (a slow cluster; zero by default).
    pub answer_delay: Duration,
}

/// One account the stand-in serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandinAccount {
    /// Owner program, base58.
    pub owner: String,
    pub data: Vec<u8>,
    pub lamports: u64,
}

impl ClusterState {
    /// Mainnet-sized epochs (432,000 slots), `slot` confirmed, no leaders yet.
    pub fn new(slots_per_epoch: u64, slot: u64) -> Self {
        Self {
            slots_per_epoch,
            slot,
            leaders: BTreeMap::new(),
            unknown_epochs: Vec::new(),
            node_shred_versions: Vec::new(),
            accounts: BTreeMap::new(),
            behavior: Behavior::Up,
            answer_delay: Duration::ZERO,
        }
    }

    /// `leader` for every slot of `slots`.
    pub fn with_leader(mut self, slots: std::ops::RangeInclusive<u64>, leader: &str) -> Self {
        for slot in slots {
            self.leaders.insert(slot, leader.to_owned());
        }
        self
    }
}

/// The running stand-in; stops when dropped.
pub struct ClusterStandin {
    address: SocketAddr,
    state: Arc<Mutex<ClusterState>>,
    calls: Arc<Mutex<BTreeMap<String, usize>>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl ClusterStandin {
    pub fn start(state: ClusterState) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let state = Arc::new(Mutex::new(state));
        let calls = Arc::new(Mutex::new(BTreeMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let accept = {
            let (state, calls, stop) = (Arc::clone(&state), Arc::clone(&calls), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("cluster-standin".into())
                .spawn(move || accept_loop(&listener, &state, &calls, &stop))?
        };
        Ok(Self {
            address,
            state,
            calls,
            stop,
            accept: Some(accept),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Changes the cluster (behavior, slot, leaders) for the next requests.
    pub fn update(&self, change: impl FnOnce(&mut ClusterState)) {
        if let Ok(mut state) = self.state.lock() {
            change(&mut state);
        }
    }

    /// Requests answered (or refused) per method so far.
    pub fn calls(&self, method: &str) -> usize {
        self.calls
            .lock()
            .map_or(0, |calls| calls.get(method).copied().unwrap_or(0))
    }
}

impl Drop for ClusterStandin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn accept_loop(
    listener: &TcpListener,
    state: &Arc<Mutex<ClusterState>>,
    calls: &Arc<Mutex<BTreeMap<String, usize>>>,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (state, calls) = (Arc::clone(state), Arc::clone(calls));
                let _ = std::thread::Builder::new()
                    .name("cluster-standin-conn".into())
                    .spawn(move || {
                        let _ = serve(stream, &state, &calls);
                    });
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Reads one request and writes its answer.
fn serve(
    stream: TcpStream,
    state: &Mutex<ClusterState>,
    calls: &Mutex<BTreeMap<String, usize>>,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length.min(MAX_BODY_BYTES)];
    reader.read_exact(&mut body)?;
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = request["method"].as_str().unwrap_or("").to_owned();
    if let Ok(mut calls) = calls.lock() {
        *calls.entry(method.clone()).or_default() += 1;
    }
    let snapshot = match state.lock() {
        Ok(state) => state.clone(),
        Err(_) => return Ok(()),
    };
    std::thread::sleep(snapshot.answer_delay);
    let answer = match snapshot.behavior {
        Behavior::Down => return Ok(()),
        Behavior::Garbage => b"<html>not json".to_vec(),
        Behavior::Oversized(bytes) => vec![b' '; bytes],
        Behavior::Up => {
            let result = answer(&snapshot, &method, &request["params"]);
            json!({"jsonrpc": "2.0", "id": request["id"], "result": result})
                .to_string()
                .into_bytes()
        }
    };
    write_response(stream, &answer)
}

fn write_response(mut stream: TcpStream, body: &[u8]) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

/// The `result` of `method` for `params`.
fn answer(state: &ClusterState, method: &str, params: &Value) -> Value {
    let epoch_of = |slot: u64| slot / state.slots_per_epoch;
    match method {
        "getEpochSchedule" => json!({
            "slotsPerEpoch": state.slots_per_epoch,
            "leaderScheduleSlotOffset": state.slots_per_epoch,
            "warmup": false,
            "firstNormalEpoch": 0,
            "firstNormalSlot": 0,
        }),
        "getEpochInfo" => json!({
            "absoluteSlot": state.slot,
            "blockHeight": state.slot,
            "epoch": epoch_of(state.slot),
            "slotIndex": state.slot % state.slots_per_epoch,
            "slotsInEpoch": state.slots_per_epoch,
            "transactionCount": 0,
        }),
        "getSlot" => json!(state.slot),
        "getClusterNodes" => Value::Array(
            state
                .node_shred_versions
                .iter()
                .enumerate()
                .map(|(index, version)| node(index, *version))
                .collect(),
        ),
        "getLeaderSchedule" => {
            let slot = params[0].as_u64().unwrap_or(state.slot);
            leader_schedule(state, epoch_of(slot))
        }
        "getMultipleAccounts" => {
            let keys = params[0].as_array().map_or(&[][..], Vec::as_slice);
            let value: Vec<Value> = keys
                .iter()
                .map(|key| account(state, key.as_str().unwrap_or("")))
                .collect();
            with_context(state, Value::Array(value))
        }
        "getAccountInfo" => with_context(state, account(state, params[0].as_str().unwrap_or(""))),
        _ => Value::Null,
    }
}

/// An `RpcResponse`: the value under `context.slot`.
fn with_context(state: &ClusterState, value: Value) -> Value {
    json!({"context": {"apiVersion": "2.2.0", "slot": state.slot}, "value": value})
}

/// One account in the `base64` encoding (`null` when there is none).
fn account(state: &ClusterState, key: &str) -> Value {
    use base64::Engine;
    match state.accounts.get(key) {
        None => Value::Null,
        Some(account) => json!({
            "data": [base64::engine::general_purpose::STANDARD.encode(&account.data), "base64"],
            "executable": false,
            "lamports": account.lamports,
            "owner": account.owner,
            "rentEpoch": u64::MAX,
            "space": account.data.len(),
        }),
    }
}

/// `getLeaderSchedule` for `epoch`: leader → slot offsets in the epoch; `null` when unknown.
fn leader_schedule(state: &ClusterState, epoch: u64) -> Value {
    if state.unknown_epochs.contains(&epoch) {
        return Value::Null;
    }
    let first = epoch * state.slots_per_epoch;
    let mut offsets: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (slot, leader) in state.leaders.range(first..first + state.slots_per_epoch) {
        offsets.entry(leader).or_default().push(slot - first);
    }
    json!(offsets)
}

/// One `getClusterNodes` entry.
fn node(index: usize, shred_version: u16) -> Value {
    json!({
        "pubkey": bs58::encode([index as u8 + 1; 32]).into_string(),
        "gossip": format!("10.0.0.{}:8001", index + 1),
        "tpu": format!("10.0.0.{}:8003", index + 1),
        "rpc": null,
        "version": "2.2.0",
        "featureSet": 3_294_202_862u32,
        "shredVersion": shred_version,
    })
}
