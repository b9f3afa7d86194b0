//! The operator console's stats document (`GET /console/stats`; `front::console` serves the
//! page that polls it): one small JSON object with the stream's counters and stage latency, the
//! JSON-RPC archive's requests and latency, and the insights window's fee levels and congestion.
//! A product that does not run is `null`, so the page says so instead of drawing empty charts.
//! Everything is read at request time from the counters `/metrics` renders; nothing is counted
//! for the console alone.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use front::console::StatsRenderer;
use front::console::quantile::Summary;
use insights::live::Shared as InsightsShared;
use insights::responses::{CongestionFactors, FeeLevels};
use serde::Serialize;

use crate::metrics::Metrics;
use crate::metrics::console::StreamStats;

/// What the document reads: each product that runs.
#[derive(Clone, Default)]
pub struct ConsoleSources {
    pub stream: Option<Arc<Metrics>>,
    pub archive: Option<rpc::Rpc>,
    pub insights: Option<Arc<InsightsShared>>,
}

#[derive(Serialize)]
struct Document {
    /// When the counters were read (the page's rates divide by the difference).
    unix_ms: u64,
    stream: Option<StreamStats>,
    archive: Option<ArchiveStats>,
    insights: Option<InsightsStats>,
}

/// `POST /` requests (each may carry a batch of calls), calls, and the requests' latency.
#[derive(Serialize)]
struct ArchiveStats {
    http_requests: u64,
    calls: u64,
    latency: Summary,
}

/// The insights window: `filling` until it holds its 50 blocks, then its figures.
#[derive(Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum InsightsStats {
    Filling,
    Ready {
        first_slot: u64,
        last_slot: u64,
        tx_count: u64,
        congestion_score: f64,
        congestion_level: &'static str,
        factors: CongestionFactors,
        fee_levels: FeeLevels,
        updated_at: String,
    },
}

/// The `/console/stats` callback of the HTTP server.
pub fn renderer(sources: ConsoleSources) -> StatsRenderer {
    Arc::new(move || render(&sources))
}

fn render(sources: &ConsoleSources) -> String {
    let document = Document {
        unix_ms: unix_ms(),
        stream: sources
            .stream
            .as_ref()
            .map(|metrics| metrics.console_stats()),
        archive: sources.archive.as_ref().map(archive_stats),
        insights: sources.insights.as_deref().map(insights_stats),
    };
    // Plain structs of numbers and strings: serialising cannot fail.
    serde_json::to_string(&document).unwrap_or_else(|_| "{}".to_owned())
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

fn archive_stats(rpc: &rpc::Rpc) -> ArchiveStats {
    let metrics = rpc.metrics();
    ArchiveStats {
        http_requests: metrics.http_requests(),
        calls: metrics.calls_total(),
        latency: Summary::new(&rpc::latency::BOUNDS_US, metrics.latency.snapshot().counts),
    }
}

fn insights_stats(shared: &InsightsShared) -> InsightsStats {
    let Some(live) = shared.live() else {
        return InsightsStats::Filling;
    };
    let figures = &live.figures;
    InsightsStats::Ready {
        first_slot: figures.slot_range.start,
        last_slot: figures.slot_range.end,
        tx_count: figures.tx_count,
        congestion_score: figures.congestion_score,
        congestion_level: figures.congestion_level,
        factors: figures.factors,
        fee_levels: figures.fee_levels,
        updated_at: live.updated_at.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_not_running_are_null() {
        let text = render(&ConsoleSources::default());
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert!(value["unix_ms"].as_u64().is_some_and(|ms| ms > 0));
        assert!(value["stream"].is_null());
        assert!(value["archive"].is_null());
        assert!(value["insights"].is_null());
    }
}
