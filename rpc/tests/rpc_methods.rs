//! The five archive methods over real HTTP against the fixture archive (real mainnet transactions
//! and metadata, `tests/fixtures/rpc/`). Expected values are computed here from the fixture files
//! and the validator's rules (docs/archive-rpc.md, "Validator compatibility rules"),
//! independently of the server's encoders.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod rpc_common;

use rpc::RpcConfig;
use rpc_common::{TestServer, fixture_json, fixture_wire_b64};
use serde_json::{Value, json};

const AMM_SIG: &str =
    "4pCgZ28WbXfpq93VuwbJwjWTvfgesEds9PKXkXmMHUGWmYduKbieMpbckHUwQ8ugVdvrT3CYQDC3n9j4BzPLyJCz";
const DBC_SIG: &str =
    "23BXcBmnM3S3kFxcR49poVKADhGyfdN8GtSGj4tjffFHAYRZHjLpZYWL2McmEMWQT2WcVDwa88CbzvU6N9NjCZCS";
const DAMM_SIG: &str =
    "N2jtQtjjoa6xP7DT2pSEno4umH8GUH8y94raw1qd32hUkaV2rRtDgvD3kMZxYALg63pdELiBhhoYUyZBFT8Tm3k";
const CREATE_SIG: &str =
    "2MfmZSU8mWEbskNHAxQGphAyB5x72SC2HYuAkLeSyH6MjttUHqUjm24wPMeH7zrCoQoYFwbLeiFE571mc8WvgZyL";
const LOOKUP_SIG: &str =
    "2G2YFBmJBjeUMjBW73RvpNJqKq9eEsZ6DtASecvgTQvKM6JZPQQtc3teHDtLvxUgycJxxygyXy2bpcKc4RtAcYw8";
const MEMO_SIG: &str =
    "4FEMgz6UjnqDCSU8hk52bRSvRYaGZf4z4M8fwywML18abfGT3LQdXtVaQvVnQiVBfQ6K4wpZFdDCfggHMNCeLcxe";
const COMPUTE_BUDGET: &str = "ComputeBudget111111111111111111111111111111";

fn b58(bytes: &Value) -> String {
    let bytes: Vec<u8> = bytes
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect();
    bs58::encode(bytes).into_string()
}

fn bytes_list(bytes: &Value) -> Value {
    bytes.clone()
}

/// The validator's JSON for a txupdate fixture transaction, derived from the fixture's own fields
/// (docs/archive-rpc.md §6.1, §7), plus the block values of `blocks.json`.
fn expected_transaction(fixture: &str, block_time: i64, version: Option<Value>) -> Value {
    let doc = fixture_json(&format!("json/{fixture}.txupdate.json"));
    let tx = &doc["transaction"]["transaction"];
    let meta = &doc["transaction"]["meta"];
    let message = &tx["message"];
    let instructions: Vec<Value> = message["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ix| {
            json!({"accounts": bytes_list(&ix["accounts"]), "data": b58(&ix["data"]),
                   "programIdIndex": ix["programIdIndex"], "stackHeight": 1})
        })
        .collect();
    let mut ui_message = json!({
        "accountKeys": message["accountKeys"].as_array().unwrap().iter().map(b58).collect::<Vec<_>>(),
        "header": message["header"],
        "instructions": instructions,
        "recentBlockhash": message["recentBlockhash"],
    });
    if version == Some(json!(0)) {
        ui_message["addressTableLookups"] = json!([]);
    }
    let inner: Vec<Value> = meta["innerInstructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|inner| {
            json!({"index": inner["index"], "instructions": inner["instructions"].as_array().unwrap().iter().map(|ix| json!({
                "accounts": bytes_list(&ix["accounts"]), "data": b58(&ix["data"]),
                "programIdIndex": ix["programIdIndex"], "stackHeight": ix["stackHeight"]})).collect::<Vec<_>>()})
        })
        .collect();
    let balances = |key: &str| -> Value {
        meta[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let amount = &b["uiTokenAmount"];
                json!({"accountIndex": b["accountIndex"], "mint": b["mint"], "owner": b["owner"],
                       "programId": b["programId"],
                       "uiTokenAmount": {"amount": amount["amount"], "decimals": amount["decimals"],
                                         "uiAmount": if amount["uiAmount"].as_f64() == Some(0.0) { Value::Null } else { amount["uiAmount"].clone() },
                                         "uiAmountString": amount["uiAmountString"]}})
            })
            .collect()
    };
    let mut result = json!({
        "blockTime": block_time,
        "meta": {
            "computeUnitsConsumed": meta["computeUnitsConsumed"],
            "err": null,
            "fee": meta["fee"],
            "innerInstructions": inner,
            "loadedAddresses": {"readonly": [], "writable": []},
            "logMessages": meta["logMessages"],
            "postBalances": meta["postBalances"],
            "postTokenBalances": balances("postTokenBalances"),
            "preBalances": meta["preBalances"],
            "preTokenBalances": balances("preTokenBalances"),
            "rewards": [],
            "status": {"Ok": null},
        },
        "slot": doc["slot"],
        "transaction": {"message": ui_message, "signatures": tx["signatures"]},
    });
    if let Some(version) = version {
        result["version"] = version;
    }
    result
}

