//! DEX decoding against independent references: the public dex-vectors (Anchor's reference coder
//! and web3.js, `tests/fixtures/dex/public-vectors.README.md`), real mainnet transactions and
//! instructions (`tests/fixtures/mainnet-tx/`), and, when present, the vectors our own
//! `scripts/dex-vectors` generator makes with Anchor's coder and the official SDK builders.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

use base64::Engine;
use common::{b58, fixture_path, hex, read_fixture, unhex};
use decoder::dex::{
    DecodedArgs, DexProgram, InstructionOutcome, ProgramRegistry, decode_call, dex_instructions,
};
use decoder::transaction::parse_transaction_exact;
use serde_json::{Map, Value, json};

/// The message fields of decoded arguments, in the vectors' encoding: integers as decimal
/// strings, strings as text, bytes as hex. Unset (zero) fields are present with "0".
fn args_json(args: &DecodedArgs<'_>) -> Value {
    let n = |value: u64| Value::String(value.to_string());
    match *args {
        DecodedArgs::AlphaFunCreate { name, symbol, uri } => {
            json!({"name": name, "symbol": symbol, "uri": uri})
        }
        DecodedArgs::AlphaFunBuy {
            amount,
            max_sol_cost,
        } => {
            json!({"amount": n(amount), "max_sol_cost": n(max_sol_cost)})
        }
        DecodedArgs::AlphaFunSell {
            amount,
            min_sol_output,
        } => {
            json!({"amount": n(amount), "min_sol_output": n(min_sol_output)})
        }
        DecodedArgs::AlphaAmmBuy {
            base_amount_out,
            max_quote_amount_in,
        } => json!({
            "base_amount_out": n(base_amount_out), "max_quote_amount_in": n(max_quote_amount_in)
        }),
        DecodedArgs::AlphaAmmSell {
            base_amount_in,
            min_quote_amount_out,
        } => json!({
            "base_amount_in": n(base_amount_in), "min_quote_amount_out": n(min_quote_amount_out)
        }),
        DecodedArgs::AlphaAmmCreatePool {
            index,
            base_amount,
            quote_amount,
        } => json!({
            "index": n(u64::from(index)), "base_amount": n(base_amount),
            "quote_amount": n(quote_amount)
        }),
        DecodedArgs::AlphaAmmDeposit {
            lp_token_amount_out,
            max_base_amount_in,
            max_quote_amount_in,
        } => json!({
            "lp_token_amount_out": n(lp_token_amount_out),
            "max_base_amount_in": n(max_base_amount_in),
            "max_quote_amount_in": n(max_quote_amount_in)
        }),
        DecodedArgs::AlphaAmmWithdraw {
            lp_token_amount_in,
            min_base_amount_out,
            min_quote_amount_out,
        } => json!({
            "lp_token_amount_in": n(lp_token_amount_in),
            "min_base_amount_out": n(min_base_amount_out),
            "min_quote_amount_out": n(min_quote_amount_out)
        }),
        DecodedArgs::CpmmSwapBaseInput {
            amount_in,
            minimum_amount_out,
        } => {
            json!({"amount_in": n(amount_in), "minimum_amount_out": n(minimum_amount_out)})
        }
        DecodedArgs::CpmmSwapBaseOutput {
            max_amount_in,
            amount_out,
        } => {
            json!({"max_amount_in": n(max_amount_in), "amount_out": n(amount_out)})
        }
        DecodedArgs::CpmmCreatePool {
            init_amount_0,
            init_amount_1,
            open_time,
        } => json!({
            "init_amount_0": n(init_amount_0), "init_amount_1": n(init_amount_1),
            "open_time": n(open_time)
        }),
        DecodedArgs::LaunchLabCreate {
            name,
            symbol,
            uri,
            decimals,
            total_supply,
        } => json!({
            "name": name, "symbol": symbol, "uri": uri, "decimals": n(u64::from(decimals)),
            "total_supply": n(total_supply)
        }),
        DecodedArgs::LaunchLabBuyExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        }
        | DecodedArgs::LaunchLabSellExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        } => {
            json!({"amount_in": n(amount_in), "minimum_amount_out": n(minimum_amount_out),
                   "share_fee_bps": n(share_fee_bps)})
        }
        DecodedArgs::LaunchLabBuyExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        }
        | DecodedArgs::LaunchLabSellExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        } => {
            json!({"amount_out": n(amount_out), "maximum_amount_in": n(maximum_amount_in),
                   "share_fee_bps": n(share_fee_bps)})
        }
        DecodedArgs::LaunchLabMigrate | DecodedArgs::DbcMigrate => json!({}),
        DecodedArgs::DbcSwap {
            amount_in,
            minimum_amount_out,
        }
        | DecodedArgs::DammV2Swap {
            amount_in,
            minimum_amount_out,
        } => {
            json!({"amount_in": n(amount_in), "minimum_amount_out": n(minimum_amount_out)})
        }
        DecodedArgs::DbcInitialize { pool_config } => json!({"pool_config": hex(pool_config)}),
        DecodedArgs::DammV2CreatePool { config } => json!({"config": hex(config)}),
        DecodedArgs::DammV2AddLiquidity {
            max_token_a_amount,
            max_token_b_amount,
            min_lp_amount,
        } => json!({
            "max_token_a_amount": n(max_token_a_amount),
            "max_token_b_amount": n(max_token_b_amount), "min_lp_amount": n(min_lp_amount)
        }),
        DecodedArgs::DammV2RemoveLiquidity {
            lp_amount,
            min_token_a_amount,
            min_token_b_amount,
        } => json!({
            "lp_amount": n(lp_amount), "min_token_a_amount": n(min_token_a_amount),
            "min_token_b_amount": n(min_token_b_amount)
        }),
    }
}

