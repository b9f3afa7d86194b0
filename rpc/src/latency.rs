//! The latency of `POST /` requests, from the body's arrival to the answer built (rate limit,
//! archive reads and upstream round trips included): a fixed-bucket histogram of atomics, one
//! add per request, rendered as `appliance_rpc_request_duration_seconds` and read by the
//! operator console.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use front::exposition::{Kind, family, histogram};

/// Upper bounds of the buckets, in microseconds (100 µs to 10 s).
pub const BOUNDS_US: [u64; 16] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000,
];

const NAME: &str = "appliance_rpc_request_duration_seconds";

/// Requests by duration bucket (the last counts those over the last bound) and their sum.
#[derive(Debug, Default)]
pub struct RequestLatency {
    counts: [AtomicU64; BOUNDS_US.len() + 1],
    sum_us: AtomicU64,
}

/// A copy of the histogram: per-bucket (not cumulative) counts, overflow last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencySnapshot {
    pub counts: Vec<u64>,
    pub sum_us: u64,
}

impl RequestLatency {
    /// Counts one request that took `elapsed`.
    pub fn record(&self, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let bucket = BOUNDS_US
            .iter()
            .position(|&bound| micros <= bound)
            .unwrap_or(BOUNDS_US.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_us.fetch_add(micros, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> LatencySnapshot {
        LatencySnapshot {
            counts: self
                .counts
                .iter()
                .map(|count| count.load(Ordering::Relaxed))
                .collect(),
            sum_us: self.sum_us.load(Ordering::Relaxed),
        }
    }

    /// Appends the Prometheus histogram to `out`.
    pub fn render(&self, out: &mut String) {
        let snapshot = self.snapshot();
        let help = "Duration of HTTP requests to the JSON-RPC endpoint (POST /), body to answer.";
        family(out, NAME, Kind::Histogram, Some(help));
        let buckets: (&[u64], &[u64]) = (&BOUNDS_US, &snapshot.counts);
        histogram(out, NAME, &[], buckets, snapshot.sum_us);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_by_upper_bound() {
        let latency = RequestLatency::default();
        latency.record(Duration::from_micros(100));
        latency.record(Duration::from_micros(101));
        latency.record(Duration::from_secs(60));
        let snapshot = latency.snapshot();
        assert_eq!(snapshot.counts[0], 1);
        assert_eq!(snapshot.counts[1], 1);
        assert_eq!(snapshot.counts[BOUNDS_US.len()], 1);
        assert_eq!(snapshot.sum_us, 60_000_201);
    }

    #[test]
    fn renders_a_cumulative_histogram() {
        let latency = RequestLatency::default();
        latency.record(Duration::from_micros(300));
        let mut out = String::new();
        latency.render(&mut out);
        assert!(out.contains("# TYPE appliance_rpc_request_duration_seconds histogram"));
        assert!(out.contains("appliance_rpc_request_duration_seconds_bucket{le=\"0.00025\"} 0"));
        assert!(out.contains("appliance_rpc_request_duration_seconds_bucket{le=\"0.0005\"} 1"));
        assert!(out.contains("appliance_rpc_request_duration_seconds_bucket{le=\"+Inf\"} 1"));
        assert!(out.contains("appliance_rpc_request_duration_seconds_count 1"));
    }
}
