//! The embedded default shows all three products (issue 23): `appliance run` with no source flag
//! streams the bundled replay, serves the bundled real epoch-0 pieces at `POST /`, and serves
//! insights backfilled at first start from the bundled sample chain, whose window must equal the
//! figures the fixture generator computed independently. A second start reuses what the first
//! prepared; `--samples off` serves neither sample. The bundled chain CAR itself must be what the
//! archive writer makes of the fixture chain (`UPDATE_SAMPLES=1` rewrites it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use process::{http_get, start_replay};
use serde_json::{Value, json};
use testkit::json_match::assert_matches;

/// Slot 1 of mainnet epoch 0: its blockhash and first transaction (docs/samples.md).
const SLOT_1_BLOCKHASH: &str = "AcknnkY4ok5BZuk69WijDETKVRUPZoMtniZHMe4ZaK1e";
const SLOT_1_FIRST_SIGNATURE: &str =
    "39V8tR2Q8Ar3WwMBfVTRPFr7AakLHy5wp7skJNBL7ET6ARoikqc1TaMiuXEtHiNPLQKoeiVr5XnKH8QtjdonN4yM";

fn bundled_chain() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/insights-chain/epoch-0.car")
}

#[test]
fn the_bundled_chain_is_the_fixture_chain_as_the_archive_writer_writes_it() {
    let (written, blocks) = testkit::insights_fixture::chain_car().unwrap();
    assert_eq!(blocks, 80, "the fixture chain's produced blocks");
    if std::env::var_os("UPDATE_SAMPLES").is_some() {
        std::fs::write(bundled_chain(), &written).unwrap();
    }
    let bundled = std::fs::read(bundled_chain()).unwrap();
    assert!(
        bundled == written,
        "appliance/samples/insights-chain/epoch-0.car differs from the fixture chain \
         (run this test with UPDATE_SAMPLES=1 after changing the fixtures or the writer)"
    );
}

fn rpc(http: SocketAddr, method: &str, params: Value) -> Value {
    process::rpc_call(http, method, params).1
}

/// Waits for `/health` and returns how long the appliance took to answer it.
fn wait_healthy(http: SocketAddr) -> Duration {
    let start = Instant::now();
    loop {
        let up =
            std::net::TcpStream::connect(http).is_ok() && http_get(http, "/health", &[]).0 == 200;
        if up {
            return start.elapsed();
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no /health");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The archive answers from the real epoch-0 pieces.
fn check_archive(http: SocketAddr) {
    let block = rpc(
        http,
        "getBlock",
        json!([1, {"transactionDetails": "signatures", "rewards": false}]),
    );
    assert_eq!(block["result"]["blockhash"], SLOT_1_BLOCKHASH, "{block}");
    assert_eq!(block["result"]["signatures"][0], SLOT_1_FIRST_SIGNATURE);
    let transaction = rpc(http, "getTransaction", json!([SLOT_1_FIRST_SIGNATURE]));
    assert_eq!(transaction["result"]["slot"], 1, "{transaction}");
}

/// `/v1/block50` is the window ending at the chain's last block, as the generator computed it.
fn check_insights(http: SocketAddr) {
    let (status, body) = http_get(http, "/v1/block50", &[]);
    assert_eq!(status, 200, "{body}");
    let actual: Value = serde_json::from_str(&body).unwrap();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(testkit::insights_fixture::fixture_dir().join("expected.json")).unwrap(),
    )
    .unwrap();
    let mut want = expected["history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    // Congestion needs the live tip's timing; a window restored from a store has none.
    want.as_object_mut().unwrap().remove("congestion");
    assert_matches(&actual, &want, "/v1/block50");
}

/// One transaction through `appliance subscribe`.
fn check_stream(grpc: SocketAddr) {
    let out = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["subscribe", "--compact", "--count", "1", "--endpoint"])
        .arg(format!("http://{grpc}"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
}

#[test]
fn the_embedded_default_streams_serves_the_archive_and_insights_and_restarts_on_its_samples() {
    let data = tempfile::tempdir().unwrap();
    let (appliance, grpc, http) = start_replay(&[], data.path());
    let first = wait_healthy(http);
    check_archive(http);
    check_insights(http);
    check_stream(grpc);
    drop(appliance);

    let (_appliance, grpc, http) = start_replay(&[], data.path());
    let second = wait_healthy(http);
    check_insights(http);
    check_archive(http);
    check_stream(grpc);
    eprintln!("up in {first:?} on a fresh data directory, {second:?} on the prepared one");
}

#[test]
fn samples_off_serves_neither_sample() {
    let data = tempfile::tempdir().unwrap();
    let (_appliance, _grpc, http) = start_replay(&["--samples", "off"], data.path());
    wait_healthy(http);
    let answer = rpc(http, "getBlock", json!([1]));
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert_eq!(http_get(http, "/v1/block50", &[]).0, 503);
    assert!(!data.path().join("samples").exists());
}
