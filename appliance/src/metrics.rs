//! The appliance's metrics: each worker counts in a plain local [`WorkerCounters`] and flushes a
//! copy every 100 ms (one lock per flush, none per packet); `/metrics` renders the sum of the
//! last copies under the historical names, the per-worker series (`worker` label: datagrams, FEC
//! sets, batches, ring occupancy and drops) and the stream's session counters in the Prometheus
//! text format.
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
    fn merge(&mut self, other: &Self) {
        for (count, add) in self.counts.iter_mut().zip(&other.counts) {
            *count += add;
        }
        self.sum_us += other.sum_us;
    }

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
    /// Data shreds (and evictions) other workers forwarded to this worker's slot stage.
    pub forwarded_in: u64,
    /// Times the worker parked (its rings empty after the announcement).
    pub parks: u64,
    /// Parks that ended with no producer's unpark (the safety-net timeout, or spurious).
    pub park_timeouts: u64,
    /// Unparks producers issued for this worker (read from its waker state at each flush).
    pub unparks: u64,
    pub decode: DecodeStats,
    pub stage_latency: [Histogram; STAGES.len()],
}

impl WorkerCounters {
    /// Adds another worker's counters (and gauges) to these.
    pub fn merge(&mut self, other: &Self) {
        self.datagrams += other.datagrams;
        self.bytes += other.bytes;
        self.stored += other.stored;
        self.redundant += other.redundant;
        for (reason, count) in &other.rejected {
            *self.rejected.entry(reason).or_default() += count;
        }
        let (fec, add) = (&mut self.fec, &other.fec);
        fec.sets_completed += add.sets_completed;
        fec.sets_recovered += add.sets_recovered;
        fec.sets_failed += add.sets_failed;
        fec.sets_evicted += add.sets_evicted;
        fec.data_shreds_recovered += add.data_shreds_recovered;
        fec.chain_links_verified += add.chain_links_verified;
        fec.chain_links_broken += add.chain_links_broken;
        let (batches, add) = (&mut self.batches, &other.batches);
        batches.batches_emitted += add.batches_emitted;
        batches.batches_invalid += add.batches_invalid;
        batches.batches_uncertain_rejected += add.batches_uncertain_rejected;
        batches.batches_incomplete += add.batches_incomplete;
        batches.batches_too_large += add.batches_too_large;
        batches.batches_dropped_queue_full += add.batches_dropped_queue_full;
        batches.store_sets_evicted += add.store_sets_evicted;
        self.sets_in_flight += other.sets_in_flight;
        self.pending_batches += other.pending_batches;
        self.entries += other.entries;
        self.transactions += other.transactions;
        self.updates_published += other.updates_published;
        self.slot_notifications += other.slot_notifications;
        self.forwarded_in += other.forwarded_in;
        self.parks += other.parks;
        self.park_timeouts += other.park_timeouts;
        self.unparks += other.unparks;
        let (decode, add) = (&mut self.decode, &other.decode);
        for (count, more) in decode
            .instructions_decoded
            .iter_mut()
            .zip(&add.instructions_decoded)
        {
            *count += more;
        }
        for (row, more_row) in decode
            .instruction_failures
            .iter_mut()
            .zip(&add.instruction_failures)
        {
            for (count, more) in row.iter_mut().zip(more_row) {
                *count += more;
            }
        }
        decode.routes_decoded += add.routes_decoded;
        decode.route_errors += add.route_errors;
        for (count, more) in decode
            .legs_by_location
            .iter_mut()
            .zip(&add.legs_by_location)
        {
            *count += more;
        }
        decode.legs_end_uncertain += add.legs_end_uncertain;
        for (histogram, more) in self.stage_latency.iter_mut().zip(&other.stage_latency) {
            histogram.merge(more);
        }
    }
}

/// Records the stage latencies of one published update into a worker's histograms
/// (`WorkerCounters::stage_latency`).
pub fn record_timing(stage_latency: &mut [Histogram; STAGES.len()], timing: &ServerTiming) {
    let stamps = [
        timing.first_read_unix_nanos,
        timing.capture_done_unix_nanos,
        timing.deshred_done_unix_nanos,
        timing.decode_done_unix_nanos,
        timing.publish_unix_nanos,
    ];
    for (stage, pair) in stage_latency.iter_mut().zip(stamps.windows(2)) {
        stage.record_ns(pair[1].saturating_sub(pair[0]));
    }
    stage_latency[4].record_ns(stamps[4].saturating_sub(stamps[0]));
}

/// A worker's inbound rings, summed per kind: `(occupancy, capacity, full drops)`.
pub trait RingGauge: Send + Sync {
    /// The rings from the receive threads.
    fn receive(&self) -> (usize, usize, u64);
    /// The rings from the other workers.
    fn forward(&self) -> (usize, usize, u64);
}

