//! The `appliance decode-tx` contract, run as a real process: canonical proto3 JSON of the updates
//! an empty-map subscriber receives, one line per input line, checked against the public
//! dex-vectors (decoded independently by Anchor's reference coder).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../decoder/tests/fixtures")
        .join(relative)
}

fn decode_tx(input: &str) -> (Vec<Value>, String) {
    let (lines, stderr, success) = decode_tx_status(input);
    assert!(success, "{stderr}");
    (lines, stderr)
}

/// Output lines, standard error and whether the command succeeded.
fn decode_tx_status(input: &str) -> (Vec<Value>, String, bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .arg("decode-tx")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let lines = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (
        lines,
        String::from_utf8(output.stderr).unwrap(),
        output.status.success(),
    )
}

fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn public_dex_vectors_print_their_updates_conformance() {
    let text = std::fs::read_to_string(fixture("dex/public-vectors.jsonl")).unwrap();
    let vectors: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|vector| vector["kind"] == "dex")
        .collect();
    let input: String = vectors
        .iter()
        .map(|v| format!("{}\n", v["wire_base64"].as_str().unwrap()))
        .collect();
    let (lines, stderr) = decode_tx(&input);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(lines.len(), vectors.len());
    for (updates, vector) in lines.iter().zip(&vectors) {
        let id = vector["id"].as_str().unwrap();
        let updates = updates.as_array().unwrap();
        assert_eq!(updates.len(), 1, "{id}");
        let transaction = &updates[0]["transaction"];
        assert!(transaction.get("serverTiming").is_none());
        let expected = &vector["expected"];
        let wanted: Vec<&Value> = expected["instructions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["optional"] != true)
            .collect();
        let decoded = transaction["decodedInstructions"].as_array().unwrap();
        assert_eq!(decoded.len(), wanted.len(), "{id}");
        for (ours, wanted) in decoded.iter().zip(wanted) {
            assert_eq!(ours["program"], wanted["program"], "{id}");
            assert_eq!(ours["instructionName"], wanted["instruction_name"], "{id}");
            let index = ours
                .get("instructionIndex")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            assert_eq!(index, wanted["instruction_index"].as_u64().unwrap(), "{id}");
            let member = camel(wanted["decoded_member"].as_str().unwrap());
            let args = ours[&member]
                .as_object()
                .unwrap_or_else(|| panic!("{id}: {member}"));
            // 64-bit integers are JSON strings, 32-bit ones numbers, defaults omitted.
            for (field, value) in args {
                let proto_type = wanted["arg_types"][field_snake(field)].as_str();
                match proto_type {
                    Some("uint64") => assert!(value.is_string(), "{id}: {field}"),
                    Some("uint32") => assert!(value.is_number(), "{id}: {field}"),
                    _ => {}
                }
            }
        }
    }
}

