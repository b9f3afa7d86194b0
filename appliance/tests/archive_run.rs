//! `appliance run --archive ...` end to end: the real binary serves the real epoch-0 CAR pieces
//! (indexed with `appliance archive index`) from a directory, from an HTTP base URL (a
//! range-capable file server started here), and from both at once; a catalog check activates an
//! epoch published while it runs; an https upstream (a TLS **stand-in**, self-signed test CA) is
//! reached through `--upstream-ca`. Expected values are read from the CAR files by the test itself
//! (section stream and node decoder), not through the indexes the server uses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::collections::HashMap;
use std::io::BufWriter;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use archive::car::CarStream;
use archive::node::{BlockNode, EntryNode, TransactionNode};
use archive::{Cid, txwire};
use process::servers::{file_server, standin_upstream};
use process::{Appliance, free_tcp_address};
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../archive/tests/fixtures");
/// Mainnet's genesis creation time (2020-03-16T14:29:00Z), getBlockTime(0).
const MAINNET_GENESIS_TIME: i64 = 1_584_368_940;
const TLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls");

/// One block as the CAR holds it.
#[derive(Debug, Clone)]
struct Expected {
    slot: u64,
    parent: u64,
    blockhash: String,
    /// First signatures in block order, with the static keys of each transaction.
    txs: Vec<(String, Vec<[u8; 32]>)>,
    block_time: Option<i64>,
}

/// Every block of a CAR file, read from its sections.
fn blocks_of(car: &Path) -> Vec<Expected> {
    let bytes = std::fs::read(car).unwrap();
    let mut stream = CarStream::new(&bytes[..], 1 << 20).unwrap();
    let mut nodes: HashMap<Cid, Vec<u8>> = HashMap::new();
    let mut blocks = Vec::new();
    while let Some(section) = stream.next_section().unwrap() {
        nodes.insert(section.cid, section.node.to_vec());
        if let Ok(block) = BlockNode::decode(section.node) {
            blocks.push(block);
        }
    }
    blocks
        .into_iter()
        .map(|block| {
            let mut hash = [0u8; 32];
            let mut txs = Vec::new();
            for entry in &block.entries {
                let entry = EntryNode::decode(&nodes[entry]).unwrap();
                hash = entry.hash;
                for tx in &entry.transactions {
                    let node = TransactionNode::decode(&nodes[tx]).unwrap();
                    let summary = txwire::summarize(node.data.data).unwrap();
                    txs.push((
                        bs58::encode(summary.first_signature).into_string(),
                        summary.static_keys,
                    ));
                }
            }
            Expected {
                slot: block.slot,
                parent: block.parent_slot,
                blockhash: bs58::encode(hash).into_string(),
                txs,
                block_time: (block.blocktime != 0).then_some(block.blocktime),
            }
        })
        .collect()
}

/// Copies the named epoch-0 pieces into `dir` under the given names and indexes them with the
/// real binary.
fn indexed(dir: &Path, pieces: &[(&str, &str)]) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let mut cars = Vec::new();
    for (from, to) in pieces {
        let car = dir.join(to);
        std::fs::copy(Path::new(FIXTURES).join(from), &car).unwrap();
        cars.push(car);
    }
    let out = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["archive", "index", "--no-progress"])
        .args(&cars)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    cars
}

