//! Quantiles of a fixed-bucket histogram, interpolated linearly inside the bucket that holds the
//! rank (as Prometheus' `histogram_quantile`): the console's latency percentiles. The page does
//! the same over the difference of two answers (`console.js`, `quantile`). [`Summary`] is the
//! latency object of the stats document.

use serde::Serialize;

/// A histogram as the stats document carries it: its bounds and per-bucket counts (the page
/// differences two answers for a recent window) and the quantiles since start.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub bounds_us: Vec<u64>,
    /// Per bucket (not cumulative), one per bound, the overflow bucket last.
    pub counts: Vec<u64>,
    pub count: u64,
    pub p50_us: Option<f64>,
    pub p90_us: Option<f64>,
    pub p99_us: Option<f64>,
}

impl Summary {
    pub fn new(bounds_us: &[u64], counts: Vec<u64>) -> Self {
        let bounds: Vec<f64> = bounds_us.iter().map(|&bound| bound as f64).collect();
        let at = |q| quantile(&bounds, &counts, q);
        Self {
            bounds_us: bounds_us.to_vec(),
            count: counts.iter().sum(),
            p50_us: at(0.5),
            p90_us: at(0.9),
            p99_us: at(0.99),
            counts,
        }
    }
}

/// The `q` quantile (0..=1) of a histogram with upper bounds `bounds` (ascending) and per-bucket
/// (not cumulative) `counts`: one per bound plus the overflow bucket last. `None` without
/// samples; a rank in the overflow bucket answers the last bound (nothing finer is known).
pub fn quantile(bounds: &[f64], counts: &[u64], q: f64) -> Option<f64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = q.clamp(0.0, 1.0) * total as f64;
    let mut below = 0u64;
    for (index, &count) in counts.iter().enumerate() {
        let Some(&upper) = bounds.get(index) else {
            break;
        };
        if count > 0 && (below + count) as f64 >= rank {
            let lower = if index == 0 { 0.0 } else { bounds[index - 1] };
            let within = (rank - below as f64) / count as f64;
            return Some(lower + (upper - lower) * within.clamp(0.0, 1.0));
        }
        below += count;
    }
    bounds.last().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: [f64; 3] = [10.0, 20.0, 50.0];

    #[test]
    fn empty_has_none() {
        assert_eq!(quantile(&BOUNDS, &[0, 0, 0, 0], 0.5), None);
    }

    #[test]
    fn interpolates_inside_the_bucket() {
        // 10 samples in (10, 20]: the median sits half-way.
        assert_eq!(quantile(&BOUNDS, &[0, 10, 0, 0], 0.5), Some(15.0));
        // First bucket starts at 0.
        assert_eq!(quantile(&BOUNDS, &[4, 0, 0, 0], 0.25), Some(2.5));
        let p99 = quantile(&BOUNDS, &[5, 5, 0, 0], 0.99).unwrap_or_default();
        assert!((p99 - 19.8).abs() < 1e-9, "{p99}");
    }

    #[test]
    fn summary_carries_counts_and_quantiles() {
        let summary = Summary::new(&[10, 20, 50], vec![0, 10, 0, 0]);
        assert_eq!(summary.count, 10);
        assert_eq!(summary.p50_us, Some(15.0));
        assert_eq!(summary.p90_us, Some(19.0));
        assert_eq!(Summary::new(&[10], vec![0, 0]).p99_us, None);
    }

    #[test]
    fn overflow_answers_the_last_bound() {
        assert_eq!(quantile(&BOUNDS, &[1, 0, 0, 9], 0.9), Some(50.0));
    }
}