#[test]
fn get_transaction_json_matches_the_fixture_metadata() {
    let server = TestServer::start(RpcConfig::default());
    // Legacy, no maxSupportedTransactionVersion: no `version` key.
    let result = server.result("getTransaction", json!([AMM_SIG]));
    assert_eq!(
        result,
        expected_transaction("alpha_amm.buy.4pCgZ28W", 1_760_004_800, None)
    );
    // Legacy with the option: "legacy".
    let result = server.result(
        "getTransaction",
        json!([AMM_SIG, {"encoding": "json", "maxSupportedTransactionVersion": 0}]),
    );
    assert_eq!(result["version"], "legacy");
    // v0 with the option: version 0 and an (empty) addressTableLookups.
    for (sig, fixture, time) in [
        (DBC_SIG, "gamma_dbc.swap.23BXcBmn", 1_760_000_070),
        (DAMM_SIG, "gamma_damm_v2.swap.N2jtQtjj", 1_760_000_000),
    ] {
        let result = server.result(
            "getTransaction",
            json!([sig, {"maxSupportedTransactionVersion": 0, "commitment": "confirmed"}]),
        );
        assert_eq!(result, expected_transaction(fixture, time, Some(json!(0))));
    }
}

#[test]
fn get_transaction_versions_encodings_and_misses() {
    let server = TestServer::start(RpcConfig::default());
    let error = server.error("getTransaction", json!([DBC_SIG]));
    assert_eq!(
        error,
        json!({"code": -32015, "message": "Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0"})
    );
    // base64/base58/binary carry the stored wire bytes unchanged.
    let wire = fixture_wire_b64("gamma_dbc.swap.23BXcBmn.b64");
    let result = server.result(
        "getTransaction",
        json!([DBC_SIG, {"encoding": "base64", "maxSupportedTransactionVersion": 0}]),
    );
    assert_eq!(result["transaction"], json!([wire, "base64"]));
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&wire)
        .unwrap();
    let b58 = bs58::encode(&bytes).into_string();
    let result = server.result(
        "getTransaction",
        json!([DBC_SIG, {"encoding": "base58", "maxSupportedTransactionVersion": 0}]),
    );
    assert_eq!(result["transaction"], json!([b58, "base58"]));
    let result = server.result("getTransaction", json!([AMM_SIG, "binary"]));
    let amm = base64::engine::general_purpose::STANDARD
        .decode(fixture_wire_b64("alpha_amm.buy.4pCgZ28W.b64"))
        .unwrap();
    assert_eq!(
        result["transaction"],
        json!(bs58::encode(&amm).into_string())
    );
    // Not held anywhere and no upstream: null.
    let unknown = bs58::encode([9u8; 64]).into_string();
    assert_eq!(
        server.result("getTransaction", json!([unknown])),
        Value::Null
    );
    // Stored without metadata: meta null, no version even with the option.
    let result = server.result(
        "getTransaction",
        json!([CREATE_SIG, {"maxSupportedTransactionVersion": 0}]),
    );
    assert_eq!(result["meta"], Value::Null);
    assert!(result.get("version").is_none());
    assert_eq!(result["slot"], 299_999_990);
    // Bad signatures and processed commitment.
    assert_eq!(
        server.error("getTransaction", json!(["xyz"]))["message"],
        "Invalid param: WrongSize"
    );
    assert_eq!(
        server.error("getTransaction", json!(["0OIl"]))["message"],
        "Invalid param: Invalid"
    );
    assert_eq!(
        server.error(
            "getTransaction",
            json!([AMM_SIG, {"commitment": "processed"}])
        ),
        json!({"code": -32602, "message": "Method does not support commitment below `confirmed`"})
    );
}

