//! `appliance subscribe` against the real process on its embedded default: JSON lines that parse
//! as the stream's updates, compact lines filtered by program, `--count`, `--stats` on standard
//! error, the token, and clear errors with a non-zero exit for a malformed filter (refused before
//! connecting), a filter the server refuses (`INVALID_ARGUMENT`, its reason printed) and an
//! endpoint nobody listens on.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use process::{free_tcp_address, http_get, start_replay};
use serde_json::Value;

/// `appliance subscribe --endpoint http://GRPC` with `extra`, killed after 60 s.
fn subscribe(grpc: SocketAddr, extra: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["subscribe", "--endpoint", &format!("http://{grpc}")])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Output is read while the child runs (more than a pipe's worth would otherwise block it);
    // a watchdog kills it after a minute.
    let pid = child.id().to_string();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                if Instant::now() > deadline {
                    let _ = Command::new("kill").args(["-9", &pid]).status();
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let output = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Release);
    watchdog.join().unwrap();
    output
}

fn wait_healthy(http: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(std::net::TcpStream::connect(http).is_ok() && http_get(http, "/health", &[]).0 == 200) {
        assert!(Instant::now() < deadline, "no /health");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn lines(output: &Output) -> Vec<String> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn subscribe_prints_filtered_updates_counts_and_reports() {
    let data = tempfile::tempdir().unwrap();
    let (_appliance, grpc, http) = start_replay(&["--auth-token", "tok"], data.path());
    wait_healthy(http);

    let json = subscribe(grpc, &["--token", "tok", "--count", "5", "--stats"]);
    assert!(json.status.success(), "{json:?}");
    let updates: Vec<Value> = lines(&json)
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let transactions = updates
        .iter()
        .filter(|update| update.get("transaction").is_some() || update.get("delta").is_some())
        .count();
    assert_eq!(transactions, 5, "{updates:?}");
    let first = updates.iter().find_map(|u| u.get("transaction")).unwrap();
    assert!(first["signature"].is_string() && first["serverTiming"].is_object());

    // --from-slot: the first transaction seen comes again (same sequence, same signature) among
    // the kept updates of its slot.
    let slot = first["slot"].as_str().unwrap();
    let sequence = updates
        .iter()
        .find(|u| u.get("transaction") == Some(first))
        .and_then(|u| u["sequence"].as_str())
        .unwrap();
    let again = subscribe(
        grpc,
        &["--token", "tok", "--count", "400", "--from-slot", slot],
    );
    assert!(again.status.success(), "{again:?}");
    let replayed: Vec<Value> = lines(&again)
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let first_replayed = replayed
        .iter()
        .find_map(|u| u["transaction"]["slot"].as_str());
    assert_eq!(
        first_replayed,
        Some(slot),
        "the replay starts at the asked slot"
    );
    let same = replayed
        .iter()
        .find(|u| u["sequence"].as_str() == Some(sequence))
        .expect("the transaction seen first is replayed");
    assert_eq!(same["transaction"]["signature"], first["signature"]);

    let compact = subscribe(
        grpc,
        &[
            "--token",
            "tok",
            "--compact",
            "--count",
            "3",
            "--filter",
            "pump:programs=ALPHA_FUN",
        ],
    );
    assert!(compact.status.success(), "{compact:?}");
    let printed = lines(&compact);
    assert_eq!(printed.len(), 3, "{printed:?}");
    for line in &printed {
        assert!(
            line.starts_with("slot ") && line.contains("ALPHA_FUN:"),
            "{line}"
        );
    }

    let stats = subscribe(
        grpc,
        &["--token", "tok", "--compact", "--count", "400", "--stats"],
    );
    let stderr = String::from_utf8_lossy(&stats.stderr);
    assert!(
        stats.status.success() && stderr.contains("transactions/s"),
        "{stderr}"
    );
}

#[test]
fn subscribe_errors_are_clear_and_exit_non_zero() {
    let data = tempfile::tempdir().unwrap();
    let (_appliance, grpc, http) = start_replay(&["--auth-token", "tok"], data.path());
    wait_healthy(http);
    let stderr = |output: &Output| String::from_utf8_lossy(&output.stderr).into_owned();

    let malformed = subscribe(grpc, &["--filter", "x:programs=NOPE"]);
    assert!(!malformed.status.success());
    assert!(
        stderr(&malformed).contains("unknown program \"NOPE\""),
        "{malformed:?}"
    );

    let bad_key = ["--token", "tok", "--filter", "x:accounts=not-base58!"];
    let refused = subscribe(grpc, &bad_key);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("InvalidArgument"), "{refused:?}");

    let no_token = subscribe(grpc, &["--count", "1"]);
    assert!(!no_token.status.success());
    assert!(
        stderr(&no_token).contains("Unauthenticated"),
        "{no_token:?}"
    );

    let nobody = subscribe(free_tcp_address(), &["--count", "1"]);
    assert!(!nobody.status.success());
    assert!(stderr(&nobody).contains("connecting to"), "{nobody:?}");
}
