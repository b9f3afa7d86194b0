//! The portable receive path: one UDP socket read with `recvmmsg(2)`, up to a whole batch per
//! system call, straight into the batch's slots, with the kernel's receive timestamp of every
//! datagram (`SO_TIMESTAMPNS`) from the control messages. The socket's drop count (its
//! `sk_drops`: datagrams refused because the receive buffer was full) is read with
//! `getsockopt(SO_MEMINFO)` on the housekeeping tick; unlike `SO_RXQ_OVFL`, which rides on the
//! next datagram queued, it also reports drops after the last datagram received.
//!
//! Socket set-up: `SO_REUSEPORT` (several sockets, processes or a restart may share the port),
//! a large receive buffer (`SO_RCVBUFFORCE` with CAP_NET_ADMIN, else `SO_RCVBUF` capped by
//! `net.core.rmem_max`; the size obtained is logged) and a 100 ms `SO_RCVTIMEO` so the thread
//! sees shutdown. `MSG_WAITFORONE` makes the call return as soon as one datagram is in, with
//! whatever else is queued. io_uring was measured on this workload and was not faster
//! (`docs/receive.md`), so it is not used.
//!
//! Coalesced reads (`UDP_GRO`, on unless `[sources] udp_gro = false`): the kernel may hand over
//! a run of equal-sized datagrams of one flow as one message (a GSO send on loopback, or NIC
//! GRO for a sender's burst), with the segment size in a control message. One `recvmmsg` then
//! reads a whole burst instead of paying the per-datagram kernel path for each. Each message
//! gets a 64 KiB buffer (reserved at bind, one per batch slot); the source splits the messages
//! into the batch's slots, keeping what does not fit for the next call. All datagrams of a
//! message share its receive time.
#![deny(unsafe_op_in_unsafe_fn)]

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

use tracing::{info, warn};

use super::batch::BATCH_CAPACITY_MAX;
use super::sockopt::{self, SCM_TIMESTAMPNS, SO_MEMINFO, SO_RCVBUFFORCE, SO_TIMESTAMPNS, UDP_GRO};
use super::{DropCounts, DropReason, ReceiveError, RxBatch, ShredSource, unix_nanos};
use crate::handoff::SLOT_BYTES;

/// How long one receive call waits for the first datagram.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// Control-message bytes per message: `CMSG_SPACE(timespec)` = 32 plus `CMSG_SPACE(int)` = 24
/// for the GRO segment size; kept as `u64` words for the alignment `cmsghdr` needs.
const CONTROL_WORDS: usize = 8;

/// Buffer of one coalesced message: the largest UDP payload fits.
const MESSAGE_BYTES: usize = 1 << 16;

/// `SK_MEMINFO_DROPS`, the index of the drop count in the `SO_MEMINFO` array, and the array's
/// length (`SK_MEMINFO_VARS`, `include/uapi/linux/sock_diag.h`).
const SK_MEMINFO_DROPS: usize = 8;
const SK_MEMINFO_VARS: usize = 9;

/// Why the UDP socket could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum UdpError {
    #[error("creating the UDP socket: {0}")]
    Socket(io::Error),
    #[error("setting {option} on the UDP socket: {error}")]
    Option {
        option: &'static str,
        error: io::Error,
    },
    #[error("binding UDP {address}: {error}")]
    Bind {
        address: SocketAddr,
        error: io::Error,
    },
}

impl UdpError {
    /// A short stable name of the reason.
    pub fn label(&self) -> &'static str {
        match self {
            UdpError::Socket(_) => "socket",
            UdpError::Option { .. } => "socket_option",
            UdpError::Bind { .. } => "bind",
        }
    }
}

/// A bound UDP socket receiving in batches.
pub struct UdpSource {
    socket: UdpSocket,
    drops: DropCounts,
    warned_missing_timestamp: bool,
    /// Present when the kernel accepted `UDP_GRO`.
    coalesced: Option<Coalesced>,
}

/// The messages of the last coalesced read and how far they have been split into batches.
struct Coalesced {
    /// One `MESSAGE_BYTES` buffer per message.
    buffers: Box<[u8]>,
    received: Box<[Received]>,
    /// Messages filled by the last read.
    count: usize,
    /// The message being split, and the offset of its next datagram.
    next: usize,
    offset: usize,
}

