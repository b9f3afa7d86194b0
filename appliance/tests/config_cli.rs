//! `appliance run --config FILE [--check-config]`: the file and the flags merge (flags win), every
//! bound is validated with an error naming the field, and `--check-config` prints the effective
//! configuration and exits without starting anything.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::path::PathBuf;
use std::process::{Command, Output};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config/appliance.example.toml")
}

fn check(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--check-config"])
        .args(args)
        .output()
        .unwrap()
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("appliance-config-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn flags_override_the_file_and_the_result_is_printed() {
    let output = check(&[
        "--config",
        example().to_str().unwrap(),
        "--grpc",
        "127.0.0.1:9555",
        "--subscriber-queue",
        "512",
        "--udp",
        "0.0.0.0:8001",
    ]);
    assert!(output.status.success(), "{output:?}");
    let printed: toml::Value = toml::from_str(&String::from_utf8(output.stdout).unwrap()).unwrap();
    assert_eq!(printed["grpc"]["address"].as_str(), Some("127.0.0.1:9555"));
    assert_eq!(printed["grpc"]["subscriber_queue"].as_integer(), Some(512));
    assert_eq!(printed["grpc"]["max_filters"].as_integer(), Some(64));
    assert_eq!(printed["sources"]["udp"][0].as_str(), Some("0.0.0.0:8001"));
    assert_eq!(printed["http"]["address"].as_str(), Some("127.0.0.1:8080"));
}

#[test]
fn file_values_apply_when_no_flag_overrides_them() {
    let path = temp_file(
        "partial.toml",
        "[http]\naddress = \"127.0.0.1:8181\"\n[decoder]\nslot_lookback = 32\n",
    );
    let output = check(&["--config", path.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let printed: toml::Value = toml::from_str(&String::from_utf8(output.stdout).unwrap()).unwrap();
    assert_eq!(printed["http"]["address"].as_str(), Some("127.0.0.1:8181"));
    assert_eq!(printed["decoder"]["slot_lookback"].as_integer(), Some(32));
    let _ = std::fs::remove_file(path);
}

#[test]
fn bad_configurations_fail_with_the_field_named() {
    let cases = [
        ("[grpc]\nsubscriber_queu = 5\n", "subscriber_queu"),
        ("[sources]\nring_slots = 1000\n", "sources.ring_slots"),
        ("[workers]\ncount = 0\n", "workers.count"),
        ("[workers]\nforward_slots = 1\n", "workers.forward_slots"),
        (
            "[decoder]\nmax_pending_batches = 0\n",
            "decoder.max_pending_batches",
        ),
        ("[programs.ids]\nALPHA_FUN = \"not-base58!\"\n", "ALPHA_FUN"),
        (
            "[auth]\ntoken_file = \"/nonexistent/tokens\"\n",
            "/nonexistent/tokens",
        ),
    ];
    for (index, (text, named)) in cases.iter().enumerate() {
        let path = temp_file(&format!("bad-{index}.toml"), text);
        let output = check(&["--config", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{text} was accepted");
        assert!(stderr.contains(named), "{text}: {stderr}");
        let _ = std::fs::remove_file(path);
    }
    let output = check(&["--subscriber-queue", "0"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("grpc.subscriber_queue"));
    for workers in ["0", "65"] {
        let output = check(&["--workers", workers]);
        assert!(!output.status.success(), "--workers {workers} was accepted");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("workers.count (--workers)"),
            "{output:?}"
        );
    }
    for (flag, field) in [
        ("--realtime-priority", "workers.realtime_priority"),
        ("--grpc-realtime-priority", "grpc.realtime_priority"),
    ] {
        let output = check(&[flag, "100"]);
        assert!(!output.status.success(), "{flag} 100 was accepted");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(field),
            "{output:?}"
        );
    }
    let output = check(&[
        "--workers",
        "3",
        "--worker-cores",
        "0,1",
        "--realtime-priority",
        "20",
        "--grpc-realtime-priority",
        "19",
    ]);
    assert!(output.status.success(), "{output:?}");
    let printed: toml::Value = toml::from_str(&String::from_utf8(output.stdout).unwrap()).unwrap();
    assert_eq!(printed["workers"]["count"].as_integer(), Some(3));
    assert_eq!(
        printed["workers"]["realtime_priority"].as_integer(),
        Some(20)
    );
    assert_eq!(printed["grpc"]["realtime_priority"].as_integer(), Some(19));
    assert_eq!(
        printed["workers"]["cores"].as_array().map(Vec::len),
        Some(2)
    );
}

#[test]
fn check_config_hides_the_credentials_of_configured_urls() {
    let output = check(&[
        "--upstream",
        "https://user:pa55word@rpc.example.com/?api-key=s3cr3tkey",
    ]);
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    assert!(
        !printed.contains("s3cr3tkey") && !printed.contains("pa55word"),
        "{printed}"
    );
    let printed: toml::Value = toml::from_str(&printed).unwrap();
    assert_eq!(
        printed["archive"]["upstream"].as_str(),
        Some("https://***@rpc.example.com/?api-key=***")
    );
    // The new bounds are printed with their defaults.
    assert_eq!(
        printed["grpc"]["max_subscribers_per_ip"].as_integer(),
        Some(100)
    );
    assert_eq!(
        printed["grpc"]["shutdown_timeout_secs"].as_integer(),
        Some(10)
    );
}

/// The `appliance: ...` line a failed command printed last on standard error.
fn error_line(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .rfind(|line| line.starts_with("appliance: "))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn check_config_refuses_what_run_refuses() {
    let missing_dir =
        std::env::temp_dir().join(format!("appliance-no-archive-{}", std::process::id()));
    let missing_dir = missing_dir.to_str().unwrap();
    let cases: [&[&str]; 2] = [
        &["--archive", missing_dir],
        &[
            "--tls-cert",
            "/nonexistent/cert.pem",
            "--tls-key",
            "/nonexistent/key.pem",
        ],
    ];
    let expected = [
        format!("appliance: --archive {missing_dir}: not a directory"),
        "appliance: reading the TLS certificate /nonexistent/cert.pem".to_owned(),
    ];
    for (args, expected) in cases.iter().zip(expected) {
        let checked = check(args);
        assert!(
            !checked.status.success(),
            "--check-config accepted {args:?}"
        );
        let checked_line = error_line(&checked);
        assert!(checked_line.starts_with(&expected), "{checked_line}");
        // `run` itself refuses the same way (it exits before serving anything).
        let ran = Command::new(env!("CARGO_BIN_EXE_appliance"))
            .args(["run", "--udp", "127.0.0.1:0", "--grpc", "127.0.0.1:0"])
            .args(["--http", "127.0.0.1:0"])
            .args(*args)
            .output()
            .unwrap();
        assert!(!ran.status.success(), "run accepted {args:?}");
        assert_eq!(error_line(&ran), checked_line, "{args:?}");
    }
}

#[test]
fn a_missing_config_file_prints_its_os_error_once() {
    let output = check(&["--config", "/nonexistent/appliance.toml"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.trim_end(),
        "appliance: reading /nonexistent/appliance.toml: No such file or directory (os error 2)"
    );
}

#[test]
fn program_ids_are_named_where_they_were_written() {
    let path = temp_file(
        "bad-program.toml",
        "[programs.ids]\nALPHA_FUN = \"not-base58!\"\n",
    );
    let output = check(&["--config", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("[programs.ids] ALPHA_FUN = \"not-base58!\""),
        "{stderr}"
    );
    assert!(!stderr.contains("--program-id"), "{stderr}");
    let _ = std::fs::remove_file(path);
    let output = check(&["--program-id", "ALPHA_FUN=not-base58!"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("--program-id \"ALPHA_FUN=not-base58!\""),
        "{stderr}"
    );
    let path = temp_file("bad-aggregator.toml", "[programs]\naggregator = \"nope\"\n");
    let output = check(&["--config", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[programs] aggregator"), "{stderr}");
    let _ = std::fs::remove_file(path);
}
