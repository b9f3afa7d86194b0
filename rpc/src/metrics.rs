//! Counters of the JSON-RPC frontend, rendered in the Prometheus text format and appended to the
//! appliance's `/metrics`: calls by method and outcome, proxied calls, upstream failures, store
//! errors, rate-limit refusals, the number of tracked clients and the requests' latency
//! ([`crate::latency`]).

use std::sync::atomic::{AtomicU64, Ordering};

use front::exposition::{Kind, family, sample, single};

use super::latency::RequestLatency;
use super::rate_limit::RateLimiter;

/// Methods counted by name; everything else counts as `other`.
pub const METHODS: [&str; 6] = [
    "getTransaction",
    "getBlock",
    "getSignaturesForAddress",
    "getSlot",
    "getBlockTime",
    "other",
];

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// Answered from the archive (result or error).
    Local,
    /// Forwarded to the upstream validator (fully or, for getSignaturesForAddress, in part).
    Proxied,
    /// Refused before any work: parse/invalid request/params/method errors.
    Rejected,
}

impl CallOutcome {
    pub fn label(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Proxied => "proxied",
            Self::Rejected => "rejected",
        }
    }
}

const OUTCOMES: [CallOutcome; 3] = [
    CallOutcome::Local,
    CallOutcome::Proxied,
    CallOutcome::Rejected,
];

/// The frontend's counters.
#[derive(Default)]
pub struct RpcMetrics {
    calls: [[AtomicU64; 3]; 6],
    upstream_failures: AtomicU64,
    store_errors: AtomicU64,
    http_requests: AtomicU64,
    /// Duration of each `POST /` request.
    pub latency: RequestLatency,
}

impl RpcMetrics {
    pub fn count_call(&self, method: &str, outcome: CallOutcome) {
        let method = METHODS
            .iter()
            .position(|m| *m == method)
            .unwrap_or(METHODS.len() - 1);
        let outcome = OUTCOMES.iter().position(|o| *o == outcome).unwrap_or(0);
        self.calls[method][outcome].fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_upstream_failure(&self) {
        self.upstream_failures.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_store_error(&self) {
        self.store_errors.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_http_request(&self) {
        self.http_requests.fetch_add(1, Ordering::Relaxed);
    }

    /// HTTP requests to `POST /`.
    pub fn http_requests(&self) -> u64 {
        self.http_requests.load(Ordering::Relaxed)
    }

    /// Calls counted, every method and outcome.
    pub fn calls_total(&self) -> u64 {
        self.calls
            .iter()
            .flatten()
            .map(|count| count.load(Ordering::Relaxed))
            .sum()
    }

    /// Calls counted for `method` (a name of [`METHODS`]) with `outcome`.
    pub fn calls(&self, method: &str, outcome: CallOutcome) -> u64 {
        let Some(method) = METHODS.iter().position(|m| *m == method) else {
            return 0;
        };
        let outcome = OUTCOMES.iter().position(|o| *o == outcome).unwrap_or(0);
        self.calls[method][outcome].load(Ordering::Relaxed)
    }

    /// Appends the Prometheus text of every counter (and the limiter's) to `out`.
    pub fn render(&self, limiter: &RateLimiter, out: &mut String) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let name = "appliance_rpc_http_requests_total";
        let help = Some("HTTP requests to the JSON-RPC endpoint (POST /).");
        single(out, name, Kind::Counter, help, load(&self.http_requests));
        let name = "appliance_rpc_calls_total";
        let help =
            "JSON-RPC calls by method and outcome (local, proxied to the upstream, rejected).";
        family(out, name, Kind::Counter, Some(help));
        for (method, row) in METHODS.iter().zip(&self.calls) {
            for (outcome, count) in OUTCOMES.iter().zip(row) {
                let labels = [("method", *method), ("outcome", outcome.label())];
                sample(out, name, &labels, load(count));
            }
        }
        for (name, help, value) in [
            (
                "appliance_rpc_upstream_failures_total",
                "Calls to the upstream validator that failed (transport or non-JSON answer).",
                load(&self.upstream_failures),
            ),
            (
                "appliance_rpc_store_errors_total",
                "Calls answered -32019 because the archive could not be read.",
                load(&self.store_errors),
            ),
            (
                "appliance_rpc_rate_limited_total",
                "Requests with calls refused by the per-IP rate limit.",
                limiter.limited_total(),
            ),
            (
                "appliance_rpc_rate_limit_table_full_total",
                "Requests refused because the table of tracked clients was full.",
                limiter.table_full_total(),
            ),
        ] {
            single(out, name, Kind::Counter, Some(help), value);
        }
        for (name, help, value) in [
            (
                "appliance_rpc_rate_limit_tracked_clients",
                "Clients (IPv4 addresses, IPv6 /64 prefixes) the rate limit tracks now.",
                limiter.tracked(),
            ),
            (
                "appliance_rpc_rate_limit_max_tracked_clients",
                "Bound of the rate limit's table of tracked clients.",
                limiter.config().max_tracked,
            ),
        ] {
            single(out, name, Kind::Gauge, Some(help), value);
        }
        self.latency.render(out);
    }
}
