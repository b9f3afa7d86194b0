//! What a browser or a JSON-RPC client meets on the HTTP address of the real binary (issue 23):
//! CORS preflights and `Access-Control-Allow-Origin` on the JSON-RPC and insights routes (any
//! origin by default, a configured list, off), before authentication; and `POST /` without an
//! archive answered with JSON-RPC error objects instead of an HTTP 404 body.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use process::{Appliance, free_tcp_address};
use serde_json::{Value, json};

/// `appliance run` on one unused UDP source (no replay, no archive) with `extra` flags; retried
/// on fresh ports when a port picked here was taken before the child bound it.
fn start(extra: &[&str]) -> (Appliance, SocketAddr) {
    for _ in 0..5 {
        let http = free_tcp_address();
        let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
            .args(["run", "--udp", "127.0.0.1:0", "--grpc"])
            .arg(free_tcp_address().to_string())
            .arg("--http")
            .arg(http.to_string())
            .arg("--data-dir")
            .arg(std::env::temp_dir().join(format!("http-clients-{}", std::process::id())))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut appliance = Appliance { child };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if appliance.child.try_wait().unwrap().is_some() {
                break;
            }
            if request(http, "GET", "/health", &[], "").0 == 200 {
                return (appliance, http);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    panic!("the appliance did not come up");
}

/// One HTTP/1.1 request: status, headers (lower-case names; repeated ones joined by ", ") and
/// body; status 0 when the connection failed.
fn request(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, HashMap<String, String>, String) {
    let Ok(mut stream) = std::net::TcpStream::connect(address) else {
        return (0, HashMap::new(), String::new());
    };
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    stream.write_all(text.as_bytes()).unwrap();
    let mut response = String::new();
    if stream.read_to_string(&mut response).is_err() {
        return (0, HashMap::new(), String::new());
    }
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let mut map: HashMap<String, String> = HashMap::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            map.entry(name.trim().to_ascii_lowercase())
                .and_modify(|v| {
                    v.push_str(", ");
                    v.push_str(value.trim());
                })
                .or_insert_with(|| value.trim().to_owned());
        }
    }
    (status, map, body.to_owned())
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

fn preflight(http: SocketAddr, path: &str, origin: &str) -> (u16, HashMap<String, String>) {
    let (status, headers, _) = request(
        http,
        "OPTIONS",
        path,
        &[
            ("Origin", origin),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "content-type, solana-client",
            ),
        ],
        "",
    );
    (status, headers)
}

#[test]
fn any_origin_by_default_on_json_rpc_and_insights() {
    let (_appliance, http) = start(&[]);
    let origin = "https://wallet.example";
    for path in ["/", "/v1/block50"] {
        let (status, headers) = preflight(http, path, origin);
        assert_eq!(status, 204, "{path}: {headers:?}");
        assert_eq!(headers["access-control-allow-origin"], "*");
        assert_eq!(
            headers["access-control-allow-methods"],
            "GET, POST, OPTIONS"
        );
        assert_eq!(
            headers["access-control-allow-headers"],
            "content-type, solana-client"
        );
        assert_eq!(headers["access-control-max-age"], "86400");
    }
    // The answers themselves carry the header, whatever their status.
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"getSlot"}"#;
    let (_, headers, _) = request(http, "POST", "/", &[JSON, ("Origin", origin)], call);
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_eq!(headers["access-control-expose-headers"], "retry-after");
    let (_, headers, _) = request(http, "GET", "/v1/block50", &[("Origin", origin)], "");
    assert_eq!(headers["access-control-allow-origin"], "*");
    // Without an Origin (not a browser) nothing changes.
    let (_, headers, _) = request(http, "POST", "/", &[JSON], call);
    assert!(!headers.contains_key("access-control-allow-origin"));
}

#[test]
fn a_configured_origin_list_and_authentication() {
    let (_appliance, http) = start(&[
        "--cors-origin",
        "https://app.example",
        "--cors-origin",
        "http://localhost:3000",
        "--auth-token",
        "sesame",
    ]);
    // The preflight needs no token (browsers send none on it).
    let (status, headers) = preflight(http, "/", "https://app.example");
    assert_eq!(status, 204);
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example"
    );
    assert_eq!(headers["vary"], "Origin");
    // The call itself does; its 401 still reaches the page (the header is there).
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"getSlot"}"#;
    let origin = ("Origin", "http://localhost:3000");
    let (status, headers, _) = request(http, "POST", "/", &[JSON, origin], call);
    assert_eq!(status, 401);
    assert_eq!(
        headers["access-control-allow-origin"],
        "http://localhost:3000"
    );
    let (status, headers, _) = request(
        http,
        "POST",
        "/",
        &[JSON, origin, ("x-token", "sesame")],
        call,
    );
    assert_eq!(status, 200);
    assert_eq!(
        headers["access-control-allow-origin"],
        "http://localhost:3000"
    );
    // Another origin gets no CORS header and no preflight answer.
    let (status, headers) = preflight(http, "/", "https://evil.example");
    assert_ne!(status, 204);
    assert!(!headers.contains_key("access-control-allow-origin"));
}