/// Starts `appliance run` with `args` and waits for its HTTP address.
fn start(args: &[String]) -> (Appliance, SocketAddr) {
    let http = free_tcp_address();
    let db = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--udp", "127.0.0.1:0", "--grpc"])
        .arg(free_tcp_address().to_string())
        .arg("--http")
        .arg(http.to_string())
        .arg("--insights-db")
        .arg(db.path().join("insights.redb"))
        .arg("--data-dir")
        .arg(db.path())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut appliance = Appliance { child };
    std::mem::forget(db); // lives as long as the process (a temporary directory)
    let start = Instant::now();
    loop {
        if std::net::TcpStream::connect(http).is_ok() {
            break;
        }
        if let Some(status) = appliance.child.try_wait().unwrap() {
            panic!("appliance exited: {status}");
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no HTTP address");
        std::thread::sleep(Duration::from_millis(50));
    }
    (appliance, http)
}

/// One JSON-RPC call; waits out the per-IP rate limit (100/s) when the checks hit it.
fn rpc(http: SocketAddr, method: &str, params: Value) -> (u16, Value) {
    loop {
        let (status, answer) = rpc_once(http, method, params.clone());
        if status != 429 {
            return (status, answer);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn rpc_once(http: SocketAddr, method: &str, params: Value) -> (u16, Value) {
    process::rpc_call(http, method, params)
}

fn metrics(http: SocketAddr) -> String {
    process::http_get(http, "/metrics", &[]).1
}

fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// getBlock / getBlockTime / getTransaction for every block, getSlot, and
/// getSignaturesForAddress (with paging) against the blocks read from the CARs.
fn check_served(http: SocketAddr, blocks: &[Expected]) {
    let hashes: HashMap<u64, &str> = blocks
        .iter()
        .map(|b| (b.slot, b.blockhash.as_str()))
        .collect();
    for block in blocks {
        let (status, answer) = rpc(
            http,
            "getBlock",
            json!([block.slot, {"transactionDetails": "signatures", "rewards": false, "maxSupportedTransactionVersion": 0}]),
        );
        assert_eq!(status, 200, "{answer}");
        let result = &answer["result"];
        assert_eq!(result["blockhash"], block.blockhash, "slot {}", block.slot);
        assert_eq!(result["parentSlot"], block.parent, "slot {}", block.slot);
        // (A parent outside the served blocks comes from the upstream, or prints as 1111...)
        if let Some(parent_hash) = hashes.get(&block.parent) {
            assert_eq!(
                result["previousBlockhash"], *parent_hash,
                "slot {}",
                block.slot
            );
        }
        let sigs: Vec<&str> = block.txs.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(result["signatures"], json!(sigs), "slot {}", block.slot);
        let (_, time) = rpc(http, "getBlockTime", json!([block.slot]));
        // Slot 0: the CAR has no time; the frontend answers mainnet's genesis creation time.
        let want = if block.slot == 0 {
            Some(MAINNET_GENESIS_TIME)
        } else {
            block.block_time
        };
        assert_eq!(time["result"], json!(want), "slot {}", block.slot);
        for (sig, keys) in &block.txs {
            let (_, tx) = rpc(
                http,
                "getTransaction",
                json!([sig, {"encoding": "json", "maxSupportedTransactionVersion": 0}]),
            );
            assert_eq!(tx["result"]["slot"], block.slot, "{sig}: {tx}");
            assert_eq!(tx["result"]["transaction"]["signatures"][0], *sig);
            let key0 = bs58::encode(keys[0]).into_string();
            assert_eq!(
                tx["result"]["transaction"]["message"]["accountKeys"][0],
                key0
            );
        }
    }
    let newest = blocks.iter().map(|b| b.slot).max().unwrap();
    assert_eq!(rpc(http, "getSlot", json!([])).1["result"], newest);

    // The non-sysvar key in most transactions.
    let mut counts: HashMap<[u8; 32], Vec<(u64, &str)>> = HashMap::new();
    for block in blocks {
        for (sig, keys) in &block.txs {
            let mut keys = keys.clone();
            keys.sort();
            keys.dedup();
            for key in keys.into_iter().filter(|k| !txwire::is_sysvar(k)) {
                counts.entry(key).or_default().push((block.slot, sig));
            }
        }
    }
    let (address, expected) = counts.iter().max_by_key(|(_, v)| v.len()).unwrap();
    let address = bs58::encode(address).into_string();
    let (_, all) = rpc(
        http,
        "getSignaturesForAddress",
        json!([address, {"limit": 1000}]),
    );
    let all = all["result"]
        .as_array()
        .unwrap_or_else(|| panic!("getSignaturesForAddress: {all}"))
        .clone();
    assert_eq!(all.len(), expected.len());
    let mut got: Vec<&str> = all
        .iter()
        .map(|r| r["signature"].as_str().unwrap())
        .collect();
    let slots: Vec<u64> = all.iter().map(|r| r["slot"].as_u64().unwrap()).collect();
    assert!(slots.windows(2).all(|w| w[0] >= w[1]), "newest first");
    got.sort_unstable();
    let mut want: Vec<&str> = expected.iter().map(|(_, s)| *s).collect();
    want.sort_unstable();
    assert_eq!(got, want);
    // Pages of 5 through `before` give the same list.
    let mut paged = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let mut options = json!({"limit": 5});
        if let Some(b) = &before {
            options["before"] = json!(b);
        }
        let (_, page) = rpc(http, "getSignaturesForAddress", json!([address, options]));
        let page = page["result"]
            .as_array()
            .unwrap_or_else(|| panic!("a page of getSignaturesForAddress: {page}"))
            .clone();
        if page.is_empty() {
            break;
        }
        before = Some(page.last().unwrap()["signature"].as_str().unwrap().into());
        paged.extend(page);
    }
    assert_eq!(paged, all);
    // `until` stops before the given (older) signature.
    if all.len() > 3 {
        let until = all[3]["signature"].as_str().unwrap();
        let (_, head) = rpc(
            http,
            "getSignaturesForAddress",
            json!([address, {"until": until}]),
        );
        assert_eq!(head["result"].as_array().unwrap()[..], all[..3]);
    }
}

fn pieces_blocks(names: &[&str]) -> Vec<Expected> {
    names
        .iter()
        .flat_map(|n| blocks_of(&Path::new(FIXTURES).join(n)))
        .collect()
}

#[test]
fn serves_split_epoch_from_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["epoch-0-1.car", "epoch-0-2.car", "epoch-0-3.car"];
    indexed(dir.path(), &names.map(|n| (n, n)));
    let (upstream, seen) = standin_upstream(None);
    let (_app, http) = start(&[
        "--archive".into(),
        dir.path().display().to_string(),
        "--upstream".into(),
        upstream,
    ]);
    let blocks = pieces_blocks(&names);
    assert_eq!(blocks.len(), 30);
    check_served(http, &blocks);
    // Archive slots never went to the upstream.
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|(m, _)| m != "getBlock" && m != "getTransaction"),
        "{:?}",
        seen.lock().unwrap()
    );
    let text = metrics(http);
    assert!(text.contains("appliance_archive_pieces_served 3"), "{text}");
    assert!(text.contains("appliance_archive_epochs_served 1"), "{text}");
}