/// Expected args with absent fields filled as "0" (proto3 defaults), so both sides compare whole.
fn normalized(expected: &Value, ours: &Value) -> Value {
    let mut filled: Map<String, Value> = expected.as_object().cloned().unwrap_or_default();
    for key in ours.as_object().unwrap().keys() {
        filled
            .entry(key.clone())
            .or_insert(Value::String("0".into()));
    }
    Value::Object(filled)
}

/// Our args equal the expected reading, or one of its listed alternatives when the mapping is
/// ambiguous. Returns which reading matched (0 = the suggested one).
fn matching_reading(expected: &Value, ours: &Value) -> Option<usize> {
    let mut readings = vec![expected["args"].clone()];
    if let Some(alternatives) = expected["args_alternatives"].as_array() {
        readings.extend(alternatives.iter().cloned());
    }
    readings
        .iter()
        .position(|reading| normalized(reading, ours) == *ours)
}

#[test]
fn public_vectors_decode_to_their_expected_instructions_conformance() {
    let registry = ProgramRegistry::default();
    let text = String::from_utf8(read_fixture("dex/public-vectors.jsonl")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let vector: Value = serde_json::from_str(line).unwrap();
        let id = vector["id"].as_str().unwrap();
        let wire = base64::engine::general_purpose::STANDARD
            .decode(vector["wire_base64"].as_str().unwrap())
            .unwrap();
        let transaction = parse_transaction_exact(&wire).unwrap();
        let expected = &vector["expected"];
        assert_eq!(
            b58(transaction.first_signature()),
            vector["signature_base58"],
            "{id}"
        );
        assert_eq!(b58(transaction.fee_payer()), expected["signer"], "{id}");
        let keys: Vec<String> = transaction
            .static_account_keys()
            .iter()
            .map(|k| b58(k))
            .collect();
        assert_eq!(json!(keys), expected["static_account_keys"], "{id}");
        assert_eq!(
            transaction.uses_lookup_tables(),
            expected["uses_lookup_tables"],
            "{id}"
        );
        let decoded: Vec<_> = dex_instructions(&transaction, &registry)
            .filter_map(|outcome| match outcome {
                InstructionOutcome::Decoded(instruction) => Some(instruction),
                InstructionOutcome::Failed { error, .. } => {
                    assert!(error.is_skip(), "{id}: {error}");
                    None
                }
            })
            .collect();
        let wanted: Vec<&Value> = expected["instructions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|instruction| instruction["optional"] != json!(true))
            .collect();
        assert_eq!(decoded.len(), wanted.len(), "{id}: instruction count");
        for (ours, wanted) in decoded.iter().zip(wanted) {
            assert_eq!(ours.program.name(), wanted["program"], "{id}");
            assert_eq!(
                ours.call.instruction_name, wanted["instruction_name"],
                "{id}"
            );
            assert_eq!(ours.call.onchain_name, wanted["real_ix_name"], "{id}");
            assert_eq!(
                ours.call.args.member_name(),
                wanted["decoded_member"],
                "{id}"
            );
            assert_eq!(
                u64::from(ours.instruction_index),
                wanted["instruction_index"],
                "{id}"
            );
            let indices: Vec<u64> = ours.account_indices.iter().map(|&i| u64::from(i)).collect();
            assert_eq!(json!(indices), wanted["account_indices"], "{id}");
            assert_eq!(hex(ours.raw_data), wanted["raw_data_hex"], "{id}");
            let reading = matching_reading(wanted, &args_json(&ours.call.args));
            assert!(
                reading.is_some(),
                "{id}: {} vs {}",
                args_json(&ours.call.args),
                wanted["args"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 18, "checked {checked}");
}

fn manifest() -> Value {
    serde_json::from_slice(&read_fixture("mainnet-tx/manifest.json")).unwrap()
}

/// `(instruction index, program, on-chain name)` of every supported call we decode.
fn decoded_names(wire: &[u8]) -> Vec<(u64, String, String)> {
    let transaction = parse_transaction_exact(wire).unwrap();
    dex_instructions(&transaction, &ProgramRegistry::default())
        .map(|outcome| match outcome {
            InstructionOutcome::Decoded(instruction) => (
                u64::from(instruction.instruction_index),
                instruction.program.name().to_owned(),
                instruction.call.onchain_name.to_owned(),
            ),
            InstructionOutcome::Failed { error, .. } => {
                panic!("mainnet instruction failed: {error}")
            }
        })
        .collect()
}

fn manifest_names(fixture: &Value) -> Vec<(u64, String, String)> {
    fixture["top_level"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|call| call["program"] != "DELTA")
        .map(|call| {
            (
                call["index"].as_u64().unwrap(),
                call["program"].as_str().unwrap().to_owned(),
                call["instruction"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn mainnet_wire_transactions_decode_as_the_manifest_says_conformance() {
    let mut checked = 0;
    for fixture in manifest()["fixtures"].as_array().unwrap() {
        let file = fixture["derived_wire"]
            .as_str()
            .or(fixture["file"].as_str())
            .unwrap();
        let Some(name) = file.strip_prefix("wire/") else {
            continue;
        };
        let text = read_fixture(&format!("mainnet-tx/{name}"));
        let wire = base64::engine::general_purpose::STANDARD
            .decode(String::from_utf8(text).unwrap().trim())
            .unwrap();
        assert_eq!(decoded_names(&wire), manifest_names(fixture), "{file}");
        checked += 1;
    }
    assert_eq!(checked, 5);
}

/// Rebuilds the wire form of a txupdate JSON's message well enough to decode its top-level
/// instructions: only the program id and data of each instruction matter here.
fn txupdate_calls(path: &str) -> Vec<(u64, String, String)> {
    let update: Value = serde_json::from_slice(&read_fixture(path)).unwrap();
    let message = &update["transaction"]["transaction"]["message"];
    let keys: Vec<Vec<u8>> = message["accountKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|key| {
            key.as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap() as u8)
                .collect()
        })
        .collect();
    let registry = ProgramRegistry::default();
    let mut calls = Vec::new();
    for (index, instruction) in message["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let program_id: [u8; 32] = keys[instruction["programIdIndex"].as_u64().unwrap() as usize]
            .clone()
            .try_into()
            .unwrap();
        let Some(program) = registry.program(&program_id) else {
            continue;
        };
        let data: Vec<u8> = instruction["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_u64().unwrap() as u8)
            .collect();
        let call = decode_call(program, &data).unwrap_or_else(|e| panic!("{path}: {e}"));
        calls.push((
            index as u64,
            program.name().to_owned(),
            call.onchain_name.to_owned(),
        ));
    }
    calls
}

#[test]
fn mainnet_txupdates_decode_as_the_manifest_says_conformance() {
    let mut checked = 0;
    for fixture in manifest()["fixtures"].as_array().unwrap() {
        if fixture["format"] != "grpc-txupdate" {
            continue;
        }
        let path = format!("mainnet-tx/{}", fixture["file"].as_str().unwrap());
        assert_eq!(txupdate_calls(&path), manifest_names(fixture), "{path}");
        checked += 1;
    }
    assert!(checked >= 8);
}

#[test]
fn mainnet_single_instructions_decode_conformance() {
    let registry = ProgramRegistry::default();
    let mut checked = 0;
    for fixture in manifest()["fixtures"].as_array().unwrap() {
        if fixture["format"] != "instruction" {
            continue;
        }
        let path = format!("mainnet-tx/{}", fixture["file"].as_str().unwrap());
        let instruction: Value = serde_json::from_slice(&read_fixture(&path)).unwrap();
        let program_id: [u8; 32] = bs58::decode(instruction["program_id"].as_str().unwrap())
            .into_vec()
            .unwrap()
            .try_into()
            .unwrap();
        let program = registry.program(&program_id).unwrap();
        let data = unhex(instruction["data"].as_str().unwrap());
        let call = decode_call(program, &data).unwrap();
        assert_eq!(
            call.onchain_name, fixture["top_level"][0]["instruction"],
            "{path}"
        );
        checked += 1;
    }
    assert_eq!(checked, 5);
}

/// Values read by hand from the real bytes (see the fixtures' SOURCES.md for provenance).
#[test]
fn mainnet_values_conformance() {
    let text = read_fixture("mainnet-tx/alpha_fun.create+buy.2MfmZSU8.b64");
    let wire = base64::engine::general_purpose::STANDARD
        .decode(String::from_utf8(text).unwrap().trim())
        .unwrap();
    let transaction = parse_transaction_exact(&wire).unwrap();
    let calls: Vec<_> = dex_instructions(&transaction, &ProgramRegistry::default())
        .map(|outcome| match outcome {
            InstructionOutcome::Decoded(instruction) => instruction.call.args,
            InstructionOutcome::Failed { error, .. } => panic!("{error}"),
        })
        .collect();
    // The legacy create ends after `uri` (no `creator`, which later versions append).
    assert_eq!(
        calls[0],
        DecodedArgs::AlphaFunCreate {
            name: "Vincent le Gogh",
            symbol: "LEGOGH",
            uri: "https://ipfs.io/ipfs/QmQi5HaVvAaGbpm5W8TgEU1aFNsqn8TxMAf6gZmQCVtBdK",
        }
    );
    // The old 24-byte buy (no track_volume byte).
    assert!(matches!(calls[1], DecodedArgs::AlphaFunBuy { .. }));
    let single: Value = serde_json::from_slice(&read_fixture(
        "mainnet-tx/json/alpha_fun.buy.ix.5aQNWMM8.json",
    ))
    .unwrap();
    let data = unhex(single["data"].as_str().unwrap());
    assert_eq!(
        decode_call(DexProgram::AlphaFun, &data).unwrap().args,
        DecodedArgs::AlphaFunBuy {
            amount: 0x19caf6,
            max_sol_cost: 0xc3
        }
    );
}

/// Vectors generated by `scripts/dex-vectors` (Anchor's coder over the IDLs, and the official
/// SDK builders), one instruction per line.
fn check_generated(file: &str) -> usize {
    let path = fixture_path(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let registry = ProgramRegistry::default();
    let mut checked = 0;
    for line in text.lines() {
        let vector: Value = serde_json::from_str(line).unwrap();
        let id = vector["id"].as_str().unwrap_or("?");
        let program = DexProgram::from_name(vector["program"].as_str().unwrap()).unwrap();
        let program_id = bs58::decode(vector["program_id"].as_str().unwrap())
            .into_vec()
            .unwrap();
        assert_eq!(
            registry.program(&program_id.try_into().unwrap()),
            Some(program),
            "{id}"
        );
        let data = unhex(vector["data_hex"].as_str().unwrap());
        let expected = &vector["expected"];
        match decode_call(program, &data) {
            Ok(call) => {
                assert!(
                    expected["error"] != json!(true),
                    "{id}: decoded, error expected"
                );
                assert!(
                    expected["skipped"] != json!(true),
                    "{id}: decoded, skip expected"
                );
                assert_eq!(call.instruction_name, expected["instruction_name"], "{id}");
                assert_eq!(call.args.member_name(), expected["decoded_member"], "{id}");
                let ours = args_json(&call.args);
                assert_eq!(normalized(&expected["args"], &ours), ours, "{id}");
            }
            Err(error) if error.is_skip() => {
                assert_eq!(expected["skipped"], json!(true), "{id}: skipped ({error})");
            }
            Err(error) => assert_eq!(expected["error"], json!(true), "{id}: failed ({error})"),
        }
        checked += 1;
    }
    checked
}

#[test]
fn idl_vectors_conformance() {
    assert!(check_generated("dex/idl-vectors.jsonl") > 300);
}

#[test]
fn sdk_vectors_conformance() {
    assert!(check_generated("dex/sdk-vectors.jsonl") > 10);
}

/// Every Anchor call in the reference shred fixtures (made with Agave's shredder; their manifest
/// lists each call's u64 arguments) decodes to those values, and nothing else decodes.
#[test]
fn shred_fixture_anchor_calls_conformance() {
    let manifest: Value = serde_json::from_slice(&read_fixture("shreds/manifest.json")).unwrap();
    let registry = ProgramRegistry::default();
    let mut checked = 0;
    for slot in manifest["slots"].as_array().unwrap() {
        for entry in slot["entries"].as_array().unwrap() {
            for tx in entry["transactions"].as_array().unwrap() {
                let wire = base64::engine::general_purpose::STANDARD
                    .decode(tx["bytes"].as_str().unwrap())
                    .unwrap();
                let transaction = parse_transaction_exact(&wire).unwrap();
                let decoded: Vec<_> = dex_instructions(&transaction, &registry).collect();
                let calls = tx["anchor_calls"].as_array().cloned().unwrap_or_default();
                assert_eq!(decoded.len(), calls.len(), "{}", tx["signature"]);
                for (outcome, call) in decoded.iter().zip(&calls) {
                    let InstructionOutcome::Decoded(instruction) = outcome else {
                        panic!("{}: {outcome:?}", tx["signature"]);
                    };
                    assert_eq!(instruction.call.onchain_name, call["instruction"]);
                    let ours = args_json(&instruction.call.args);
                    for (name, value) in call["args"].as_object().unwrap() {
                        assert_eq!(ours[name], Value::String(value.to_string()), "{name}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "checked {checked}");
}
