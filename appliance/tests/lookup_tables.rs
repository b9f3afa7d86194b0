//! Address lookup tables end to end through the real process (issue 20, docs/lookup-tables.md):
//! the fixture shreds over UDP, the tables of the fixtures' manifest served as real account data
//! by the stand-in cluster JSON-RPC, updates over gRPC. Every published v0 transaction's loaded
//! addresses equal the reference computed here from the manifest, and an account filter on a
//! loaded-only address matches; tables the cluster cannot give (absent, another owner, malformed
//! data, RPC down) leave their transactions published unresolved and counted; a restart resolves
//! from the persisted cache without any RPC; tables created and extended through the stream alone
//! (shreds made by `testkit::shredder`) resolve later slots provisionally, an extension only from
//! the slot after it; a flood of distinct tables behind a slow cluster keeps the fetch queue and
//! the cache within their configured bounds.
//!
//! Trust: `--trust-feed` (the leader schedule's own tests cover verification), so `--rpc` serves
//! the lookup tables only.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod fixture_tables;
mod process;
mod table_transactions;

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use decoder::transaction::{LookupView, parse_transaction_exact};
use serde_json::Value;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{
    DecodedTransaction, LookupStatus, ProgramFilter, SubscribeRequest, subscribe_update::Update,
};
use testkit::cluster_rpc::{Behavior, ClusterStandin, ClusterState, StandinAccount};
use testkit::shredder::{Entry, Shredder, entry_batch};
use tokio_stream::StreamExt;

use process::{Running, http_get, send_paced as send, start_appliance};

use fixture_tables::{Key, table_account, tables};

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures")
        .join(relative)
}

fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(fixture("shreds/manifest.json")).unwrap()).unwrap()
}

/// One fixture transaction: its wire bytes and whether it calls a supported program.
struct FixtureTx {
    bytes: Vec<u8>,
    published: bool,
}

/// Signature → transaction, every slot.
fn transactions(manifest: &Value) -> HashMap<Vec<u8>, FixtureTx> {
    use base64::Engine;
    let mut out = HashMap::new();
    for slot in manifest["slots"].as_array().unwrap() {
        for tx in slot["entries"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|entry| entry["transactions"].as_array().unwrap())
        {
            let signature = bs58::decode(tx["signature"].as_str().unwrap())
                .into_vec()
                .unwrap();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(tx["bytes"].as_str().unwrap())
                .unwrap();
            let published = tx["anchor_calls"].as_array().is_some_and(|c| !c.is_empty());
            out.insert(signature, FixtureTx { bytes, published });
        }
    }
    out
}

/// The reference: the runtime's loaded addresses (writable of every lookup, then read-only),
/// `None` for a lookup whose table is not in `known`.
fn reference(bytes: &[u8], known: &HashMap<Key, Vec<Key>>) -> (Vec<Option<Key>>, Vec<Option<Key>>) {
    let transaction = parse_transaction_exact(bytes).unwrap();
    let (mut writable, mut readonly) = (Vec::new(), Vec::new());
    for lookup in transaction.address_table_lookups() {
        let table = known.get(lookup.table);
        let pick = |index: &u8| table.map(|addresses| addresses[usize::from(*index)]);
        writable.extend(lookup.writable_indices.iter().map(pick));
        readonly.extend(lookup.readonly_indices.iter().map(pick));
    }
    (writable, readonly)
}

/// Every published v0 transaction of the fixtures (1,041) arrived with `status` and the loaded
/// addresses the reference computes from the `known` tables.
fn assert_v0_loaded(
    fixtures: &HashMap<Vec<u8>, FixtureTx>,
    received: &HashMap<Vec<u8>, DecodedTransaction>,
    known: &HashMap<Key, Vec<Key>>,
    status: LookupStatus,
) {
    let mut v0 = 0;
    for (signature, tx) in fixtures.iter().filter(|(_, tx)| tx.published) {
        let envelope = received
            .get(signature)
            .expect("a published transaction missing");
        if envelope.uses_lookup_tables {
            v0 += 1;
            assert_eq!(envelope.lookup_status, status as i32);
            let (writable, readonly) = reference(&tx.bytes, known);
            assert_eq!(as_keys(&envelope.loaded_writable_addresses), writable);
            assert_eq!(as_keys(&envelope.loaded_readonly_addresses), readonly);
        }
    }
    assert_eq!(v0, 1041);
}