/// A host publishing the first piece as "epoch 0" (`0/epoch-0.car`, its `.cid`, its indexes).
fn host_with_piece_one() -> (tempfile::TempDir, String, Arc<AtomicUsize>) {
    let host = tempfile::tempdir().unwrap();
    let cars = indexed(&host.path().join("0"), &[("epoch-0-1.car", "epoch-0.car")]);
    let header = std::fs::read(&cars[0]).unwrap();
    let root = archive::car::parse_header(&header).unwrap().root;
    std::fs::write(host.path().join("0/epoch-0.cid"), format!("{root}\n")).unwrap();
    let (base, ranges) = file_server(host.path().to_path_buf());
    (host, base, ranges)
}

#[test]
fn serves_an_epoch_behind_an_http_base_url() {
    let (_host, base, ranges) = host_with_piece_one();
    let (upstream, _) = standin_upstream(None);
    let (_app, http) = start(&["--archive".into(), base, "--upstream".into(), upstream]);
    check_served(http, &pieces_blocks(&["epoch-0-1.car"]));
    assert!(
        ranges.load(Ordering::Relaxed) > 0,
        "read with range requests"
    );
}

#[test]
fn url_and_directory_together_first_source_wins_duplicates() {
    let (_host, base, ranges) = host_with_piece_one();
    let dir = tempfile::tempdir().unwrap();
    let names = ["epoch-0-1.car", "epoch-0-2.car", "epoch-0-3.car"];
    indexed(dir.path(), &names.map(|n| (n, n)));
    // The URL holds piece 1 (as epoch 0), the directory all three: piece 1 of the directory has
    // the same root and is shadowed; pieces 2 and 3 come from the directory.
    let (_app, http) = start(&[
        "--archive".into(),
        base,
        "--archive".into(),
        dir.path().display().to_string(),
    ]);
    check_served(http, &pieces_blocks(&names));
    let text = metrics(http);
    assert!(text.contains("appliance_archive_pieces_served 3"), "{text}");
    // Piece 1 is served from the URL (the first source), pieces 2 and 3 from the directory.
    let before = ranges.load(Ordering::Relaxed);
    let (_, block) = rpc(http, "getBlock", json!([3, {"transactionDetails": "none"}]));
    assert!(block["result"]["blockhash"].is_string(), "{block}");
    let after = ranges.load(Ordering::Relaxed);
    assert!(after > before, "slot 3 read over HTTP");
    let (_, block) = rpc(
        http,
        "getBlock",
        json!([13, {"transactionDetails": "none"}]),
    );
    assert!(block["result"]["blockhash"].is_string(), "{block}");
    assert_eq!(
        ranges.load(Ordering::Relaxed),
        after,
        "slot 13 read locally"
    );
}

