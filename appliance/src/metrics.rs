//! The appliance's metrics: the decode worker counts in a plain local [`WorkerCounters`] and
//! flushes a copy every 100 ms (one lock per flush, none per packet); `/metrics` renders the last
//! copy and the stream's session counters in the Prometheus text format.
//!
//! Receive counters (per source: packets, bytes, drops by reason) come from
//! `crate::receive::metrics`, which the receive threads update once per batch.
//!
//! Latency histograms cover each stage between the `ServerTiming` stamps of published updates,
//! with fixed buckets from 10 µs to 100 ms.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use decoder::decoder::BatchCounters;
use decoder::dex::{DexError, DexProgram};
use decoder::fec::FecCounters;
use server::stream_service::{DisconnectReason, Feed, StreamMetrics};

use crate::receive::SourceMetrics;
use server::updates::DecodeStats;
use stream_proto::stream::ServerTiming;

/// Upper bounds of the latency buckets, in microseconds.
const BUCKETS_US: [u64; 12] = [
    10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 50_000, 100_000,
];

/// A fixed-bucket latency histogram (cumulative buckets, as Prometheus expects at render time).
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    counts: [u64; BUCKETS_US.len() + 1],
    sum_us: u64,
}

impl Histogram {
    pub fn record_ns(&mut self, nanos: u64) {
        let micros = nanos / 1_000;
        let bucket = BUCKETS_US
            .iter()
            .position(|&bound| micros <= bound)
            .unwrap_or(BUCKETS_US.len());
        self.counts[bucket] += 1;
        self.sum_us += micros;
    }

    fn render(&self, out: &mut String, name: &str, stage: &str) {
        let mut cumulative = 0;
        for (bound, count) in BUCKETS_US.iter().zip(&self.counts) {
            cumulative += count;
            let seconds = *bound as f64 / 1e6;
            let _ = writeln!(
                out,
                "{name}_bucket{{stage=\"{stage}\",le=\"{seconds}\"}} {cumulative}"
            );
        }
        cumulative += self.counts[BUCKETS_US.len()];
        let _ = writeln!(
            out,
            "{name}_bucket{{stage=\"{stage}\",le=\"+Inf\"}} {cumulative}"
        );
        let _ = writeln!(
            out,
            "{name}_sum{{stage=\"{stage}\"}} {}",
            self.sum_us as f64 / 1e6
        );
        let _ = writeln!(out, "{name}_count{{stage=\"{stage}\"}} {cumulative}");
    }
}

/// Stages between consecutive `ServerTiming` stamps, and the whole path.
pub const STAGES: [&str; 5] = [
    "capture",
    "deshred",
    "decode",
    "publish",
    "first_read_to_publish",
];

/// Everything the decode worker counts.
#[derive(Debug, Clone, Default)]
pub struct WorkerCounters {
    pub datagrams: u64,
    pub bytes: u64,
    pub stored: u64,
    pub redundant: u64,
    pub rejected: BTreeMap<&'static str, u64>,
    pub fec: FecCounters,
    pub batches: BatchCounters,
    pub sets_in_flight: usize,
    pub pending_batches: usize,
    pub entries: u64,
    pub transactions: u64,
    pub updates_published: u64,
    pub slot_notifications: u64,
    pub decode: DecodeStats,
    pub stage_latency: [Histogram; STAGES.len()],
}

impl WorkerCounters {
    /// Records the stage latencies of one published update.
    pub fn record_timing(&mut self, timing: &ServerTiming) {
        let stamps = [
            timing.first_read_unix_nanos,
            timing.capture_done_unix_nanos,
            timing.deshred_done_unix_nanos,
            timing.decode_done_unix_nanos,
            timing.publish_unix_nanos,
        ];
        for (stage, pair) in self.stage_latency.iter_mut().zip(stamps.windows(2)) {
            stage.record_ns(pair[1].saturating_sub(pair[0]));
        }
        self.stage_latency[4].record_ns(stamps[4].saturating_sub(stamps[0]));
    }
}

/// The shared view `/metrics` renders.
pub struct Metrics {
    worker: Mutex<WorkerCounters>,
    stream: Arc<StreamMetrics>,
    feed: Feed,
    ring_capacity: usize,
    /// Per-source receive counters (`crate::receive::metrics`).
    sources: Vec<Arc<SourceMetrics>>,
}

