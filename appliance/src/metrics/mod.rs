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
//!
//! [`console`] reads the same counters as JSON for the operator console.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ::stream::service::{Feed, StreamMetrics};
use decoder::decoder::{BatchCounters, Rejection};
use decoder::fec::FecCounters;

use crate::grpc::incoming::ConnectionCounters;
use crate::receive::SourceMetrics;
use ::stream::encode::DecodeStats;
use front::exposition::{Kind, family, histogram, sample, single};
use stream_proto::stream::ServerTiming;

pub mod console;
mod deshred;
mod stream_text;
mod worker_text;
use stream_text::render_entries;
use worker_text::{render_batches, render_decode, render_latency, render_shreds};

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
        let buckets: (&[u64], &[u64]) = (&BUCKETS_US, &self.counts);
        histogram(out, name, &[("stage", stage)], buckets, self.sum_us);
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

/// Everything a worker of the pool counts.
#[derive(Debug, Clone, Default)]
pub struct WorkerCounters {
    pub datagrams: u64,
    pub bytes: u64,
    pub stored: u64,
    pub redundant: u64,
    /// Rejected shreds, by [`Rejection::index`].
    pub rejected: [u64; Rejection::COUNT],
    pub fec: FecCounters,
    pub batches: BatchCounters,
    pub sets_in_flight: usize,
    pub pending_batches: usize,
    pub entries: u64,
    pub transactions: u64,
    pub updates_published: u64,
    pub slot_notifications: u64,
    /// Footer notifications published (a slot's block footer, SIMD-0307).
    pub footer_notifications: u64,
    /// Incremental mode: transactions published from batches that later turned out malformed.
    pub transactions_before_malformed_end: u64,
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
        for (count, more) in self.rejected.iter_mut().zip(&other.rejected) {
            *count += more;
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
        batches.markers.merge(&add.markers);
        batches.batches_malformed_after_transactions += add.batches_malformed_after_transactions;
        batches.conflicting_shreds_refused += add.conflicting_shreds_refused;
        batches.streams_unavailable += add.streams_unavailable;
        batches.streams_evicted += add.streams_evicted;
        batches.shreds_after_slot_done += add.shreds_after_slot_done;
        self.footer_notifications += other.footer_notifications;
        self.transactions_before_malformed_end += other.transactions_before_malformed_end;
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

/// A worker's inbound rings of one kind, summed: `(occupancy, capacity, full drops)`.
pub type RingState = (usize, usize, u64);

/// A worker's inbound rings, summed per kind.
pub trait RingGauge: Send + Sync {
    /// The rings from the receive threads.
    fn receive(&self) -> RingState;
    /// The rings from the other workers.
    fn forward(&self) -> RingState;
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
    /// The gRPC accept loop's counters (`crate::grpc::incoming`).
    pub connections: Arc<ConnectionCounters>,
    /// The soft descriptor limit in force (`crate::fd_limit`); 0 = unknown.
    pub fd_limit: std::sync::atomic::AtomicU64,
    /// The entry stream's counters (`stream::entries`), when the pipeline runs.
    pub entries: std::sync::OnceLock<Arc<::stream::entries::EntriesMetrics>>,
    /// Yellowstone's deshred stream (`stream::deshred`), when the pipeline runs.
    pub deshred: std::sync::OnceLock<::stream::deshred::DeshredFeed>,
    /// The relay's counters, on a relay (`run --relay`).
    pub relay: std::sync::OnceLock<Arc<crate::relay::counters::RelayCounters>>,
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
            connections: Arc::default(),
            fd_limit: Default::default(),
            relay: std::sync::OnceLock::new(),
            entries: std::sync::OnceLock::new(),
            deshred: std::sync::OnceLock::new(),
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
        crate::receive::metrics::render(&self.sources, &mut out);
        render_shreds(&worker, &mut out);
        render_batches(&worker, &mut out);
        render_decode(&worker.decode, &mut out);
        self.render_stream(&mut out);
        self.render_gauges(&worker, &mut out);
        self.render_workers(&snapshots, &mut out);
        render_latency(&worker.stage_latency, &mut out);
        if let Some(relay) = self.relay.get() {
            relay.render(&mut out);
        }
        if let Some(entries) = self.entries.get() {
            render_entries(entries, &mut out);
        }
        if let Some(feed) = self.deshred.get() {
            deshred::render(feed, &mut out);
        }
        out
    }

    /// The gauges of the stream, the broadcast ring and the decoder's backlog.
    fn render_gauges(&self, worker: &WorkerCounters, out: &mut String) {
        let gauges = [
            (
                "appliance_stream_subscribers",
                "Open stream sessions.",
                self.feed.subscriber_count(),
            ),
            (
                "appliance_stream_open_streams",
                "Open SubscribeDecoded calls, started or not (bounded by grpc.max_subscribers).",
                self.stream.open_streams.load(Ordering::Relaxed),
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
            single(out, name, Kind::Gauge, Some(help), value);
        }
    }

    /// The per-worker series: work done and the state of each worker's inbound rings.
    fn render_workers(&self, snapshots: &[WorkerCounters], out: &mut String) {
        let workers: Vec<String> = (0..snapshots.len()).map(|i| i.to_string()).collect();
        let per_worker = |out: &mut String, name, help, value: fn(&WorkerCounters) -> u64| {
            family(out, name, Kind::Counter, Some(help));
            for (worker, counters) in workers.iter().zip(snapshots) {
                sample(out, name, &[("worker", worker)], value(counters));
            }
        };
        per_worker(
            out,
            "appliance_worker_datagrams_total",
            "Datagrams a worker's set stage processed.",
            |c| c.datagrams,
        );
        per_worker(
            out,
            "appliance_worker_forwarded_total",
            "Data shreds other workers forwarded to a worker's slot stage.",
            |c| c.forwarded_in,
        );
        per_worker(
            out,
            "appliance_worker_parks_total",
            "Times an idle worker parked (its rings empty after it announced the park).",
            |c| c.parks,
        );
        per_worker(
            out,
            "appliance_worker_park_timeouts_total",
            "Parks that ended without an unpark (the safety-net timeout, or spurious).",
            |c| c.park_timeouts,
        );
        per_worker(
            out,
            "appliance_worker_unparks_total",
            "Unparks the receive threads and other workers issued for a parked worker.",
            |c| c.unparks,
        );
        per_worker(
            out,
            "appliance_worker_entry_batches_total",
            "Entry batches a worker emitted.",
            |c| c.batches.batches_emitted,
        );
        let name = "appliance_worker_fec_sets_total";
        family(
            out,
            name,
            Kind::Counter,
            Some("FEC sets by worker and outcome."),
        );
        for (worker, counters) in workers.iter().zip(snapshots) {
            for (outcome, value) in [
                ("completed", counters.fec.sets_completed),
                ("recovered", counters.fec.sets_recovered),
                ("failed", counters.fec.sets_failed),
            ] {
                sample(
                    out,
                    name,
                    &[("worker", worker), ("outcome", outcome)],
                    value,
                );
            }
        }
        self.render_rings(out);
    }

    /// Occupancy, size and full drops of each worker's inbound rings.
    fn render_rings(&self, out: &mut String) {
        // (worker, ring, drop reason, state) of every inbound ring, read once.
        let mut rings: Vec<(String, &str, &str, RingState)> = Vec::new();
        for (index, gauge) in self.rings.iter().enumerate() {
            rings.push((index.to_string(), "receive", "ring_full", gauge.receive()));
            rings.push((
                index.to_string(),
                "forward",
                "forward_full",
                gauge.forward(),
            ));
        }
        let mut gauge = |name: &str, help: &str, value: fn(&RingState) -> usize| {
            family(out, name, Kind::Gauge, Some(help));
            for (worker, ring, _, state) in &rings {
                sample(
                    out,
                    name,
                    &[("worker", worker), ("ring", ring)],
                    value(state),
                );
            }
        };
        gauge(
            "appliance_ring_occupancy",
            "Items waiting in a worker's inbound rings (receive: datagrams; forward: data shreds).",
            |state| state.0,
        );
        gauge(
            "appliance_ring_capacity",
            "Slots of a worker's inbound rings.",
            |state| state.1,
        );
        let name = "appliance_ring_drops_total";
        let help = "Items dropped because a worker's ring was full, by reason.";
        family(out, name, Kind::Counter, Some(help));
        for (worker, _, reason, state) in &rings {
            sample(
                out,
                name,
                &[("worker", worker), ("reason", reason)],
                state.2,
            );
        }
    }
}
