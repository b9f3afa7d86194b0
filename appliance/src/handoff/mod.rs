//! The hand-off between the receive threads and the workers, which both `receive/` and
//! `pipeline/` stand on: the datagram slot ([`Datagram`], [`SLOT_BYTES`]), the lock-free ring it
//! travels in ([`ring`]), one source's rings to every worker ([`SourceRings`]), the parking
//! protocol that wakes a worker ([`wake`]) and the real-time scheduling of these hot threads
//! ([`sched`]).

#[allow(unsafe_code)]
pub mod ring;
#[allow(unsafe_code)]
pub mod sched;
pub mod wake;

use ring::Producer;
use wake::Waker;

/// Bytes per datagram slot. Shreds are at most 1,228 bytes (the UDP payload of a 1,280-byte IPv6
/// minimum MTU packet); a larger datagram is truncated by the backend and counted as a drop.
pub const SLOT_BYTES: usize = 2048;

/// One datagram in a worker ring slot.
pub struct Datagram {
    len: u16,
    pub rx_ns: u64,
    bytes: Box<[u8; SLOT_BYTES]>,
}

impl Default for Datagram {
    fn default() -> Self {
        Self {
            len: 0,
            rx_ns: 0,
            bytes: Box::new([0; SLOT_BYTES]),
        }
    }
}

impl Datagram {
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// Copies `datagram` (truncated to [`SLOT_BYTES`]) and its receive time into the slot.
    pub fn fill(&mut self, datagram: &[u8], rx_ns: u64) {
        let len = datagram.len().min(SLOT_BYTES);
        self.bytes[..len].copy_from_slice(&datagram[..len]);
        self.len = len as u16;
        self.rx_ns = rx_ns;
    }
}

/// The rings of one source, one per worker, and the workers' wakers, both indexed by worker.
pub struct SourceRings {
    pub rings: Vec<Producer<Datagram>>,
    /// Empty: nobody to wake (the consumers poll).
    pub wakers: Vec<Waker>,
}