#[test]
fn cors_can_be_turned_off_and_bad_origins_are_refused() {
    let (_appliance, http) = start(&["--cors-origin", "none"]);
    let (status, headers) = preflight(http, "/", "https://wallet.example");
    assert_ne!(status, 204);
    assert!(!headers.contains_key("access-control-allow-origin"));
    let out = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--check-config", "--cors-origin", "wallet.example"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("http.cors_origins (--cors-origin)") && stderr.contains("wallet.example"),
        "{stderr}"
    );
}

#[test]
fn post_without_an_archive_is_a_json_rpc_error() {
    let (_appliance, http) = start(&[]);
    let message = "Method not found: this appliance serves no JSON-RPC archive (start it with --archive or --upstream)";
    let (status, headers, body) = request(
        http,
        "POST",
        "/",
        &[JSON],
        r#"{"jsonrpc":"2.0","id":7,"method":"getBlock","params":[1]}"#,
    );
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json; charset=utf-8");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "error": {"code": -32601, "message": message}, "id": 7})
    );
    // A batch: one error per call, ids kept, notifications unanswered.
    let (_, _, body) = request(
        http,
        "POST",
        "/",
        &[JSON],
        r#"[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","method":"getSlot"},{"jsonrpc":"2.0","id":"b","method":"getSlot"}]"#,
    );
    let answer: Value = serde_json::from_str(&body).unwrap();
    let ids: Vec<&Value> = answer
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            assert_eq!(entry["error"]["code"], -32601);
            &entry["id"]
        })
        .collect();
    assert_eq!(ids, [&json!(1), &json!("b")]);
    // Not JSON: the parse error, still a JSON-RPC object.
    let (_, _, body) = request(http, "POST", "/", &[JSON], "{nope");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["error"]["code"], -32700);
}

#[test]
fn the_console_page_is_public_and_its_stats_need_the_token() {
    let (_appliance, http) = start(&["--auth-token", "sesame"]);
    // The page and its assets: no token (a browser's navigation carries none), compiled in.
    let (status, headers, body) = request(http, "GET", "/", &[], "");
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(headers["cache-control"], "no-cache");
    assert!(headers["content-security-policy"].contains("default-src 'none'"));
    assert!(body.contains("/console/console.js") && body.contains("/console/console.css"));
    for (path, kind) in [
        ("/console/console.js", "text/javascript; charset=utf-8"),
        ("/console/console.css", "text/css; charset=utf-8"),
    ] {
        let (status, headers, body) = request(http, "GET", path, &[], "");
        assert_eq!((status, headers["content-type"].as_str()), (200, kind));
        assert!(!body.is_empty());
        let etag = headers["etag"].clone();
        let (status, _, body) = request(http, "GET", path, &[("If-None-Match", &etag)], "");
        assert_eq!((status, body.as_str()), (304, ""), "{path}");
    }
    // The stats carry the counters: a token, like /metrics.
    let (status, _, _) = request(http, "GET", "/console/stats", &[], "");
    assert_eq!(status, 401);
    let token = ("x-token", "sesame");
    let (status, headers, body) = request(http, "GET", "/console/stats", &[token], "");
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["cache-control"], "no-store");
    let stats: Value = serde_json::from_str(&body).unwrap();
    assert!(stats["unix_ms"].as_u64().unwrap() > 0);
    assert!(
        stats["archive"].is_null() && stats["insights"].is_null(),
        "{stats}"
    );
    let stream = &stats["stream"];
    let source = stream["sources"][0]["name"].as_str().unwrap();
    assert!(source.starts_with("udp 127.0.0.1:"), "{source}");
    let stages: Vec<&str> = stream["latency"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stage| {
            let bounds = stage["bounds_us"].as_array().unwrap().len();
            assert_eq!(stage["counts"].as_array().unwrap().len(), bounds + 1);
            stage["stage"].as_str().unwrap()
        })
        .collect();
    assert_eq!(stages.last(), Some(&"first_read_to_publish"));
    for key in [
        "transactions",
        "updates_published",
        "subscribers",
        "updates_dropped",
    ] {
        assert!(stream[key].is_u64(), "{key}: {stream}");
    }
    // `/` is still the JSON-RPC endpoint for POST, and other verbs still get its 405.
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"getSlot"}"#;
    let (status, _, body) = request(http, "POST", "/", &[JSON, token], call);
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["code"],
        -32601
    );
    let (status, _, _) = request(http, "POST", "/", &[JSON], call);
    assert_eq!(status, 401);
    let (status, _, _) = request(http, "DELETE", "/", &[token], "");
    assert_eq!(status, 405);
}
