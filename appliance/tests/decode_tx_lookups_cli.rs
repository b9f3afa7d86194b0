//! `appliance decode-tx --lookup-tables FILE` and `--rpc URL` (issue 20) as a real process: the
//! fixture manifest's v0 transactions print the loaded addresses the reference computes from the
//! manifest's tables (canonical JSON: base64 bytes, an empty string at an unresolved position) and
//! their lookup status; the stand-in cluster serves the tables as account data for `--rpc`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use base64::Engine;
use decoder::lookup::{
    ADDRESS_LOOKUP_TABLE_PROGRAM_ID, LookupTableMeta, encode_lookup_table_account,
};
use decoder::transaction::parse_transaction_exact;
use serde_json::{Value, json};
use testkit::cluster_rpc::{ClusterStandin, ClusterState, StandinAccount};

type Key = [u8; 32];

fn manifest() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures/shreds/manifest.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn key(text: &str) -> Key {
    bs58::decode(text).into_vec().unwrap().try_into().unwrap()
}

fn tables(manifest: &Value) -> Vec<(String, Vec<String>)> {
    manifest["address_lookup_tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|table| {
            let addresses = table["addresses"].as_array().unwrap();
            (
                table["address"].as_str().unwrap().to_owned(),
                addresses
                    .iter()
                    .map(|a| a.as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect()
}

/// The first `count` v0 transactions that call a supported program (base64 wire bytes).
fn v0_lines(manifest: &Value, count: usize) -> Vec<String> {
    manifest["slots"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|slot| slot["entries"].as_array().unwrap())
        .flat_map(|entry| entry["transactions"].as_array().unwrap())
        .filter(|tx| tx["version"] == "v0" && tx["anchor_calls"].as_array().is_some())
        .map(|tx| tx["bytes"].as_str().unwrap().to_owned())
        .take(count)
        .collect()
}

/// The reference in canonical JSON: base64 of each loaded address, `""` where the table is not
/// in `known`.
fn reference(line: &str, known: &HashMap<Key, Vec<Key>>) -> (Vec<String>, Vec<String>) {
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine.decode(line).unwrap();
    let transaction = parse_transaction_exact(&bytes).unwrap();
    let (mut writable, mut readonly) = (Vec::new(), Vec::new());
    for lookup in transaction.address_table_lookups() {
        let table = known.get(lookup.table);
        let pick =
            |index: &u8| table.map_or(String::new(), |t| engine.encode(t[usize::from(*index)]));
        writable.extend(lookup.writable_indices.iter().map(pick));
        readonly.extend(lookup.readonly_indices.iter().map(pick));
    }
    (writable, readonly)
}

fn decode_tx(args: &[&str], lines: &[String]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .arg("decode-tx")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Every printed update's envelope carries the reference and `status`.
fn assert_resolved(outputs: &[Value], lines: &[String], known: &HashMap<Key, Vec<Key>>) -> usize {
    assert_eq!(outputs.len(), lines.len());
    let mut partial = 0;
    for (updates, line) in outputs.iter().zip(lines) {
        let (writable, readonly) = reference(line, known);
        let complete = writable.iter().chain(&readonly).all(|a| !a.is_empty());
        let none = writable.iter().chain(&readonly).all(String::is_empty);
        let status = match (complete, none) {
            (true, _) => "LOOKUP_STATUS_RESOLVED",
            (false, true) => "LOOKUP_STATUS_UNRESOLVED",
            (false, false) => "LOOKUP_STATUS_PARTLY_RESOLVED",
        };
        partial += usize::from(!complete);
        let updates = updates.as_array().unwrap();
        assert!(!updates.is_empty());
        for update in updates {
            let envelope = update
                .get("transaction")
                .or_else(|| update["delta"].get("envelope"))
                .unwrap();
            assert_eq!(envelope["loadedWritableAddresses"], json!(writable));
            assert_eq!(envelope["loadedReadonlyAddresses"], json!(readonly));
            assert_eq!(envelope["lookupStatus"], status, "{envelope}");
        }
    }
    partial
}

#[test]
fn lookup_tables_from_a_file_resolve_every_lookup() {
    let manifest = manifest();
    let tables = tables(&manifest);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tables.json");
    let map: serde_json::Map<String, Value> = tables
        .iter()
        .map(|(table, addresses)| (table.clone(), json!(addresses)))
        .collect();
    std::fs::write(&file, Value::Object(map).to_string()).unwrap();
    let known: HashMap<Key, Vec<Key>> = tables
        .iter()
        .map(|(table, addresses)| (key(table), addresses.iter().map(|a| key(a)).collect()))
        .collect();
    let lines = v0_lines(&manifest, 60);
    let outputs = decode_tx(&["--lookup-tables", file.to_str().unwrap()], &lines);
    assert_eq!(assert_resolved(&outputs, &lines, &known), 0);
    // Without tables: every lookup unresolved, every position listed empty.
    let outputs = decode_tx(&[], &lines);
    assert_eq!(
        assert_resolved(&outputs, &lines, &HashMap::new()),
        lines.len()
    );
}

#[test]
fn lookup_tables_from_the_cluster_rpc_and_a_missing_one() {
    let manifest = manifest();
    let tables = tables(&manifest);
    // The cluster knows every table but the last.
    let mut state = ClusterState::new(432_000, 361_200_010);
    let mut known = HashMap::new();
    for (table, addresses) in &tables[..tables.len() - 1] {
        let addresses: Vec<Key> = addresses.iter().map(|a| key(a)).collect();
        let mut data = Vec::new();
        encode_lookup_table_account(&LookupTableMeta::new(None), &addresses, &mut data);
        let account = StandinAccount {
            owner: bs58::encode(ADDRESS_LOOKUP_TABLE_PROGRAM_ID).into_string(),
            data,
            lamports: 1,
        };
        state.accounts.insert(table.clone(), account);
        known.insert(key(table), addresses);
    }
    let standin = ClusterStandin::start(state).unwrap();
    let lines = v0_lines(&manifest, 60);
    let outputs = decode_tx(&["--rpc", &standin.url()], &lines);
    // Exact positions per transaction (resolved ones and empty ones) are checked inside.
    let partial = assert_resolved(&outputs, &lines, &known);
    assert!(partial > 0, "some transaction uses the missing table");
    assert!(standin.calls("getMultipleAccounts") >= 1);
}

#[test]
fn a_malformed_tables_file_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    std::fs::write(&file, r#"{"not-base58!": []}"#).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["decode-tx", "--lookup-tables", file.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--lookup-tables") && stderr.contains("bad.json"),
        "{stderr}"
    );
}
