//! Yellowstone's `geyser.Geyser/SubscribeDeshred` (issue 26) through the real binary and
//! Yellowstone's published Rust client (`yellowstone-grpc-client`): every fixture slot is sent
//! lossy (recovery needed) with the fixtures' lookup tables served by the stand-in cluster. Every
//! reference transaction arrives exactly once, its signatures and message field for field as the
//! official SDK deserialises the reference bytes, its vote flag as the reference has it, its
//! loaded addresses as the tables give them and its data set's shred range as the manifest's
//! batch; named filters (vote flag, an address only lookup tables load) match exactly the
//! transactions they should; slot updates, pong, `Ping`, `GetVersion`, `GetSlot` and health
//! answer; a bad key ends the stream with `INVALID_ARGUMENT`. A `SubscribeDecoded` subscriber
//! beside it gets no transaction the deshred stream lacks, and neither drops anything.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod fixture_tables;
mod process;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::SinkExt;
use serde_json::Value;
use solana_transaction::versioned::VersionedTransaction;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{SubscribeRequest, subscribe_update::Update};
use testkit::cluster_rpc::{ClusterStandin, ClusterState};
use tokio_stream::StreamExt;
use yellowstone_grpc_client::GeyserGrpcClient;
use yellowstone_grpc_proto::geyser::subscribe_update_deshred::UpdateOneof;
use yellowstone_grpc_proto::geyser::{
    SlotStatus, SubscribeDeshredRequest, SubscribeRequestFilterDeshredTransactions,
    SubscribeRequestFilterSlots, SubscribeRequestPing, SubscribeUpdateDeshredTransactionInfo,
};

use process::{http_get, metric_value, send_capture, start_appliance, wait_for_metric};

use fixture_tables::{Key, table_account};

/// The manifest's lookup tables by address.
fn tables(manifest: &Value) -> HashMap<Key, Vec<Key>> {
    fixture_tables::tables(manifest).into_iter().collect()
}

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures/shreds")
        .join(relative)
}

/// One reference transaction.
struct Reference {
    transaction: VersionedTransaction,
    is_vote: bool,
    slot: u64,
    /// The manifest batch's data shreds: first index, last index + 1.
    data_set: (u32, u32),
    loaded_writable: Vec<Key>,
    loaded_readonly: Vec<Key>,
}

impl Reference {
    fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.transaction
            .message
            .static_account_keys()
            .iter()
            .map(|key| key.to_bytes())
            .chain(self.loaded_writable.iter().copied())
            .chain(self.loaded_readonly.iter().copied())
    }
}

/// Signature → reference, from the manifest (the SDK deserialises each transaction's bytes).
fn references(manifest: &Value, tables: &HashMap<Key, Vec<Key>>) -> HashMap<Vec<u8>, Reference> {
    use base64::Engine;
    let mut out = HashMap::new();
    for slot in manifest["slots"].as_array().unwrap() {
        let entries = slot["entries"].as_array().unwrap();
        for batch in slot["batches"].as_array().unwrap() {
            let first = batch["first_entry"].as_u64().unwrap() as usize;
            let count = batch["num_entries"].as_u64().unwrap() as usize;
            let data_set = (
                batch["first_data_index"].as_u64().unwrap() as u32,
                batch["last_data_index"].as_u64().unwrap() as u32 + 1,
            );
            for tx in entries[first..first + count]
                .iter()
                .flat_map(|entry| entry["transactions"].as_array().unwrap())
            {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(tx["bytes"].as_str().unwrap())
                    .unwrap();
                let transaction: VersionedTransaction = bincode::deserialize(&bytes).unwrap();
                let (mut loaded_writable, mut loaded_readonly) = (Vec::new(), Vec::new());
                for lookup in transaction.message.address_table_lookups().unwrap_or(&[]) {
                    let table = &tables[&lookup.account_key.to_bytes()];
                    let pick = |index: &u8| table[usize::from(*index)];
                    loaded_writable.extend(lookup.writable_indexes.iter().map(pick));
                    loaded_readonly.extend(lookup.readonly_indexes.iter().map(pick));
                }
                let reference = Reference {
                    is_vote: tx["kind"] == "vote",
                    slot: slot["slot"].as_u64().unwrap(),
                    data_set,
                    loaded_writable,
                    loaded_readonly,
                    transaction,
                };
                let signature = reference.transaction.signatures[0].as_ref().to_vec();
                out.insert(signature, reference);
            }
        }
    }
    out
}