/// Writes a generated epoch `epoch` (whole-epoch layout) under `dir` with its indexes; returns its
/// blocks and the names of its files.
fn synth_epoch(dir: &Path, epoch: u64, seed: u64) -> Vec<Expected> {
    use testkit::synth::{Synth, SynthOptions};
    let mut synth = Synth::new(SynthOptions {
        first_slot: epoch * 432_000,
        slots: 12,
        seed,
        ..SynthOptions::default()
    });
    let blocks: Vec<_> = synth.by_ref().collect();
    let car = write_indexed_epoch(dir, epoch, &blocks);
    blocks_of(&car)
}

/// Writes `blocks` as the whole-epoch CAR `<dir>/epoch-<epoch>.car` with its `.cid`, builds every
/// index next to it and returns the CAR's path.
fn write_indexed_epoch<'a>(
    dir: &Path,
    epoch: u64,
    blocks: impl IntoIterator<Item = &'a archive::writer::BlockInput>,
) -> PathBuf {
    use archive::build::{BuildOptions, build_indexes};
    use archive::writer::{CarWriter, RootKind, WriterOptions};
    std::fs::create_dir_all(dir).unwrap();
    let car = dir.join(format!("epoch-{epoch}.car"));
    let mut writer = CarWriter::new(
        BufWriter::new(std::fs::File::create(&car).unwrap()),
        RootKind::Epoch(epoch),
        WriterOptions::default(),
    )
    .unwrap();
    for block in blocks {
        writer.write_block(block).unwrap();
    }
    let (root, _) = writer.finish().unwrap();
    std::fs::write(dir.join(format!("epoch-{epoch}.cid")), root.to_string()).unwrap();
    build_indexes(
        &car,
        &BuildOptions {
            progress: false,
            partitions: None,
        },
    )
    .unwrap();
    car
}

#[test]
fn catalog_check_activates_a_newly_published_epoch() {
    let host = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    let first = synth_epoch(&host.path().join("1"), 1, 1);
    let second = synth_epoch(&staging.path().join("2"), 2, 2);
    let watched = tempfile::tempdir().unwrap(); // a local source, empty at start
    let (base, _) = file_server(host.path().to_path_buf());
    let (_app, http) = start(&[
        "--archive".into(),
        format!("{base}#1"),
        "--archive".into(),
        watched.path().display().to_string(),
        "--archive-check-interval".into(),
        "200ms".into(),
    ]);
    let slot = |b: &Expected| json!([b.slot, {"transactionDetails": "none", "rewards": false}]);
    let (_, answer) = rpc(http, "getBlock", slot(&first[0]));
    assert_eq!(answer["result"]["blockhash"], first[0].blockhash);
    let (_, answer) = rpc(http, "getBlock", slot(&second[0]));
    assert_eq!(answer["error"]["code"], -32004, "{answer}");

    // Half-published: the CAR and .cid are there, the indexes not yet. Not activated.
    let target = host.path().join("2");
    std::fs::create_dir_all(&target).unwrap();
    for name in ["epoch-2.car", "epoch-2.cid"] {
        std::fs::copy(staging.path().join("2").join(name), target.join(name)).unwrap();
    }
    wait_for(Duration::from_secs(30), "an incomplete check", || {
        metrics(http).contains("appliance_archive_catalog_failures_total{reason=\"incomplete\"}")
    });
    let (_, answer) = rpc(http, "getBlock", slot(&second[0]));
    assert_eq!(answer["error"]["code"], -32004, "{answer}");

    // Everything published: the next check activates epoch 2.
    for entry in std::fs::read_dir(staging.path().join("2")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), target.join(entry.file_name())).unwrap();
    }
    wait_for(Duration::from_secs(30), "epoch 2 served", || {
        rpc(http, "getBlock", slot(&second[0])).1["result"]["blockhash"] == second[0].blockhash
    });
    check_served(http, &[first.clone(), second.clone()].concat());
    let text = metrics(http);
    assert!(text.contains("appliance_archive_epochs_served 2"), "{text}");

    // Epoch 1 is regenerated (new content, new root CID): files renamed into place, `.cid` last.
    let replaced = synth_epoch(&staging.path().join("1"), 1, 77);
    assert_ne!(replaced[0].blockhash, first[0].blockhash);
    publish(
        &staging.path().join("1"),
        &host.path().join("1"),
        "epoch-1.cid",
    );
    wait_for(Duration::from_secs(30), "epoch 1 replaced", || {
        rpc(http, "getBlock", slot(&replaced[0])).1["result"]["blockhash"] == replaced[0].blockhash
    });
    check_served(http, &[replaced.clone(), second.clone()].concat());

    // The local directory source is rescanned on the same schedule: epoch-0 pieces appear.
    let pieces = tempfile::tempdir().unwrap();
    indexed(pieces.path(), &[("epoch-0-1.car", "epoch-0-1.car")]);
    publish(pieces.path(), watched.path(), "epoch-0-1.car");
    let zero = pieces_blocks(&["epoch-0-1.car"]);
    wait_for(Duration::from_secs(30), "the directory's new piece", || {
        rpc(http, "getBlock", slot(&zero[5])).1["result"]["blockhash"] == zero[5].blockhash
    });
    let text = metrics(http);
    assert!(text.contains("appliance_archive_epochs_served 3"), "{text}");
}

