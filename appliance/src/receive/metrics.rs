//! Per-source receive counters: packets, bytes and batches handed to the workers, drops by
//! reason, and receive errors. The receive thread adds to the atomics once per batch (never per
//! packet) and stores the kernel's cumulative drop counts on its housekeeping tick; `/metrics`
//! reads them with relaxed loads.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use front::exposition::{Kind, family, sample};

/// Why a datagram did not reach the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum DropReason {
    /// UDP: the socket's receive buffer was full (the socket's `sk_drops`, via `SO_MEMINFO`).
    SocketBufferFull,
    /// UDP: a datagram longer than a batch slot (`MSG_TRUNC`).
    Truncated,
    /// AF_XDP: the RX ring was full (`xdp_statistics.rx_ring_full`).
    RingFull,
    /// AF_XDP: no free frame on the fill ring (`rx_fill_ring_empty_descs`).
    FillRingEmpty,
    /// AF_XDP: descriptors the kernel found invalid (`rx_invalid_descs`).
    InvalidDescriptor,
    /// AF_XDP: other kernel drops, e.g. a frame larger than a UMEM chunk (`rx_dropped`).
    KernelDropped,
    /// AF_XDP: a redirected frame that is not an intact IPv4/UDP datagram, or a UDP payload
    /// longer than a batch slot, or a descriptor outside the UMEM (checked in user space).
    BadFrame,
}

impl DropReason {
    pub const COUNT: usize = 7;
    pub const ALL: [DropReason; Self::COUNT] = [
        DropReason::SocketBufferFull,
        DropReason::Truncated,
        DropReason::RingFull,
        DropReason::FillRingEmpty,
        DropReason::InvalidDescriptor,
        DropReason::KernelDropped,
        DropReason::BadFrame,
    ];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            DropReason::SocketBufferFull => "socket_buffer_full",
            DropReason::Truncated => "truncated",
            DropReason::RingFull => "ring_full",
            DropReason::FillRingEmpty => "fill_ring_empty",
            DropReason::InvalidDescriptor => "invalid_descriptor",
            DropReason::KernelDropped => "kernel_dropped",
            DropReason::BadFrame => "bad_frame",
        }
    }
}

/// Cumulative drops by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounts(pub [u64; DropReason::COUNT]);

impl DropCounts {
    #[cfg(test)]
    pub fn get(&self, reason: DropReason) -> u64 {
        self.0[reason as usize]
    }

    pub fn add(&mut self, reason: DropReason, count: u64) {
        self.0[reason as usize] += count;
    }

    pub fn set(&mut self, reason: DropReason, count: u64) {
        self.0[reason as usize] = count;
    }
}

/// The counters of one source, shared between its receive thread and `/metrics`.
#[derive(Debug)]
pub struct SourceMetrics {
    /// `udp` or `xdp`: the receive path.
    pub kind: &'static str,
    /// The address (`0.0.0.0:8001`) or interface and queue (`eth1/0`).
    pub endpoint: String,
    /// How it receives: `recvmmsg`, or `<bind>-<attach>` for AF_XDP (e.g. `copy-skb`).
    pub mode: String,
    packets: AtomicU64,
    bytes: AtomicU64,
    batches: AtomicU64,
    errors: AtomicU64,
    drops: [AtomicU64; DropReason::COUNT],
}

