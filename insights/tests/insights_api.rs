//! The `/v1` API end to end: the stand-in upstream serves the fixture chain over HTTP, the ingest
//! follows it into a real store, and real HTTP requests check every endpoint against the figures
//! `fixtures/insights/generate.py` computed independently; plus every error answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod insights_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use front::http::{HttpMount, HttpOptions, serve};
use insights::{Insights, InsightsConfig};
use insights_support::{assert_matches, expected, fixtures, free_port, get, wait_until};
use serde_json::Value;
use testkit::insights_standin::{Pace, StandinChain, StandinServer};

struct Running {
    base: String,
    _insights: Option<Insights>,
    _standin: Option<StandinServer>,
}

fn serve_mount(mount: HttpMount) -> String {
    let port = free_port();
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let options = HttpOptions {
        mounts: vec![mount],
        workers: 1,
        ..HttpOptions::default()
    };
    serve(
        address,
        Arc::new(String::new),
        options,
        std::future::pending(),
    )
    .unwrap();
    format!("http://{address}")
}

fn start(pace: Pace) -> Running {
    start_with(pace, 1_000)
}

fn start_with(pace: Pace, max_history: usize) -> Running {
    let standin = StandinServer::start(StandinChain::load(&fixtures(), pace).unwrap(), 0).unwrap();
    let dir = std::env::temp_dir().join(format!(
        "insights-api-{}-{}",
        std::process::id(),
        free_port()
    ));
    let mut config = InsightsConfig::new(standin.url(), dir.join("insights.redb"));
    config.poll_interval = Duration::from_millis(20);
    config.start_lookback_slots = 200;
    config.limits.max_history = max_history;
    let insights = Insights::start(config).unwrap();
    let base = serve_mount(insights.mount());
    Running {
        base,
        _insights: Some(insights),
        _standin: Some(standin),
    }
}

/// The whole fixture chain ingested.
fn caught_up() -> Running {
    let running = start(Pace::AllAtOnce);
    wait_until(
        Duration::from_secs(60),
        "the ingest to reach slot 1089",
        || {
            let (status, body) = get(&format!("{}/v1/block50", running.base));
            status == 200 && body["slot_range"]["end"] == 1089
        },
    );
    running
}