/// Moves every file of `from` into `to` (each renamed into place, so readers of the old file keep
/// it), the file named `last` last.
fn publish(from: &Path, to: &Path, last: &str) {
    std::fs::create_dir_all(to).unwrap();
    let mut names: Vec<_> = std::fs::read_dir(from)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort_by_key(|n| n == last);
    for name in names {
        std::fs::rename(from.join(&name), to.join(&name)).unwrap();
    }
}

#[test]
fn https_upstream_through_an_extra_ca() {
    let tls = Path::new(TLS);
    let (upstream, seen) =
        standin_upstream(Some((&tls.join("server.pem"), &tls.join("server.key"))));
    assert!(upstream.starts_with("https://"));
    let dir = tempfile::tempdir().unwrap();
    indexed(dir.path(), &[("epoch-0-1.car", "epoch-0-1.car")]);
    let archive = dir.path().display().to_string();

    // Without the test CA the upstream's certificate is refused: the proxied call fails (502).
    {
        let (_app, http) = start(&[
            "--archive".into(),
            archive.clone(),
            "--upstream".into(),
            upstream.clone(),
        ]);
        let (status, answer) = rpc(http, "getVersion", json!([]));
        assert_eq!(status, 502, "{answer}");
    }
    assert!(seen.lock().unwrap().iter().all(|(m, _)| m != "getVersion"));

    let (_app, http) = start(&[
        "--archive".into(),
        archive,
        "--upstream".into(),
        upstream,
        "--upstream-ca".into(),
        tls.join("ca.pem").display().to_string(),
    ]);
    let (status, answer) = rpc(http, "getVersion", json!([]));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["solana-core"], "stand-in");
    // The insights ingest (ureq) reached the same https stand-in too.
    wait_for(
        Duration::from_secs(20),
        "the insights ingest over https",
        || {
            seen.lock()
                .unwrap()
                .iter()
                .any(|(_, agent)| agent.starts_with("ureq"))
        },
    );
}

/// Writes the blocks of a generated run across the boundary of epochs `epoch - 1` and `epoch`
/// as two whole-epoch CARs under `dir/<N>/` with every index; returns the writer's inputs.
fn synth_across(dir: &Path, epoch: u64, seed: u64) -> Vec<archive::writer::BlockInput> {
    use testkit::synth::{Synth, SynthOptions};
    let boundary = epoch * 432_000;
    let blocks: Vec<_> = Synth::new(SynthOptions {
        first_slot: boundary - 12,
        slots: 24,
        seed,
        ..SynthOptions::default()
    })
    .collect();
    for n in [epoch - 1, epoch] {
        write_indexed_epoch(
            &dir.join(n.to_string()),
            n,
            blocks.iter().filter(|b| b.slot / 432_000 == n),
        );
    }
    blocks
}

/// Copies what the public host publishes of `from` (an epoch directory) into `to`: the CAR, its
/// `.cid` and the five published indexes; not our slot-ranges, slot-to-blockhash and asig files.
fn copy_published(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let ours = name.ends_with("-slot-ranges.raw")
            || name.contains("-slot-to-blockhash.")
            || name.contains("-asig-");
        if !ours {
            std::fs::copy(from.join(&name), to.join(&name)).unwrap();
        }
    }
    assert_eq!(std::fs::read_dir(to).unwrap().count(), 7);
}

