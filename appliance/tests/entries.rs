//! The shredstream proxy's `SubscribeEntries` (issue 26) through the real binary and a real
//! tonic client of `shredstream.ShredstreamProxy`: every fixture slot is sent lossy and shuffled
//! (recovery needed); each completed entry batch arrives once, its bytes exactly the reference
//! batch (length from the manifest), and decoded as a shredstream client decodes them (bincode 1
//! into `Vec<Entry>` with the official hash and transaction types) it holds the manifest's
//! entries. A `SubscribeDecoded` subscriber beside it gets no transaction the entries lack.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use stream_proto::shredstream::SubscribeEntriesRequest;
use stream_proto::shredstream::shredstream_proxy_client::ShredstreamProxyClient;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{SubscribeRequest, subscribe_update::Update};
use tokio_stream::StreamExt;

use process::{free_tcp_address, free_udp_address, http_get, send_capture, start_on};

/// `solana_entry::entry::Entry`'s serde layout.
#[derive(Deserialize)]
struct Entry {
    num_hashes: u64,
    hash: solana_hash::Hash,
    transactions: Vec<solana_transaction::versioned::VersionedTransaction>,
}

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures/shreds")
        .join(relative)
}

/// (num_hashes, hash, signatures) of a manifest entry.
fn manifest_entry(entry: &Value) -> (u64, String, Vec<String>) {
    (
        entry["num_hashes"].as_u64().unwrap(),
        entry["hash"].as_str().unwrap().to_owned(),
        entry["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tx| tx["signature"].as_str().unwrap().to_owned())
            .collect(),
    )
}

fn decoded_entry(entry: &Entry) -> (u64, String, Vec<String>) {
    (
        entry.num_hashes,
        entry.hash.to_string(),
        entry
            .transactions
            .iter()
            .map(|tx| tx.signatures[0].to_string())
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_completed_batch_arrives_once_exactly_as_the_reference_has_it() {
    entries_match_the_reference(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_batch_wise_path_sends_the_same_batches() {
    entries_match_the_reference(&["--deshred", "batch"]).await;
}

/// One appliance (`extra` flags) fed every fixture slot, with both subscribers.
async fn entries_match_the_reference(extra: &[&str]) {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixture("manifest.json")).unwrap()).unwrap();
    let slots = manifest["slots"].as_array().unwrap();
    let udp = free_udp_address();
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let udp_flag = udp.to_string();
    let flags: Vec<&str> = ["--udp", udp_flag.as_str()]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    let _appliance = start_on(grpc, http, &flags, &process::scratch_data_dir());
    let deadline = Instant::now() + Duration::from_secs(30);
    let channel = loop {
        match tonic::transport::Channel::from_shared(format!("http://{grpc}"))
            .unwrap()
            .connect()
            .await
        {
            Ok(channel) => break channel,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("no gRPC server on {grpc}: {error}"),
        }
    };
    let mut batches = ShredstreamProxyClient::new(channel.clone())
        .subscribe_entries(SubscribeEntriesRequest {})
        .await
        .unwrap()
        .into_inner();
    let request = SubscribeRequest::default();
    let mut decoded = StreamClient::new(channel)
        .subscribe_decoded(tokio_stream::iter([request]).chain(tokio_stream::pending()))
        .await
        .unwrap()
        .into_inner();

    let sends: Vec<PathBuf> = slots
        .iter()
        .map(|slot| fixture(slot["files"]["lossy"].as_str().unwrap()))
        .collect();
    let sender = std::thread::spawn(move || {
        for capture in &sends {
            send_capture(udp, capture);
        }
    });
    let expected_batches: usize = slots
        .iter()
        .map(|slot| slot["batches"].as_array().unwrap().len())
        .sum();
    let mut received: Vec<(u64, Vec<u8>)> = Vec::new();
    while received.len() < expected_batches {
        let next = tokio::time::timeout(Duration::from_secs(20), batches.next()).await;
        let Ok(Some(batch)) = next else { break };
        let batch = batch.unwrap();
        received.push((batch.slot, batch.entries.to_vec()));
    }
    sender.join().unwrap();

    // Every reference batch once, by (slot, first entry's hash).
    let mut by_start: HashMap<(u64, String), Vec<u8>> = HashMap::new();
    for (slot, bytes) in &received {
        let entries: Vec<Entry> = bincode::deserialize(bytes).expect("a bincode Vec<Entry>");
        let first = entries
            .first()
            .expect("a batch has entries")
            .hash
            .to_string();
        assert!(
            by_start.insert((*slot, first), bytes.clone()).is_none(),
            "a batch of slot {slot} arrived twice"
        );
    }
    let mut signatures = HashSet::new();
    for slot in slots {
        let number = slot["slot"].as_u64().unwrap();
        let entries = slot["entries"].as_array().unwrap();
        for batch in slot["batches"].as_array().unwrap() {
            let first = batch["first_entry"].as_u64().unwrap() as usize;
            let count = batch["num_entries"].as_u64().unwrap() as usize;
            let start = entries[first]["hash"].as_str().unwrap().to_owned();
            let bytes = by_start
                .get(&(number, start))
                .unwrap_or_else(|| panic!("slot {number}: batch at entry {first} never arrived"));
            assert_eq!(
                bytes.len() as u64,
                batch["serialized_len"].as_u64().unwrap(),
                "slot {number}, batch at entry {first}: not the batch's bytes"
            );
            let got: Vec<Entry> = bincode::deserialize(bytes).unwrap();
            let got: Vec<_> = got.iter().map(decoded_entry).collect();
            let want: Vec<_> = entries[first..first + count]
                .iter()
                .map(manifest_entry)
                .collect();
            assert_eq!(got, want, "slot {number}, batch at entry {first}");
            signatures.extend(want.into_iter().flat_map(|(_, _, sigs)| sigs));
        }
    }
    assert_eq!(
        received.len(),
        expected_batches,
        "no batch beyond the reference"
    );

    // The decoded stream beside it: each of its transactions is in the entries.
    let mut streamed = 0;
    while let Ok(Some(update)) =
        tokio::time::timeout(Duration::from_millis(500), decoded.next()).await
    {
        if let Some(Update::Transaction(transaction)) = update.unwrap().update {
            let signature = bs58::encode(&transaction.signature).into_string();
            assert!(
                signatures.contains(&signature),
                "{signature} not in the entries"
            );
            streamed += 1;
        }
    }
    assert!(streamed > 0, "the decoded stream published nothing");
    let (_, metrics) = http_get(http, "/metrics", &[]);
    assert!(
        metrics.contains(&format!(
            "appliance_entries_batches_published_total {expected_batches}"
        )),
        "{}",
        metrics
            .lines()
            .filter(|line| line.starts_with("appliance_entries"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