fn field_snake(camel: &str) -> String {
    let mut out = String::new();
    for c in camel.chars() {
        if c.is_ascii_uppercase() || (c.is_ascii_digit() && !out.ends_with('_')) {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[test]
fn outside_the_universe_and_bad_lines() {
    // Transactions of the reference shred fixtures: a transfer (no supported program) and a buy.
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixture("shreds/manifest.json")).unwrap()).unwrap();
    let transfer = manifest["slots"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|entry| entry["transactions"].as_array().unwrap())
        .find(|tx| tx["kind"] == "transfer")
        .unwrap();
    let pump_buy = manifest["slots"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|entry| entry["transactions"].as_array().unwrap())
        .find(|tx| tx["kind"] == "pump_buy")
        .unwrap();
    let input = format!(
        "{}\n\nnot-base64!\n{}\n",
        transfer["bytes"].as_str().unwrap(),
        pump_buy["bytes"].as_str().unwrap()
    );
    let (lines, stderr, success) = decode_tx_status(&input);
    // Every line is answered (aligned), then the command fails for the invalid one.
    assert!(
        !success,
        "an invalid line must make the exit status non-zero"
    );
    assert!(
        stderr.contains("1 input line(s) were not base64 wire transactions"),
        "{stderr}"
    );
    assert_eq!(lines.len(), 3, "blank lines are skipped");
    assert_eq!(lines[0], serde_json::json!([]));
    assert_eq!(lines[1], serde_json::json!([]));
    assert!(stderr.contains("line 3: not base64"), "{stderr}");
    assert_eq!(stderr.matches("line 3:").count(), 1, "{stderr}");
    let buy = &lines[2][0]["transaction"]["decodedInstructions"][0];
    assert_eq!(buy["program"], "ALPHA_FUN");
    assert_eq!(buy["instructionName"], "buy");
    let args = &pump_buy["anchor_calls"][0]["args"];
    assert_eq!(buy["alphaFunBuy"]["amount"], args["amount"].to_string());
    assert_eq!(
        buy["alphaFunBuy"]["maxSolCost"],
        args["max_sol_cost"].to_string()
    );
}

#[test]
fn public_aggregator_vectors_print_delta_updates_conformance() {
    let text = std::fs::read_to_string(fixture("dex/public-vectors.jsonl")).unwrap();
    let vectors: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|vector| vector["kind"] == "aggregator")
        .collect();
    let input: String = vectors
        .iter()
        .map(|v| format!("{}\n", v["wire_base64"].as_str().unwrap()))
        .collect();
    let (lines, stderr) = decode_tx(&input);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(lines.len(), 3);
    for (updates, vector) in lines.iter().zip(&vectors) {
        let id = vector["id"].as_str().unwrap();
        let expected = &vector["expected"]["aggregator"];
        let delta = &updates[0]["delta"];
        assert_eq!(updates.as_array().unwrap().len(), 1, "{id}");
        let top = &delta["topLevelInstruction"];
        assert_eq!(top["instructionName"], expected["real_ix_name"], "{id}");
        let legs = delta["dexLegs"].as_array().unwrap();
        let wanted = expected["legs_wrapping_supported"].as_array().unwrap();
        assert_eq!(legs.len(), wanted.len(), "{id}");
        for (leg, wanted) in legs.iter().zip(wanted) {
            assert_eq!(leg["wrappedProgram"], wanted["wrapped_program"], "{id}");
            assert_eq!(leg["swapVariant"], wanted["swap_variant"], "{id}");
            let delta_program = format!("DELTA_{}", wanted["wrapped_program"].as_str().unwrap());
            assert_eq!(
                leg["instruction"]["program"],
                delta_program.as_str(),
                "{id}"
            );
        }
        let summary = &top["route"];
        let amounts = &expected["amounts"];
        for (json_name, expected_name) in [
            ("exactInAmount", "exact_in_amount"),
            ("exactOutAmount", "exact_out_amount"),
            ("quotedInAmount", "quoted_in_amount"),
            ("quotedOutAmount", "quoted_out_amount"),
        ] {
            assert_eq!(
                summary.get(json_name),
                amounts.get(expected_name),
                "{id}: {json_name}"
            );
        }
    }
}

#[test]
fn program_ids_are_overridable() {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixture("shreds/manifest.json")).unwrap()).unwrap();
    let pump_buy = manifest["slots"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|entry| entry["transactions"].as_array().unwrap())
        .find(|tx| tx["kind"] == "pump_buy")
        .unwrap();
    let run = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_appliance"))
            .arg("decode-tx")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = format!("{}\n", pump_buy["bytes"].as_str().unwrap());
        // A refused override exits before reading: the write may then meet a closed pipe.
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
        child.wait_with_output().unwrap()
    };
    // Pointing ALPHA_FUN elsewhere takes the real pump buy out of the universe.
    let moved = run(&["--program-id", "ALPHA_FUN=11111111111111111111111111111112"]);
    assert!(moved.status.success());
    assert_eq!(String::from_utf8(moved.stdout).unwrap().trim(), "[]");
    // A bad override is refused with the reason.
    let bad = run(&["--program-id", "OMEGA=11111111111111111111111111111112"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown program \"OMEGA\""));
}
