//! `appliance run --upstream` against the stand-in JSON-RPC upstream (a real HTTP server serving
//! the insights fixture chain, its tip advancing every 25 ms): SIGKILL mid-ingest, start again on
//! the same store, and the history holds exactly one snapshot per produced slot, no gap, no
//! duplicate; SIGTERM then exits 0. Without `--upstream`, `/v1` answers 503.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::insights_standin::{Pace, StandinChain, StandinServer};

use process::free_tcp_address;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../insights/tests/fixtures/insights")
}

fn get(url: &str) -> Option<(u16, Value)> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let mut response = agent.get(url).call().ok()?;
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().ok()?;
    Some((status, serde_json::from_str(&body).ok()?))
}

fn spawn(http: u16, upstream: Option<&str>, db: &Path) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_appliance"));
    command
        .args(["run", "--udp", "127.0.0.1:0", "--grpc"])
        .arg(free_tcp_address().to_string())
        .arg("--http")
        .arg(format!("127.0.0.1:{http}"))
        .arg("--insights-db")
        .arg(db)
        .arg("--data-dir")
        .arg(db.parent().unwrap())
        .args(["--insights-poll", "20ms"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(upstream) = upstream {
        command.args(["--upstream", upstream]);
    }
    command.spawn().unwrap()
}

fn history_ends(base: &str) -> Vec<u64> {
    let Some((200, Value::Array(snapshots))) =
        get(&format!("{base}/v1/block50/history?from=0&to=999999999"))
    else {
        return Vec::new();
    };
    snapshots
        .iter()
        .map(|s| s["slot_range"]["end"].as_u64().unwrap())
        .collect()
}

fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[test]
fn sigkill_mid_ingest_then_restart_keeps_history_whole() {
    let chain = StandinChain::load(
        &fixtures(),
        Pace::Paced {
            initial: 60,
            per_slot: Duration::from_millis(25),
        },
    )
    .unwrap();
    let standin = StandinServer::start(chain, 0).unwrap();
    let dir = std::env::temp_dir().join(format!(
        "insights-restart-{}-{}",
        std::process::id(),
        free_tcp_address().port()
    ));
    let db = dir.join("insights.redb");
    let http = free_tcp_address().port();
    let base = format!("http://127.0.0.1:{http}");

    // Three SIGKILLs while the tip keeps moving and the ingest keeps fetching, at different
    // points of its cycle (each after a few more snapshots).
    let mut seen = 0;
    for round in 0..3 {
        let mut process = spawn(http, Some(&standin.url()), &db);
        let want = seen + 10 + 7 * round;
        wait_for(Duration::from_secs(60), "more snapshots", || {
            history_ends(&base).len() >= want
        });
        seen = history_ends(&base).len();
        process.kill().unwrap();
        process.wait().unwrap();
    }
    let killed_at_tip = standin.chain.tip();

    let mut second = spawn(http, Some(&standin.url()), &db);
    wait_for(
        Duration::from_secs(60),
        "the restarted ingest to pass the kill point",
        || {
            history_ends(&base)
                .last()
                .is_some_and(|&end| end > killed_at_tip + 40)
        },
    );
    let ends = history_ends(&base);
    let (first_end, last_end) = (ends[0], *ends.last().unwrap());
    let produced = standin.chain.produced(first_end, last_end);
    assert_eq!(
        ends, produced,
        "one snapshot per produced slot, in order, no gap, no duplicate"
    );
    // Every window is the 50 produced blocks ending at its slot.
    let all = standin.chain.produced(0, last_end);
    let (200, Value::Array(snapshots)) = get(&format!(
        "{base}/v1/block50/history?from={first_end}&to={last_end}"
    ))
    .unwrap() else {
        panic!("history failed");
    };
    for snapshot in &snapshots {
        let end = snapshot["slot_range"]["end"].as_u64().unwrap();
        let position = all.iter().position(|&slot| slot == end).unwrap();
        assert_eq!(
            snapshot["slot_range"]["start"].as_u64().unwrap(),
            all[position - 49],
            "window ending {end}"
        );
    }

    // SIGTERM: clean exit.
    let status = Command::new("kill")
        .args(["-TERM", &second.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = second.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(Instant::now() < deadline, "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn without_upstream_v1_answers_503() {
    let dir = std::env::temp_dir().join(format!(
        "insights-off-{}-{}",
        std::process::id(),
        free_tcp_address().port()
    ));
    let http = free_tcp_address().port();
    let base = format!("http://127.0.0.1:{http}");
    let mut child = spawn(http, None, &dir.join("insights.redb"));
    wait_for(Duration::from_secs(30), "the HTTP server", || {
        get(&format!("{base}/health")).is_some()
    });
    let (status, body) = get(&format!("{base}/v1/block50")).unwrap();
    assert_eq!(status, 503);
    assert_eq!(body["error"]["code"], "insights_disabled");
    assert!(
        !dir.join("insights.redb").exists(),
        "no store without --upstream"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
