//! Per-transaction publishing (issue 21, docs/incremental-deshred.md) through the real binary
//! over UDP and gRPC:
//!
//! - a DEX transaction of an entry batch spanning several FEC sets reaches the subscriber while
//!   the batch's last sets have not been sent (the test holds them back, sees the early one, then
//!   sends them and sees the rest);
//! - for every fixture slot sent in emitted, shuffled and lossy orders, an incremental appliance
//!   and a batch-wise one (`--deshred batch`) fed the same datagrams publish the same updates for
//!   every batch, in the same order, each once.
//!
//! Which transaction is in which batch, and which data shred completed its bytes, the test learns
//! from the decoder library run over the same capture.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use decoder::dex::ProgramRegistry;
use decoder::incremental::IncrementalConfig;
use decoder::shred::{ParseOptions, parse_shred, peek_slot_and_fec_set};
use decoder::{
    DecodeStats, DecoderConfig, LeaderSchedule, ReadyItem, ShredDecoder, decode_transaction,
};
use serde_json::Value;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::subscribe_update::Update;
use stream_proto::stream::{ServerTiming, SubscribeRequest};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;

use process::{Appliance, free_tcp_address, free_udp_address, http_get};

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures/shreds")
        .join(relative)
}

fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(fixture("manifest.json")).unwrap()).unwrap()
}

fn records(file: &str) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(fixture(file)).unwrap();
    capture::framing::records(&bytes)
        .map(|record| record.unwrap().payload.to_vec())
        .collect()
}

/// One published update as the test compares it: signature, slot, index in batch, kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Seen {
    signature: Vec<u8>,
    slot: u64,
    tx_index: u32,
    delta: bool,
}

/// A running appliance with one empty-map subscriber whose updates arrive on `updates`.
struct Running {
    _appliance: Appliance,
    udp: SocketAddr,
    http: SocketAddr,
    updates: mpsc::UnboundedReceiver<(Seen, ServerTiming)>,
}

/// Starts `appliance run` (one worker) and subscribes; a start that lost a port race is retried
/// on new ports.
async fn start(extra: &[&str]) -> Running {
    for _attempt in 0..5 {
        let udp = free_udp_address();
        let (grpc, http) = (free_tcp_address(), free_tcp_address());
        let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
            .args(["run", "--workers", "1", "--udp", &udp.to_string()])
            .args(["--grpc", &grpc.to_string(), "--http", &http.to_string()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut appliance = Appliance { child };
        if let Some(updates) = subscribe(&mut appliance, grpc).await {
            return Running {
                _appliance: appliance,
                udp,
                http,
                updates,
            };
        }
    }
    panic!("the appliance did not start in five attempts");
}

/// Connects an empty-map subscriber (every transaction, docs/grpc.md), forwarding what it
/// receives; `None` when the process exited first (a port taken meanwhile).
async fn subscribe(
    appliance: &mut Appliance,
    grpc: SocketAddr,
) -> Option<mpsc::UnboundedReceiver<(Seen, ServerTiming)>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut client = loop {
        if appliance.child.try_wait().unwrap().is_some() {
            return None;
        }
        match StreamClient::connect(format!("http://{grpc}")).await {
            Ok(client) => break client,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(error) => panic!("no gRPC server on {grpc}: {error}"),
        }
    };
    let (requests, receiver) = mpsc::channel(4);
    // The empty-map request starts the stream; the ping after it (a pure ping) answers once the
    // subscription is in place.
    for ping_id in [None, Some(1)] {
        let subscriptions = HashMap::new();
        let request = SubscribeRequest {
            subscriptions,
            ping_id,
            ..Default::default()
        };
        requests.send(request).await.unwrap();
    }
    let mut stream = client
        .subscribe_decoded(tokio_stream::wrappers::ReceiverStream::new(receiver))
        .await
        .unwrap()
        .into_inner();
    // The pong: the subscription is in place before anything is sent.
    loop {
        let update = stream.next().await.unwrap().unwrap();
        if update.update == Some(Update::Pong(1)) {
            break;
        }
    }
    let (sender, updates) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let _requests = requests;
        while let Some(Ok(update)) = stream.next().await {
            let seen = match update.update {
                Some(Update::Transaction(t)) => (t, false),
                Some(Update::Delta(d)) => (d.envelope.unwrap(), true),
                _ => continue,
            };
            let (envelope, delta) = seen;
            let seen = Seen {
                signature: envelope.signature,
                slot: envelope.slot,
                tx_index: envelope.tx_index,
                delta,
            };
            if sender
                .send((seen, envelope.server_timing.unwrap_or_default()))
                .is_err()
            {
                break;
            }
        }
    });
    Some(updates)
}

