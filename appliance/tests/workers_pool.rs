//! `appliance run --workers 2` end to end: every lossy reference capture (shuffled, with drops)
//! sent over loopback UDP is sharded over two workers by `(slot, fec_set_index)`, data shreds are
//! forwarded to the worker owning their slot, and the result equals `appliance decode` of the
//! same files: the same batch, entry and transaction totals on `/metrics`, and on the gRPC stream
//! exactly the transactions with supported program calls, each once, every one of them among
//! the signatures `appliance decode` prints. Both workers must have worked and forwarded, and no
//! ring may have dropped.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::collections::HashSet;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use stream_proto::stream::SubscribeRequest;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::subscribe_update::Update;
use tokio_stream::StreamExt;

use process::{Appliance, free_tcp_address, free_udp_address, http_get};

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures")
        .join(relative)
}

fn metric(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

/// `appliance decode FILE`: (batches, entries, transactions) and every printed signature.
fn decode(path: &PathBuf) -> ([u64; 3], HashSet<Vec<u8>>) {
    let output = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .arg("decode")
        .arg(path)
        .output()
        .unwrap();
    assert!(output.status.success());
    let mut totals = [0u64; 3];
    let mut signatures = HashSet::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        if let Some(summary) = value.get("summary") {
            for (total, key) in totals
                .iter_mut()
                .zip(["batches", "entries", "transactions"])
            {
                *total += summary[key].as_u64().unwrap();
            }
        }
        for signature in value["signatures"].as_array().into_iter().flatten() {
            signatures.insert(
                bs58::decode(signature.as_str().unwrap())
                    .into_vec()
                    .unwrap(),
            );
        }
    }
    (totals, signatures)
}

/// Scheduling policy (`/proc/PID/task/TID/stat` field 41: 0 ordinary, 1 SCHED_FIFO) of each
/// thread of `pid`, by thread name.
fn thread_policies(pid: u32) -> Vec<(String, u64)> {
    let mut policies = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let task = task.unwrap().path();
        let name = std::fs::read_to_string(task.join("comm")).unwrap();
        let stat = std::fs::read_to_string(task.join("stat")).unwrap();
        // Fields after the parenthesised command name start at field 3.
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let policy = after_name.split(' ').nth(41 - 3).unwrap().parse().unwrap();
        policies.push((name.trim().to_owned(), policy));
    }
    policies
}