/// The shared view `/metrics` renders.
pub struct Metrics {
    workers: Vec<Mutex<WorkerCounters>>,
    rings: Vec<Box<dyn RingGauge>>,
    stream: Arc<StreamMetrics>,
    feed: Feed,
    ring_capacity: usize,
    /// Per-source receive counters (`crate::receive::metrics`).
    sources: Vec<Arc<SourceMetrics>>,
}

impl Metrics {
    /// `rings` holds one gauge per worker (its length is the worker count, at least 1).
    pub fn new(
        stream: Arc<StreamMetrics>,
        feed: Feed,
        ring_capacity: usize,
        sources: Vec<Arc<SourceMetrics>>,
        rings: Vec<Box<dyn RingGauge>>,
    ) -> Self {
        let workers = rings.len().max(1);
        Self {
            workers: (0..workers)
                .map(|_| Mutex::new(WorkerCounters::default()))
                .collect(),
            rings,
            stream,
            feed,
            ring_capacity,
            sources,
        }
    }

    /// Replaces worker `index`'s snapshot (the worker's housekeeping flush).
    pub fn flush_worker(&self, index: usize, counters: &WorkerCounters) {
        if let Some(Ok(mut snapshot)) = self.workers.get(index).map(Mutex::lock) {
            snapshot.clone_from(counters);
        }
    }

    /// The last snapshot of every worker.
    fn snapshots(&self) -> Vec<WorkerCounters> {
        self.workers
            .iter()
            .map(|worker| match worker.lock() {
                Ok(snapshot) => snapshot.clone(),
                Err(_) => WorkerCounters::default(),
            })
            .collect()
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let snapshots = self.snapshots();
        let mut worker = WorkerCounters::default();
        for snapshot in &snapshots {
            worker.merge(snapshot);
        }
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
        self.render_workers(&snapshots, &mut out);
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

    /// The per-worker series: work done and the state of each worker's inbound rings.
    fn render_workers(&self, snapshots: &[WorkerCounters], out: &mut String) {
        let mut family = |name: &str, kind: &str, help: &str, samples: Vec<(String, u64)>| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, value) in samples {
                let _ = writeln!(out, "{name}{{{labels}}} {value}");
            }
        };
        let per_worker = |value: &dyn Fn(&WorkerCounters) -> u64| -> Vec<(String, u64)> {
            snapshots
                .iter()
                .enumerate()
                .map(|(index, counters)| (format!("worker=\"{index}\""), value(counters)))
                .collect()
        };
        family(
            "appliance_worker_datagrams_total",
            "counter",
            "Datagrams a worker's set stage processed.",
            per_worker(&|c| c.datagrams),
        );
        family(
            "appliance_worker_forwarded_total",
            "counter",
            "Data shreds other workers forwarded to a worker's slot stage.",
            per_worker(&|c| c.forwarded_in),
        );
        family(
            "appliance_worker_parks_total",
            "counter",
            "Times an idle worker parked (its rings empty after it announced the park).",
            per_worker(&|c| c.parks),
        );
        family(
            "appliance_worker_park_timeouts_total",
            "counter",
            "Parks that ended without an unpark (the safety-net timeout, or spurious).",
            per_worker(&|c| c.park_timeouts),
        );
        family(
            "appliance_worker_unparks_total",
            "counter",
            "Unparks the receive threads and other workers issued for a parked worker.",
            per_worker(&|c| c.unparks),
        );
        family(
            "appliance_worker_entry_batches_total",
            "counter",
            "Entry batches a worker emitted.",
            per_worker(&|c| c.batches.batches_emitted),
        );
        let mut sets = Vec::new();
        for (index, counters) in snapshots.iter().enumerate() {
            for (outcome, value) in [
                ("completed", counters.fec.sets_completed),
                ("recovered", counters.fec.sets_recovered),
                ("failed", counters.fec.sets_failed),
            ] {
                sets.push((format!("worker=\"{index}\",outcome=\"{outcome}\""), value));
            }
        }
        family(
            "appliance_worker_fec_sets_total",
            "counter",
            "FEC sets by worker and outcome.",
            sets,
        );
        let mut occupancy = Vec::new();
        let mut capacity = Vec::new();
        let mut drops = Vec::new();
        for (index, rings) in self.rings.iter().enumerate() {
            for (ring, reason, (used, size, dropped)) in [
                ("receive", "ring_full", rings.receive()),
                ("forward", "forward_full", rings.forward()),
            ] {
                let labels = format!("worker=\"{index}\",ring=\"{ring}\"");
                occupancy.push((labels.clone(), used as u64));
                capacity.push((labels, size as u64));
                drops.push((format!("worker=\"{index}\",reason=\"{reason}\""), dropped));
            }
        }
        family(
            "appliance_ring_occupancy",
            "gauge",
            "Items waiting in a worker's inbound rings (receive: datagrams; forward: data shreds).",
            occupancy,
        );
        family(
            "appliance_ring_capacity",
            "gauge",
            "Slots of a worker's inbound rings.",
            capacity,
        );
        family(
            "appliance_ring_drops_total",
            "counter",
            "Items dropped because a worker's ring was full, by reason.",
            drops,
        );
    }
}
