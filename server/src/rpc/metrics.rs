//! Counters of the JSON-RPC frontend, rendered in the Prometheus text format and appended to the
//! appliance's `/metrics`: calls by method and outcome, proxied calls, upstream failures, store
//! errors, rate-limit refusals and the number of tracked clients.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

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
        let _ = writeln!(out, "# TYPE rpc_http_requests_total counter");
        let _ = writeln!(
            out,
            "rpc_http_requests_total {}",
            self.http_requests.load(Ordering::Relaxed)
        );
        let _ = writeln!(out, "# TYPE rpc_calls_total counter");
        for (method, row) in METHODS.iter().zip(&self.calls) {
            for (outcome, count) in OUTCOMES.iter().zip(row) {
                let _ = writeln!(
                    out,
                    "rpc_calls_total{{method=\"{method}\",outcome=\"{}\"}} {}",
                    outcome.label(),
                    count.load(Ordering::Relaxed)
                );
            }
        }
        for (name, value) in [
            (
                "rpc_upstream_failures_total",
                self.upstream_failures.load(Ordering::Relaxed),
            ),
            (
                "rpc_store_errors_total",
                self.store_errors.load(Ordering::Relaxed),
            ),
            ("rpc_rate_limited_total", limiter.limited_total()),
            (
                "rpc_rate_limit_table_full_total",
                limiter.table_full_total(),
            ),
        ] {
            let _ = writeln!(out, "# TYPE {name} counter\n{name} {value}");
        }
        let _ = writeln!(
            out,
            "# TYPE rpc_rate_limit_tracked_clients gauge\nrpc_rate_limit_tracked_clients {}",
            limiter.tracked()
        );
        let _ = writeln!(
            out,
            "# TYPE rpc_rate_limit_max_tracked_clients gauge\nrpc_rate_limit_max_tracked_clients {}",
            limiter.config().max_tracked
        );
    }
}