#[test]
fn serves_a_host_that_publishes_only_the_public_files() {
    let full = tempfile::tempdir().unwrap();
    let inputs = synth_across(full.path(), 2, 9);
    let host = tempfile::tempdir().unwrap();
    copy_published(&full.path().join("1"), &host.path().join("1"));
    let (public_base, _) = file_server(host.path().to_path_buf());
    let (full_base, _) = file_server(full.path().to_path_buf());

    // Without an upstream, epoch 1 at start; epoch 2 is published (public files only) while it
    // runs and the catalog probe activates it.
    let (_alone, alone) = start(&[
        "--archive".into(),
        format!("{public_base}#1"),
        "--archive-check-interval".into(),
        "200ms".into(),
    ]);
    let first_two = inputs.iter().find(|b| b.slot >= 2 * 432_000).unwrap();
    let none = |slot: u64| json!([slot, {"transactionDetails": "none", "rewards": false}]);
    let (_, answer) = rpc(alone, "getBlock", none(first_two.slot));
    assert_eq!(answer["error"]["code"], -32004, "{answer}");
    copy_published(&full.path().join("2"), &host.path().join("2"));
    wait_for(Duration::from_secs(30), "epoch 2 activated", || {
        rpc(alone, "getBlock", none(first_two.slot)).1["result"]["blockhash"]
            == bs58::encode(first_two.entries.last().unwrap().hash).into_string()
    });
    let text = metrics(alone);
    assert!(text.contains("appliance_archive_epochs_served 2"), "{text}");
    assert!(
        text.contains("appliance_archive_catalog_activations_total 2"),
        "{text}"
    );

    // The same epochs with the full index set (the reference answers), and the public files
    // with an upstream stand-in.
    let (_reference, reference) = start(&["--archive".into(), format!("{full_base}#1")]);
    let (upstream_url, seen) = standin_upstream(None);
    let (_routed, routed) = start(&[
        "--archive".into(),
        format!("{public_base}#1"),
        "--upstream".into(),
        upstream_url.clone(),
    ]);

    let hash_of: HashMap<u64, String> = inputs
        .iter()
        .map(|b| {
            let hash = b.entries.last().unwrap().hash;
            (b.slot, bs58::encode(hash).into_string())
        })
        .collect();
    let (lo, hi) = (inputs[0].slot, inputs.last().unwrap().slot);
    for slot in lo..=hi {
        for details in ["full", "signatures", "accounts", "none"] {
            let params = json!([slot, {"transactionDetails": details, "rewards": true,
                "encoding": "json", "maxSupportedTransactionVersion": 0}]);
            let (_, want) = rpc(reference, "getBlock", params.clone());
            // (A slot beyond an epoch's last block is not held: the one with an upstream asks it.)
            let held = inputs.iter().any(|b| b.slot == slot);
            let apps = if held {
                vec![alone, routed]
            } else {
                vec![alone]
            };
            for http in apps {
                let (status, got) = rpc(http, "getBlock", params.clone());
                assert_eq!((status, &got), (200, &want), "slot {slot} {details}");
            }
        }
        let (_, want) = rpc(reference, "getBlockTime", json!([slot]));
        assert_eq!(rpc(alone, "getBlockTime", json!([slot])).1, want, "{slot}");
        let Some(input) = inputs.iter().find(|b| b.slot == slot) else {
            // Skipped (-32009) inside an epoch's span, not held (-32004) after its last block:
            // the same answers as the full index set's (checked above).
            let (_, got) = rpc(alone, "getBlock", none(slot));
            let after_last = inputs
                .iter()
                .filter(|b| b.slot / 432_000 == slot / 432_000)
                .all(|b| b.slot < slot);
            let code = if after_last { -32004 } else { -32009 };
            assert_eq!(got["error"]["code"], code, "slot {slot}: {got}");
            continue;
        };
        // Against the writer's inputs.
        assert_eq!(want["result"], json!(input.block_time));
        let (_, got) = rpc(
            alone,
            "getBlock",
            json!([slot, {"transactionDetails": "signatures", "rewards": true,
                "maxSupportedTransactionVersion": 0}]),
        );
        let result = &got["result"];
        assert_eq!(result["blockhash"], hash_of[&slot], "slot {slot}");
        assert_eq!(result["parentSlot"], input.parent_slot);
        assert_eq!(result["blockTime"], input.block_time);
        if let Some(parent) = hash_of.get(&input.parent_slot) {
            // Across the epoch boundary too (the first block of epoch 2).
            assert_eq!(result["previousBlockhash"], *parent, "slot {slot}");
        }
        let rewards = input.rewards.as_ref().map_or(0, |r| r.rewards.len());
        assert_eq!(result["rewards"].as_array().unwrap().len(), rewards);
        let wires: Vec<&Vec<u8>> = input
            .entries
            .iter()
            .flat_map(|e| &e.transactions)
            .map(|t| &t.wire)
            .collect();
        let signatures: Vec<String> = wires
            .iter()
            .map(|w| bs58::encode(&w[1..65]).into_string())
            .collect();
        assert_eq!(result["signatures"], json!(signatures), "slot {slot}");
        for signature in &signatures {
            let params =
                json!([signature, {"encoding": "base64", "maxSupportedTransactionVersion": 0}]);
            let (_, want) = rpc(reference, "getTransaction", params.clone());
            let (_, got) = rpc(alone, "getTransaction", params);
            assert_eq!(got, want, "{signature}");
            assert_eq!(got["result"]["slot"], slot);
            assert_eq!(got["result"]["blockTime"], input.block_time);
        }
    }
    assert!(
        inputs
            .iter()
            .any(|b| b.slot / 432_000 == 1 && hash_of.contains_key(&b.parent_slot))
    );
    let text = metrics(alone);
    assert!(
        text.contains("appliance_archive_slot_memo_bound_entries 65536"),
        "{text}"
    );
    assert!(
        !text.contains("appliance_archive_slot_memo_entries 0\n"),
        "{text}"
    );

    // getSignaturesForAddress: no address index behind the public host. Without an upstream:
    // -32011; with one, the call goes to it and its answer (the stand-in's `[]`) is returned;
    // the full index set has rows for the same address (a payer with transactions in both
    // epochs).
    let boundary = 2 * 432_000;
    let mut epochs_of: HashMap<[u8; 32], (bool, bool)> = HashMap::new();
    for block in &inputs {
        for tx in block.entries.iter().flat_map(|e| &e.transactions) {
            let payer = txwire::summarize(&tx.wire).unwrap().static_keys[0];
            let seen_in = epochs_of.entry(payer).or_default();
            if block.slot < boundary {
                seen_in.0 = true;
            } else {
                seen_in.1 = true;
            }
        }
    }
    let payer = epochs_of
        .iter()
        .find(|(_, both)| **both == (true, true))
        .map(|(key, _)| *key)
        .expect("a payer in both epochs");
    let address = bs58::encode(payer).into_string();
    let params = json!([address, {"limit": 1000}]);
    let (_, want) = rpc(reference, "getSignaturesForAddress", params.clone());
    let want = want["result"].as_array().unwrap().clone();
    let newer: Vec<Value> = want
        .iter()
        .filter(|r| r["slot"].as_u64().unwrap() >= boundary)
        .cloned()
        .collect();
    assert!(!newer.is_empty() && newer.len() < want.len(), "{want:?}");
    let (status, got) = rpc(alone, "getSignaturesForAddress", params.clone());
    assert_eq!(status, 200);
    assert_eq!(got["error"]["code"], -32011, "{got}");
    assert_eq!(
        got["error"]["message"],
        "Transaction history is not available from this node"
    );
    let asked = |seen: &process::servers::Seen| {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == "getSignaturesForAddress")
            .count()
    };
    assert_eq!(asked(&seen), 0);
    let (_, got) = rpc(routed, "getSignaturesForAddress", params.clone());
    assert_eq!(got["result"], json!([]), "{got}");
    assert_eq!(asked(&seen), 1);

    // Epoch 2 from the full index set, epoch 1 from the public files: the archive continues the
    // upstream's (empty) answer with epoch 2's rows and stops at epoch 1.
    let (_mixed, mixed) = start(&[
        "--archive".into(),
        format!("{full_base}#2-2"),
        "--archive".into(),
        format!("{public_base}#1-1"),
        "--upstream".into(),
        upstream_url,
    ]);
    let (_, got) = rpc(mixed, "getSignaturesForAddress", params);
    assert_eq!(got["result"], json!(newer), "{got}");
    assert_eq!(asked(&seen), 2);
}