/// [`thread_policies`] once `expected` threads run under SCHED_FIFO, or at `patience`.
fn fifo_threads_settled(pid: u32, expected: usize, patience: Duration) -> Vec<(String, u64)> {
    let deadline = Instant::now() + patience;
    loop {
        let policies = thread_policies(pid);
        let fifo = policies.iter().filter(|(_, policy)| *policy == 1).count();
        if fifo >= expected || Instant::now() >= deadline {
            return policies;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether this process may use real-time scheduling (root or CAP_SYS_NICE; CI runs as root).
fn may_use_realtime() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 23) != 0) // CAP_SYS_NICE
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_decode_like_appliance_decode() {
    let udp = free_udp_address();
    let grpc = free_tcp_address();
    let http = free_tcp_address();
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--workers", "2", "--udp", &udp.to_string()])
        .args(["--grpc", &grpc.to_string(), "--http", &http.to_string()])
        .args(["--realtime-priority", "5", "--grpc-realtime-priority", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let _appliance = Appliance { child };
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
    // `--realtime-priority`: the receive thread and both workers run under SCHED_FIFO;
    // `--grpc-realtime-priority`: so do the runtime's two worker threads (each takes the policy
    // at its first park, which on a loaded two-core machine may come a moment after the first
    // connection is served: polled for up to 5 s), and nothing else.
    let expected_fifo = if may_use_realtime() { 5 } else { 0 };
    let policies = fifo_threads_settled(pid, expected_fifo, Duration::from_secs(5));
    let fifo = |prefix: &str| {
        policies
            .iter()
            .filter(|(name, policy)| name.starts_with(prefix) && *policy == 1)
            .count()
    };
    if may_use_realtime() {
        assert_eq!(fifo("worker-"), 2, "{policies:?}");
        assert_eq!(fifo("rx-"), 1, "{policies:?}");
        assert_eq!(fifo("tokio-rt-worker"), 2, "{policies:?}");
        assert_eq!(
            policies.iter().filter(|(_, policy)| *policy == 1).count(),
            5,
            "only the hot threads and the runtime's workers: {policies:?}"
        );
    } else {
        eprintln!("no CAP_SYS_NICE: SCHED_FIFO not checked ({policies:?})");
    }
    let request = SubscribeRequest {
        subscriptions: Default::default(),
        ping_id: None,
        ..Default::default()
    };
    let mut updates = client
        .subscribe_decoded(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();

    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixture("shreds/manifest.json")).unwrap()).unwrap();
    let mut expected_totals = [0u64; 3];
    let mut decoded_signatures = HashSet::new();
    let mut expected: HashSet<Vec<u8>> = HashSet::new();
    let mut files = Vec::new();
    for slot in manifest["slots"].as_array().unwrap() {
        let path = fixture(&format!(
            "shreds/{}",
            slot["files"]["lossy"].as_str().unwrap()
        ));
        let (totals, signatures) = decode(&path);
        for (sum, value) in expected_totals.iter_mut().zip(totals) {
            *sum += value;
        }
        decoded_signatures.extend(signatures);
        expected.extend(
            slot["entries"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|entry| entry["transactions"].as_array().unwrap())
                .filter(|tx| {
                    tx["anchor_calls"]
                        .as_array()
                        .is_some_and(|calls| !calls.is_empty())
                })
                .map(|tx| {
                    bs58::decode(tx["signature"].as_str().unwrap())
                        .into_vec()
                        .unwrap()
                }),
        );
        files.push(path);
    }
    assert!(!expected.is_empty() && expected.is_subset(&decoded_signatures));

    let sender = std::thread::spawn(move || {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut sent = 0u64;
        for path in files {
            let bytes = std::fs::read(path).unwrap();
            for record in capture::framing::records(&bytes) {
                socket.send_to(record.unwrap().payload, udp).unwrap();
                sent += 1;
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        sent
    });

    let mut missing = expected.clone();
    let mut seen = HashSet::new();
    while !missing.is_empty() {
        let next = tokio::time::timeout(Duration::from_secs(30), updates.next()).await;
        let update = next
            .unwrap_or_else(|_| panic!("{} transactions missing", missing.len()))
            .unwrap()
            .unwrap();
        if let Some(Update::Transaction(transaction)) = update.update {
            assert!(
                decoded_signatures.contains(&transaction.signature),
                "a transaction appliance decode does not print"
            );
            missing.remove(&transaction.signature);
            seen.insert(transaction.signature);
        }
    }
    let sent = sender.join().unwrap();
    assert_eq!(seen, expected);

    let deadline = Instant::now() + Duration::from_secs(30);
    let text = loop {
        let (_, text) = http_get(http, "/metrics", &[]);
        let totals = [
            metric(&text, "appliance_entry_batches_total{outcome=\"emitted\"}").unwrap_or(0),
            metric(&text, "appliance_entries_total").unwrap_or(0),
            metric(&text, "appliance_transactions_total").unwrap_or(0),
        ];
        let datagrams: u64 = (0..2)
            .map(|w| {
                metric(
                    &text,
                    &format!("appliance_worker_datagrams_total{{worker=\"{w}\"}}"),
                )
                .unwrap_or(0)
            })
            .sum();
        if (totals == expected_totals && datagrams == sent) || Instant::now() > deadline {
            assert_eq!(totals, expected_totals, "batches, entries, transactions");
            assert_eq!(datagrams, sent);
            break text;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    for worker in 0..2 {
        let datagrams = format!("appliance_worker_datagrams_total{{worker=\"{worker}\"}}");
        assert!(metric(&text, &datagrams).unwrap() > 0, "{text}");
        let forwarded = format!("appliance_worker_forwarded_total{{worker=\"{worker}\"}}");
        assert!(metric(&text, &forwarded).unwrap() > 0, "{text}");
        // Datagrams 200 µs apart after a quiet start: each worker parked and was unparked by
        // the receive thread or the other worker.
        for family in [
            "appliance_worker_parks_total",
            "appliance_worker_unparks_total",
        ] {
            let series = format!("{family}{{worker=\"{worker}\"}}");
            assert!(metric(&text, &series).unwrap() > 0, "{series}: {text}");
        }
        for reason in ["ring_full", "forward_full"] {
            let drops =
                format!("appliance_ring_drops_total{{worker=\"{worker}\",reason=\"{reason}\"}}");
            assert_eq!(metric(&text, &drops), Some(0), "{text}");
        }
    }
}
