//! The JSON-RPC envelope, HTTP transport rules, rate limit and routing to the upstream validator,
//! over real HTTP. The upstream is a stand-in (a live validator cannot run here) that records
//! what it receives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod rpc_common;

use rpc::{RateLimitConfig, RpcConfig, UpstreamConfig};
use rpc_common::{StandIn, TestServer, http, stand_in_answer, upstream_blockhash};
use serde_json::{Value, json};

const AMM_SIG: &str =
    "4pCgZ28WbXfpq93VuwbJwjWTvfgesEds9PKXkXmMHUGWmYduKbieMpbckHUwQ8ugVdvrT3CYQDC3n9j4BzPLyJCz";
const COMPUTE_BUDGET: &str = "ComputeBudget111111111111111111111111111111";

fn with_upstream(stand_in: &StandIn) -> RpcConfig {
    RpcConfig {
        upstream: Some(UpstreamConfig::new(&stand_in.url()).unwrap()),
        ..RpcConfig::default()
    }
}

#[test]
fn envelope_errors_name_the_problem() {
    let server = TestServer::start(RpcConfig::default());
    let cases = [
        (
            "{nope",
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}"#,
        ),
        (
            "[]",
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":null}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"params":[]}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":5}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a","method":"getAccountInfo","params":[]}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"a"}"#,
        ),
        (
            r#"{"id":1,"method":"getSlot"}"#,
            r#"{"error":{"code":-32600,"message":"Unsupported JSON-RPC protocol version"},"id":1}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"getBlock","params":{"slot":1}}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"`params` should be an array"},"id":2}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"getBlock","params":[1,{},3]}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid parameters: Expected from 1 to 2 parameters.","data":"\"Got: 3\""},"id":2}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"getBlock","params":[1,{"encoding":"base64+zstd"}]}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: data did not match any variant of untagged enum RpcEncodingConfigWrapper."},"id":2}"#,
        ),
    ];
    for (body, expected) in cases {
        let response = server.post(body);
        assert_eq!(response.status, 200, "{body}");
        assert_eq!(response.text(), expected, "{body}");
    }
}

#[test]
fn batches_keep_order_and_drop_notifications() {
    let server = TestServer::start(RpcConfig::default());
    let body = r#"[
        {"jsonrpc":"2.0","id":1,"method":"getSlot"},
        {"jsonrpc":"2.0","method":"getSlot"},
        {"jsonrpc":"2.0","id":"b","method":"getBlockTime","params":[371808755]},
        {"jsonrpc":"2.0","id":3,"method":"nope"},
        7
    ]"#;
    let response = server.post(body);
    assert_eq!(
        response.text(),
        concat!(
            r#"[{"jsonrpc":"2.0","result":389243770,"id":1},"#,
            r#"{"jsonrpc":"2.0","result":1760000000,"id":"b"},"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":3},"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":null}]"#
        )
    );
    // Only notifications: no body at all.
    let response = server.post(r#"[{"jsonrpc":"2.0","method":"getSlot"}]"#);
    assert_eq!((response.status, response.body.len()), (200, 0));
    let response = server.post(r#"{"jsonrpc":"2.0","method":"getSlot"}"#);
    assert_eq!((response.status, response.body.len()), (200, 0));
}

#[test]
fn transport_rules() {
    let server = TestServer::start(RpcConfig::default());
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[],"pad":"{}"}}"#,
        "x".repeat(51 * 1024)
    );
    assert_eq!(server.post(&big).status, 413);
    assert_eq!(
        http(server.address, "GET", "application/json", b"").status,
        405
    );
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"getSlot"}"#;
    assert_eq!(http(server.address, "POST", "text/plain", body).status, 415);
    let ok = http(
        server.address,
        "POST",
        "application/json; charset=utf-8",
        body,
    );
    assert_eq!(ok.status, 200);
    assert_eq!(
        ok.headers["content-type"],
        "application/json; charset=utf-8"
    );
}

/// A batch of `n` getSlot calls with ids 0..n.
fn get_slot_batch(n: usize) -> String {
    let calls: Vec<String> = (0..n)
        .map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"getSlot"}}"#))
        .collect();
    format!("[{}]", calls.join(","))
}