impl UdpSource {
    /// Binds `address` with the options in the module documentation, asking for
    /// `receive_buffer_bytes` of kernel buffer. `coalesce_messages` > 0 asks for `UDP_GRO` and
    /// reserves that many 64 KiB message buffers (at most one read's worth of messages: give
    /// the batch capacity); 0 or a refusal reads one datagram per slot.
    pub fn bind(
        address: SocketAddr,
        receive_buffer_bytes: usize,
        coalesce_messages: usize,
    ) -> Result<Self, UdpError> {
        let option = |option: &'static str| move |error| UdpError::Option { option, error };
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(address),
            socket2::Type::DGRAM,
            Some(socket2::Protocol::UDP),
        )
        .map_err(UdpError::Socket)?;
        socket
            .set_reuse_port(true)
            .map_err(option("SO_REUSEPORT"))?;
        let fd = socket.as_raw_fd();
        let requested = receive_buffer_bytes.min(i32::MAX as usize) as libc::c_int;
        if let Err(error) = sockopt::set(fd, libc::SOL_SOCKET, SO_RCVBUFFORCE, &requested) {
            info!(%error, "SO_RCVBUFFORCE refused; SO_RCVBUF is capped by net.core.rmem_max");
            socket
                .set_recv_buffer_size(receive_buffer_bytes)
                .map_err(option("SO_RCVBUF"))?;
        }
        sockopt::set(fd, libc::SOL_SOCKET, SO_TIMESTAMPNS, &1).map_err(option("SO_TIMESTAMPNS"))?;
        socket
            .set_read_timeout(Some(POLL_INTERVAL))
            .map_err(option("SO_RCVTIMEO"))?;
        socket
            .bind(&address.into())
            .map_err(|error| UdpError::Bind { address, error })?;
        let granted = socket.recv_buffer_size().unwrap_or(0);
        let messages = coalesce_messages.min(BATCH_CAPACITY_MAX);
        let coalesced = if messages == 0 {
            None
        } else if let Err(error) = sockopt::set(fd, libc::SOL_UDP, UDP_GRO, &1) {
            info!(%error, "UDP_GRO refused; one datagram per read slot");
            None
        } else {
            Some(Coalesced {
                buffers: vec![0; messages * MESSAGE_BYTES].into_boxed_slice(),
                received: vec![Received::default(); messages].into_boxed_slice(),
                count: 0,
                next: 0,
                offset: 0,
            })
        };
        let socket: UdpSocket = socket.into();
        info!(
            local = %socket.local_addr().map_err(UdpError::Socket)?,
            receive_buffer_bytes = granted,
            gro = coalesced.is_some(),
            "UDP receive socket ready (recvmmsg)"
        );
        Ok(Self {
            socket,
            drops: DropCounts::default(),
            warned_missing_timestamp: false,
            coalesced,
        })
    }

    /// Whether reads are coalesced (`UDP_GRO` accepted).
    #[cfg(test)]
    fn coalesces(&self) -> bool {
        self.coalesced.is_some()
    }

    fn note_missing_timestamp(&mut self) {
        if !self.warned_missing_timestamp {
            self.warned_missing_timestamp = true;
            warn!("datagrams without SO_TIMESTAMPNS; stamping them on read");
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }
}

impl Coalesced {
    /// Splits what the last read left into `batch`, reading again (from `fd`) once all of it
    /// is split. Returns whether some message came without a kernel timestamp.
    fn receive(
        &mut self,
        fd: i32,
        batch: &mut RxBatch,
        drops: &mut DropCounts,
    ) -> Result<bool, ReceiveError> {
        let mut missing_timestamp = false;
        if self.next == self.count {
            let capacity = batch.capacity().min(self.received.len());
            let count = recvmmsg(
                fd,
                &mut self.buffers,
                MESSAGE_BYTES,
                &mut self.received[..capacity],
            )?;
            for message in &mut self.received[..count] {
                missing_timestamp |= message.rx_ns.is_none();
                message.rx_ns.get_or_insert_with(unix_nanos);
            }
            (self.count, self.next, self.offset) = (count, 0, 0);
        }
        self.split_into(batch, drops);
        Ok(missing_timestamp)
    }