#[test]
fn damaged_archive_data_is_an_internal_error_and_a_damaged_epoch_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let first = synth_epoch(dir.path(), 1, 1);
    synth_epoch(dir.path(), 2, 2);
    // Epoch 2: its sig-exists index cut short (fails its checks at open).
    let car2 = dir.path().join("epoch-2.car");
    let root = archive::car::parse_header(&std::fs::read(&car2).unwrap())
        .unwrap()
        .root;
    let index = archive::index::IndexPaths::for_car(&car2, &root).sig_exists;
    let bytes = std::fs::read(&index).unwrap();
    std::fs::write(&index, &bytes[..bytes.len() / 3]).unwrap();
    // Epoch 1: one byte of a transaction's message flipped inside its node.
    let damaged = first.iter().find(|b| !b.txs.is_empty()).unwrap();
    let healthy = first
        .iter()
        .find(|b| b.slot != damaged.slot && !b.txs.is_empty())
        .unwrap();
    let signature = damaged.txs[0].0.clone();
    let car1 = dir.path().join("epoch-1.car");
    let mut bytes = std::fs::read(&car1).unwrap();
    let raw = bs58::decode(&signature).into_vec().unwrap();
    let at = bytes.windows(64).position(|w| w == raw.as_slice()).unwrap() + 64 + 10;
    bytes[at] ^= 0x01;
    std::fs::write(&car1, &bytes).unwrap();

    // The appliance starts and serves what is sound.
    let (_app, http) = start(&["--archive".into(), dir.path().display().to_string()]);
    let block = |slot: u64| json!([slot, {"transactionDetails": "signatures", "rewards": false}]);
    let (_, answer) = rpc(
        http,
        "getTransaction",
        json!([signature, {"encoding": "base64"}]),
    );
    assert_eq!(answer["error"]["code"], -32019, "{answer}");
    let (_, answer) = rpc(http, "getBlock", block(damaged.slot));
    assert_eq!(answer["error"]["code"], -32019, "{answer}");
    let (_, answer) = rpc(http, "getBlock", block(healthy.slot));
    assert_eq!(answer["result"]["blockhash"], healthy.blockhash, "{answer}");
    // Epoch 2 was skipped: not held here (no upstream to ask).
    let (_, answer) = rpc(http, "getBlock", block(2 * 432_000));
    assert_eq!(answer["error"]["code"], -32004, "{answer}");
    let text = metrics(http);
    assert!(text.contains("appliance_archive_epochs_served 1"), "{text}");
    assert!(
        text.contains("appliance_archive_catalog_failures_total{reason="),
        "{text}"
    );
}

