//! The receive side of the appliance: backends that fill [`RxBatch`]es with datagrams and their
//! receive timestamps, and the pinned threads that hand the datagrams to the worker pool.
//!
//! ```text
//!  NIC queue q ──XDP program──▶ XSKMAP[q] ──▶ xdp::XskSocket ─┐            (one per queue)
//!  UDP socket ──recvmmsg(64, SO_TIMESTAMPNS)──▶ udp::UdpSource ┤ ShredSource::receive(&mut RxBatch)
//!                                                             ▼
//!        thread (pinned): hash(slot, fec_set_index) ──copy──▶ ring[source][worker] ──▶ worker
//! ```
//! Memory is fixed at start-up: each receive thread owns one batch of `batch_capacity` slots and
//! one bounded ring of preallocated datagram slots per worker (`crate::handoff::ring`). When a worker falls
//! behind its ring fills and the receive thread drops and counts (`appliance_ring_drops_total`);
//! it never waits, so the kernel's queue only overflows when the receive thread itself is too
//! slow. Kernel drops are the `drops` of [`ShredSource::drops`], exported per source and reason
//! on `/metrics`. The workers are `crate::pipeline::workers`.

pub mod batch;
pub mod frame;
pub mod metrics;
pub mod setup;
// The three modules below wrap system calls and shared kernel memory; each `unsafe` block in
// them carries a `// SAFETY:` note. Everything else in the crate denies unsafe code.
#[allow(unsafe_code)]
pub mod sockopt;
pub mod thread;
#[allow(unsafe_code)]
pub mod udp;
#[allow(unsafe_code)]
pub mod xdp;

pub use batch::RxBatch;
pub use metrics::{DropCounts, DropReason, SourceMetrics};

/// A receive backend: AF_XDP queue socket or UDP socket.
pub trait ShredSource: Send {
    /// Clears `batch` and fills it with the datagrams that are ready (up to its capacity),
    /// waiting at most the source's poll interval (100 ms) for the first. An empty batch after
    /// `Ok` means the wait timed out.
    fn receive(&mut self, batch: &mut RxBatch) -> Result<(), ReceiveError>;

    /// Cumulative drop counts by reason, from the kernel's counters where it keeps them. Called
    /// on the housekeeping tick (every 100 ms), not per batch.
    fn drops(&mut self) -> DropCounts;
}

/// Why one receive call failed (the thread logs it, counts it, and carries on).
#[derive(Debug, thiserror::Error)]
pub enum ReceiveError {
    #[error("recvmmsg failed: {0}")]
    Recvmmsg(std::io::Error),
    #[error("poll on the AF_XDP socket failed: {0}")]
    Poll(std::io::Error),
}

impl ReceiveError {
    /// A short stable name of the reason (metric label).
    pub fn label(&self) -> &'static str {
        match self {
            ReceiveError::Recvmmsg(_) => "recvmmsg",
            ReceiveError::Poll(_) => "poll",
        }
    }
}

/// The current time as Unix nanoseconds (`CLOCK_REALTIME`, the clock of `SO_TIMESTAMPNS`).
pub fn unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}