    /// Copies datagrams into `batch` until it is full or every message is split; a datagram
    /// too long for a slot (or a truncated message) is counted and dropped.
    fn split_into(&mut self, batch: &mut RxBatch, drops: &mut DropCounts) {
        while self.next < self.count {
            let message = self.received[self.next];
            let start = self.next * MESSAGE_BYTES;
            let bytes = &self.buffers[start..start + message.len];
            let rx_ns = message.rx_ns.unwrap_or(0);
            if message.truncated {
                drops.add(DropReason::Truncated, 1);
            } else if bytes.is_empty() {
                // An empty datagram goes on, to be counted as malformed by the worker.
                if !batch.push(bytes, rx_ns) {
                    return;
                }
            } else {
                let segment = message.segment.unwrap_or(bytes.len()).max(1);
                while self.offset < bytes.len() {
                    let end = (self.offset + segment).min(bytes.len());
                    let datagram = &bytes[self.offset..end];
                    if datagram.len() > SLOT_BYTES {
                        drops.add(DropReason::Truncated, 1);
                    } else if !batch.push(datagram, rx_ns) {
                        return;
                    }
                    self.offset = end;
                }
            }
            self.next += 1;
            self.offset = 0;
        }
    }
}

impl ShredSource for UdpSource {
    fn receive(&mut self, batch: &mut RxBatch) -> Result<(), ReceiveError> {
        batch.clear();
        if let Some(coalesced) = self.coalesced.as_mut() {
            let fd = self.socket.as_raw_fd();
            if coalesced.receive(fd, batch, &mut self.drops)? {
                self.note_missing_timestamp();
            }
            return Ok(());
        }
        let capacity = batch.capacity().min(BATCH_CAPACITY_MAX);
        let mut received = [Received::default(); BATCH_CAPACITY_MAX];
        let count = recvmmsg(
            self.socket.as_raw_fd(),
            batch.slots_mut(),
            SLOT_BYTES,
            &mut received[..capacity],
        )?;
        let mut missing_timestamp = false;
        let mut kept = 0;
        for index in 0..count {
            let datagram = received[index];
            if datagram.truncated {
                self.drops.add(DropReason::Truncated, 1);
                continue;
            }
            if kept != index {
                // Close the gap a truncated datagram left (rare: only after one).
                let slots = batch.slots_mut();
                slots.copy_within(
                    index * SLOT_BYTES..index * SLOT_BYTES + datagram.len,
                    kept * SLOT_BYTES,
                );
            }
            received[kept] = datagram;
            missing_timestamp |= datagram.rx_ns.is_none();
            kept += 1;
        }
        if missing_timestamp {
            self.note_missing_timestamp();
        }
        let now = if missing_timestamp { unix_nanos() } else { 0 };
        batch.set_filled(kept, |index| {
            let datagram = &received[index];
            (datagram.len as u16, datagram.rx_ns.unwrap_or(now))
        });
        Ok(())
    }

    fn drops(&mut self) -> DropCounts {
        if let Ok((meminfo, _)) = sockopt::get::<[u32; SK_MEMINFO_VARS]>(
            self.socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_MEMINFO,
        ) {
            let dropped = u64::from(meminfo[SK_MEMINFO_DROPS]);
            self.drops.set(DropReason::SocketBufferFull, dropped);
        }
        self.drops
    }
}

/// What `recvmmsg` reported for one message (one datagram, or a coalesced run of them).
#[derive(Debug, Clone, Copy, Default)]
struct Received {
    len: usize,
    truncated: bool,
    rx_ns: Option<u64>,
    /// Size of each datagram of a coalesced run (`UDP_GRO`), the last one possibly shorter.
    segment: Option<usize>,
}

// SAFETY: the libc message structs are plain old data (integers and raw pointers, for which the
// all-zero pattern is valid: null pointers, zero lengths).
unsafe impl sockopt::Pod for libc::mmsghdr {}
// SAFETY: as above.
unsafe impl sockopt::Pod for libc::iovec {}