fn last_snapshot(expected: &Value) -> Value {
    let mut last = expected["history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    last.as_object_mut().unwrap().remove("congestion");
    last
}

#[test]
fn endpoints_serve_the_expected_figures() {
    let running = caught_up();
    let base = &running.base;
    let expected = expected();
    let history = expected["history"].as_array().unwrap();

    let (status, snapshot) = get(&format!("{base}/v1/block50"));
    assert_eq!(status, 200);
    assert_matches(&snapshot, &last_snapshot(&expected), "block50");
    let fields: Vec<&str> = snapshot
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for field in [
        "slot_range",
        "avg_compute_units",
        "avg_priority_fee",
        "median_priority_fee",
        "p75_priority_fee",
        "p90_priority_fee",
        "p99_priority_fee",
        "tx_count",
        "success_rate",
        "congestion_score",
        "top_programs",
        "updated_at",
    ] {
        assert!(fields.contains(&field), "block50 lacks {field}");
    }
    let updated = snapshot["updated_at"].as_str().unwrap();
    assert!(
        updated.len() == 24 && updated.ends_with('Z') && updated.as_bytes()[10] == b'T',
        "{updated}"
    );

    let (status, congestion) = get(&format!("{base}/v1/network/congestion"));
    assert_eq!(status, 200);
    assert_matches(
        &congestion,
        &history.last().unwrap()["congestion"],
        "congestion",
    );

    for (level, probability) in [
        ("low", 0.6),
        ("medium", 0.8),
        ("high", 0.95),
        ("very_high", 0.99),
    ] {
        let (status, fee) = get(&format!("{base}/v1/fees/estimate?level={level}"));
        assert_eq!(status, 200);
        assert_eq!(fee["level"], level);
        assert_eq!(fee["landing_probability"], probability);
        assert_eq!(fee["priority_fee"], expected["fees"]["levels"][level]);
        assert_matches(&fee, &expected["fees"], "fees");
        assert_eq!(fee["slot_range"], snapshot["slot_range"]);
    }
    let accounts = &expected["accounts"];
    let hot = accounts["hot"].as_str().unwrap();
    let loaded = accounts["loaded_hot"].as_str().unwrap();
    let (status, fee) = get(&format!(
        "{base}/v1/fees/estimate?level=medium&accounts={hot}"
    ));
    assert_eq!(status, 200);
    assert_matches(&fee, &expected["fees_hot"], "fees for the hot account");
    // The loaded (lookup-table) writable account counts; percent-encoded comma.
    let (status, fee) = get(&format!(
        "{base}/v1/fees/estimate?level=high&accounts={hot}%2C{loaded}"
    ));
    assert_eq!(status, 200);
    assert_matches(
        &fee,
        &expected["fees_hot_or_loaded"],
        "fees for hot or loaded",
    );
    assert_eq!(
        fee["priority_fee"],
        expected["fees_hot_or_loaded"]["levels"]["high"]
    );
    let nobody = accounts["nobody"].as_str().unwrap();
    let (_, fee) = get(&format!(
        "{base}/v1/fees/estimate?level=low&accounts={nobody}"
    ));
    assert_matches(&fee, &expected["fees_nobody"], "fees for an idle account");

    let compare = &expected["compare"];
    let (wallet, against) = (
        compare["wallet"]["address"].as_str().unwrap(),
        compare["against"]["address"].as_str().unwrap(),
    );
    let (status, body) = get(&format!(
        "{base}/v1/block50/compare?wallet={wallet}&against={against}"
    ));
    assert_eq!(status, 200);
    assert_matches(&body["wallet"], &compare["wallet"], "compare.wallet");
    assert_matches(&body["against"], &compare["against"], "compare.against");
    assert_eq!(body["slot_range"], snapshot["slot_range"]);
    let absent = compare["absent"]["address"].as_str().unwrap();
    let (_, body) = get(&format!(
        "{base}/v1/block50/compare?wallet={absent}&against={wallet}"
    ));
    assert_matches(&body["wallet"], &compare["absent"], "compare.absent");
    assert!(body["wallet"]["landing_rate"].is_null());

    let (status, all) = get(&format!("{base}/v1/block50/history?from=0&to=2000"));
    assert_eq!(status, 200);
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), history.len());
    for (actual, want) in all.iter().zip(history) {
        let mut want = want.clone();
        want.as_object_mut().unwrap().remove("congestion");
        assert_matches(actual, &want, "history");
    }
    // A range inside: exactly the snapshots whose window ends in it.
    let (from, to) = (
        history[3]["slot_range"]["end"].as_u64().unwrap(),
        history[5]["slot_range"]["end"].as_u64().unwrap(),
    );
    let (_, some) = get(&format!("{base}/v1/block50/history?from={from}&to={to}"));
    let ends: Vec<u64> = some
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["slot_range"]["end"].as_u64().unwrap())
        .collect();
    let want: Vec<u64> = history[3..=5]
        .iter()
        .map(|s| s["slot_range"]["end"].as_u64().unwrap())
        .collect();
    assert_eq!(ends, want);
    let (status, none) = get(&format!("{base}/v1/block50/history?from=1&to=5"));
    assert_eq!((status, none), (200, Value::Array(Vec::new())));
}

fn assert_error(base: &str, path: &str, status: u16, code: &str, names: &str) {
    let (actual, body) = get(&format!("{base}{path}"));
    assert_eq!(actual, status, "{path}: {body}");
    assert_eq!(body["error"]["code"], code, "{path}: {body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(names),
        "{path}: message `{message}` should name `{names}`"
    );
}

#[test]
fn bad_requests_name_the_parameter() {
    let running = caught_up();
    let base = &running.base;
    let key = "11111111111111111111111111111111";
    for (path, code, names) in [
        ("/v1/block50/history", "invalid_range", "from"),
        ("/v1/block50/history?from=1", "invalid_range", "to"),
        ("/v1/block50/history?from=x&to=2", "invalid_range", "from"),
        ("/v1/block50/history?from=1&to=-2", "invalid_range", "to"),
        ("/v1/block50/history?from=9&to=2", "invalid_range", "from"),
        (
            "/v1/block50/history?from=99999999999999999999&to=2",
            "invalid_range",
            "from",
        ),
        ("/v1/fees/estimate", "invalid_parameter", "level"),
        (
            "/v1/fees/estimate?level=urgent",
            "invalid_parameter",
            "level",
        ),
        (
            "/v1/fees/estimate?level=low&accounts=",
            "invalid_parameter",
            "accounts",
        ),
        (
            "/v1/fees/estimate?level=low&accounts=abc",
            "invalid_parameter",
            "accounts",
        ),
        (
            "/v1/block50/compare?wallet=abc&against=x",
            "invalid_parameter",
            "wallet",
        ),
        (
            "/v1/block50/compare?against=x",
            "invalid_parameter",
            "wallet",
        ),
    ] {
        assert_error(base, path, 400, code, names);
    }
    assert_error(
        base,
        &format!("/v1/block50/compare?wallet={key}"),
        400,
        "invalid_parameter",
        "against",
    );
    assert_error(
        base,
        &format!("/v1/block50/compare?wallet={key}&against=0OIl"),
        400,
        "invalid_parameter",
        "against",
    );
    assert_error(base, "/v1/nothing-here", 404, "not_found", "path");
    assert_error(base, "/v1/block50/extra", 404, "not_found", "path");
    let (status, _) = get(&format!("{base}/v1/block50/history?from=0&to={}", u64::MAX));
    assert_eq!(status, 200);
    let (status, document) = get(&format!("{base}/v1/openapi.json"));
    assert_eq!(status, 200);
    for path in [
        "/v1/block50",
        "/v1/block50/history",
        "/v1/network/congestion",
        "/v1/fees/estimate",
        "/v1/block50/compare",
    ] {
        assert!(
            document["paths"][path]["get"].is_object(),
            "openapi lacks {path}"
        );
    }
}