/// How many leading entries of a batch answer are results; panics unless every later entry is
/// the -32429 error object, and unless the ids follow the calls' order.
fn served_prefix(answer: &Value) -> usize {
    let entries = answer.as_array().expect("a batch is answered as an array");
    let served = entries
        .iter()
        .take_while(|e| e.get("result").is_some())
        .count();
    for (id, entry) in entries.iter().enumerate() {
        assert_eq!(entry["id"], id, "{entry}");
        if id < served {
            assert_eq!(entry["result"], 389243770, "{entry}");
        } else {
            assert_eq!(
                entry["error"],
                json!({"code": -32429, "message": "rate limit exceeded: 100 requests per second per IP"}),
                "{entry}"
            );
        }
    }
    served
}

#[test]
fn rate_limit_counts_every_call_of_a_batch() {
    let server = TestServer::start(RpcConfig::default());
    // 60 calls of the burst of 100, then a batch of 100: the first ~40 served (refill during
    // the test adds a few), each of the rest the -32429 error object, still one array.
    assert_eq!(server.post(&get_slot_batch(60)).status, 200);
    let response = server.post(&get_slot_batch(100));
    assert_eq!(response.status, 200);
    assert_eq!(response.headers["retry-after"], "1");
    let served = served_prefix(&serde_json::from_slice(&response.body).unwrap());
    assert!((40..100).contains(&served), "served {served}");
    // The bucket is empty: a batch of which nothing fits is HTTP 429, still one array.
    let mut limited = None;
    for _ in 0..50 {
        let response = server.post(&get_slot_batch(10));
        if response.status == 429 {
            limited = Some(response);
            break;
        }
    }
    let limited = limited.expect("a client over 100 calls per second must be limited");
    assert_eq!(limited.headers["retry-after"], "1");
    let answer: Value = serde_json::from_slice(&limited.body).unwrap();
    assert_eq!(served_prefix(&answer), 0);
    assert_eq!(answer.as_array().unwrap().len(), 10);
    // A single call over the limit: one error object.
    let single = (0..50)
        .map(|_| server.post(r#"{"jsonrpc":"2.0","id":1,"method":"getSlot"}"#))
        .find(|response| response.status == 429)
        .expect("a single call over the limit is refused");
    assert_eq!(
        single.text(),
        r#"{"jsonrpc":"2.0","error":{"code":-32429,"message":"rate limit exceeded: 100 requests per second per IP"},"id":null}"#
    );
    let mut metrics = String::new();
    server.rpc.render_metrics(&mut metrics);
    assert!(
        metrics.contains("appliance_rpc_rate_limit_tracked_clients 1"),
        "{metrics}"
    );
}

#[test]
fn a_batch_larger_than_the_burst_is_served_as_far_as_it_fits() {
    // A fresh bucket holds 100 tokens: of 101 calls exactly the first 100 are served.
    let server = TestServer::start(RpcConfig::default());
    let response = server.post(&get_slot_batch(101));
    assert_eq!(response.status, 200);
    let answer: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(answer.as_array().unwrap().len(), 101);
    assert_eq!(served_prefix(&answer), 100);
    let mut metrics = String::new();
    server.rpc.render_metrics(&mut metrics);
    assert!(
        metrics.contains("appliance_rpc_rate_limited_total 1"),
        "{metrics}"
    );
}

#[test]
fn a_small_rate_limit_table_refuses_new_clients_while_full() {
    let server = TestServer::start(RpcConfig {
        rate_limit: RateLimitConfig {
            max_tracked: 1,
            ..RateLimitConfig::default()
        },
        ..RpcConfig::default()
    });
    // Only one client (127.0.0.1) exists here: it stays tracked and served.
    for _ in 0..5 {
        assert_eq!(
            server
                .post(r#"{"jsonrpc":"2.0","id":1,"method":"getSlot"}"#)
                .status,
            200
        );
    }
    let mut metrics = String::new();
    server.rpc.render_metrics(&mut metrics);
    assert!(metrics.contains("appliance_rpc_rate_limit_max_tracked_clients 1"));
}

#[test]
fn other_methods_are_proxied_byte_for_byte() {
    let stand_in = StandIn::start();
    let server = TestServer::start(with_upstream(&stand_in));
    let body = r#"{"jsonrpc":"2.0",  "id":9,"method":"getBalance","params":["Vote111111111111111111111111111111111111111"]}"#;
    let response = server.post(body);
    assert_eq!(response.status, 200);
    assert_eq!(stand_in.bodies(), vec![body.as_bytes().to_vec()]);
    assert_eq!(
        response.text(),
        stand_in_answer("getBalance", &json!(9), &Value::Null)
    );
    assert_eq!(
        response.headers["content-type"],
        "application/json; charset=stand-in"
    );
    // A batch of proxied calls goes through whole.
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"getHealth"}, {"jsonrpc":"2.0","id":2,"method":"getVersion"}]"#;
    let response = server.post(batch);
    assert_eq!(stand_in.bodies().last().unwrap(), batch.as_bytes());
    assert_eq!(
        response.text(),
        format!(
            "[{}, {}]",
            stand_in_answer("getHealth", &json!(1), &Value::Null),
            stand_in_answer("getVersion", &json!(2), &Value::Null)
        )
    );
}

#[test]
fn mixed_batches_and_misses_route_per_call() {
    let stand_in = StandIn::start();
    let server = TestServer::start(with_upstream(&stand_in));
    let proxied = r#"{"jsonrpc":"2.0","id":2,"method":"getBalance","params":["x"]}"#;
    let unknown_sig = bs58::encode([9u8; 64]).into_string();
    let body = format!(
        r#"[{{"jsonrpc":"2.0","id":1,"method":"getBlockTime","params":[371808755]}},{proxied},{{"jsonrpc":"2.0","id":3,"method":"getBlock","params":[250000007]}},{{"jsonrpc":"2.0","id":4,"method":"getTransaction","params":["{unknown_sig}"]}}]"#
    );
    let response = server.post(&body);
    let value: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(value[0]["result"], 1_760_000_000);
    assert_eq!(value[1]["result"]["value"], 42);
    assert_eq!(
        value[2]["result"]["blockhash"],
        upstream_blockhash(250000007)
    );
    assert_eq!(value[3]["result"]["from"], "stand-in");
    // Each forwarded call arrived as its own unchanged text.
    let bodies: Vec<String> = stand_in
        .bodies()
        .iter()
        .map(|b| String::from_utf8(b.clone()).unwrap())
        .collect();
    assert!(bodies.contains(&proxied.to_string()), "{bodies:?}");
    assert_eq!(bodies.len(), 3);
    // Held slots and signatures never reach the upstream.
    let before = stand_in.bodies().len();
    server.call(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"getTransaction","params":["{AMM_SIG}"]}}"#
    ));
    server.call(r#"{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[371808931]}"#);
    assert_eq!(stand_in.bodies().len(), before);
    // A block whose parent lies in an epoch not held gets its previousBlockhash from upstream.
    let block = server.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[389243770,{"transactionDetails":"none","maxSupportedTransactionVersion":0}]}"#,
    );
    assert_eq!(
        block["result"]["previousBlockhash"],
        upstream_blockhash(388799999)
    );
}

