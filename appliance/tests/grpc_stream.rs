//! End to end through the real process: shreds of a reference fixture sent over UDP to
//! `appliance run`, decoded, and streamed over gRPC to a tonic client with filters: every pump
//! transaction of the slot arrives once with its matched filter and six non-decreasing timing
//! stamps, the ping is answered first, the slot is announced, an invalid filter ends its stream
//! with INVALID_ARGUMENT, and SIGTERM stops the process cleanly.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{
    DexProgram, ProgramFilter, SubscribeRequest, SubscribeUpdate, subscribe_update::Update,
};
use tokio_stream::StreamExt;
use tonic::transport::Channel;

use process::{Appliance, free_tcp_address, free_udp_address, http_get, send_capture};

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures")
        .join(relative)
}

/// ALPHA_FUN's mainnet id, which the fixtures' pump calls use.
const PUMP_PROGRAM_ID: &str = "6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P";

fn start(udp: SocketAddr, grpc: SocketAddr, http: SocketAddr) -> Appliance {
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args([
            "run",
            "--udp",
            &udp.to_string(),
            "--grpc",
            &grpc.to_string(),
        ])
        .args(["--http", &http.to_string()])
        .arg("--data-dir")
        .arg(process::scratch_data_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Appliance { child }
}

async fn connect(grpc: SocketAddr) -> StreamClient<Channel> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match StreamClient::connect(format!("http://{grpc}")).await {
            Ok(client) => return client,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(error) => panic!("no gRPC server on {grpc}: {error}"),
        }
    }
}