/// The address the most transactions load through a table without naming it as a static key
/// (so only loaded addresses can match them).
fn loaded_only_address(references: &HashMap<Vec<u8>, Reference>) -> Key {
    let mut counts: HashMap<Key, usize> = HashMap::new();
    for reference in references.values() {
        let message = &reference.transaction.message;
        let statics: HashSet<Key> = message
            .static_account_keys()
            .iter()
            .map(|k| k.to_bytes())
            .collect();
        let loaded: HashSet<Key> = reference
            .loaded_writable
            .iter()
            .chain(&reference.loaded_readonly)
            .copied()
            .collect();
        for address in loaded.into_iter().filter(|a| !statics.contains(a)) {
            *counts.entry(address).or_default() += 1;
        }
    }
    let (address, _) = counts
        .into_iter()
        .max_by_key(|(address, count)| (*count, *address))
        .expect("the fixtures load some address through tables");
    address
}

/// The stand-in cluster serving the tables, and a configuration preloading them.
fn cluster(tables: &HashMap<Key, Vec<Key>>, dir: &Path) -> (ClusterStandin, PathBuf) {
    let mut state = ClusterState::new(432_000, 361_200_010);
    for (address, addresses) in tables {
        state.accounts.insert(
            bs58::encode(address).into_string(),
            table_account(addresses),
        );
    }
    let list: String = tables
        .keys()
        .map(|table| format!("{}\n", bs58::encode(table).into_string()))
        .collect();
    let list_path = dir.join("preload.txt");
    std::fs::write(&list_path, list).unwrap();
    let config = dir.join("appliance.toml");
    let text = format!(
        "[lookup_tables]\npreload = {:?}\n",
        list_path.display().to_string()
    );
    std::fs::write(&config, text).unwrap();
    (ClusterStandin::start(state).unwrap(), config)
}

fn filter(vote: Option<bool>, include: &[Key]) -> SubscribeRequestFilterDeshredTransactions {
    SubscribeRequestFilterDeshredTransactions {
        vote,
        account_include: include
            .iter()
            .map(|k| bs58::encode(k).into_string())
            .collect(),
        ..Default::default()
    }
}

