//! The `appliance decode` command-line contract, run as a real process on the reference fixtures:
//! entry lines equal the manifest's entries and signatures, summaries add up, every framing works.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures")
        .join(relative)
}

/// Runs `appliance decode` and returns its JSON lines.
fn decode(args: &[&str]) -> Vec<Value> {
    let output = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .arg("decode")
        .args(args)
        .output()
        .expect("appliance runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect()
}

#[test]
fn lossy_slot_prints_the_manifest_entries_conformance() {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixture("shreds/manifest.json")).unwrap()).unwrap();
    let slot = &manifest["slots"][1];
    let file = fixture(&format!(
        "shreds/{}",
        slot["files"]["lossy"].as_str().unwrap()
    ));
    let lines = decode(&[
        file.to_str().unwrap(),
        "--leader",
        slot["leader"].as_str().unwrap(),
        "--shred-version",
        "50093",
    ]);
    let mut entries: Vec<&Value> = lines
        .iter()
        .filter(|line| line.get("hash").is_some())
        .collect();
    entries.sort_by_key(|line| {
        (
            line["batch_start"].as_u64().unwrap(),
            line["entry_in_batch"].as_u64().unwrap(),
        )
    });
    let expected = slot["entries"].as_array().unwrap();
    assert_eq!(entries.len(), expected.len());
    for (line, expected) in entries.iter().zip(expected) {
        assert_eq!(line["slot"], slot["slot"]);
        assert_eq!(line["num_hashes"], expected["num_hashes"]);
        assert_eq!(line["hash"], expected["hash"]);
        let signatures: Vec<&Value> = expected["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tx| &tx["signature"])
            .collect();
        assert_eq!(
            line["signatures"]
                .as_array()
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            signatures
        );
    }
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(lines.last().unwrap()["slot"], slot["slot"]);
    assert_eq!(summary["fec_sets"], slot["num_fec_sets"]);
    assert_eq!(summary["entries"], slot["num_entries"]);
    assert_eq!(summary["transactions"], slot["num_transactions"]);
    assert_eq!(
        summary["batches"].as_u64().unwrap(),
        slot["batches"].as_array().unwrap().len() as u64
    );
    assert_eq!(summary["rejected"], serde_json::json!({}));
    let records = slot["lossy"]["num_records"].as_u64().unwrap();
    let shreds =
        summary["data_shreds"].as_u64().unwrap() + summary["code_shreds"].as_u64().unwrap();
    assert_eq!(shreds, records);
    let dropped = slot["lossy"]["dropped_data_indices"]
        .as_array()
        .unwrap()
        .len() as u64;
    assert!(summary["recovered"].as_u64().unwrap() >= dropped);
}

#[test]
fn pcap_and_ar_framings_are_detected() {
    let pcap = decode(&[fixture("firedancer/demo-shreds.pcap").to_str().unwrap()]);
    let summary = &pcap.last().unwrap()["summary"];
    assert_eq!(summary["transactions"], 1280);
    assert_eq!(summary["entries"], 64);
    assert_eq!(summary["data_shreds"], 256);
    assert_eq!(summary["code_shreds"], 256);
    let ar = fixture("firedancer/chained_resigned-FT9QgTVo375TgDAQusTgpsfXqTosCJLfrBpoVdcbnhtS.ar");
    let lines = decode(&[ar.to_str().unwrap(), "--shred-version", "27350"]);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["fec_sets"], 5);
    assert_eq!(summary["transactions"], 19 + 38 + 1 + 5);
}

#[test]
fn wrong_leader_and_version_are_counted_not_fatal() {
    let file = fixture("shreds/slot-361200003.bin");
    let lines = decode(&[file.to_str().unwrap(), "--shred-version", "1"]);
    assert_eq!(lines.len(), 1, "only the summary");
    let rejected = &lines[0]["summary"]["rejected"];
    assert_eq!(rejected["wrong_shred_version"], 83);
    let lines = decode(&[
        file.to_str().unwrap(),
        "--leader",
        "EvGxZRJs3iwvxGsh3dWDkaoGQAhqwwK4jspUW5GMgao",
    ]);
    // Another leader's key (the second leader of the fixtures): every set fails its signature.
    assert!(lines.iter().all(|line| line.get("hash").is_none()));
    assert_eq!(
        lines.last().unwrap()["summary"]["rejected"]["bad_signature"],
        83
    );
}

#[test]
fn unreadable_input_fails_and_empty_input_succeeds() {
    let missing = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["decode", "/nonexistent/capture.bin"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/capture.bin"));
    let empty = decode(&[fixture("shreds/negative/empty.bin").to_str().unwrap()]);
    assert!(empty.is_empty());
    let truncated = decode(&[fixture("shreds/negative/truncated_common_header.bin")
        .to_str()
        .unwrap()]);
    // 83 raw bytes read as a length-prefixed file: the first "record" claims more bytes than remain.
    assert_eq!(truncated.len(), 1);
    assert_eq!(
        truncated[0]["unattributed"]["rejected"]["truncated_record"],
        1
    );
}