fn as_keys(addresses: &[Vec<u8>]) -> Vec<Option<Key>> {
    addresses
        .iter()
        .map(|bytes| Key::try_from(bytes.as_slice()).ok())
        .collect()
}

/// The stand-in serving `accounts` at a slot after the fixtures'.
fn cluster(accounts: Vec<(Key, StandinAccount)>) -> ClusterStandin {
    let mut state = ClusterState::new(432_000, 361_200_010);
    for (address, account) in accounts {
        state
            .accounts
            .insert(bs58::encode(address).into_string(), account);
    }
    ClusterStandin::start(state).unwrap()
}

fn every_slot(manifest: &Value) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for slot in manifest["slots"].as_array().unwrap() {
        let file = slot["files"]["full"].as_str().unwrap();
        let bytes = std::fs::read(fixture(&format!("shreds/{file}"))).unwrap();
        out.extend(capture::framing::records(&bytes).map(|r| r.unwrap().payload.to_vec()));
    }
    out
}

/// The appliance with `--trust-feed`, the data directory and `extra` flags.
fn start(extra: &[&str], data_dir: &Path) -> Running {
    start_appliance(&[&["--trust-feed"], extra].concat(), data_dir)
}

/// A configuration file preloading `tables`.
fn preload_config(dir: &Path, tables: &[Key]) -> PathBuf {
    let list: String = tables
        .iter()
        .map(|table| format!("{}\n", bs58::encode(table).into_string()))
        .collect();
    let list_path = dir.join("preload.txt");
    std::fs::write(&list_path, format!("# fixture tables\n{list}")).unwrap();
    let config = dir.join("appliance.toml");
    std::fs::write(
        &config,
        format!(
            "[lookup_tables]\npreload = {:?}\n",
            list_path.display().to_string()
        ),
    )
    .unwrap();
    config
}

/// The `/metrics` text once the server answers.
fn metrics(http: SocketAddr) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if std::net::TcpStream::connect(http).is_ok() {
            let (status, body) = http_get(http, "/metrics", &[]);
            if status == 200 {
                return body;
            }
        }
        assert!(Instant::now() < deadline, "no /metrics");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The value of the `/metrics` line starting with `prefix` (0 when absent).
fn metric(http: SocketAddr, prefix: &str) -> u64 {
    metrics(http)
        .lines()
        .find(|line| line.starts_with(prefix))
        .map_or(0, |line| line.rsplit(' ').next().unwrap().parse().unwrap())
}