impl SourceMetrics {
    pub fn new(kind: &'static str, endpoint: String, mode: String) -> Self {
        Self {
            kind,
            endpoint,
            mode,
            packets: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            drops: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// One batch received and dispatched to the workers.
    pub fn record_batch(&self, packets: usize, bytes: u64) {
        self.packets.fetch_add(packets as u64, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
    }

    pub fn record_error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Stores the source's cumulative drop counts.
    pub fn store_drops(&self, drops: &DropCounts) {
        for (slot, value) in self.drops.iter().zip(drops.0) {
            slot.store(value, Ordering::Relaxed);
        }
    }

    pub fn packets(&self) -> u64 {
        self.packets.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn drops(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize].load(Ordering::Relaxed)
    }

    /// The labels of the source's series.
    fn labels(&self) -> [(&'static str, &str); 3] {
        [
            ("source", self.kind),
            ("endpoint", &self.endpoint),
            ("mode", &self.mode),
        ]
    }
}

/// Renders the receive metrics of every source in the Prometheus text format:
/// `appliance_datagrams_received_total{source}` (per path, the sum over its sources) and, per
/// source, `appliance_receive_{packets,bytes,batches,errors}_total` and
/// `appliance_receive_drops_total{reason}`.
pub fn render(sources: &[std::sync::Arc<SourceMetrics>], out: &mut String) {
    let per_path = |value: fn(&SourceMetrics) -> u64| {
        let mut totals: Vec<(&str, u64)> = Vec::new();
        for source in sources {
            match totals.iter_mut().find(|(kind, _)| *kind == source.kind) {
                Some((_, total)) => *total += value(source),
                None => totals.push((source.kind, value(source))),
            }
        }
        totals
    };
    for (name, help, value) in [
        (
            "appliance_datagrams_received_total",
            "Datagrams handed to the decoder, by receive path.",
            SourceMetrics::packets as fn(&SourceMetrics) -> u64,
        ),
        (
            "appliance_bytes_received_total",
            "Payload bytes handed to the decoder, by receive path.",
            SourceMetrics::bytes,
        ),
    ] {
        family(out, name, Kind::Counter, Some(help));
        for (kind, total) in per_path(value) {
            sample(out, name, &[("source", kind)], total);
        }
    }
    let load = |atomic: &AtomicU64| atomic.load(Ordering::Relaxed);
    for (name, help, field) in [
        (
            "appliance_receive_packets_total",
            "Datagrams received, per source.",
            (|source: &SourceMetrics| &source.packets) as fn(&SourceMetrics) -> &AtomicU64,
        ),
        (
            "appliance_receive_bytes_total",
            "Payload bytes received, per source.",
            |source| &source.bytes,
        ),
        (
            "appliance_receive_batches_total",
            "Batches handed to the decode worker, per source.",
            |source| &source.batches,
        ),
        (
            "appliance_receive_errors_total",
            "Failed receive calls, per source.",
            |source| &source.errors,
        ),
    ] {
        family(out, name, Kind::Counter, Some(help));
        for source in sources {
            sample(out, name, &source.labels(), load(field(source)));
        }
    }
    let name = "appliance_receive_drops_total";
    let help = "Datagrams dropped before the decoder, per source and reason.";
    family(out, name, Kind::Counter, Some(help));
    for source in sources {
        let [kind, endpoint, mode] = source.labels();
        for reason in DropReason::ALL {
            let labels = [kind, endpoint, mode, ("reason", reason.label())];
            sample(out, name, &labels, source.drops(reason));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn renders_path_totals_and_per_source_drops() {
        let first = Arc::new(SourceMetrics::new(
            "xdp",
            "eth1/0".into(),
            "copy-skb".into(),
        ));
        let second = Arc::new(SourceMetrics::new(
            "xdp",
            "eth1/1".into(),
            "copy-skb".into(),
        ));
        let udp = Arc::new(SourceMetrics::new(
            "udp",
            "0.0.0.0:8001".into(),
            "recvmmsg".into(),
        ));
        first.record_batch(3, 300);
        second.record_batch(4, 400);
        udp.record_batch(1, 10);
        let mut drops = DropCounts::default();
        drops.set(DropReason::RingFull, 9);
        second.store_drops(&drops);
        let mut out = String::new();
        render(&[first, second, udp], &mut out);
        assert!(out.contains("appliance_datagrams_received_total{source=\"xdp\"} 7\n"));
        assert!(out.contains("appliance_datagrams_received_total{source=\"udp\"} 1\n"));
        assert!(out.contains("appliance_bytes_received_total{source=\"xdp\"} 700\n"));
        assert!(out.contains(
            "appliance_receive_drops_total{source=\"xdp\",endpoint=\"eth1/1\",mode=\"copy-skb\",\
             reason=\"ring_full\"} 9\n"
        ));
        assert!(out.contains(
            "appliance_receive_packets_total{source=\"udp\",endpoint=\"0.0.0.0:8001\",\
             mode=\"recvmmsg\"} 1\n"
        ));
    }
}