/// One `recvmmsg(MSG_WAITFORONE)` call scattering into consecutive `slot_bytes` slots of
/// `slots`; fills `received[..n]` and returns `n` (0 when the receive timeout expired).
fn recvmmsg(
    fd: i32,
    slots: &mut [u8],
    slot_bytes: usize,
    received: &mut [Received],
) -> Result<usize, ReceiveError> {
    let capacity = received
        .len()
        .min(slots.len() / slot_bytes)
        .min(BATCH_CAPACITY_MAX);
    let mut iovecs = [sockopt::zeroed::<libc::iovec>(); BATCH_CAPACITY_MAX];
    let mut headers = [sockopt::zeroed::<libc::mmsghdr>(); BATCH_CAPACITY_MAX];
    let mut control = [[0u64; CONTROL_WORDS]; BATCH_CAPACITY_MAX];
    for (index, slot) in slots
        .chunks_exact_mut(slot_bytes)
        .take(capacity)
        .enumerate()
    {
        iovecs[index] = libc::iovec {
            iov_base: slot.as_mut_ptr().cast(),
            iov_len: slot_bytes,
        };
        let header = &mut headers[index].msg_hdr;
        header.msg_iov = &raw mut iovecs[index];
        header.msg_iovlen = 1;
        header.msg_control = control[index].as_mut_ptr().cast();
        header.msg_controllen = std::mem::size_of::<[u64; CONTROL_WORDS]>() as _;
    }
    // SAFETY: `headers[..capacity]` each point at one iovec covering a distinct, writable
    // `slot_bytes` slot of `slots` and at a writable, 8-byte-aligned control buffer of the size
    // given; all of them outlive the call. A null timeout waits per SO_RCVTIMEO.
    let count = unsafe {
        libc::recvmmsg(
            fd,
            headers.as_mut_ptr(),
            capacity as libc::c_uint,
            libc::MSG_WAITFORONE,
            std::ptr::null_mut(),
        )
    };
    if count < 0 {
        let error = io::Error::last_os_error();
        return match error.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted => {
                Ok(0)
            }
            _ => Err(ReceiveError::Recvmmsg(error)),
        };
    }
    let count = count as usize;
    for (header, out) in headers[..count].iter().zip(received.iter_mut()) {
        *out = Received {
            len: (header.msg_len as usize).min(slot_bytes),
            truncated: header.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
            ..Received::default()
        };
        read_control(&header.msg_hdr, out);
    }
    Ok(count)
}

