//! The Prometheus text of the stream's side: gRPC sessions and their disconnects, the recent-slot
//! buffer behind `from_slot`, the gRPC accept loop, and the shredstream proxy's entry stream.

use std::sync::atomic::Ordering;

use ::stream::service::DisconnectReason;
use front::exposition::{Kind, by_label, counter, single};

use super::Metrics;
use crate::grpc::incoming::Refusal;

impl Metrics {
    /// The stream's session counters.
    pub(super) fn render_stream(&self, out: &mut String) {
        let stream = &self.stream;
        let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
        let hub = self.feed.hub();
        for (name, help, value) in [
            (
                "appliance_stream_sessions_total",
                "gRPC stream sessions started.",
                load(&stream.sessions_started),
            ),
            (
                "appliance_stream_updates_sent_total",
                "Updates sent to subscribers.",
                load(&stream.updates_sent),
            ),
            (
                "appliance_stream_updates_dropped_total",
                "Updates a lagging subscriber missed.",
                load(&stream.updates_dropped_lag),
            ),
            (
                "appliance_stream_sessions_refused_total",
                "gRPC stream calls refused because grpc.max_subscribers streams were open.",
                load(&stream.sessions_refused),
            ),
            (
                "appliance_stream_filter_changes_total",
                "Session filter changes (starts, replacements, ends) the fan-out index absorbed.",
                load(&hub.stats().changes),
            ),
            (
                "appliance_stream_index_rebuilds_total",
                "Rebuilds of the cross-subscriber filter index.",
                load(&hub.stats().rebuilds),
            ),
        ] {
            counter(out, name, help, value);
        }
        let disconnects = DisconnectReason::ALL
            .iter()
            .map(|reason| (reason.label(), load(&stream.disconnects[*reason as usize])));
        by_label(
            out,
            "appliance_stream_disconnects_total",
            "Stream sessions ended, by reason.",
            "reason",
            disconnects,
        );
        self.render_recent(out);
        self.render_connections(out);
    }

    /// The recent-slot buffer behind `from_slot`.
    fn render_recent(&self, out: &mut String) {
        let recent = self.feed.hub().recent();
        let held = recent.occupancy();
        for (name, help, value) in [
            (
                "appliance_resume_buffer_slots",
                "Slots whose updates the recent-slot buffer holds (grpc.recent_slots bounds it).",
                held.slots as u64,
            ),
            (
                "appliance_resume_buffer_updates",
                "Updates the recent-slot buffer holds.",
                held.updates as u64,
            ),
            (
                "appliance_resume_buffer_bytes",
                "Bytes of updates the recent-slot buffer holds (grpc.recent_bytes bounds it).",
                held.bytes as u64,
            ),
            (
                "appliance_resume_buffer_oldest_slot",
                "The oldest slot the recent-slot buffer holds updates of (0 when empty).",
                held.oldest_slot.unwrap_or(0),
            ),
        ] {
            single(out, name, Kind::Gauge, Some(help), value);
        }
        let stats = &recent.stats;
        let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
        for (name, help, value) in [
            (
                "appliance_resume_streams_total",
                "Streams that resumed from a slot (from_slot).",
                load(&stats.resumed),
            ),
            (
                "appliance_resume_refused_total",
                "from_slot requests refused: older than the buffer, or resuming off.",
                load(&stats.refused),
            ),
            (
                "appliance_resume_replayed_updates_total",
                "Buffered updates read by resuming streams (before their filters).",
                load(&stats.replayed),
            ),
            (
                "appliance_resume_evicted_updates_total",
                "Updates evicted from the recent-slot buffer by its bounds.",
                load(&stats.evicted),
            ),
        ] {
            counter(out, name, help, value);
        }
    }

    /// The gRPC accept loop: open connections, refusals by reason, accept errors.
    fn render_connections(&self, out: &mut String) {
        let connections = &self.connections;
        single(
            out,
            "appliance_grpc_connections_open",
            Kind::Gauge,
            Some("TCP connections the gRPC listener holds open."),
            connections.per_ip.open(),
        );
        let refused = Refusal::ALL
            .iter()
            .map(|refusal| (refusal.label(), connections.refused(*refusal)));
        by_label(
            out,
            "appliance_grpc_connections_refused_total",
            "gRPC connections closed at accept: per-IP cap, or no first bytes in time.",
            "reason",
            refused,
        );
        counter(
            out,
            "appliance_grpc_accept_errors_total",
            "Accept errors of the gRPC listener (e.g. EMFILE), retried with back-off.",
            connections.accept_errors.load(Ordering::Relaxed),
        );
        single(
            out,
            "appliance_fd_limit",
            Kind::Gauge,
            Some("The process's soft descriptor limit, raised to the hard one at start."),
            self.fd_limit.load(Ordering::Relaxed),
        );
    }
}

/// The shredstream proxy's entry stream (`stream::entries`): batches and bytes published, its
/// sessions, and those cut for lag.
pub(super) fn render_entries(entries: &::stream::entries::EntriesMetrics, out: &mut String) {
    let load = |value: &std::sync::atomic::AtomicU64| value.load(Ordering::Relaxed);
    for (name, help, value) in [
        (
            "appliance_entries_batches_published_total",
            "Completed entry batches published to SubscribeEntries subscribers.",
            load(&entries.batches_published),
        ),
        (
            "appliance_entries_bytes_published_total",
            "Bytes of the entry batches published to SubscribeEntries subscribers.",
            load(&entries.bytes_published),
        ),
        (
            "appliance_entries_batches_sent_total",
            "Entry batches sent, summed over SubscribeEntries subscribers.",
            load(&entries.batches_sent),
        ),
        (
            "appliance_entries_sessions_total",
            "SubscribeEntries streams started.",
            load(&entries.sessions_started),
        ),
        (
            "appliance_entries_sessions_refused_total",
            "SubscribeEntries streams refused (grpc.max_subscribers open already).",
            load(&entries.sessions_refused),
        ),
        (
            "appliance_entries_lagged_total",
            "SubscribeEntries streams cut because they fell behind by more than grpc.entries_queue.",
            load(&entries.lagged),
        ),
    ] {
        counter(out, name, help, value);
    }
    single(
        out,
        "appliance_entries_sessions_open",
        Kind::Gauge,
        Some("SubscribeEntries streams open."),
        entries.sessions_open.load(Ordering::Relaxed),
    );
}