fn send(socket: &UdpSocket, records: &[Vec<u8>], targets: &[SocketAddr]) {
    for record in records {
        for target in targets {
            socket.send_to(record, target).unwrap();
        }
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// A DEX transaction (one the appliance publishes) as the decoder library hands it out.
#[derive(Debug, Clone)]
struct ReadyTx {
    batch: (u64, u32),
    index_in_batch: u64,
    completed_index: u32,
    signature: Vec<u8>,
}

fn decoder_config() -> DecoderConfig {
    DecoderConfig {
        incremental: IncrementalConfig {
            enabled: true,
            ..IncrementalConfig::default()
        },
        ..DecoderConfig::default()
    }
}

/// The slot's capture through the decoder library in incremental mode: its DEX transactions
/// and each batch's last data shred.
fn ready_transactions(
    slot: &Value,
    records: &[Vec<u8>],
) -> (Vec<ReadyTx>, BTreeMap<(u64, u32), u32>) {
    let leader = LeaderSchedule::key_from_base58(slot["leader"].as_str().unwrap()).unwrap();
    let mut decoder = ShredDecoder::new(decoder_config(), LeaderSchedule::Fixed(leader));
    let registry = ProgramRegistry::default();
    let mut stats = DecodeStats::default();
    let (mut ready, mut ends) = (Vec::new(), BTreeMap::new());
    for (number, record) in records.iter().enumerate() {
        decoder.ingest(record, number as u64 + 1);
        while let Some(item) = decoder.next_ready() {
            match item {
                ReadyItem::Transaction(t) => {
                    if !decode_transaction(&t.transaction, &registry, &mut stats).is_empty() {
                        ready.push(ReadyTx {
                            batch: (t.slot, t.batch_start_index),
                            index_in_batch: t.index_in_batch,
                            completed_index: t.completed_index,
                            signature: t.transaction.first_signature().to_vec(),
                        });
                    }
                }
                ReadyItem::BatchEnd(end) => {
                    assert_eq!(end.outcome, Ok(()));
                    ends.insert((end.span.slot, end.span.start_index), end.span.end_index);
                }
                ReadyItem::Marker(_) => {}
            }
        }
    }
    (ready, ends)
}

/// FEC set of each data shred index of the capture.
fn data_sets(records: &[Vec<u8>]) -> HashMap<u32, u32> {
    records
        .iter()
        .filter_map(|record| parse_shred(record, ParseOptions::default()).ok())
        .filter(|shred| shred.is_data())
        .map(|shred| (shred.index(), shred.fec_set_index()))
        .collect()
}

/// Receives until `wanted` holds, or panics at the deadline naming `what`.
async fn receive_until(
    updates: &mut mpsc::UnboundedReceiver<(Seen, ServerTiming)>,
    seen: &mut Vec<(Seen, ServerTiming)>,
    patience: Duration,
    what: &str,
    mut wanted: impl FnMut(&[(Seen, ServerTiming)]) -> bool,
) {
    let deadline = tokio::time::Instant::now() + patience;
    while !wanted(seen) {
        match tokio::time::timeout_at(deadline, updates.recv()).await {
            Ok(Some(update)) => seen.push(update),
            Ok(None) => panic!("the stream ended before {what}"),
            Err(_) => panic!("{what}: not within {patience:?} ({} updates)", seen.len()),
        }
    }
}

fn stamps(timing: &ServerTiming) -> [u64; 6] {
    [
        timing.first_read_unix_nanos,
        timing.capture_done_unix_nanos,
        timing.deshred_done_unix_nanos,
        timing.decode_done_unix_nanos,
        timing.publish_unix_nanos,
        timing.subscriber_recv_unix_nanos,
    ]
}

/// Holds back every shred of the FEC sets after the one completing an early DEX transaction of a
/// batch spanning several sets: that transaction must arrive, the batch's later ones must not
/// until the rest is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_arrives_before_its_batch_last_shred_is_sent() {
    let manifest = manifest();
    let mut chosen = None;
    for slot in manifest["slots"].as_array().unwrap() {
        let file = format!("slot-{}.full.bin", slot["slot"]);
        let records = records(&file);
        let (ready, ends) = ready_transactions(slot, &records);
        let sets = data_sets(&records);
        let early = ready.iter().find(|t| {
            let last = ends[&t.batch];
            sets[&t.completed_index] < sets[&last]
        });
        if let Some(early) = early.cloned() {
            chosen = Some((records, ready, sets, early));
            break;
        }
    }
    let (records, ready, sets, early) = chosen.expect("a fixture batch spanning several sets");
    let cut = sets[&early.completed_index];
    let (head, tail): (Vec<_>, Vec<_>) = records
        .into_iter()
        .partition(|record| peek_slot_and_fec_set(record).unwrap().1 <= cut);
    // The batch's transactions completed by held-back shreds.
    let late: Vec<&ReadyTx> = ready
        .iter()
        .filter(|t| t.batch == early.batch && sets[&t.completed_index] > cut)
        .collect();
    assert!(
        !tail.is_empty() && !late.is_empty(),
        "the batch continues after the cut"
    );

    let mut running = start(&[]).await;
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    send(&socket, &head, &[running.udp]);
    let mut seen = Vec::new();
    receive_until(
        &mut running.updates,
        &mut seen,
        Duration::from_secs(30),
        "the early transaction",
        |seen| seen.iter().any(|(s, _)| s.signature == early.signature),
    )
    .await;
    let (update, timing) = seen
        .iter()
        .find(|(s, _)| s.signature == early.signature)
        .unwrap();
    assert_eq!(
        (update.slot, u64::from(update.tx_index)),
        (early.batch.0, early.index_in_batch)
    );
    let stamps = stamps(timing);
    assert!(
        stamps[0] > 0 && stamps.windows(2).all(|pair| pair[0] <= pair[1]),
        "{stamps:?}"
    );
    for t in &late {
        assert!(
            !seen.iter().any(|(s, _)| s.signature == t.signature),
            "a transaction whose bytes were not sent was published"
        );
    }
    send(&socket, &tail, &[running.udp]);
    receive_until(
        &mut running.updates,
        &mut seen,
        Duration::from_secs(30),
        "the batch's later transactions",
        |seen| {
            late.iter()
                .all(|t| seen.iter().any(|(s, _)| s.signature == t.signature))
        },
    )
    .await;
}

/// A fixed permutation (xorshift), so a failure reproduces.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        items.swap(i, (seed % (i as u64 + 1)) as usize);
    }
}