/// Reads the timestamp and GRO segment-size control messages of one received message.
fn read_control(header: &libc::msghdr, out: &mut Received) {
    // SAFETY: `header` was filled by a successful recvmmsg: `msg_control`/`msg_controllen`
    // describe the control bytes the kernel wrote into our buffer, and CMSG_FIRSTHDR/NXTHDR
    // stay inside them (they return null past the end).
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(header) };
    while !cmsg.is_null() {
        // SAFETY: non-null CMSG_FIRSTHDR/NXTHDR results point at a complete cmsghdr inside the
        // control buffer; CMSG_DATA is followed by cmsg_len - CMSG_LEN(0) bytes of data, read
        // unaligned as the value types the kernel writes for these types.
        unsafe {
            let level = (*cmsg).cmsg_level;
            let kind = (*cmsg).cmsg_type;
            let data_len = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
            let data = libc::CMSG_DATA(cmsg);
            if level == libc::SOL_SOCKET
                && kind == SCM_TIMESTAMPNS
                && data_len >= std::mem::size_of::<libc::timespec>()
            {
                let stamp = data.cast::<libc::timespec>().read_unaligned();
                out.rx_ns = Some(stamp.tv_sec as u64 * 1_000_000_000 + stamp.tv_nsec as u64);
            } else if level == libc::SOL_UDP
                && kind == UDP_GRO
                && data_len >= std::mem::size_of::<libc::c_int>()
            {
                let segment = data.cast::<libc::c_int>().read_unaligned();
                out.segment = usize::try_from(segment).ok().filter(|&size| size > 0);
            }
            cmsg = libc::CMSG_NXTHDR(header, cmsg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::send::BurstSender;

    /// Message buffers of the coalescing sources in these tests; 0 = the plain path.
    const BOTH_PATHS: [usize; 2] = [0, 8];

    fn source(receive_buffer_bytes: usize, coalesce_messages: usize) -> UdpSource {
        let source = UdpSource::bind(
            "127.0.0.1:0".parse().unwrap(),
            receive_buffer_bytes,
            coalesce_messages,
        )
        .unwrap();
        assert_eq!(source.coalesces(), coalesce_messages > 0);
        source
    }

    #[test]
    fn batches_arrive_in_order_with_kernel_timestamps_and_truncation_counted() {
        for coalesce in BOTH_PATHS {
            let mut source = source(1 << 20, coalesce);
            let target = source.local_addr().unwrap();
            let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
            let before = unix_nanos();
            sender.send_to(b"first", target).unwrap();
            sender.send_to(&[7u8; SLOT_BYTES + 100], target).unwrap();
            sender.send_to(b"third", target).unwrap();
            let after = unix_nanos();
            let mut batch = RxBatch::new(8);
            let mut seen = Vec::new();
            while seen.len() < 2 {
                source.receive(&mut batch).unwrap();
                seen.extend(batch.iter().map(|(bytes, rx_ns)| (bytes.to_vec(), rx_ns)));
            }
            assert_eq!(seen[0].0, b"first", "coalesce {coalesce}");
            assert_eq!(seen[1].0, b"third", "coalesce {coalesce}");
            for (_, rx_ns) in &seen {
                assert!(
                    (before..=after).contains(rx_ns),
                    "{before} <= {rx_ns} <= {after}"
                );
            }
            assert_eq!(source.drops().get(DropReason::Truncated), 1);
        }
    }

    #[test]
    fn gso_bursts_are_read_coalesced_and_split_into_their_datagrams() {
        let mut source = source(1 << 22, 8);
        let target = source.local_addr().unwrap();
        let mut sender = BurstSender::connect(target).unwrap();
        // A FEC set's 32 data shreds (one run), then 32 coding shreds of another size, then runs
        // of one datagram and a run ending with a shorter datagram: all distinct bytes.
        let mut datagrams: Vec<Vec<u8>> = Vec::new();
        let mut numbered = |len: usize| {
            let number = datagrams.len() as u32;
            let mut bytes = vec![(number % 251) as u8; len];
            bytes[..4].copy_from_slice(&number.to_le_bytes());
            datagrams.push(bytes);
        };
        (0..32).for_each(|_| numbered(1_203));
        (0..32).for_each(|_| numbered(1_228));
        numbered(100);
        numbered(1_228);
        (0..5).for_each(|_| numbered(900));
        numbered(300);
        let burst: Vec<&[u8]> = datagrams.iter().map(Vec::as_slice).collect();
        assert_eq!(sender.send(&burst).unwrap(), burst.len());
        assert!(
            sender.segmenting(),
            "GSO refused: the coalesced path is not exercised"
        );

        // A batch smaller than a run: the rest of a message waits for the next call.
        let mut batch = RxBatch::new(8);
        let mut seen: Vec<(Vec<u8>, u64)> = Vec::new();
        let mut calls = 0;
        while seen.len() < datagrams.len() && calls < 1_000 {
            source.receive(&mut batch).unwrap();
            assert!(batch.len() <= 8);
            if calls == 0 {
                // The kernel handed the data shreds over as one message of 32 segments.
                let first = source.coalesced.as_ref().unwrap().received[0];
                assert_eq!((first.segment, first.len), (Some(1_203), 32 * 1_203));
            }
            seen.extend(batch.iter().map(|(bytes, rx_ns)| (bytes.to_vec(), rx_ns)));
            calls += 1;
        }
        let received: Vec<&[u8]> = seen.iter().map(|(bytes, _)| bytes.as_slice()).collect();
        assert_eq!(received, burst, "every datagram whole, once, in order");
        // The 32 data shreds were one GSO send: one message, one kernel receive time.
        assert!(seen[..32].iter().all(|(_, rx_ns)| *rx_ns == seen[0].1));
        assert!(seen.iter().all(|(_, rx_ns)| *rx_ns > 0));
        assert_eq!(source.drops().get(DropReason::Truncated), 0);
    }

    #[test]
    fn an_idle_socket_returns_an_empty_batch_after_the_poll_interval() {
        for coalesce in BOTH_PATHS {
            let mut source = source(1 << 20, coalesce);
            let mut batch = RxBatch::new(4);
            assert!(batch.push(b"stale", 1));
            let started = std::time::Instant::now();
            source.receive(&mut batch).unwrap();
            assert!(batch.is_empty());
            assert!(started.elapsed() >= POLL_INTERVAL / 2);
        }
    }

    #[test]
    fn a_full_socket_buffer_is_counted_as_drops() {
        for coalesce in BOTH_PATHS {
            // A tiny buffer (the kernel doubles and floors it at a few KiB) and 200 datagrams
            // sent before any read: most cannot be queued.
            let mut source = source(1, coalesce);
            let target = source.local_addr().unwrap();
            let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
            for _ in 0..200 {
                sender.send_to(&[1u8; 1200], target).unwrap();
            }
            let mut batch = RxBatch::new(64);
            let mut received = 0;
            loop {
                source.receive(&mut batch).unwrap();
                if batch.is_empty() {
                    break;
                }
                received += batch.len();
            }
            let dropped = source.drops().get(DropReason::SocketBufferFull);
            assert!(received < 200, "received {received}");
            assert_eq!(
                received as u64 + dropped,
                200,
                "received {received}, dropped {dropped}"
            );
        }
    }
}