#[test]
fn post_is_method_not_allowed() {
    let running = caught_up();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(&format!("{}/v1/block50", running.base))
        .send("")
        .unwrap();
    assert_eq!(response.status().as_u16(), 405);
    let body: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "method_not_allowed");
}

#[test]
fn unavailable_until_the_window_is_full() {
    // A chain whose tip holds fewer than 50 produced blocks for the whole test.
    let running = start(Pace::Paced {
        initial: 30,
        per_slot: Duration::from_secs(3600),
    });
    let base = &running.base;
    wait_until(Duration::from_secs(30), "some history", || {
        let (status, _) = get(&format!("{base}/v1/block50/history?from=0&to=2000"));
        status == 200
    });
    std::thread::sleep(Duration::from_millis(300));
    for path in [
        "/v1/block50".to_string(),
        "/v1/network/congestion".into(),
        "/v1/fees/estimate?level=low".into(),
        "/v1/block50/compare?wallet=11111111111111111111111111111111&against=11111111111111111111111111111111".into(),
    ] {
        assert_error(base, &path, 503, "window_not_full", "window");
    }
    let (status, history) = get(&format!("{base}/v1/block50/history?from=0&to=2000"));
    assert_eq!((status, history), (200, Value::Array(Vec::new())));
}

#[test]
fn disabled_insights_answer_503_with_a_json_body() {
    let base = serve_mount(insights::disabled_mount());
    for path in [
        "/v1/block50",
        "/v1/network/congestion",
        "/v1/block50/history?from=1&to=2",
    ] {
        assert_error(&base, path, 503, "insights_disabled", "--upstream");
    }
    let (status, _) = get(&format!("{base}/v1/openapi.json"));
    assert_eq!(status, 200);
    let _unused = Running {
        base,
        _insights: None,
        _standin: None,
    };
}

#[test]
fn restart_restores_the_window_from_the_store() {
    let standin =
        StandinServer::start(StandinChain::load(&fixtures(), Pace::AllAtOnce).unwrap(), 0).unwrap();
    let dir = std::env::temp_dir().join(format!(
        "insights-restore-{}-{}",
        std::process::id(),
        free_port()
    ));
    let mut config = InsightsConfig::new(standin.url(), dir.join("insights.redb"));
    config.poll_interval = Duration::from_millis(20);
    config.start_lookback_slots = 200;
    let first = Insights::start(config.clone()).unwrap();
    wait_until(Duration::from_secs(60), "ingest to the tip", || {
        first
            .shared()
            .live()
            .is_some_and(|live| live.figures.slot_range.end == 1089)
    });
    first.stop();
    drop(standin);
    // No upstream now: the window comes back from the store alone.
    config.upstream = format!("http://127.0.0.1:{}", free_port());
    let second = Insights::start(config).unwrap();
    let live = second.shared().live().expect("window restored");
    assert_eq!(live.figures.slot_range.end, 1089);
    assert_eq!(
        live.figures.tx_count,
        expected()["history"].as_array().unwrap().last().unwrap()["tx_count"]
            .as_u64()
            .unwrap()
    );
}

#[test]
fn history_is_bounded() {
    // The bound (1,000 by default) set to 10 so the fixture chain's 31 snapshots exceed it.
    let running = start_with(Pace::AllAtOnce, 10);
    let base = &running.base;
    wait_until(
        Duration::from_secs(60),
        "the ingest to reach slot 1089",
        || {
            let (status, body) = get(&format!("{base}/v1/block50"));
            status == 200 && body["slot_range"]["end"] == 1089
        },
    );
    assert_error(
        base,
        "/v1/block50/history?from=0&to=2000",
        400,
        "invalid_range",
        "to",
    );
    let history = expected()["history"].as_array().unwrap().clone();
    let (from, to) = (
        history[0]["slot_range"]["end"].as_u64().unwrap(),
        history[9]["slot_range"]["end"].as_u64().unwrap(),
    );
    let (status, ten) = get(&format!("{base}/v1/block50/history?from={from}&to={to}"));
    assert_eq!(status, 200);
    assert_eq!(ten.as_array().unwrap().len(), 10);
}
