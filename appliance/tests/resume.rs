//! Resuming a stream (issue 22) through the real binary and real gRPC: a subscriber that
//! disconnects mid-stream and comes back with `from_slot` = the last slot it saw receives, in
//! union, exactly what an uninterrupted subscriber received (keyed by the origin's `sequence`), at
//! the embedded default's rate and at 20× it; `from_slot` older than the buffer is `OUT_OF_RANGE`
//! naming the oldest complete slot; one in the future starts live; a byte bound evicts and the
//! buffer stays within it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{SubscribeRequest, SubscribeUpdate, subscribe_update::Update};
use tokio_stream::StreamExt;
use tonic::Streaming;
use tonic::transport::Channel;

use process::{http_get, start_replay};

/// What identifies an update's content: its kind, slot and signature (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    kind: &'static str,
    slot: u64,
    signature: Vec<u8>,
}

fn seen(update: &SubscribeUpdate) -> Option<Seen> {
    let (kind, slot, signature) = match update.update.as_ref()? {
        Update::Transaction(tx) => ("transaction", tx.slot, tx.signature.clone()),
        Update::Delta(delta) => {
            let envelope = delta.envelope.as_ref()?;
            ("delta", envelope.slot, envelope.signature.clone())
        }
        Update::Slot(slot) => ("slot", slot.slot, Vec::new()),
        Update::Footer(footer) => ("footer", footer.slot, Vec::new()),
        Update::DuplicateBlock(duplicate) => ("duplicate", duplicate.slot, Vec::new()),
        Update::Pong(_) => return None,
    };
    Some(Seen {
        kind,
        slot,
        signature,
    })
}

async fn connect(grpc: SocketAddr) -> StreamClient<Channel> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match StreamClient::connect(format!("http://{grpc}")).await {
            Ok(client) => return client,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("no gRPC server on {grpc}: {error}"),
        }
    }
}

async fn subscribe(
    grpc: SocketAddr,
    from_slot: Option<u64>,
) -> Result<Streaming<SubscribeUpdate>, tonic::Status> {
    let request = SubscribeRequest {
        from_slot,
        ..Default::default()
    };
    let mut client = connect(grpc).await;
    let outbound = tokio_stream::iter([request]).chain(tokio_stream::pending());
    Ok(client.subscribe_decoded(outbound).await?.into_inner())
}

/// Reads `updates` for `duration` into `into` (sequence → content); returns the last slot seen.
async fn read_for(
    updates: &mut Streaming<SubscribeUpdate>,
    duration: Duration,
    into: &mut Vec<(u64, Seen)>,
) -> u64 {
    let deadline = tokio::time::Instant::now() + duration;
    let mut last_slot = 0;
    while let Ok(next) = tokio::time::timeout_at(deadline, updates.next()).await {
        let update = next.expect("the stream ended").expect("a stream error");
        if let Some(content) = seen(&update) {
            assert_ne!(update.sequence, 0, "every published update is numbered");
            last_slot = content.slot;
            into.push((update.sequence, content));
        }
    }
    last_slot
}