/// The received transaction equals the reference, field for field.
fn assert_same(info: &SubscribeUpdateDeshredTransactionInfo, reference: &Reference) {
    let expected = &reference.transaction;
    let got = info.transaction.as_ref().unwrap();
    let signatures: Vec<&[u8]> = expected.signatures.iter().map(|s| s.as_ref()).collect();
    assert_eq!(
        got.signatures.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        signatures
    );
    assert_eq!(info.signature, signatures[0]);
    let message = got.message.as_ref().unwrap();
    let header = message.header.as_ref().unwrap();
    let want = expected.message.header();
    assert_eq!(
        (
            header.num_required_signatures,
            header.num_readonly_signed_accounts,
            header.num_readonly_unsigned_accounts
        ),
        (
            u32::from(want.num_required_signatures),
            u32::from(want.num_readonly_signed_accounts),
            u32::from(want.num_readonly_unsigned_accounts)
        )
    );
    let keys: Vec<Vec<u8>> = expected
        .message
        .static_account_keys()
        .iter()
        .map(|k| k.to_bytes().to_vec())
        .collect();
    assert_eq!(message.account_keys, keys);
    assert_eq!(
        message.recent_blockhash,
        expected.message.recent_blockhash().as_ref()
    );
    let instructions: Vec<(u32, &[u8], &[u8])> = expected
        .message
        .instructions()
        .iter()
        .map(|i| (u32::from(i.program_id_index), &i.accounts[..], &i.data[..]))
        .collect();
    let got_instructions: Vec<(u32, &[u8], &[u8])> = message
        .instructions
        .iter()
        .map(|i| (i.program_id_index, &i.accounts[..], &i.data[..]))
        .collect();
    assert_eq!(got_instructions, instructions);
    let lookups = expected.message.address_table_lookups().unwrap_or(&[]);
    assert_eq!(
        message.versioned,
        expected.message.address_table_lookups().is_some()
    );
    let want_lookups: Vec<(Vec<u8>, &[u8], &[u8])> = lookups
        .iter()
        .map(|l| {
            (
                l.account_key.to_bytes().to_vec(),
                &l.writable_indexes[..],
                &l.readonly_indexes[..],
            )
        })
        .collect();
    let got_lookups: Vec<(Vec<u8>, &[u8], &[u8])> = message
        .address_table_lookups
        .iter()
        .map(|l| {
            (
                l.account_key.clone(),
                &l.writable_indexes[..],
                &l.readonly_indexes[..],
            )
        })
        .collect();
    assert_eq!(got_lookups, want_lookups);
    assert_eq!(info.is_vote, reference.is_vote, "vote flag");
    let as_keys = |addresses: &[Vec<u8>]| -> Vec<Key> {
        addresses
            .iter()
            .map(|a| a.as_slice().try_into().unwrap())
            .collect()
    };
    assert_eq!(
        as_keys(&info.loaded_writable_addresses),
        reference.loaded_writable
    );
    assert_eq!(
        as_keys(&info.loaded_readonly_addresses),
        reference.loaded_readonly
    );
    assert_eq!(
        (
            info.completed_data_set_starting_shred_index,
            info.completed_data_set_ending_shred_index_exclusive
        ),
        reference.data_set
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_transaction_arrives_once_as_the_reference_has_it_through_the_published_client() {
    deshred_matches_the_reference(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_batch_wise_path_sends_the_same_transactions() {
    deshred_matches_the_reference(&["--deshred", "batch"]).await;
}

/// One appliance (`extra` flags) fed every fixture slot, with both subscribers.
async fn deshred_matches_the_reference(extra: &[&str]) {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixture("manifest.json")).unwrap()).unwrap();
    let tables = tables(&manifest);
    let references = references(&manifest, &tables);
    let loaded_only = loaded_only_address(&references);
    let data = tempfile::tempdir().unwrap();
    let (standin, config) = cluster(&tables, data.path());
    let config = config.display().to_string();
    let flags = ["--trust-feed", "--rpc", &standin.url(), "--config", &config];
    let running = start_appliance(&[&flags[..], extra].concat(), data.path());
    wait_for_metric(running.http, "appliance_lookup_tables_cached ", |n| {
        n == tables.len() as u64
    });

    let mut client = GeyserGrpcClient::build_from_shared(format!("http://{}", running.grpc))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let health = client.health_check().await.unwrap();
    assert_eq!(health.status, 1, "geyser.Geyser SERVING");
    assert_eq!(client.ping(7).await.unwrap().count, 7);
    let version: Value =
        serde_json::from_str(&client.get_version().await.unwrap().version).unwrap();
    assert_eq!(version["version"]["package"], "appliance");
    let refused = client
        .get_latest_blockhash(None)
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("shred appliance"), "{refused}");

    let request = SubscribeDeshredRequest {
        deshred_transactions: [
            ("all".to_owned(), filter(None, &[])),
            ("novote".to_owned(), filter(Some(false), &[])),
            ("loaded".to_owned(), filter(None, &[loaded_only])),
        ]
        .into_iter()
        .collect(),
        slots: [(
            "interslot".to_owned(),
            SubscribeRequestFilterSlots {
                interslot_updates: Some(true),
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        ping: None,
    };
    let (mut sink, mut deshred) = client
        .subscribe_deshred_with_request(Some(request))
        .await
        .unwrap();
    sink.send(SubscribeDeshredRequest {
        ping: Some(SubscribeRequestPing { id: 9 }),
        ..Default::default()
    })
    .await
    .unwrap();
    let channel = tonic::transport::Channel::from_shared(format!("http://{}", running.grpc))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut decoded = StreamClient::new(channel)
        .subscribe_decoded(
            tokio_stream::iter([SubscribeRequest::default()]).chain(tokio_stream::pending()),
        )
        .await
        .unwrap()
        .into_inner();

    let slots = manifest["slots"].as_array().unwrap();
    let sends: Vec<PathBuf> = slots
        .iter()
        .map(|slot| fixture(slot["files"]["lossy"].as_str().unwrap()))
        .collect();
    let udp = running.udp;
    let sender = std::thread::spawn(move || {
        for capture in &sends {
            send_capture(udp, capture);
        }
    });

    let mut received: HashMap<Vec<u8>, usize> = HashMap::new();
    let (mut first_shreds, mut completed) = (HashSet::new(), HashSet::new());
    let mut pong = false;
    while received.len() < references.len() {
        let next = tokio::time::timeout(Duration::from_secs(20), deshred.next()).await;
        let Ok(Some(update)) = next else { break };
        let update = update.unwrap();
        match update.update_oneof.unwrap() {
            UpdateOneof::DeshredTransaction(tx) => {
                let info = tx.transaction.unwrap();
                let reference = references
                    .get(&info.signature)
                    .expect("a transaction the reference lacks");
                assert_eq!(tx.slot, reference.slot);
                assert_same(&info, reference);
                let mut want = vec!["all"];
                if reference.keys().any(|key| key == loaded_only) {
                    want.push("loaded");
                }
                if !reference.is_vote {
                    want.push("novote");
                }
                assert_eq!(update.filters, want);
                assert!(update.created_at.is_some());
                *received.entry(info.signature).or_default() += 1;
            }
            UpdateOneof::Slot(slot) => {
                assert_eq!(update.filters, ["interslot"]);
                match SlotStatus::try_from(slot.status).unwrap() {
                    SlotStatus::SlotFirstShredReceived => first_shreds.insert(slot.slot),
                    SlotStatus::SlotCompleted => completed.insert(slot.slot),
                    other => panic!("a status shreds cannot tell: {other:?}"),
                };
            }
            UpdateOneof::Pong(answer) => {
                assert_eq!(answer.id, 9);
                pong = true;
            }
            UpdateOneof::Ping(_) => {}
        }
    }
    sender.join().unwrap();
    assert_eq!(received.len(), references.len(), "transactions missing");
    assert!(
        received.values().all(|&n| n == 1),
        "a transaction arrived twice"
    );
    assert!(pong, "no pong");
    let loaded_matches = references
        .values()
        .filter(|r| r.keys().any(|key| key == loaded_only))
        .count();
    assert!(loaded_matches > 0);
    let manifest_slots: HashSet<u64> = slots.iter().map(|s| s["slot"].as_u64().unwrap()).collect();
    assert_eq!(first_shreds, manifest_slots, "first-shred slot updates");
    let ended: HashSet<u64> = slots
        .iter()
        .filter(|s| {
            s["batches"]
                .as_array()
                .unwrap()
                .iter()
                .any(|b| b["is_last_in_slot"] == true)
        })
        .map(|s| s["slot"].as_u64().unwrap())
        .collect();
    assert_eq!(completed, ended, "completed slot updates");
    let highest = client.get_slot(None).await.unwrap().slot;
    assert_eq!(Some(highest), manifest_slots.iter().max().copied());

    // The decoded stream beside it: each of its transactions came through the deshred stream.
    let mut streamed = 0;
    while let Ok(Some(update)) =
        tokio::time::timeout(Duration::from_millis(500), decoded.next()).await
    {
        if let Some(Update::Transaction(transaction)) = update.unwrap().update {
            assert!(
                received.contains_key(&transaction.signature),
                "a decoded transaction the deshred stream lacks"
            );
            streamed += 1;
        }
    }
    assert!(streamed > 0, "the decoded stream published nothing");
    for dropped in [
        "appliance_deshred_updates_dropped_total",
        "appliance_stream_updates_dropped_total",
    ] {
        assert_eq!(metric_value(running.http, dropped), Some(0), "{dropped}");
    }
    assert_eq!(
        metric_value(
            running.http,
            "appliance_deshred_transactions_published_total"
        ),
        Some(references.len() as u64)
    );

    // A bad key ends a session with INVALID_ARGUMENT naming it.
    let bad = SubscribeDeshredRequest {
        deshred_transactions: [(
            "mine".to_owned(),
            SubscribeRequestFilterDeshredTransactions {
                account_include: vec!["not-a-key".to_owned()],
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let mut refused = client.subscribe_deshred_once(bad).await.unwrap();
    let status = loop {
        match tokio::time::timeout(Duration::from_secs(10), refused.next())
            .await
            .unwrap()
        {
            Some(Ok(_)) => continue,
            Some(Err(status)) => break status,
            None => panic!("the stream ended without a status"),
        }
    };
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(
        status.message().contains("not-a-key"),
        "{}",
        status.message()
    );
    let (_, metrics) = http_get(running.http, "/metrics", &[]);
    assert!(metrics.contains("appliance_deshred_requests_refused_total 1"));
}