#[test]
fn a_stalled_request_body_is_cut_at_the_body_deadline() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    synth_epoch(dir.path(), 1, 1);
    let config = dir.path().join("appliance.toml");
    std::fs::write(&config, "[http]\nbody_timeout_secs = 1\n").unwrap();
    let (_app, http) = start(&[
        "--archive".into(),
        dir.path().display().to_string(),
        "--config".into(),
        config.display().to_string(),
    ]);
    // Headers announce a megabyte; ten bytes come, then nothing.
    let mut stalled = std::net::TcpStream::connect(http).unwrap();
    stalled
        .write_all(
            b"POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
              Content-Length: 1000000\r\n\r\n{\"jsonrpc\"",
        )
        .unwrap();
    let sent = Instant::now();
    stalled
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = stalled.read_to_end(&mut answer);
    let waited = sent.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
    // The server still answers others.
    let (_, version) = rpc(http, "getVersion", json!([]));
    assert!(version["result"].is_object() || version["error"].is_object());
}

/// `appliance run` with `args` and no shred source: (the process, its gRPC and HTTP addresses),
/// once HTTP answers.
fn start_without_source(args: &[&str], data: &Path) -> (Appliance, SocketAddr, SocketAddr) {
    let (appliance, grpc, http) = process::start_replay(args, data);
    wait_for(Duration::from_secs(60), "the HTTP address", || {
        std::net::TcpStream::connect(http).is_ok()
    });
    (appliance, grpc, http)
}

#[test]
fn an_archive_alone_serves_http_only_unless_the_stream_is_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    indexed(dir.path(), &[("epoch-0-1.car", "epoch-0-1.car")]);
    let archive = dir.path().display().to_string();
    let data = tempfile::tempdir().unwrap();

    let (_app, grpc, http) = start_without_source(&["--archive", &archive], data.path());
    let (_, health) = process::http_get(http, "/health", &[]);
    assert!(health.contains("\"stream\":\"off\""), "{health}");
    let (status, slot) = rpc(http, "getSlot", json!([]));
    assert_eq!(status, 200);
    assert!(slot["result"].is_u64(), "{slot}");
    assert!(
        std::net::TcpStream::connect(grpc).is_err(),
        "a gRPC listener"
    );
    let text = metrics(http);
    assert!(text.contains("appliance_archive_epochs_served 1"), "{text}");
    assert!(
        !text.contains("appliance_updates_published_total"),
        "{text}"
    );
    drop(_app);

    let on = ["--archive", &archive, "--stream", "on"];
    let (_app, grpc, http) = start_without_source(&on, data.path());
    wait_for(Duration::from_secs(30), "the embedded replay", || {
        metrics(http).lines().any(|line| {
            line.starts_with("appliance_updates_published_total ") && !line.ends_with(" 0")
        })
    });
    assert!(std::net::TcpStream::connect(grpc).is_ok());
    assert_eq!(rpc(http, "getSlot", json!([])).0, 200);
}