/// The uninterrupted subscriber and the one that reconnects see the same updates. The replay's
/// slots are short (two small fixture slots renumbered: ~14 slots/s at 5,000 shreds/s, ~280
/// at 100,000), so the buffer is given about 30 s of slots at that pace.
async fn resume_loses_and_repeats_nothing(rate: &str, recent_slots: &str) {
    let data = tempfile::tempdir().unwrap();
    let (_appliance, grpc, _http) = start_replay(
        &["--replay-rate", rate, "--recent-slots", recent_slots],
        data.path(),
    );
    let mut steady = subscribe(grpc, None).await.unwrap();
    let mut steady_seen = Vec::new();
    // The steady subscriber is running before the other starts (a loaded host may take a few
    // seconds to start the replay).
    let started = Instant::now();
    while steady_seen.is_empty() && started.elapsed() < Duration::from_secs(10) {
        read_for(&mut steady, Duration::from_millis(500), &mut steady_seen).await;
    }
    assert!(
        !steady_seen.is_empty(),
        "nothing streamed at {rate} shreds/s"
    );
    let steady_task = tokio::spawn(async move {
        let mut more = Vec::new();
        read_for(&mut steady, Duration::from_secs(6), &mut more).await;
        more
    });

    let mut before = Vec::new();
    let mut first = subscribe(grpc, None).await.unwrap();
    let last_slot = read_for(&mut first, Duration::from_secs(2), &mut before).await;
    drop(first);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let mut after = Vec::new();
    let mut resumed = subscribe(grpc, Some(last_slot)).await.unwrap();
    read_for(&mut resumed, Duration::from_secs(2), &mut after).await;
    steady_seen.extend(steady_task.await.unwrap());

    let start = before.first().unwrap().0;
    let end = after.last().unwrap().0.min(steady_seen.last().unwrap().0);
    let steady: BTreeMap<u64, Seen> = steady_seen
        .into_iter()
        .filter(|(sequence, _)| (start..=end).contains(sequence))
        .collect();
    let mut union: BTreeMap<u64, Seen> = BTreeMap::new();
    let mut repeats = 0;
    for (sequence, content) in before.iter().chain(&after) {
        if !(start..=end).contains(sequence) {
            continue;
        }
        if let Some(earlier) = union.insert(*sequence, content.clone()) {
            assert_eq!(&earlier, content, "sequence {sequence} named two updates");
            assert!(
                content.slot >= last_slot,
                "only the slot asked for again (and later) repeats"
            );
            repeats += 1;
        }
    }
    let gap: Vec<&u64> = steady.keys().filter(|s| !union.contains_key(s)).collect();
    assert!(
        gap.is_empty(),
        "{} updates the steady subscriber got were missed across the reconnect (rate {rate}): {:?}",
        gap.len(),
        &gap[..gap.len().min(10)]
    );
    assert_eq!(union, steady, "the resumed union differs (rate {rate})");
    let repeated_in_after = {
        let mut ordered: Vec<u64> = after.iter().map(|(sequence, _)| *sequence).collect();
        let len = ordered.len();
        ordered.dedup();
        len - ordered.len()
    };
    assert_eq!(
        repeated_in_after, 0,
        "the resumed stream itself repeats nothing"
    );
    eprintln!(
        "rate {rate}: {} updates compared, {} before the cut, {} after it (from slot {last_slot}), {repeats} repeats of the asked slot",
        steady.len(),
        before.len(),
        after.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_subscriber_misses_nothing_at_the_embedded_rate() {
    resume_loses_and_repeats_nothing("5000", "420").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_subscriber_misses_nothing_at_twenty_times_the_rate() {
    resume_loses_and_repeats_nothing("100000", "8400").await;
}

fn metric(http: SocketAddr, name: &str) -> u64 {
    let (_, body) = http_get(http, "/metrics", &[]);
    body.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} missing"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_slot_older_than_the_buffer_is_out_of_range_and_a_future_one_starts_live() {
    let data = tempfile::tempdir().unwrap();
    let (_appliance, grpc, http) = start_replay(
        &["--replay-rate", "20000", "--recent-slots", "3"],
        data.path(),
    );
    let mut watcher = subscribe(grpc, None).await.unwrap();
    let mut seen = Vec::new();
    let first_slot = loop {
        read_for(&mut watcher, Duration::from_millis(200), &mut seen).await;
        if let Some((_, first)) = seen.first() {
            break first.slot;
        }
    };
    while seen.last().unwrap().1.slot < first_slot + 6 {
        read_for(&mut watcher, Duration::from_millis(200), &mut seen).await;
    }
    let status = match subscribe(grpc, Some(first_slot)).await {
        Err(status) => status,
        Ok(mut updates) => updates
            .next()
            .await
            .expect("an answer")
            .expect_err("from_slot older than the buffer must fail"),
    };
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
    assert!(
        status
            .message()
            .contains("the oldest slot whose updates are all kept is"),
        "{}",
        status.message()
    );
    // For programs (a relay resumes from there): the slot the message names, as a trailer.
    let oldest: u64 = status
        .metadata()
        .get("x-resume-oldest-slot")
        .expect("the x-resume-oldest-slot trailer")
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(oldest > first_slot, "oldest complete {oldest}");
    assert!(
        status.message().ends_with(&format!("is {oldest}")),
        "{}",
        status.message()
    );
    assert_eq!(metric(http, "appliance_resume_refused_total "), 1);
    assert!(metric(http, "appliance_resume_buffer_slots ") <= 3);

    let mut future = subscribe(grpc, Some(u64::MAX / 2)).await.unwrap();
    let mut live = Vec::new();
    read_for(&mut future, Duration::from_secs(1), &mut live).await;
    assert!(!live.is_empty(), "a future from_slot streams live");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_byte_bound_evicts_and_holds() {
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("appliance.toml");
    std::fs::write(&config, "[grpc]\nrecent_bytes = 1048576\n").unwrap();
    let (_appliance, grpc, http) = start_replay(
        &[
            "--replay-rate",
            "20000",
            "--config",
            config.to_str().unwrap(),
        ],
        data.path(),
    );
    let mut watcher = subscribe(grpc, None).await.unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Read at least once: under load the bound may evict before the first look.
    while seen.is_empty() || metric(http, "appliance_resume_evicted_updates_total ") == 0 {
        assert!(
            Instant::now() < deadline,
            "nothing evicted under a 1 MiB bound"
        );
        read_for(&mut watcher, Duration::from_millis(200), &mut seen).await;
    }
    let bytes = metric(http, "appliance_resume_buffer_bytes ");
    assert!(bytes <= 1 << 20, "{bytes} bytes buffered");
    let oldest = metric(http, "appliance_resume_buffer_oldest_slot ");
    // Resuming from the newest slot still works under the bound.
    let newest = seen.last().unwrap().1.slot.max(oldest + 1);
    let mut resumed = subscribe(grpc, Some(newest)).await.unwrap();
    let mut again = Vec::new();
    read_for(&mut resumed, Duration::from_millis(500), &mut again).await;
    assert!(!again.is_empty());
}
