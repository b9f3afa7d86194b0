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
#![deny(unsafe_op_in_unsafe_fn)]

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

use tracing::{info, warn};

use super::batch::{BATCH_CAPACITY_MAX, SLOT_BYTES};
use super::sockopt::{self, SCM_TIMESTAMPNS, SO_MEMINFO, SO_RCVBUFFORCE, SO_TIMESTAMPNS};
use super::{DropCounts, DropReason, ReceiveError, RxBatch, ShredSource, unix_nanos};

/// How long one receive call waits for the first datagram.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// Control-message bytes per datagram: `CMSG_SPACE(timespec)` = 32, with room to spare; kept
/// as `u64` words for the alignment `cmsghdr` needs.
const CONTROL_WORDS: usize = 8;

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
}

impl UdpSource {
    /// Binds `address` with the options in the module documentation, asking for
    /// `receive_buffer_bytes` of kernel buffer.
    pub fn bind(address: SocketAddr, receive_buffer_bytes: usize) -> Result<Self, UdpError> {
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
        let socket: UdpSocket = socket.into();
        info!(
            local = %socket.local_addr().map_err(UdpError::Socket)?,
            receive_buffer_bytes = granted,
            "UDP receive socket ready (recvmmsg)"
        );
        Ok(Self {
            socket,
            drops: DropCounts::default(),
            warned_missing_timestamp: false,
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }
}

impl ShredSource for UdpSource {
    fn receive(&mut self, batch: &mut RxBatch) -> Result<(), ReceiveError> {
        batch.clear();
        let capacity = batch.capacity().min(BATCH_CAPACITY_MAX);
        let mut received = [Received::default(); BATCH_CAPACITY_MAX];
        let count = recvmmsg(
            self.socket.as_raw_fd(),
            batch.slots_mut(),
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
        if missing_timestamp && !self.warned_missing_timestamp {
            self.warned_missing_timestamp = true;
            warn!("datagrams without SO_TIMESTAMPNS; stamping them on read");
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

/// What `recvmmsg` reported for one datagram.
#[derive(Debug, Clone, Copy, Default)]
struct Received {
    len: usize,
    truncated: bool,
    rx_ns: Option<u64>,
}

// SAFETY: the libc message structs are plain old data (integers and raw pointers, for which the
// all-zero pattern is valid: null pointers, zero lengths).
unsafe impl sockopt::Pod for libc::mmsghdr {}
// SAFETY: as above.
unsafe impl sockopt::Pod for libc::iovec {}

/// One `recvmmsg(MSG_WAITFORONE)` call scattering into consecutive `SLOT_BYTES` slots of
/// `slots`; fills `received[..n]` and returns `n` (0 when the receive timeout expired).
fn recvmmsg(fd: i32, slots: &mut [u8], received: &mut [Received]) -> Result<usize, ReceiveError> {
    let capacity = received.len().min(slots.len() / SLOT_BYTES);
    let mut iovecs = [sockopt::zeroed::<libc::iovec>(); BATCH_CAPACITY_MAX];
    let mut headers = [sockopt::zeroed::<libc::mmsghdr>(); BATCH_CAPACITY_MAX];
    let mut control = [[0u64; CONTROL_WORDS]; BATCH_CAPACITY_MAX];
    for (index, slot) in slots
        .chunks_exact_mut(SLOT_BYTES)
        .take(capacity)
        .enumerate()
    {
        iovecs[index] = libc::iovec {
            iov_base: slot.as_mut_ptr().cast(),
            iov_len: SLOT_BYTES,
        };
        let header = &mut headers[index].msg_hdr;
        header.msg_iov = &raw mut iovecs[index];
        header.msg_iovlen = 1;
        header.msg_control = control[index].as_mut_ptr().cast();
        header.msg_controllen = std::mem::size_of::<[u64; CONTROL_WORDS]>() as _;
    }
    // SAFETY: `headers[..capacity]` each point at one iovec covering a distinct, writable
    // SLOT_BYTES slot of `slots` and at a writable, 8-byte-aligned control buffer of the size
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
            len: (header.msg_len as usize).min(SLOT_BYTES),
            truncated: header.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
            ..Received::default()
        };
        read_control(&header.msg_hdr, out);
    }
    Ok(count)
}

/// Reads the timestamp control message of one received datagram.
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
            }
            cmsg = libc::CMSG_NXTHDR(header, cmsg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_arrive_in_order_with_kernel_timestamps_and_truncation_counted() {
        let mut source = UdpSource::bind("127.0.0.1:0".parse().unwrap(), 1 << 20).unwrap();
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
        assert_eq!(seen[0].0, b"first");
        assert_eq!(seen[1].0, b"third");
        for (_, rx_ns) in &seen {
            assert!(
                (before..=after).contains(rx_ns),
                "{before} <= {rx_ns} <= {after}"
            );
        }
        assert_eq!(source.drops().get(DropReason::Truncated), 1);
    }

    #[test]
    fn an_idle_socket_returns_an_empty_batch_after_the_poll_interval() {
        let mut source = UdpSource::bind("127.0.0.1:0".parse().unwrap(), 1 << 20).unwrap();
        let mut batch = RxBatch::new(4);
        assert!(batch.push(b"stale", 1));
        let started = std::time::Instant::now();
        source.receive(&mut batch).unwrap();
        assert!(batch.is_empty());
        assert!(started.elapsed() >= POLL_INTERVAL / 2);
    }

    #[test]
    fn a_full_socket_buffer_is_counted_as_drops() {
        // A tiny buffer (the kernel doubles and floors it at a few KiB) and 200 datagrams
        // sent before any read: most cannot be queued.
        let mut source = UdpSource::bind("127.0.0.1:0".parse().unwrap(), 1).unwrap();
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