/// Waits until `prefix`'s value satisfies `ready`.
fn wait_metric(http: SocketAddr, prefix: &str, ready: impl Fn(u64) -> bool) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let value = metric(http, prefix);
        if ready(value) {
            return value;
        }
        assert!(Instant::now() < deadline, "{prefix} stayed at {value}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Subscribes with `filters` (empty: everything) and sends `datagrams`; returns each
/// transaction's envelope (one per signature; a delta's envelope) with its matched filters.
async fn publish_all(
    running: &Running,
    filters: HashMap<String, ProgramFilter>,
    datagrams: Vec<Vec<u8>>,
) -> HashMap<Vec<u8>, DecodedTransaction> {
    publish_with(running, filters, move |udp| send(udp, &datagrams)).await
}

/// Subscribes with `filters` and runs `sender` (on a thread of its own, given the appliance's UDP
/// address); returns what [`publish_all`] does once no update came for 4 s after it finished.
async fn publish_with(
    running: &Running,
    filters: HashMap<String, ProgramFilter>,
    sender: impl FnOnce(SocketAddr) + Send + 'static,
) -> HashMap<Vec<u8>, DecodedTransaction> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut client = loop {
        match StreamClient::connect(format!("http://{}", running.grpc)).await {
            Ok(client) => break client,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(error) => panic!("no gRPC server: {error}"),
        }
    };
    let request = SubscribeRequest {
        subscriptions: filters,
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
    let udp = running.udp;
    let sender = std::thread::spawn(move || sender(udp));
    let mut out = HashMap::new();
    loop {
        let update = match tokio::time::timeout(Duration::from_secs(4), updates.next()).await {
            Ok(Some(update)) => update,
            Ok(None) => break,
            Err(_) if sender.is_finished() => break,
            Err(_) => continue,
        };
        let envelope = match update.unwrap().update {
            Some(Update::Transaction(tx)) => tx,
            Some(Update::Delta(delta)) => delta.envelope.unwrap(),
            _ => continue,
        };
        out.insert(envelope.signature.clone(), envelope);
    }
    sender.join().unwrap();
    out
}

/// An address some published transactions load without naming it as a static key (the most
/// such transactions), and every published transaction that names or loads it.
fn loaded_only_address(
    fixtures: &HashMap<Vec<u8>, FixtureTx>,
    known: &HashMap<Key, Vec<Key>>,
) -> (Key, BTreeSet<Vec<u8>>) {
    let mut only_loaded: HashMap<Key, usize> = HashMap::new();
    let mut holders: HashMap<Key, BTreeSet<Vec<u8>>> = HashMap::new();
    for (signature, tx) in fixtures.iter().filter(|(_, tx)| tx.published) {
        let transaction = parse_transaction_exact(&tx.bytes).unwrap();
        let statics: BTreeSet<Key> = transaction.static_account_keys().iter().copied().collect();
        let (writable, readonly) = reference(&tx.bytes, known);
        let loaded: BTreeSet<Key> = writable.into_iter().chain(readonly).flatten().collect();
        for address in loaded.difference(&statics) {
            *only_loaded.entry(*address).or_default() += 1;
        }
        for address in statics.union(&loaded) {
            holders
                .entry(*address)
                .or_default()
                .insert(signature.clone());
        }
    }
    let (address, _) = only_loaded
        .into_iter()
        .max_by_key(|(address, count)| (*count, *address))
        .unwrap();
    (address, holders.remove(&address).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_tables_from_the_cluster_resolve_every_v0_transaction_and_filters_see_them() {
    let manifest = manifest();
    let tables = tables(&manifest);
    let known: HashMap<Key, Vec<Key>> = tables.iter().cloned().collect();
    let fixtures = transactions(&manifest);
    let standin = cluster(
        tables
            .iter()
            .map(|(table, addresses)| (*table, table_account(addresses)))
            .collect(),
    );
    let data = tempfile::tempdir().unwrap();
    let keys: Vec<Key> = tables.iter().map(|(table, _)| *table).collect();
    let config = preload_config(data.path(), &keys);
    let config = config.display().to_string();
    let running = start(&["--rpc", &standin.url(), "--config", &config], data.path());
    wait_metric(running.http, "appliance_lookup_tables_cached ", |n| n == 4);
    assert!(standin.calls("getMultipleAccounts") >= 1);

    let (address, loaders) = loaded_only_address(&fixtures, &known);
    let filters = HashMap::from([
        ("all".to_owned(), ProgramFilter::default()),
        (
            "loaded".to_owned(),
            ProgramFilter {
                accounts_include: vec![bs58::encode(address).into_string()],
                ..Default::default()
            },
        ),
    ]);
    let received = publish_all(&running, filters, every_slot(&manifest)).await;

    let mut v0_checked = 0;
    for (signature, tx) in fixtures.iter().filter(|(_, tx)| tx.published) {
        let envelope = received
            .get(signature)
            .expect("a published transaction missing");
        let (writable, readonly) = reference(&tx.bytes, &known);
        assert_eq!(as_keys(&envelope.loaded_writable_addresses), writable);
        assert_eq!(as_keys(&envelope.loaded_readonly_addresses), readonly);
        let status = if envelope.uses_lookup_tables {
            LookupStatus::Resolved
        } else {
            LookupStatus::NoLookups
        };
        assert_eq!(envelope.lookup_status, status as i32);
        v0_checked += usize::from(envelope.uses_lookup_tables);
        let matched = envelope.matched_filters.iter().any(|f| f == "loaded");
        assert_eq!(
            matched,
            loaders.contains(signature),
            "filter on a loaded address"
        );
    }
    assert_eq!(
        v0_checked, 1041,
        "every published v0 transaction of the fixtures"
    );
    assert!(!loaders.is_empty());
    assert_eq!(
        metric(
            running.http,
            "appliance_lookup_unresolved_total{reason=\"unknown_table\"} "
        ),
        0
    );
    assert!(
        metric(
            running.http,
            "appliance_lookup_transactions_total{status=\"resolved\"} "
        ) >= 1041
    );
    assert!(metric(running.http, "appliance_lookup_table_hits_total ") > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_the_cluster_cannot_give_are_published_unresolved_and_counted() {
    let manifest = manifest();
    let tables = tables(&manifest);
    let fixtures = transactions(&manifest);
    // Table 0: another owner; 1: malformed data; 2: no account; 3: a good table.
    let mut wrong_owner = table_account(&tables[0].1);
    wrong_owner.owner = "11111111111111111111111111111111".into();
    let mut malformed = table_account(&tables[1].1);
    malformed.data.truncate(40);
    let standin = cluster(vec![
        (tables[0].0, wrong_owner),
        (tables[1].0, malformed),
        (tables[3].0, table_account(&tables[3].1)),
    ]);
    let data = tempfile::tempdir().unwrap();
    let keys: Vec<Key> = tables.iter().map(|(table, _)| *table).collect();
    let config = preload_config(data.path(), &keys).display().to_string();
    let running = start(&["--rpc", &standin.url(), "--config", &config], data.path());
    wait_metric(running.http, "appliance_lookup_tables_cached ", |n| n == 1);
    for outcome in ["wrong_owner", "invalid_data", "absent", "found"] {
        let prefix =
            format!("appliance_lookup_table_fetch_outcomes_total{{outcome=\"{outcome}\"}} ");
        wait_metric(running.http, &prefix, |n| n >= 1);
    }
    let received = publish_all(
        &running,
        HashMap::from([("all".to_owned(), ProgramFilter::default())]),
        every_slot(&manifest),
    )
    .await;
    let good: HashMap<Key, Vec<Key>> = [tables[3].clone()].into_iter().collect();
    let mut unresolved = 0;
    for (signature, tx) in fixtures.iter().filter(|(_, tx)| tx.published) {
        let envelope = received
            .get(signature)
            .expect("a published transaction missing");
        let (writable, readonly) = reference(&tx.bytes, &good);
        assert_eq!(as_keys(&envelope.loaded_writable_addresses), writable);
        assert_eq!(as_keys(&envelope.loaded_readonly_addresses), readonly);
        let resolved = writable
            .iter()
            .chain(&readonly)
            .filter(|a| a.is_some())
            .count();
        let positions = writable.len() + readonly.len();
        if positions > 0 && resolved < positions {
            unresolved += 1;
            assert!(
                [
                    LookupStatus::Unresolved as i32,
                    LookupStatus::PartlyResolved as i32
                ]
                .contains(&envelope.lookup_status)
            );
        }
    }
    assert!(unresolved > 0);
    let counted = metric(
        running.http,
        "appliance_lookup_unresolved_total{reason=\"unknown_table\"} ",
    );
    assert!(counted >= unresolved, "{counted} < {unresolved}");
    // Refused tables are not asked again at once: at most one more request per table.
    assert!(metric(running.http, "appliance_lookup_table_fetch_pending ") <= 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_rpc_down_transactions_are_published_unresolved() {
    let manifest = manifest();
    let fixtures = transactions(&manifest);
    let standin = cluster(Vec::new());
    standin.update(|state| state.behavior = Behavior::Down);
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    let received = publish_all(
        &running,
        HashMap::from([("all".to_owned(), ProgramFilter::default())]),
        every_slot(&manifest),
    )
    .await;
    assert_v0_loaded(
        &fixtures,
        &received,
        &HashMap::new(),
        LookupStatus::Unresolved,
    );
    wait_metric(
        running.http,
        "appliance_lookup_table_fetch_errors_total ",
        |n| n >= 1,
    );
    assert!(
        metric(
            running.http,
            "appliance_lookup_transactions_total{status=\"unresolved\"} "
        ) >= 1041
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_resolves_from_the_persisted_cache_without_the_cluster() {
    let manifest = manifest();
    let tables = tables(&manifest);
    let known: HashMap<Key, Vec<Key>> = tables.iter().cloned().collect();
    let fixtures = transactions(&manifest);
    let data = tempfile::tempdir().unwrap();
    {
        let standin = cluster(
            tables
                .iter()
                .map(|(table, addresses)| (*table, table_account(addresses)))
                .collect(),
        );
        let keys: Vec<Key> = tables.iter().map(|(table, _)| *table).collect();
        let config = preload_config(data.path(), &keys).display().to_string();
        let mut running = start(&["--rpc", &standin.url(), "--config", &config], data.path());
        wait_metric(running.http, "appliance_lookup_tables_cached ", |n| n == 4);
        // A graceful stop writes the cache.
        let pid = running.appliance.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        while running.appliance.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "no graceful stop");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // No RPC at all now.
    let running = start(&[], data.path());
    wait_metric(running.http, "appliance_lookup_tables_cached ", |n| n == 4);
    let received = publish_all(
        &running,
        HashMap::from([("all".to_owned(), ProgramFilter::default())]),
        every_slot(&manifest),
    )
    .await;
    assert_v0_loaded(&fixtures, &received, &known, LookupStatus::Resolved);
}

/// A published fixture v0 transaction with two lookups of two tables (the smallest such pair):
/// its tables in lookup order and its bytes.
fn two_lookup_fixture(
    fixtures: &HashMap<Vec<u8>, FixtureTx>,
    known: &HashMap<Key, Vec<Key>>,
) -> ([Key; 2], Vec<u8>) {
    let mut candidates: Vec<(usize, Vec<u8>, [Key; 2])> = fixtures
        .iter()
        .filter(|(_, tx)| tx.published)
        .filter_map(|(signature, tx)| {
            let parsed = parse_transaction_exact(&tx.bytes).unwrap();
            let lookups: Vec<_> = parsed.address_table_lookups().collect();
            let [first, second] = lookups.as_slice() else {
                return None;
            };
            (first.table != second.table).then_some(())?;
            let size = known.get(first.table)?.len() + known.get(second.table)?.len();
            Some((size, signature.clone(), [*first.table, *second.table]))
        })
        .collect();
    candidates.sort();
    let (_, signature, tables) = candidates.first().cloned().unwrap();
    (tables, fixtures[&signature].bytes.clone())
}

/// The transactions `authority` sends to fill `table` with `addresses`, 20 a transaction, the
/// first also creating it when `create` gives its seeds (recent slot, bump).
fn fill_table(
    authority: &Key,
    table: &Key,
    create: Option<(u64, u8)>,
    addresses: &[Key],
    tag: u8,
) -> Vec<Vec<u8>> {
    addresses
        .chunks(20)
        .enumerate()
        .map(|(number, chunk)| {
            let mut instructions = Vec::new();
            if let (0, Some((recent_slot, bump))) = (number, create) {
                instructions.push(table_transactions::create(recent_slot, bump));
            }
            instructions.push(table_transactions::extend(chunk));
            table_transactions::admin_transaction(
                authority,
                table,
                &instructions,
                tag + number as u8,
            )
        })
        .collect()
}

/// Every shred of a slot of one entry batch, one entry a transaction, signed by `shredder`.
fn slot_of(shredder: &Shredder, slot: u64, transactions: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let entries: Vec<Entry> = transactions
        .into_iter()
        .map(|tx| Entry {
            num_hashes: 1,
            hash: [slot as u8; 32],
            transactions: vec![tx],
        })
        .collect();
    let batch = entry_batch(&entries);
    shredder
        .shred_slot(slot, slot - 1, &[0; 32], &[batch])
        .unwrap()
        .shreds
}

/// The highest index `fixture` looks up in `table`, and an address it loads from there only (not
/// a static key, not loaded through its other lookups).
fn highest_and_loaded_only(
    fixture: &[u8],
    table: &Key,
    known: &HashMap<Key, Vec<Key>>,
) -> (usize, Key) {
    let parsed = parse_transaction_exact(fixture).unwrap();
    let loads = |lookup: &LookupView<'_>| -> Vec<(usize, Key)> {
        let all = lookup
            .writable_indices
            .iter()
            .chain(lookup.readonly_indices);
        let addresses = &known[lookup.table];
        all.map(|index| (usize::from(*index), addresses[usize::from(*index)]))
            .collect()
    };
    let (mine, others): (Vec<_>, Vec<_>) = parsed
        .address_table_lookups()
        .partition(|lookup| lookup.table == table);
    let mine: Vec<(usize, Key)> = mine.iter().flat_map(loads).collect();
    let mut elsewhere: BTreeSet<Key> = others.iter().flat_map(loads).map(|(_, a)| a).collect();
    elsewhere.extend(parsed.static_account_keys().iter().copied());
    let highest = mine.iter().map(|(index, _)| *index).max().unwrap();
    let (_, loaded_only) = mine
        .into_iter()
        .find(|(_, address)| !elsewhere.contains(address))
        .unwrap();
    (highest, loaded_only)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_learned_from_the_stream_alone_resolve_the_slots_after_their_extension() {
    let manifest = manifest();
    let known: HashMap<Key, Vec<Key>> = tables(&manifest).into_iter().collect();
    let fixtures = transactions(&manifest);
    let ([first, second], fixture) = two_lookup_fixture(&fixtures, &known);
    let (highest, loaded_only) = highest_and_loaded_only(&fixture, &first, &known);
    assert!(highest > 0, "the late table starts with some addresses");

    // Stream copies of both tables, filled in slot S; and `late`, a copy of the first that gets
    // the highest address the transaction uses only in slot S + 1, in the entry before a
    // transaction that needs it: usable from S + 2 (the runtime's rule, docs/lookup-tables.md).
    let authority = [0x11; 32];
    let [early_first, early_second, late] = [7, 8, 9].map(|seed| {
        let (table, bump) = table_transactions::table_address(&authority, seed);
        (table, seed, bump)
    });
    let fill = |(table, seed, bump): (Key, u64, u8), addresses: &[Key], tag| {
        fill_table(&authority, &table, Some((seed, bump)), addresses, tag)
    };
    let early = HashMap::from([(first, early_first.0), (second, early_second.0)]);
    let late_map = HashMap::from([(first, late.0), (second, early_second.0)]);
    let slot = 361_300_000;
    let stages = [
        [
            fill(early_first, &known[&first], 0x10),
            fill(early_second, &known[&second], 0x30),
            fill(late, &known[&first][..highest], 0x50),
        ]
        .concat(),
        [
            fill_table(&authority, &late.0, None, &known[&first][highest..], 0x70),
            vec![
                table_transactions::pointed_at(&fixture, &early, 0xA1),
                table_transactions::pointed_at(&fixture, &late_map, 0xA2),
            ],
        ]
        .concat(),
        vec![table_transactions::pointed_at(&fixture, &late_map, 0xA3)],
    ];
    let instructions = |transactions: &[Vec<u8>]| -> u64 {
        let calls = transactions.iter().map(|tx| {
            let parsed = parse_transaction_exact(tx).unwrap();
            decoder::lookup::lookup_program_calls(&parsed).count() as u64
        });
        calls.sum()
    };
    let learned: Vec<u64> = stages.iter().map(|stage| instructions(stage)).collect();
    let shredder = Shredder::new(ed25519_dalek::SigningKey::from_bytes(&[5; 32]));
    let slots: Vec<Vec<Vec<u8>>> = stages
        .into_iter()
        .zip(slot..)
        .map(|(transactions, slot)| slot_of(&shredder, slot, transactions))
        .collect();

    let data = tempfile::tempdir().unwrap();
    let running = start(&[], data.path());
    let http = running.http;
    let filters = HashMap::from([
        ("all".to_owned(), ProgramFilter::default()),
        (
            "loaded".to_owned(),
            ProgramFilter {
                accounts_include: vec![bs58::encode(loaded_only).into_string()],
                ..Default::default()
            },
        ),
    ]);
    let expected_updates: u64 = learned.iter().sum();
    let received = publish_with(&running, filters, move |udp| {
        let mut total = 0;
        for (shreds, count) in slots.iter().zip(&learned) {
            // Slots one after another, as a leader sends them (~400 ms apart).
            send(udp, shreds);
            total += count;
            wait_metric(http, "appliance_lookup_table_stream_updates_total ", |n| {
                n >= total
            });
        }
    })
    .await;

    let envelope = |tag: u8| {
        let signature = table_transactions::pointed_at(&fixture, &early, tag)[1..65].to_vec();
        received.get(&signature).cloned().expect("published")
    };
    let (writable, readonly) = reference(&fixture, &known);
    for tag in [0xA1, 0xA3] {
        let resolved = envelope(tag);
        assert_eq!(
            resolved.lookup_status,
            LookupStatus::ProvisionallyResolved as i32
        );
        assert_eq!(as_keys(&resolved.loaded_writable_addresses), writable);
        assert_eq!(as_keys(&resolved.loaded_readonly_addresses), readonly);
        assert!(resolved.matched_filters.iter().any(|f| f == "loaded"));
    }
    // In slot S + 1 the late table's lookup fails whole; the other lookup resolves.
    let too_early = envelope(0xA2);
    assert_eq!(too_early.lookup_status, LookupStatus::PartlyResolved as i32);
    let mut without_first = known.clone();
    without_first.remove(&first);
    let (writable, readonly) = reference(&fixture, &without_first);
    assert_eq!(as_keys(&too_early.loaded_writable_addresses), writable);
    assert_eq!(as_keys(&too_early.loaded_readonly_addresses), readonly);
    assert!(!too_early.matched_filters.iter().any(|f| f == "loaded"));

    let unresolved = "appliance_lookup_unresolved_total{reason=\"index_out_of_range\"} ";
    assert_eq!(metric(http, unresolved), 1);
    assert_eq!(metric(http, "appliance_lookup_table_fetches_total "), 0);
    let updates = metric(http, "appliance_lookup_table_stream_updates_total ");
    assert_eq!(updates, expected_updates);
    assert_eq!(
        metric(http, "appliance_lookup_table_stream_rejected_total "),
        0
    );
}

/// The largest value each of `prefixes` showed while `during` ran (polled every 10 ms).
fn peak_while(http: SocketAddr, prefixes: &[&'static str], during: impl FnOnce()) -> Vec<u64> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (stop, prefixes) = (std::sync::Arc::clone(&stop), prefixes.to_vec());
        std::thread::spawn(move || {
            let mut peaks = vec![0; prefixes.len()];
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                let text = metrics(http);
                for (peak, prefix) in peaks.iter_mut().zip(&prefixes) {
                    let value = text
                        .lines()
                        .find(|line| line.starts_with(prefix))
                        .map_or(0, |line| line.rsplit(' ').next().unwrap().parse().unwrap());
                    *peak = (*peak).max(value);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            peaks
        })
    };
    during();
    stop.store(true, std::sync::atomic::Ordering::Release);
    watcher.join().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_distinct_tables_stays_within_the_cache_and_fetch_queue_bounds() {
    let manifest = manifest();
    let known: HashMap<Key, Vec<Key>> = tables(&manifest).into_iter().collect();
    let fixtures = transactions(&manifest);
    let ([first, second], fixture) = two_lookup_fixture(&fixtures, &known);
    // 600 tables the cluster has (one address each) behind a slow RPC, 300 transactions each
    // looking up two of them, and 100 more tables created through the stream.
    let flood: Vec<Key> = (0..600u32)
        .map(|n| {
            let mut key = [0xF1; 32];
            key[..4].copy_from_slice(&n.to_le_bytes());
            key
        })
        .collect();
    let standin = cluster(
        flood
            .iter()
            .map(|table| (*table, table_account(&[[7; 32]])))
            .collect(),
    );
    standin.update(|state| state.answer_delay = Duration::from_millis(300));
    let authority = [0x22; 32];
    let created = (1_000..1_100).map(|seed| {
        let (table, bump) = table_transactions::table_address(&authority, seed);
        fill_table(
            &authority,
            &table,
            Some((seed, bump)),
            &[[8; 32]],
            seed as u8,
        )
    });
    let users = flood.chunks(2).enumerate().map(|(n, pair)| {
        let map = HashMap::from([(first, pair[0]), (second, pair[1])]);
        let mut tx = table_transactions::pointed_at(&fixture, &map, 0xB0);
        tx[2..6].copy_from_slice(&(n as u32).to_le_bytes());
        tx
    });
    let transactions: Vec<Vec<u8>> = created.flatten().chain(users).collect();
    let shredder = Shredder::new(ed25519_dalek::SigningKey::from_bytes(&[5; 32]));
    let shreds = slot_of(&shredder, 361_400_000, transactions);

    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("bounds.toml");
    std::fs::write(
        &config,
        "[lookup_tables]\nmax_entries = 16\nmax_mb = 1\nfetch_queue = 8\n",
    )
    .unwrap();
    let config = config.display().to_string();
    let running = start(&["--rpc", &standin.url(), "--config", &config], data.path());
    let http = running.http;
    let (sender, received) = tokio::sync::oneshot::channel();
    let all = HashMap::from([("all".to_owned(), ProgramFilter::default())]);
    let published = publish_with(&running, all, move |udp| {
        let peaks = peak_while(
            http,
            &[
                "appliance_lookup_table_fetch_pending ",
                "appliance_lookup_tables_cached ",
            ],
            || {
                send(udp, &shreds);
                wait_metric(http, "appliance_lookup_table_fetched_tables_total ", |n| {
                    n >= 8
                });
            },
        );
        let _ = sender.send(peaks);
    })
    .await;
    let peaks = received.await.unwrap();

    let users: Vec<&DecodedTransaction> = published
        .values()
        .filter(|tx| tx.signature.starts_with(&[0xB0]))
        .collect();
    assert_eq!(users.len(), 300, "every transaction published");
    assert!(peaks[0] <= 8, "fetch queue past its bound: {}", peaks[0]);
    assert!(peaks[1] <= 16, "cache past its bound: {}", peaks[1]);
    assert_eq!(
        metric(http, "appliance_lookup_table_fetch_queue_capacity "),
        8
    );
    assert!(metric(http, "appliance_lookup_table_fetch_queue_full_total ") > 0);
    assert!(metric(http, "appliance_lookup_table_evictions_total ") > 0);
    assert!(metric(http, "appliance_lookup_tables_cached ") <= 16);
    let unknown = "appliance_lookup_unresolved_total{reason=\"unknown_table\"} ";
    assert!(metric(http, unknown) >= 300);
}
