//! The stream's part of the operator console's stats document (`/console/stats`): the same
//! counters `/metrics` renders (receive per source, shreds, FEC sets, transactions, updates,
//! subscribers and drops, the stage latency histograms), read at request time as JSON.

use std::sync::atomic::Ordering;

use ::stream::service::DisconnectReason;
use front::console::quantile::Summary;
use serde::Serialize;

use super::{BUCKETS_US, Histogram, Metrics, STAGES, WorkerCounters};
use crate::receive::SourceMetrics;
use crate::receive::metrics::DropReason;

/// Counters of the stream (totals since start; the page differences two answers).
#[derive(Debug, Serialize)]
pub struct StreamStats {
    pub sources: Vec<SourceStats>,
    pub shreds: ShredStats,
    pub fec_sets: FecStats,
    pub transactions: u64,
    pub updates_published: u64,
    pub subscribers: usize,
    pub updates_sent: u64,
    pub updates_dropped: u64,
    pub lagged_disconnects: u64,
    /// One histogram per stage between the `ServerTiming` stamps, in [`STAGES`] order.
    pub latency: Vec<StageLatency>,
}

/// One receive source: datagrams handed to the workers and drops (every reason).
#[derive(Debug, Serialize)]
pub struct SourceStats {
    /// `kind endpoint`, e.g. `udp 127.0.0.1:8001`.
    pub name: String,
    pub packets: u64,
    pub drops: u64,
}

#[derive(Debug, Serialize)]
pub struct ShredStats {
    pub stored: u64,
    pub redundant: u64,
    pub rejected: u64,
}

#[derive(Debug, Serialize)]
pub struct FecStats {
    pub completed: u64,
    pub recovered: u64,
    pub failed: u64,
    pub evicted: u64,
}

#[derive(Debug, Serialize)]
pub struct StageLatency {
    pub stage: &'static str,
    #[serde(flatten)]
    pub summary: Summary,
}

impl Metrics {
    /// The stream's counters now (the workers' last flush, the stream's atomics).
    pub fn console_stats(&self) -> StreamStats {
        let mut worker = WorkerCounters::default();
        for snapshot in &self.snapshots() {
            worker.merge(snapshot);
        }
        let fec = &worker.fec;
        StreamStats {
            sources: self
                .sources
                .iter()
                .map(|source| source_stats(source))
                .collect(),
            shreds: ShredStats {
                stored: worker.stored,
                redundant: worker.redundant,
                rejected: worker.rejected.iter().sum(),
            },
            fec_sets: FecStats {
                completed: fec.sets_completed,
                recovered: fec.sets_recovered,
                failed: fec.sets_failed,
                evicted: fec.sets_evicted,
            },
            transactions: worker.transactions,
            updates_published: worker.updates_published,
            subscribers: self.feed.subscriber_count(),
            updates_sent: self.stream.updates_sent.load(Ordering::Relaxed),
            updates_dropped: self.stream.updates_dropped_lag.load(Ordering::Relaxed),
            lagged_disconnects: self.stream.disconnects(DisconnectReason::Lagged),
            latency: STAGES
                .iter()
                .zip(&worker.stage_latency)
                .map(|(stage, histogram)| stage_latency(stage, histogram))
                .collect(),
        }
    }
}

fn source_stats(source: &SourceMetrics) -> SourceStats {
    SourceStats {
        name: format!("{} {}", source.kind, source.endpoint),
        packets: source.packets(),
        drops: DropReason::ALL
            .iter()
            .map(|reason| source.drops(*reason))
            .sum(),
    }
}

fn stage_latency(stage: &'static str, histogram: &Histogram) -> StageLatency {
    StageLatency {
        stage,
        summary: Summary::new(&BUCKETS_US, histogram.counts.to_vec()),
    }
}
