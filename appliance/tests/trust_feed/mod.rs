//! The trust tests' shared parts: the shred fixtures (genuine and forged slots), the stand-in
//! cluster with the fixtures' leaders, the real `appliance` process started with a data directory,
//! and a pump-program subscriber that checks every genuine transaction arrives exactly once.

#![allow(dead_code)] // Each test crate uses its own subset.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use capture::reslot::Reslotter;
use ed25519_dalek::SigningKey;
use serde_json::Value;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{DexProgram, ProgramFilter, SubscribeRequest, subscribe_update::Update};
use testkit::cluster_rpc::ClusterState;
use tokio_stream::StreamExt;
use tonic::Streaming;

use crate::process::http_get;

/// ALPHA_FUN's mainnet id, which the fixtures' pump calls use.
pub const PUMP_PROGRAM_ID: &str = "6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P";
pub const MAINNET_EPOCH: u64 = 432_000;

pub fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures")
        .join(relative)
}

pub fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(fixture("shreds/manifest.json")).unwrap()).unwrap()
}

pub fn slots(manifest: &Value) -> Vec<(u64, String)> {
    manifest["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|slot| {
            let leader = slot["leader"].as_str().unwrap().to_owned();
            (slot["slot"].as_u64().unwrap(), leader)
        })
        .collect()
}

/// The stand-in cluster with the fixture leaders, at the last fixture slot; three nodes, two of
/// them on the fixtures' shred version.
pub fn cluster(manifest: &Value) -> ClusterState {
    let all = slots(manifest);
    let mut state = ClusterState::new(MAINNET_EPOCH, all.last().unwrap().0);
    for (slot, leader) in &all {
        state = state.with_leader(*slot..=*slot, leader);
    }
    let version = manifest["shred_version"].as_u64().unwrap() as u16;
    state.node_shred_versions = vec![version, 7, version];
    state
}

/// Signature → slot of every transaction calling the pump program, for `wanted` slots.
pub fn pump_signatures(manifest: &Value, wanted: impl Fn(u64) -> bool) -> HashMap<Vec<u8>, u64> {
    let mut out = HashMap::new();
    for slot in manifest["slots"].as_array().unwrap() {
        let number = slot["slot"].as_u64().unwrap();
        if !wanted(number) {
            continue;
        }
        for tx in slot["entries"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|entry| entry["transactions"].as_array().unwrap())
        {
            let calls_pump = tx["anchor_calls"]
                .as_array()
                .is_some_and(|calls| calls.iter().any(|c| c["program_id"] == PUMP_PROGRAM_ID));
            if calls_pump {
                let signature = bs58::decode(tx["signature"].as_str().unwrap());
                out.insert(signature.into_vec().unwrap(), number);
            }
        }
    }
    out
}

pub fn genuine(slot: u64) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(fixture(&format!("shreds/slot-{slot}.full.bin"))).unwrap();
    capture::framing::records(&bytes)
        .map(|record| record.unwrap().payload.to_vec())
        .collect()
}

/// Every fixture slot's genuine shreds, slot after slot.
pub fn all_genuine() -> Vec<Vec<u8>> {
    slots(&manifest())
        .iter()
        .flat_map(|(slot, _)| genuine(*slot))
        .collect()
}

/// A forged version of `slot` carrying `content_slot`'s entries, signed by the attacker's key.
pub fn forged(slot: u64, content_slot: u64) -> Vec<Vec<u8>> {
    let content = genuine(content_slot);
    let records: Vec<&[u8]> = content.iter().map(Vec::as_slice).collect();
    Reslotter::new(SigningKey::from_bytes(&[66; 32]))
        .reslot(&records, slot, slot - 1, &[5; 32])
        .unwrap()
        .shreds
}

pub fn interleave(first: Vec<Vec<u8>>, second: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let (mut a, mut b) = (first.into_iter(), second.into_iter());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

pub use crate::process::{Running, send_paced as send, start_appliance as start};

/// `/health` once it answers and satisfies `ready`.
pub fn wait_for_health(http: SocketAddr, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if std::net::TcpStream::connect(http).is_ok() {
            let (status, body) = http_get(http, "/health", &[]);
            if status == 200 && ready(&body) {
                return body;
            }
        }
        assert!(Instant::now() < deadline, "health never ready");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The value of the first `/metrics` line starting with `prefix` (0 when absent).
pub fn metric(http: SocketAddr, prefix: &str) -> i64 {
    let (_, text) = http_get(http, "/metrics", &[]);
    text.lines()
        .find(|line| line.starts_with(prefix))
        .map_or(0, |line| line.rsplit(' ').next().unwrap().parse().unwrap())
}

pub async fn subscribe_pump(grpc: SocketAddr) -> Streaming<stream_proto::stream::SubscribeUpdate> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut client = loop {
        match StreamClient::connect(format!("http://{grpc}")).await {
            Ok(client) => break client,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(error) => panic!("no gRPC server on {grpc}: {error}"),
        }
    };
    let filter = ProgramFilter {
        programs: vec![DexProgram::AlphaFun as i32],
        ..Default::default()
    };
    let request = SubscribeRequest {
        subscriptions: [("pump".to_owned(), filter)].into(),
        ping_id: Some(1),
        ..Default::default()
    };
    let mut updates = client
        .subscribe_decoded(tokio_stream::iter([request]).chain(tokio_stream::pending()))
        .await
        .unwrap()
        .into_inner();
    let pong = updates.next().await.unwrap().unwrap();
    assert_eq!(pong.update, Some(Update::Pong(1)));
    updates
}

/// Transactions (signature, slot) received until `quiet` passes without one or `expected` of
/// them arrived and `quiet` passed after that.
pub async fn receive(
    updates: &mut Streaming<stream_proto::stream::SubscribeUpdate>,
    quiet: Duration,
) -> Vec<(Vec<u8>, u64)> {
    let mut out = Vec::new();
    while let Ok(Some(update)) = tokio::time::timeout(quiet, updates.next()).await {
        if let Some(Update::Transaction(tx)) = update.unwrap().update {
            out.push((tx.signature, tx.slot));
        }
    }
    out
}

/// Sends `datagrams` to `udp` from a thread while `updates` is read: the transactions received
/// until 3 s pass without one.
pub async fn send_and_receive(
    udp: SocketAddr,
    updates: &mut Streaming<stream_proto::stream::SubscribeUpdate>,
    datagrams: Vec<Vec<u8>>,
) -> Vec<(Vec<u8>, u64)> {
    let sender = std::thread::spawn(move || send(udp, &datagrams));
    let received = receive(updates, Duration::from_secs(3)).await;
    sender.join().unwrap();
    received
}

/// Every expected signature exactly once, in its own slot, and nothing else.
pub fn assert_exactly(received: &[(Vec<u8>, u64)], expected: &HashMap<Vec<u8>, u64>) {
    let mut seen = HashMap::new();
    for (signature, slot) in received {
        assert_eq!(
            expected.get(signature),
            Some(slot),
            "a transaction outside the genuine fixture slots was published"
        );
        *seen.entry(signature.clone()).or_insert(0) += 1;
    }
    assert!(
        seen.values().all(|&n| n == 1),
        "a transaction published twice"
    );
    assert_eq!(seen.len(), expected.len(), "genuine transactions missing");
}
