//! The map and the exposition agree (issue 40): every metric family `/metrics` renders is listed in
//! docs/architecture.md, "Where each metric lives", and every family listed there is rendered — by
//! the embedded default (stream, archive, insights) or by a relay of it (the relay's own families).
//! A family added to a renderer without a line in the map, or a line left behind by a renamed or
//! removed family, fails here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use process::{http_get, scratch_data_dir, start_replay};

/// The heading of the map's metric table.
const METRIC_SECTION: &str = "## Where each metric lives";

/// The family patterns of the map's metric table: the back-quoted names in each row's first cell,
/// with `{a,b}` alternatives expanded (a brace group after `_`), a trailing label list dropped
/// (a brace group after a name: `x_total{worker}`), `*` kept as a wildcard.
fn documented_patterns(map: &str) -> Vec<String> {
    let section = map
        .split_once(METRIC_SECTION)
        .expect("docs/architecture.md has no metric table")
        .1;
    let section = section.split("\n## ").next().unwrap_or(section);
    let rows = section.lines().filter(|line| line.starts_with("| `"));
    let mut patterns = Vec::new();
    for row in rows {
        let first_cell = row.split(" | ").next().unwrap_or(row);
        for (index, token) in first_cell.split('`').enumerate() {
            if index % 2 == 1 && token.starts_with("appliance_") {
                patterns.extend(expand(drop_labels(token)));
            }
        }
    }
    assert!(patterns.len() > 20, "too few families parsed: {patterns:?}");
    patterns
}

/// `name{label,…}` → `name`; a brace group after `_` is a set of alternatives and stays.
fn drop_labels(token: &str) -> &str {
    match token.rfind('{') {
        Some(open) if token.ends_with('}') && !token[..open].ends_with('_') => &token[..open],
        _ => token,
    }
}

/// Every name `a_{x,y}_b{…}` stands for: `a_x_b`, `a_y_b`.
fn expand(token: &str) -> Vec<String> {
    let Some(open) = token.find('{') else {
        return vec![token.to_owned()];
    };
    let close = open
        + token[open..]
            .find('}')
            .expect("an unclosed brace in the map");
    let (head, alternatives, tail) = (&token[..open], &token[open + 1..close], &token[close + 1..]);
    alternatives
        .split(',')
        .flat_map(|choice| expand(&format!("{head}{choice}{tail}")))
        .collect()
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(after) = name.strip_prefix(head) else {
                return false;
            };
            (0..=after.len()).any(|cut| after.is_char_boundary(cut) && glob(rest, &after[cut..]))
        }
    }
}

/// The families (`# TYPE` lines) of one `/metrics` text.
fn rendered_families(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// `/metrics` of the appliance on `http` once `ready` holds for its text (30 s at most).
fn metrics_when(http: SocketAddr, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if std::net::TcpStream::connect(http).is_ok() {
            let (status, body) = http_get(http, "/metrics", &[]);
            if status == 200 && ready(&body) {
                return body;
            }
        }
        assert!(
            Instant::now() < deadline,
            "/metrics on {http} never got ready"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_map_lists_exactly_the_families_metrics_renders() {
    let map_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
    let patterns = documented_patterns(&std::fs::read_to_string(map_path).unwrap());

    let (_origin, grpc, http) = start_replay(&[], &scratch_data_dir());
    let published = |text: &str| {
        text.lines().any(|line| {
            line.starts_with("appliance_updates_published_total ") && !line.ends_with(" 0")
        })
    };
    let origin_text = metrics_when(http, published);
    let relay_args = ["--relay", &format!("http://{grpc}")];
    let (_relay, _, relay_http) = start_replay(&relay_args, &scratch_data_dir());
    let relay_text = metrics_when(relay_http, |text| text.contains("appliance_relay_"));

    let mut rendered = rendered_families(&origin_text);
    rendered.extend(rendered_families(&relay_text));
    let undocumented: Vec<&String> = rendered
        .iter()
        .filter(|family| !patterns.iter().any(|pattern| glob(pattern, family)))
        .collect();
    let unrendered: Vec<&String> = patterns
        .iter()
        .filter(|pattern| !rendered.iter().any(|family| glob(pattern, family)))
        .collect();
    assert!(
        undocumented.is_empty() && unrendered.is_empty(),
        "docs/architecture.md and /metrics differ:\n  rendered, not in the map: {undocumented:?}\n  \
         in the map, not rendered: {unrendered:?}"
    );
}

#[test]
fn the_map_parser_reads_alternatives_labels_and_wildcards() {
    assert_eq!(
        drop_labels("appliance_x_total{worker}"),
        "appliance_x_total"
    );
    assert_eq!(drop_labels("appliance_ring_{a,b}"), "appliance_ring_{a,b}");
    assert_eq!(
        expand("appliance_{a,b}_x_{c,d}"),
        [
            "appliance_a_x_c",
            "appliance_a_x_d",
            "appliance_b_x_c",
            "appliance_b_x_d"
        ]
    );
    assert!(glob("appliance_shreds_*", "appliance_shreds_stored_total"));
    assert!(glob(
        "appliance_worker_*_total",
        "appliance_worker_datagrams_total"
    ));
    assert!(!glob("appliance_worker_*_total", "appliance_worker_busy"));
    assert!(!glob("appliance_x", "appliance_xy"));
}