/// The metric's value once it appears.
fn metric(http: SocketAddr, name: &str) -> Option<u64> {
    let (_, text) = http_get(http, "/metrics", &[]);
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

/// Waits until the appliance says it published `received` updates (every published update was
/// received, none is still on its way).
async fn settled(running: &mut Running, seen: &mut Vec<(Seen, ServerTiming)>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        while let Ok(update) = running.updates.try_recv() {
            seen.push(update);
        }
        let published = metric(running.http, "appliance_updates_published_total");
        if published == Some(seen.len() as u64) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "published {published:?}, received {}",
            seen.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Updates per batch, in arrival order: the batch of each signature from the library's view.
fn per_batch(
    seen: &[(Seen, ServerTiming)],
    batch_of: &HashMap<Vec<u8>, (u64, u32)>,
) -> BTreeMap<(u64, u32), Vec<Seen>> {
    let mut batches: BTreeMap<_, Vec<Seen>> = BTreeMap::new();
    for (update, _) in seen {
        let batch = batch_of
            .get(&update.signature)
            .expect("a published transaction of the fixtures");
        batches.entry(*batch).or_default().push(update.clone());
    }
    batches
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_and_batch_wise_publish_the_same_per_batch() {
    let manifest = manifest();
    let mut batch_of = HashMap::new();
    let mut orders: [Vec<Vec<u8>>; 3] = Default::default();
    for slot in manifest["slots"].as_array().unwrap() {
        let number = slot["slot"].as_u64().unwrap();
        let full = records(&format!("slot-{number}.full.bin"));
        let (ready, _) = ready_transactions(slot, &full);
        for t in ready {
            batch_of.insert(t.signature, t.batch);
        }
        let mut shuffled = full.clone();
        shuffle(&mut shuffled, number);
        orders[0].extend(full);
        orders[1].extend(shuffled);
        orders[2].extend(records(&format!("slot-{number}.bin")));
    }
    for (name, order) in ["emitted", "shuffled", "lossy"].iter().zip(&orders) {
        let mut incremental = start(&["--deshred", "incremental"]).await;
        let mut batch_wise = start(&["--deshred", "batch"]).await;
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        send(&socket, order, &[incremental.udp, batch_wise.udp]);
        let (mut got, mut expected) = (Vec::new(), Vec::new());
        settled(&mut batch_wise, &mut expected).await;
        settled(&mut incremental, &mut got).await;
        assert!(!expected.is_empty(), "{name}: nothing published");
        let distinct: HashSet<&Seen> = got.iter().map(|(s, _)| s).collect();
        assert_eq!(distinct.len(), got.len(), "{name}: an update twice");
        assert_eq!(
            per_batch(&got, &batch_of),
            per_batch(&expected, &batch_of),
            "{name} order"
        );
        for (_, timing) in &got {
            let stamps = stamps(timing);
            assert!(
                stamps.windows(2).all(|pair| pair[0] <= pair[1]),
                "{stamps:?}"
            );
        }
    }
}