/// Signatures of the slot's transactions that call the pump program (ALPHA_FUN) directly.
fn pump_signatures(slot: &Value) -> HashSet<Vec<u8>> {
    slot["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|entry| entry["transactions"].as_array().unwrap())
        .filter(|tx| {
            tx["anchor_calls"].as_array().is_some_and(|calls| {
                calls
                    .iter()
                    .any(|call| call["program_id"] == PUMP_PROGRAM_ID)
            })
        })
        .map(|tx| {
            bs58::decode(tx["signature"].as_str().unwrap())
                .into_vec()
                .unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtered_stream_end_to_end() {
    let udp = free_udp_address();
    let grpc = free_tcp_address();
    let http = free_tcp_address();
    let mut appliance = start(udp, grpc, http);
    let mut client = connect(grpc).await;

    let (requests, receiver) = tokio::sync::mpsc::channel(4);
    let filter = ProgramFilter {
        programs: vec![DexProgram::AlphaFun as i32],
        ..Default::default()
    };
    requests
        .send(SubscribeRequest {
            subscriptions: [("pump".to_owned(), filter)].into(),
            ping_id: Some(7),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut updates = client
        .subscribe_decoded(tokio_stream::wrappers::ReceiverStream::new(receiver))
        .await
        .unwrap()
        .into_inner();
    let first = updates.next().await.unwrap().unwrap();
    assert_eq!(
        first.update,
        Some(Update::Pong(7)),
        "the pong comes before any update"
    );

    // A second client with an invalid key is refused with the filter and value named.
    let mut refused = connect(grpc).await;
    let bad = ProgramFilter {
        accounts_include: vec!["not-a-key".into()],
        ..Default::default()
    };
    let outcome = refused
        .subscribe_decoded(tokio_stream::iter([SubscribeRequest {
            subscriptions: [("bad".to_owned(), bad)].into(),
            ping_id: None,
            ..Default::default()
        }]))
        .await;
    let status = match outcome {
        Err(status) => status,
        Ok(response) => response.into_inner().next().await.unwrap().unwrap_err(),
    };
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("bad") && status.message().contains("not-a-key"));

    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixture("shreds/manifest.json")).unwrap()).unwrap();
    let slot = &manifest["slots"][0];
    let mut expected = pump_signatures(slot);
    assert!(!expected.is_empty());
    let capture = fixture(&format!(
        "shreds/{}",
        slot["files"]["lossy"].as_str().unwrap()
    ));
    let sender = std::thread::spawn(move || send_capture(udp, &capture));

    let mut slot_announced = false;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !expected.is_empty() && Instant::now() < deadline {
        let next = tokio::time::timeout(Duration::from_secs(10), updates.next()).await;
        let Ok(Some(update)) = next else { break };
        let update: SubscribeUpdate = update.unwrap();
        match update.update.unwrap() {
            Update::Slot(notification) => {
                assert_eq!(notification.slot, slot["slot"].as_u64().unwrap());
                slot_announced = true;
            }
            Update::Transaction(transaction) => {
                assert!(
                    expected.remove(&transaction.signature),
                    "each pump transaction once"
                );
                assert_eq!(transaction.matched_filters, ["pump"]);
                assert_eq!(transaction.slot, slot["slot"].as_u64().unwrap());
                // The filter matches on any ALPHA_FUN call; the update lists every decoded call.
                assert!(
                    transaction
                        .decoded_instructions
                        .iter()
                        .any(|i| i.program == DexProgram::AlphaFun as i32)
                );
                let timing = transaction.server_timing.unwrap();
                let stamps = [
                    timing.first_read_unix_nanos,
                    timing.capture_done_unix_nanos,
                    timing.deshred_done_unix_nanos,
                    timing.decode_done_unix_nanos,
                    timing.publish_unix_nanos,
                    timing.subscriber_recv_unix_nanos,
                ];
                assert!(
                    stamps[0] > 0 && stamps.windows(2).all(|pair| pair[0] <= pair[1]),
                    "{stamps:?}"
                );
            }
            other => panic!("unexpected update {other:?}"),
        }
    }
    sender.join().unwrap();
    assert!(
        expected.is_empty(),
        "{} pump transactions missing",
        expected.len()
    );
    assert!(slot_announced);

    // /health, a JSON 404, and /metrics with the counters of what just happened (the worker
    // flushes every 100 ms).
    let (status, body) = http_get(http, "/health", &[]);
    assert_eq!(
        (status, body.as_str()),
        (200, "{\"status\":\"ok\",\"trust_mode\":\"trusted\"}")
    );
    let (status, body) = http_get(http, "/nope", &[]);
    assert_eq!(status, 404);
    assert!(body.contains("not_found"));
    std::thread::sleep(Duration::from_millis(300));
    let (status, metrics) = http_get(http, "/metrics", &[]);
    assert_eq!(status, 200);
    let value = |prefix: &str| -> u64 {
        let line = metrics
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let records = slot["lossy"]["num_records"].as_u64().unwrap();
    assert_eq!(
        value("appliance_datagrams_received_total{source=\"udp\"} "),
        records
    );
    assert_eq!(
        value("appliance_transactions_total "),
        slot["num_transactions"].as_u64().unwrap()
    );
    let sets = slot["num_fec_sets"].as_u64().unwrap();
    assert_eq!(
        value("appliance_fec_sets_total{outcome=\"completed\"} "),
        sets
    );
    assert_eq!(value("appliance_stream_subscribers "), 1);
    assert_eq!(
        value("appliance_stream_disconnects_total{reason=\"invalid_filter\"} "),
        1
    );
    assert!(value("appliance_dex_instructions_decoded_total{program=\"ALPHA_FUN\"} ") > 0);
    let histogram =
        "appliance_stage_latency_seconds_bucket{stage=\"first_read_to_publish\",le=\"+Inf\"}";
    assert!(metrics.contains(histogram));

    // SIGTERM: a clean shutdown with exit status 0.
    let pid = appliance.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = appliance.child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(Instant::now() < deadline, "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The README's first command: `appliance run` with no source loops the bundled capture (two
/// reference slots), renumbering the slots on every pass and signing them with the replay key it
/// verifies. An empty-map subscriber that sends one request and half-closes (as grpcurl does)
/// receives every transaction of the stream's universe in them (all their Anchor calls target
/// supported programs), in increasing, announced slots.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_default_streams_the_bundled_replay() {
    let grpc = free_tcp_address();
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--grpc", &grpc.to_string(), "--replay-rate", "20000"])
        .args(["--http", &free_tcp_address().to_string()])
        .arg("--data-dir")
        .arg(process::scratch_data_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _appliance = Appliance { child };
    let mut client = connect(grpc).await;
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
    let bundled = [&manifest["slots"][0], &manifest["slots"][2]];
    let universe: HashSet<Vec<u8>> = bundled
        .iter()
        .flat_map(|slot| slot["entries"].as_array().unwrap())
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
        })
        .collect();
    let mut expected = universe.clone();
    let mut slots: Vec<u64> = Vec::new();
    while !expected.is_empty() || slots.len() < 3 {
        let next = tokio::time::timeout(Duration::from_secs(20), updates.next()).await;
        let update = next
            .unwrap_or_else(|_| {
                panic!(
                    "{} transactions and {} of 2 slots missing",
                    expected.len(),
                    2 - slots.len()
                )
            })
            .unwrap()
            .unwrap();
        match update.update.unwrap() {
            Update::Slot(notification) => {
                assert!(slots.last().is_none_or(|last| notification.slot > *last));
                slots.push(notification.slot);
            }
            Update::Transaction(transaction) => {
                assert!(universe.contains(&transaction.signature));
                // A subscriber joining mid-slot missed that slot's notification; later slots
                // are announced before their transactions.
                assert!(slots.last().is_none_or(|last| transaction.slot <= *last));
                assert!(transaction.matched_filters.is_empty());
                expected.remove(&transaction.signature);
            }
            other => panic!("unexpected update {other:?}"),
        }
    }
    // The capture's gap of two slots is kept, and passes follow each other.
    assert!(slots.windows(2).all(|pair| pair[1] > pair[0]));
}

/// A subscriber that stops reading falls a whole ring behind and its stream ends with
/// RESOURCE_EXHAUSTED and the count of missed updates, while a subscriber that keeps reading is
/// unaffected (the publisher never waits).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_subscriber_is_cut_while_a_fast_one_continues() {
    let grpc = free_tcp_address();
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--grpc", &grpc.to_string(), "--replay-rate", "20000"])
        .args([
            "--http",
            &free_tcp_address().to_string(),
            "--subscriber-queue",
            "2048",
        ])
        .arg("--data-dir")
        .arg(process::scratch_data_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _appliance = Appliance { child };
    let request = || SubscribeRequest {
        subscriptions: Default::default(),
        ping_id: None,
        ..Default::default()
    };
    let mut slow_client = connect(grpc).await;
    let mut slow = slow_client
        .subscribe_decoded(tokio_stream::iter([request()]))
        .await
        .unwrap()
        .into_inner();
    let mut fast_client = connect(grpc).await;
    let mut fast = fast_client
        .subscribe_decoded(tokio_stream::iter([request()]))
        .await
        .unwrap()
        .into_inner();
    let fast_reader = tokio::spawn(async move {
        let mut received = 0u64;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            match tokio::time::timeout(Duration::from_secs(5), fast.next()).await {
                Ok(Some(Ok(_))) => received += 1,
                other => panic!("the fast subscriber was cut: {other:?}"),
            }
        }
        received
    });
    // The slow subscriber reads nothing while thousands of updates are published. The ring (2,048)
    // still covers the worker's bursts (a batch's updates are published back to back), so the
    // fast subscriber keeps up.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let status = loop {
        match tokio::time::timeout(Duration::from_secs(10), slow.next()).await {
            Ok(Some(Ok(_))) => continue,
            Ok(Some(Err(status))) => break status,
            other => panic!("the slow subscriber was not cut: {other:?}"),
        }
    };
    assert_eq!(status.code(), tonic::Code::ResourceExhausted);
    assert!(
        status.message().starts_with("subscriber lagged: "),
        "{}",
        status.message()
    );
    assert!(fast_reader.await.unwrap() > 1_000);
}

/// `run` takes the same program-id overrides as `decode-tx` and refuses a bad one at start.
#[test]
fn run_refuses_a_bad_program_override() {
    let output = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--grpc", &free_tcp_address().to_string()])
        .args(["--http", &free_tcp_address().to_string()])
        .args(["--program-id", "ALPHA_FUN=not-base58!"])
        .arg("--data-dir")
        .arg(process::scratch_data_dir())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--program-id") && stderr.contains("not-base58!"),
        "{stderr}"
    );
}

/// At most `--max-subscribers` streams are open at once: one more call fails at once with
/// RESOURCE_EXHAUSTED and is counted; when a stream ends its place is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_beyond_max_subscribers_are_refused() {
    let grpc = free_tcp_address();
    let http = free_tcp_address();
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args([
            "run",
            "--grpc",
            &grpc.to_string(),
            "--http",
            &http.to_string(),
        ])
        .args(["--max-subscribers", "2"])
        .arg("--data-dir")
        .arg(process::scratch_data_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _appliance = Appliance { child };
    // A filter and a ping: the filter starts the session (a pure ping would not, and the
    // half-closed call would end), the pong proves it runs.
    let request = || SubscribeRequest {
        subscriptions: [(
            "pump".to_owned(),
            ProgramFilter {
                programs: vec![DexProgram::AlphaFun as i32],
                ..Default::default()
            },
        )]
        .into(),
        ping_id: Some(1),
        ..Default::default()
    };
    let mut client = connect(grpc).await;
    let mut open = Vec::new();
    for _ in 0..2 {
        open.push(open_with_pong(&mut client, request()).await);
    }
    // tonic reports the refusal either on the call or as the stream's first item.
    let refused = match client
        .subscribe_decoded(tokio_stream::iter([request()]))
        .await
    {
        Err(status) => status,
        Ok(response) => {
            let mut stream = response.into_inner();
            match tokio::time::timeout(Duration::from_secs(10), stream.next()).await {
                Ok(Some(Err(status))) => status,
                other => panic!("the third stream was not refused: {other:?}"),
            }
        }
    };
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    assert!(
        refused
            .message()
            .starts_with("too many subscribers: 2 streams open"),
        "{}",
        refused.message()
    );
    let metric = |text: &str, name: &str| -> u64 {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} missing"))
    };
    let (_, text) = http_get(http, "/metrics", &[]);
    assert_eq!(metric(&text, "appliance_stream_sessions_refused_total "), 1);
    assert_eq!(metric(&text, "appliance_stream_open_streams "), 2);

    // Ending one stream frees its place.
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, text) = http_get(http, "/metrics", &[]);
        if metric(&text, "appliance_stream_open_streams ") == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the ended stream kept its place");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    open_with_pong(&mut client, request()).await;
}

/// Opens a stream with `request` (which carries a ping) and waits for its pong, which proves the
/// session runs.
async fn open_with_pong(
    client: &mut StreamClient<Channel>,
    request: SubscribeRequest,
) -> tonic::Streaming<SubscribeUpdate> {
    let mut stream = client
        .subscribe_decoded(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(first.update, Some(Update::Pong(_))), "{first:?}");
    stream
}