impl Metrics {
    pub fn new(
        stream: Arc<StreamMetrics>,
        feed: Feed,
        ring_capacity: usize,
        sources: Vec<Arc<SourceMetrics>>,
    ) -> Self {
        Self {
            worker: Mutex::new(WorkerCounters::default()),
            stream,
            feed,
            ring_capacity,
            sources,
        }
    }

    /// Replaces the worker's snapshot (the worker's housekeeping flush).
    pub fn flush(&self, counters: &WorkerCounters) {
        if let Ok(mut snapshot) = self.worker.lock() {
            snapshot.clone_from(counters);
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let worker = match self.worker.lock() {
            Ok(snapshot) => snapshot.clone(),
            Err(_) => WorkerCounters::default(),
        };
        let mut out = String::with_capacity(8 * 1024);
        let plain = |value: u64| vec![(String::new(), value)];
        crate::receive::metrics::render(&self.sources, &mut out);
        let mut counter = |name: &str, help: &str, samples: &[(String, u64)]| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (labels, value) in samples {
                let _ = writeln!(out, "{name}{labels} {value}");
            }
        };
        counter(
            "appliance_shreds_stored_total",
            "Shreds authenticated and stored.",
            &plain(worker.stored),
        );
        counter(
            "appliance_shreds_redundant_total",
            "Shreds of already complete FEC sets.",
            &plain(worker.redundant),
        );
        let rejected: Vec<(String, u64)> = worker
            .rejected
            .iter()
            .map(|(reason, n)| (format!("{{reason=\"{reason}\"}}"), *n))
            .collect();
        counter(
            "appliance_shreds_rejected_total",
            "Shreds dropped, by reason.",
            &rejected,
        );
        let fec = worker.fec;
        let sets = vec![
            ("{outcome=\"completed\"}".into(), fec.sets_completed),
            ("{outcome=\"recovered\"}".into(), fec.sets_recovered),
            ("{outcome=\"failed\"}".into(), fec.sets_failed),
            ("{outcome=\"evicted\"}".into(), fec.sets_evicted),
        ];
        counter("appliance_fec_sets_total", "FEC sets by outcome.", &sets);
        counter(
            "appliance_data_shreds_recovered_total",
            "Data shreds rebuilt by Reed-Solomon.",
            &plain(fec.data_shreds_recovered),
        );
        let links = vec![
            ("{result=\"verified\"}".into(), fec.chain_links_verified),
            ("{result=\"broken\"}".into(), fec.chain_links_broken),
        ];
        counter(
            "appliance_chain_links_total",
            "Chained Merkle root links checked.",
            &links,
        );
        let batches = worker.batches;
        let batch_samples = vec![
            ("{outcome=\"emitted\"}".into(), batches.batches_emitted),
            ("{outcome=\"invalid\"}".into(), batches.batches_invalid),
            (
                "{outcome=\"uncertain_rejected\"}".into(),
                batches.batches_uncertain_rejected,
            ),
            (
                "{outcome=\"incomplete\"}".into(),
                batches.batches_incomplete,
            ),
            ("{outcome=\"too_large\"}".into(), batches.batches_too_large),
            (
                "{outcome=\"dropped_queue_full\"}".into(),
                batches.batches_dropped_queue_full,
            ),
        ];
        counter(
            "appliance_entry_batches_total",
            "Entry batches by outcome.",
            &batch_samples,
        );
        counter(
            "appliance_entries_total",
            "Entries deshredded.",
            &plain(worker.entries),
        );
        counter(
            "appliance_transactions_total",
            "Transactions deshredded.",
            &plain(worker.transactions),
        );
        counter(
            "appliance_updates_published_total",
            "Updates published to subscribers.",
            &plain(worker.updates_published),
        );
        counter(
            "appliance_slot_notifications_total",
            "Slot notifications published.",
            &plain(worker.slot_notifications),
        );
        let mut decoded = Vec::new();
        let mut failures = Vec::new();
        for program in DexProgram::ALL {
            let slot = program.proto_number() as usize - 1;
            decoded.push((
                format!("{{program=\"{}\"}}", program.name()),
                worker.decode.instructions_decoded[slot],
            ));
            for (index, label) in DexError::LABELS.iter().enumerate() {
                let count = worker.decode.instruction_failures[slot][index];
                if count > 0 {
                    failures.push((
                        format!("{{program=\"{}\",reason=\"{label}\"}}", program.name()),
                        count,
                    ));
                }
            }
        }
        counter(
            "appliance_dex_instructions_decoded_total",
            "Supported-program instructions decoded.",
            &decoded,
        );
        counter(
            "appliance_dex_instruction_failures_total",
            "Supported-program instructions skipped or malformed.",
            &failures,
        );
        counter(
            "appliance_routes_decoded_total",
            "Aggregator routes wrapping a supported program.",
            &plain(worker.decode.routes_decoded),
        );
        let legs = vec![
            (
                "{location=\"located\"}".into(),
                worker.decode.legs_by_location[0],
            ),
            (
                "{location=\"named_accounts_missing\"}".into(),
                worker.decode.legs_by_location[1],
            ),
            (
                "{location=\"program_id_not_found\"}".into(),
                worker.decode.legs_by_location[2],
            ),
        ];
        counter(
            "appliance_route_legs_total",
            "Route legs by how their accounts were found.",
            &legs,
        );
        let stream = &self.stream;
        counter(
            "appliance_stream_sessions_total",
            "gRPC stream sessions started.",
            &plain(stream.sessions_started.load(Ordering::Relaxed)),
        );
        counter(
            "appliance_stream_updates_sent_total",
            "Updates sent to subscribers.",
            &plain(stream.updates_sent.load(Ordering::Relaxed)),
        );
        counter(
            "appliance_stream_updates_dropped_total",
            "Updates a lagging subscriber missed.",
            &plain(stream.updates_dropped_lag.load(Ordering::Relaxed)),
        );
        counter(
            "appliance_stream_sessions_refused_total",
            "gRPC stream calls refused because grpc.max_subscribers streams were open.",
            &plain(stream.sessions_refused.load(Ordering::Relaxed)),
        );
        let hub = self.feed.hub();
        counter(
            "appliance_stream_filter_changes_total",
            "Session filter changes (starts, replacements, ends) the fan-out index absorbed.",
            &plain(hub.stats().changes.load(Ordering::Relaxed)),
        );
        counter(
            "appliance_stream_index_rebuilds_total",
            "Rebuilds of the cross-subscriber filter index.",
            &plain(hub.stats().rebuilds.load(Ordering::Relaxed)),
        );
        let disconnects: Vec<(String, u64)> = DisconnectReason::ALL
            .iter()
            .map(|reason| {
                let count = stream.disconnects[*reason as usize].load(Ordering::Relaxed);
                (format!("{{reason=\"{}\"}}", reason.label()), count)
            })
            .collect();
        counter(
            "appliance_stream_disconnects_total",
            "Stream sessions ended, by reason.",
            &disconnects,
        );
        let gauges = [
            (
                "appliance_stream_subscribers",
                "Open stream sessions.",
                self.feed.subscriber_count(),
            ),
            (
                "appliance_stream_open_streams",
                "Open SubscribeDecoded calls, started or not (bounded by grpc.max_subscribers).",
                stream.open_streams.load(Ordering::Relaxed),
            ),
            (
                "appliance_stream_indexed_sessions",
                "Sessions held by the installed fan-out index.",
                self.feed.hub().indexed_sessions(),
            ),
            (
                "appliance_stream_direct_sessions",
                "Sessions changed since the index was built (matched filter by filter).",
                self.feed.hub().direct_sessions(),
            ),
            (
                "appliance_broadcast_capacity",
                "Updates the broadcast ring holds.",
                self.ring_capacity,
            ),
            (
                "appliance_fec_sets_in_flight",
                "FEC sets held by the decoder.",
                worker.sets_in_flight,
            ),
            (
                "appliance_pending_batches",
                "Complete batches waiting to be parsed.",
                worker.pending_batches,
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        let name = "appliance_stage_latency_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Latency between ServerTiming stamps of published updates."
        );
        let _ = writeln!(out, "# TYPE {name} histogram");
        for (stage, histogram) in STAGES.iter().zip(&worker.stage_latency) {
            histogram.render(&mut out, name, stage);
        }
        out
    }
}