#[test]
fn signatures_merge_upstream_first_then_archive() {
    let stand_in = StandIn::start();
    let server = TestServer::start(with_upstream(&stand_in));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"getSignaturesForAddress","params":["{COMPUTE_BUDGET}",{{"limit":3}}]}}"#
    );
    let response = server.post(&body);
    rpc_common::assert_sorted_keys(&response.text());
    let value: Value = serde_json::from_slice(&response.body).unwrap();
    let rows = value["result"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[0]["slot"], 400000000,
        "the upstream's newest row first"
    );
    assert!(rows[1]["slot"].as_u64().unwrap() > rows[2]["slot"].as_u64().unwrap());
    assert_eq!(stand_in.bodies(), vec![body.as_bytes().to_vec()]);
    // limit 1: the upstream fills it; the archive is not read.
    let one = server.call(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"getSignaturesForAddress","params":["{COMPUTE_BUDGET}",{{"limit":1}}]}}"#
    ));
    assert_eq!(one["result"].as_array().unwrap().len(), 1);
    // An `until` the archive does not hold stopped the upstream: nothing is added.
    let until = bs58::encode([3u8; 64]).into_string();
    let stopped = server.call(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"getSignaturesForAddress","params":["{COMPUTE_BUDGET}",{{"until":"{until}"}}]}}"#
    ));
    assert_eq!(stopped["result"].as_array().unwrap().len(), 1);
}
