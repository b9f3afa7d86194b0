//! The log lines of the real binary on standard error (issue 23): no ANSI colour codes when
//! standard error is not a terminal (here a pipe, as under journald), and one JSON object per line
//! with `--log-format json`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use process::{Appliance, free_tcp_address};
use serde_json::Value;

/// Starts `appliance run` (one unused UDP source) with `extra` flags and collects its standard
/// error until the line announcing the HTTP address (or 60 s).
fn log_lines(extra: &[&str]) -> Vec<String> {
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--udp", "127.0.0.1:0", "--grpc"])
        .arg(free_tcp_address().to_string())
        .arg("--http")
        .arg(free_tcp_address().to_string())
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut appliance = Appliance { child };
    let stderr = appliance.child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut lines = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(line) = rx.recv_timeout(left) else {
            break;
        };
        let done = line.contains("serving /health and /metrics");
        lines.push(line);
        if done {
            return lines;
        }
    }
    panic!("no `serving /health and /metrics` line: {lines:#?}");
}

#[test]
fn text_logs_have_no_colour_codes_on_a_pipe() {
    let lines = log_lines(&[]);
    assert!(lines.len() > 2, "{lines:#?}");
    for line in &lines {
        assert!(!line.contains('\u{1b}'), "ANSI escape in {line:?}");
        assert!(line.contains("INFO") || line.contains("WARN"), "{line:?}");
    }
}

#[test]
fn json_logs_are_one_object_per_line() {
    let lines = log_lines(&["--log-format", "json"]);
    let objects: Vec<Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}")))
        .collect();
    for object in &objects {
        assert!(object["timestamp"].is_string(), "{object}");
        assert!(object["level"].is_string(), "{object}");
        assert!(object["message"].is_string(), "{object}");
    }
    let serving = objects.last().unwrap();
    assert_eq!(serving["message"], "serving /health and /metrics");
    assert_eq!(serving["level"], "INFO");
    assert!(
        serving["address"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:")
    );
}
