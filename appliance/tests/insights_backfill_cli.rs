//! `appliance insights backfill`: the real binary reads a real CAR epoch (written from the insights
//! fixture chain with the archive crate's writer and indexed by `appliance archive index`) and
//! fills the insights store; the stored snapshots must equal the figures computed independently
//! by the fixture generator (`insights/tests/fixtures/insights/expected.json`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use testkit::json_match::assert_matches;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../insights/tests/fixtures/insights")
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Writes the fixture chain as epoch 0 into `dir` and indexes it with the real binary.
fn write_indexed_epoch(dir: &Path) {
    let car = dir.join("epoch-0.car");
    let (bytes, written) = testkit::insights_fixture::chain_car().unwrap();
    assert!(written > 50, "the fixture chain has {written} blocks");
    std::fs::write(&car, bytes).unwrap();
    let out = appliance(&["archive", "index", "--no-progress", car.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn appliance(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn backfill_from_a_real_car_stores_the_expected_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let epochs = dir.path().join("epochs");
    std::fs::create_dir(&epochs).unwrap();
    write_indexed_epoch(&epochs);
    let expected = json(&fixtures().join("expected.json"));
    let history = expected["history"].as_array().unwrap();
    // The second half only: the first windows are filled from the blocks before `from`.
    let from = history[10]["slot_range"]["end"].as_u64().unwrap();
    let to = json(&fixtures().join("chain.json"))["last_slot"]
        .as_u64()
        .unwrap();
    let db = dir.path().join("insights.redb");
    let out = appliance(&[
        "insights",
        "backfill",
        "--archive",
        epochs.to_str().unwrap(),
        "--from",
        &from.to_string(),
        "--to",
        &to.to_string(),
        "--insights-db",
        db.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("100.0%"), "progress bar: {stderr}");
    assert!(stdout.contains(" 21 snapshots"), "{stdout}");

    let store = insights::store::Store::open(&db).unwrap();
    let stored = store.snapshots(0, u64::MAX, 1_000).unwrap().unwrap();
    assert_eq!(stored.len(), history.len() - 10);
    drop(store);
    // Without an upstream, `run --insights-db` serves the backfilled store as it is.
    let http = process::free_tcp_address();
    let data = dir.path().join("data");
    let mut run = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--http", &http.to_string(), "--insights-db"])
        .arg(&db)
        .arg("--data-dir")
        .arg(&data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let (status, body) = loop {
        if std::net::TcpStream::connect(http).is_ok() {
            break process::http_get(http, "/v1/block50", &[]);
        }
        assert!(std::time::Instant::now() < deadline, "no HTTP server");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    run.kill().unwrap();
    run.wait().unwrap();
    assert_eq!(status, 200, "{body}");
    let served: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(served["slot_range"], history.last().unwrap()["slot_range"]);
    assert!(
        !data.join("samples").exists(),
        "an insights store is not the embedded default"
    );
    let store = insights::store::Store::open(&db).unwrap();
    let stored = store.snapshots(0, u64::MAX, 1_000).unwrap().unwrap();
    for (index, (body, want)) in stored.iter().zip(&history[10..]).enumerate() {
        let actual: Value = serde_json::from_slice(body).unwrap();
        let mut want = want.clone();
        // Congestion needs the live tip's timing; the backfilled snapshot has none.
        want.as_object_mut().unwrap().remove("congestion");
        assert_matches(&actual, &want, &format!("snapshot {index}"));
    }
}

#[test]
fn bad_ranges_and_missing_archives_fail_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("insights.redb");
    let missing = dir.path().join("no-such-dir");
    let out = appliance(&[
        "insights",
        "backfill",
        "--archive",
        missing.to_str().unwrap(),
        "--from",
        "1",
        "--to",
        "2",
        "--insights-db",
        db.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("opening the archive"), "{stderr}");

    let epochs = dir.path().join("epochs");
    std::fs::create_dir(&epochs).unwrap();
    write_indexed_epoch(&epochs);
    let reversed = appliance(&[
        "insights",
        "backfill",
        "--archive",
        epochs.to_str().unwrap(),
        "--from",
        "1080",
        "--to",
        "1070",
        "--insights-db",
        db.to_str().unwrap(),
        "--no-progress",
    ]);
    assert!(!reversed.status.success());
    let stderr = String::from_utf8_lossy(&reversed.stderr);
    assert!(stderr.contains("1080..=1070"), "{stderr}");

    let elsewhere = appliance(&[
        "insights",
        "backfill",
        "--archive",
        epochs.to_str().unwrap(),
        "--from",
        "500000",
        "--to",
        "500010",
        "--insights-db",
        db.to_str().unwrap(),
        "--no-progress",
    ]);
    assert!(!elsewhere.status.success());
    let stderr = String::from_utf8_lossy(&elsewhere.stderr);
    assert!(stderr.contains("holds no block"), "{stderr}");
}