#[test]
fn failed_transaction_meta_follows_the_stored_flags() {
    let server = TestServer::start(RpcConfig::default());
    let result = server.result("getTransaction", json!([MEMO_SIG]));
    let meta = &result["meta"];
    assert_eq!(
        meta["err"],
        json!({"InstructionError": [1, {"Custom": 6001}]})
    );
    assert_eq!(
        meta["status"],
        json!({"Err": {"InstructionError": [1, {"Custom": 6001}]}})
    );
    assert_eq!(meta["innerInstructions"], Value::Null);
    assert_eq!(meta["logMessages"], Value::Null);
    assert_eq!(meta["computeUnitsConsumed"], 450);
    assert!(meta.get("costUnits").is_none());
    assert_eq!(
        meta["returnData"],
        json!({"data": ["AQID", "base64"], "programId": "11111111111111111111111111111111"})
    );
    assert_eq!(meta["rewards"][0]["rewardType"], "Rent");
    assert_eq!(meta["rewards"][0]["commission"], Value::Null);
    assert_eq!(meta["rewards"][0]["lamports"], -5);
}

#[test]
fn lookup_table_transaction_in_accounts_and_parsed_views() {
    let server = TestServer::start(RpcConfig::default());
    let result = server.result(
        "getTransaction",
        json!([LOOKUP_SIG, {"maxSupportedTransactionVersion": 0}]),
    );
    let meta = &result["meta"];
    assert_eq!(
        meta["loadedAddresses"]["writable"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert_eq!(
        meta["loadedAddresses"]["readonly"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(meta["costUnits"], 12345);
    // Token amounts: stored 1.5 with an empty string → computed "1.5"; stored 0 → uiAmount null.
    assert_eq!(
        meta["preTokenBalances"][0],
        json!({"accountIndex": 3, "mint": meta["preTokenBalances"][0]["mint"],
               "uiTokenAmount": {"amount": "1500000", "decimals": 6, "uiAmount": 1.5, "uiAmountString": "1.5"}})
    );
    assert_eq!(
        meta["postTokenBalances"][0]["uiTokenAmount"]["uiAmount"],
        Value::Null
    );
    assert_eq!(
        meta["postTokenBalances"][0]["programId"],
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
    );
    let lookups = &result["transaction"]["message"]["addressTableLookups"];
    assert_eq!(lookups[0]["writableIndexes"], json!([4, 6, 8, 10]));
    assert_eq!(lookups[0]["readonlyIndexes"], json!([11, 1, 5, 12, 9]));

    // getBlock accounts mode: static keys, then the loaded keys with source lookupTable.
    let block = server.result(
        "getBlock",
        json!([389243770, {"transactionDetails": "accounts", "maxSupportedTransactionVersion": 0}]),
    );
    let entry = &block["transactions"][0];
    let keys = entry["transaction"]["accountKeys"].as_array().unwrap();
    assert_eq!(keys.len(), 24);
    let sources: Vec<&str> = keys.iter().map(|k| k["source"].as_str().unwrap()).collect();
    assert_eq!(sources[..15], ["transaction"; 15]);
    assert_eq!(sources[15..], ["lookupTable"; 9]);
    let writable: Vec<bool> = keys[15..]
        .iter()
        .map(|k| k["writable"].as_bool().unwrap())
        .collect();
    assert_eq!(
        writable,
        [true, true, true, true, false, false, false, false, false]
    );
    assert_eq!(keys[0]["signer"], true);
    assert_eq!(keys[0]["writable"], true);
    // Two signers (creator and mint): both signatures, both keys flagged signer.
    assert_eq!(entry["transaction"]["signatures"][0], LOOKUP_SIG);
    assert_eq!(
        entry["transaction"]["signatures"].as_array().unwrap().len(),
        2
    );
    assert_eq!(keys[1]["signer"], true);
    assert_eq!(keys[2]["signer"], false);
    assert_eq!(entry["version"], 0);
    // The simplified meta: no logs, inner instructions, loaded addresses, units.
    let meta = entry["meta"].as_object().unwrap();
    let mut keys: Vec<&str> = meta.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "err",
            "fee",
            "postBalances",
            "postTokenBalances",
            "preBalances",
            "preTokenBalances",
            "rewards",
            "status"
        ]
    );
    assert_eq!(block["numRewardPartitions"], 4);
    // Parent in an epoch not held, no upstream: zero hash.
    assert_eq!(
        block["previousBlockhash"],
        "11111111111111111111111111111111"
    );
}

#[test]
fn json_parsed_parses_system_and_memo() {
    let server = TestServer::start(RpcConfig::default());
    let result = server.result(
        "getTransaction",
        json!([MEMO_SIG, {"encoding": "jsonParsed"}]),
    );
    let message = &result["transaction"]["message"];
    let keys = message["accountKeys"].as_array().unwrap();
    assert_eq!(keys.len(), 4);
    // Payer: writable signer; recipient writable; system program reserved → read-only.
    let flags: Vec<(bool, bool)> = keys
        .iter()
        .map(|k| {
            (
                k["signer"].as_bool().unwrap(),
                k["writable"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        flags,
        [(true, true), (false, true), (false, false), (false, false)]
    );
    let payer = keys[0]["pubkey"].as_str().unwrap();
    let recipient = keys[1]["pubkey"].as_str().unwrap();
    assert_eq!(
        message["instructions"][0],
        json!({"parsed": {"info": {"destination": recipient, "lamports": 1_000_000, "source": payer}, "type": "transfer"},
               "program": "system", "programId": "11111111111111111111111111111111", "stackHeight": 1})
    );
    assert_eq!(
        message["instructions"][1],
        json!({"parsed": "hi", "program": "spl-memo",
               "programId": "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr", "stackHeight": 1})
    );
    assert!(result["meta"].get("loadedAddresses").is_none());
    // Unparsed programs: partially decoded form with account keys.
    let result = server.result(
        "getTransaction",
        json!([DBC_SIG, {"encoding": "jsonParsed", "maxSupportedTransactionVersion": 0}]),
    );
    let first = &result["transaction"]["message"]["instructions"][0];
    assert_eq!(first["programId"], COMPUTE_BUDGET);
    assert_eq!(first["accounts"], json!([]));
    assert_eq!(first["stackHeight"], 1);
}

/// `{"amount","decimals","uiAmount","uiAmountString"}` of a *Checked token instruction, worked
/// out here from the raw amount (uiAmountString: the decimal number without trailing zeros).
fn token_amount(amount: u64, decimals: u32) -> Value {
    let scale = 10u64.pow(decimals);
    let fraction = format!("{:0width$}", amount % scale, width = decimals as usize);
    let fraction = fraction.trim_end_matches('0');
    let text = if fraction.is_empty() {
        (amount / scale).to_string()
    } else {
        format!("{}.{fraction}", amount / scale)
    };
    json!({"amount": amount.to_string(), "decimals": decimals,
           "uiAmount": amount as f64 / scale as f64, "uiAmountString": text})
}

#[test]
fn json_parsed_parses_spl_token_and_associated_token() {
    const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
    const ATA: &str = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
    let server = TestServer::start(RpcConfig::default());
    let result = server.result(
        "getTransaction",
        json!([AMM_SIG, {"encoding": "jsonParsed"}]),
    );
    let doc = fixture_json("json/alpha_amm.buy.4pCgZ28W.txupdate.json");
    let tx = &doc["transaction"]["transaction"]["message"];
    let keys: Vec<String> = tx["accountKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(b58)
        .collect();
    let bytes = |value: &Value| -> Vec<u8> {
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_u64().unwrap() as u8)
            .collect()
    };
    let account = |ix: &Value, i: usize| keys[ix["accounts"][i].as_u64().unwrap() as usize].clone();
    // What the validator prints for each token / associated-token instruction of the fixture.
    let expected = |ix: &Value, stack_height: &Value| -> Option<Value> {
        let program = keys[ix["programIdIndex"].as_u64().unwrap() as usize].as_str();
        let data = bytes(&ix["data"]);
        let a = |i: usize| account(ix, i);
        let parsed = match (program, data.first()) {
            (ATA, None) => json!({"type": "create", "info": {"source": a(0), "account": a(1),
                "wallet": a(2), "mint": a(3), "systemProgram": a(4), "tokenProgram": a(5)}}),
            (TOKEN, Some(17)) => json!({"type": "syncNative", "info": {"account": a(0)}}),
            (TOKEN, Some(9)) => json!({"type": "closeAccount", "info": {"account": a(0),
                "destination": a(1), "owner": a(2)}}),
            (TOKEN, Some(21)) => {
                assert_eq!(data, [21, 7, 0]);
                json!({"type": "getAccountDataSize", "info": {"mint": a(0),
                    "extensionTypes": ["immutableOwner"]}})
            }
            (TOKEN, Some(22)) => json!({"type": "initializeImmutableOwner",
                "info": {"account": a(0)}}),
            (TOKEN, Some(18)) => json!({"type": "initializeAccount3", "info": {"account": a(0),
                "mint": a(1), "owner": bs58::encode(&data[1..33]).into_string()}}),
            (TOKEN, Some(12)) => {
                let amount = u64::from_le_bytes(data[1..9].try_into().unwrap());
                json!({"type": "transferChecked", "info": {"source": a(0), "mint": a(1),
                    "destination": a(2), "authority": a(3),
                    "tokenAmount": token_amount(amount, u32::from(data[9]))}})
            }
            (TOKEN, _) => panic!("fixture token instruction not covered: {data:?}"),
            _ => return None,
        };
        let name = if program == ATA {
            "spl-associated-token-account"
        } else {
            "spl-token"
        };
        Some(
            json!({"parsed": parsed, "program": name, "programId": program,
                    "stackHeight": stack_height}),
        )
    };
    let mut checked = 0;
    let message = &result["transaction"]["message"];
    for (i, ix) in tx["instructions"].as_array().unwrap().iter().enumerate() {
        if let Some(expected) = expected(ix, &json!(1)) {
            assert_eq!(message["instructions"][i], expected, "instruction {i}");
            checked += 1;
        }
    }
    let inner_fixture = doc["transaction"]["meta"]["innerInstructions"]
        .as_array()
        .unwrap();
    let inner = result["meta"]["innerInstructions"].as_array().unwrap();
    assert_eq!(inner.len(), inner_fixture.len());
    let mut transfers = 0;
    for (group, fixture_group) in inner.iter().zip(inner_fixture) {
        for (j, ix) in fixture_group["instructions"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            if let Some(expected) = expected(ix, &ix["stackHeight"]) {
                assert_eq!(
                    group["instructions"][j], expected,
                    "inner {} #{j}",
                    group["index"]
                );
                checked += 1;
                transfers += usize::from(expected["parsed"]["type"] == "transferChecked");
            }
        }
    }
    // 2 ATA creates, syncNative, closeAccount; 2 x 3 account set-ups, 4 transferChecked.
    assert_eq!((checked, transfers), (14, 4));
    // The AMM program itself is not parsed: partially decoded.
    assert_eq!(
        message["instructions"][7]["data"],
        b58(&tx["instructions"][7]["data"])
    );
}

#[test]
fn get_block_details_rewards_and_slot_outcomes() {
    let server = TestServer::start(RpcConfig::default());
    let full = server.result(
        "getBlock",
        json!([371820726, {"maxSupportedTransactionVersion": 0}]),
    );
    let blocks = fixture_json("blocks.json");
    let spec = blocks["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["slot"] == 371820726)
        .unwrap();
    assert_eq!(full["blockhash"], spec["blockhash"]);
    assert_eq!(full["previousBlockhash"], spec["previous_blockhash"]);
    assert_eq!(full["parentSlot"], 371820725);
    assert_eq!(full["blockTime"], 1_760_004_800);
    assert_eq!(full["blockHeight"], 349_004_500);
    assert!(full.get("numRewardPartitions").is_none());
    assert_eq!(
        full["rewards"],
        json!([{"commission": null, "lamports": 12500, "postBalance": 9_000_000_000u64,
                "pubkey": spec["rewards"][0]["pubkey"], "rewardType": "Fee"},
               {"commission": 7, "lamports": 700, "postBalance": 1_000_000,
                "pubkey": spec["rewards"][1]["pubkey"], "rewardType": "Voting"}])
    );
    let txs = full["transactions"].as_array().unwrap();
    assert_eq!(txs.len(), 2);
    assert_eq!(txs[0], {
        let mut t = expected_transaction("alpha_amm.buy.4pCgZ28W", 0, Some(json!("legacy")));
        let t = t.as_object_mut().unwrap();
        t.remove("blockTime");
        t.remove("slot");
        Value::Object(t.clone())
    });
    // Signatures in block order; none; rewards false.
    let sigs = server.result(
        "getBlock",
        json!([371820726, {"transactionDetails": "signatures"}]),
    );
    assert_eq!(sigs["signatures"], json!([AMM_SIG, MEMO_SIG]));
    assert!(sigs.get("transactions").is_none());
    let none = server.result(
        "getBlock",
        json!([371820726, {"transactionDetails": "none", "rewards": false}]),
    );
    assert!(none.get("transactions").is_none() && none.get("signatures").is_none());
    assert!(none.get("rewards").is_none());
    let no_rewards = server.result("getBlock", json!([371820726, {"rewards": false}]));
    assert!(no_rewards.get("rewards").is_none());
    assert_eq!(
        no_rewards["transactions"][0]["meta"]["rewards"],
        Value::Null
    );
    // A block with a v0 transaction, without the option: -32015 for the whole block.
    assert_eq!(server.error("getBlock", json!([371808930]))["code"], -32015);
    // ... but signatures mode does not check versions.
    let sigs = server.result(
        "getBlock",
        json!([371808930, {"transactionDetails": "signatures"}]),
    );
    assert_eq!(sigs["signatures"], json!([DBC_SIG]));
    // Skipped slot in a held epoch; slot in an epoch not held (no upstream).
    assert_eq!(
        server.error("getBlock", json!([371808931])),
        json!({"code": -32009, "message": "Slot 371808931 was skipped, or missing in long-term storage"})
    );
    assert_eq!(
        server.error("getBlock", json!([250000007])),
        json!({"code": -32004, "message": "Block not available for slot 250000007"})
    );
    // Slot 0: genesis time and height 0, previousBlockhash its own.
    let genesis = server.result("getBlock", json!([0]));
    assert_eq!(genesis["blockTime"], 1_584_368_940);
    assert_eq!(genesis["blockHeight"], 0);
    assert_eq!(genesis["previousBlockhash"], genesis["blockhash"]);
    assert_eq!(genesis["transactions"], json!([]));
}

#[test]
fn get_block_time_and_get_slot() {
    let server = TestServer::start(RpcConfig::default());
    assert_eq!(
        server.result("getBlockTime", json!([371808755])),
        1_760_000_000
    );
    assert_eq!(server.result("getBlockTime", json!([0])), 1_584_368_940);
    assert_eq!(server.error("getBlockTime", json!([1]))["code"], -32009);
    assert_eq!(
        server.error("getBlockTime", json!([5_000_000]))["code"],
        -32004
    );
    assert_eq!(
        server.error("getBlockTime", json!(["x"]))["message"],
        "Invalid params: invalid type: string \"x\", expected u64."
    );
    assert_eq!(server.result("getSlot", json!([])), 389243770);
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"getSlot"}"#;
    assert_eq!(server.call(body)["result"], 389243770);
    assert_eq!(
        server.error("getSlot", json!([{"minContextSlot": 400000000}])),
        json!({"code": -32016, "message": "Minimum context slot has not been reached", "data": {"contextSlot": 389243770}})
    );
}

#[test]
fn get_signatures_for_address_order_paging_and_memo() {
    let server = TestServer::start(RpcConfig::default());
    let rows = server.result("getSignaturesForAddress", json!([COMPUTE_BUDGET]));
    let sigs: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["signature"].as_str().unwrap())
        .collect();
    // Newest slot first: amm (371820726), dbc (371808930), damm (371808755); the lookup-table
    // transaction (389243770) and the create (299999990) reference it too when they do.
    let expected_order: Vec<&str> = [LOOKUP_SIG, AMM_SIG, DBC_SIG, DAMM_SIG, CREATE_SIG]
        .into_iter()
        .filter(|s| sigs.contains(s))
        .collect();
    assert_eq!(sigs, expected_order);
    assert!(sigs.contains(&AMM_SIG) && sigs.contains(&DBC_SIG) && sigs.contains(&DAMM_SIG));
    assert_eq!(
        rows[sigs.iter().position(|s| *s == DBC_SIG).unwrap()],
        json!({"blockTime": 1_760_000_070, "confirmationStatus": "finalized", "err": null,
               "memo": null, "signature": DBC_SIG, "slot": 371808930})
    );
    // before/until are exclusive; limit caps.
    let page = server.result(
        "getSignaturesForAddress",
        json!([COMPUTE_BUDGET, {"before": AMM_SIG, "until": DAMM_SIG}]),
    );
    assert_eq!(
        page,
        json!([rows[sigs.iter().position(|s| *s == DBC_SIG).unwrap()]])
    );
    let one = server.result(
        "getSignaturesForAddress",
        json!([COMPUTE_BUDGET, {"limit": 1}]),
    );
    assert_eq!(one.as_array().unwrap().len(), 1);
    // Same slot: the later transaction of the block first; memo and err of the memo transaction.
    let payer = "D7S4hd9r7uMThu7PN2fjzaz1pr5gfGaZ6L4DNwj9tm2W";
    let memo_rows = server.result("getSignaturesForAddress", json!([payer]));
    assert_eq!(
        memo_rows,
        json!([{"blockTime": 1_760_004_800, "confirmationStatus": "finalized",
                "err": {"InstructionError": [1, {"Custom": 6001}]}, "memo": "[2] hi",
                "signature": MEMO_SIG, "slot": 371820726}])
    );
    let system = server.result(
        "getSignaturesForAddress",
        json!(["11111111111111111111111111111111", {"limit": 2}]),
    );
    let system: Vec<&str> = system
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["signature"].as_str().unwrap())
        .collect();
    let memo_at = system.iter().position(|s| *s == MEMO_SIG);
    let amm_at = system.iter().position(|s| *s == AMM_SIG);
    if let (Some(memo_at), Some(amm_at)) = (memo_at, amm_at) {
        assert!(
            memo_at < amm_at,
            "index 1 of the block comes before index 0"
        );
    }
    // Sysvars: nothing from the archive.
    assert_eq!(
        server.result(
            "getSignaturesForAddress",
            json!(["SysvarRent111111111111111111111111111111111"])
        ),
        json!([])
    );
    assert_eq!(
        server.error(
            "getSignaturesForAddress",
            json!([COMPUTE_BUDGET, {"limit": 1001}])
        )["message"],
        "Invalid limit; max 1000"
    );
}
