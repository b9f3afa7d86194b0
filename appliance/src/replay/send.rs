//! The replay's burst sender: a FEC set goes out in one or two system calls, so a replayed set
//! reaches the receive path within microseconds, as a leader's broadcast reaching a NIC does
//! (`appliance run --replay-burst`), instead of one `sendto` per shred.
//!
//! Consecutive datagrams of one size (a set's data shreds, then its coding shreds) go out as one
//! UDP GSO send (`UDP_SEGMENT`): the kernel takes the run through its stack once and splits it
//! into datagrams only at the receiving socket (or at the NIC), so on loopback all of them carry
//! the same receive time. Sent one by one with `sendmmsg`, the 32nd datagram of a set reached the
//! socket ~90 µs after the first on the development machine (~3 µs of kernel path per datagram,
//! all of it in the sender's system call): a spread of the test rig, not of the appliance, that
//! the `capture` stage of the latency harness would otherwise measure. Where GSO is refused
//! (kernel before 4.18, a device without it) the sender falls back to `sendmmsg` for good.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// Most datagrams handed to one `sendmmsg` call (the kernel's `UIO_MAXIOV`).
const MAX_BATCH: usize = 1_024;

/// `UDP_SEGMENT` (linux/udp.h): the control message giving a GSO send's segment size.
const UDP_SEGMENT: libc::c_int = 103;

/// Most segments of one GSO send (the kernel's `UDP_MAX_SEGMENTS`).
const MAX_SEGMENTS: usize = 64;

/// Largest UDP payload of one send (65,535 − 8 bytes of UDP header − 20 of IPv4 header).
const MAX_GSO_BYTES: usize = 65_507;

/// A connected UDP socket and the `sendmmsg`/`sendmsg` argument arrays, reused for every burst.
pub struct BurstSender {
    socket: UdpSocket,
    iovecs: Vec<libc::iovec>,
    headers: Vec<libc::mmsghdr>,
    /// Whether runs of equal-sized datagrams still go out as GSO sends.
    segmenting: bool,
}

// SAFETY: the raw pointers inside `iovecs` and `headers` are only meaningful during a `send`
// call, which rebuilds them from borrowed datagrams first; between calls they are dead values and
// nothing dereferences them, so moving the sender to another thread is sound.
unsafe impl Send for BurstSender {}

impl BurstSender {
    /// A socket bound to an ephemeral loopback-or-any port and connected to `target`.
    pub fn connect(target: SocketAddr) -> io::Result<Self> {
        let local = match target {
            SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
            SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
        };
        let socket = UdpSocket::bind(local)?;
        socket.connect(target)?;
        Ok(Self {
            socket,
            iovecs: Vec::new(),
            headers: Vec::new(),
            segmenting: true,
        })
    }

    /// The same sender without GSO: every datagram through `sendmmsg`.
    #[cfg(test)]
    fn without_segmenting(mut self) -> Self {
        self.segmenting = false;
        self
    }

    /// Whether the sender still uses GSO (false once the kernel refused it).
    #[cfg(test)]
    pub(crate) fn segmenting(&self) -> bool {
        self.segmenting
    }

    /// Sends every datagram of `burst`, in order: each run of equal-sized datagrams as GSO
    /// sends, or, without GSO, with as few `sendmmsg` calls as the kernel allows; returns how
    /// many went out.
    pub fn send(&mut self, burst: &[&[u8]]) -> io::Result<usize> {
        let mut sent = 0;
        while sent < burst.len() {
            let rest = &burst[sent..];
            let accepted = if self.segmenting {
                match self.send_segmented(rest) {
                    Ok(accepted) => accepted,
                    Err(error) if refuses_gso(&error) => {
                        tracing::warn!(%error, "UDP GSO refused: the replay sends datagram by datagram");
                        self.segmenting = false;
                        continue;
                    }
                    Err(error) => return Err(error),
                }
            } else {
                self.sendmmsg(&rest[..rest.len().min(MAX_BATCH)])?
            };
            if accepted == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "sendmmsg accepted no datagram",
                ));
            }
            sent += accepted;
        }
        Ok(sent)
    }

    /// Sends the leading run of `datagrams` that share the first one's size (at most
    /// `MAX_SEGMENTS` and `MAX_GSO_BYTES`) as one GSO send; returns how many it held.
    fn send_segmented(&mut self, datagrams: &[&[u8]]) -> io::Result<usize> {
        let Some(first) = datagrams.first() else {
            return Ok(0);
        };
        let size = first.len();
        let most = MAX_SEGMENTS.min(MAX_GSO_BYTES / size.max(1));
        let run = datagrams
            .iter()
            .take(most)
            .take_while(|datagram| datagram.len() == size)
            .count();
        if run <= 1 || size == 0 {
            self.socket.send(first)?;
            return Ok(1);
        }
        let segment_size = u16::try_from(size)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "datagram over 64 KiB"))?;
        // One iovec per datagram: the kernel gathers them into the GSO payload, no copy here.
        self.point_iovecs_at(&datagrams[..run]);
        // u64 elements: aligned for `cmsghdr`; room for CMSG_SPACE(2) (24 bytes on 64-bit).
        let mut control = [0u64; 4];
        // SAFETY: msghdr is a plain C struct for which all-zero is valid.
        let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
        message.msg_iov = self.iovecs.as_mut_ptr();
        message.msg_iovlen = self.iovecs.len();
        message.msg_control = control.as_mut_ptr().cast();
        // SAFETY: CMSG_SPACE only computes a size.
        message.msg_controllen = unsafe { libc::CMSG_SPACE(2) } as usize;
        debug_assert!(message.msg_controllen <= std::mem::size_of_val(&control));
        // SAFETY: `message` points at `control`, large enough for one header with a u16 (checked
        // above), so CMSG_FIRSTHDR is that buffer's start and CMSG_DATA lies inside it.
        unsafe {
            let header = libc::CMSG_FIRSTHDR(&message);
            (*header).cmsg_level = libc::SOL_UDP;
            (*header).cmsg_type = UDP_SEGMENT;
            (*header).cmsg_len = libc::CMSG_LEN(2) as usize;
            std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<u16>(), segment_size);
        }
        // SAFETY: `message` describes `self.iovecs` (not touched until the call returns), each
        // pointing at a datagram borrowed from `datagrams` for the call, and `control`; the
        // kernel only reads them.
        let written = unsafe { libc::sendmsg(self.socket.as_raw_fd(), &message, 0) };
        if written < 0 {
            return Err(io::Error::last_os_error());
        }
        if written as usize != run * size {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "GSO send took part of its segments",
            ));
        }
        Ok(run)
    }

    /// Refills `iovecs` with one entry per datagram, in order.
    fn point_iovecs_at(&mut self, datagrams: &[&[u8]]) {
        self.iovecs.clear();
        self.iovecs
            .extend(datagrams.iter().map(|datagram| libc::iovec {
                iov_base: datagram.as_ptr().cast_mut().cast(),
                iov_len: datagram.len(),
            }));
    }

    fn sendmmsg(&mut self, chunk: &[&[u8]]) -> io::Result<usize> {
        self.point_iovecs_at(chunk);
        self.headers.clear();
        for iovec in &mut self.iovecs {
            // SAFETY: mmsghdr is a plain C struct for which all-zero is valid (null pointers,
            // zero lengths): no address (the socket is connected), no control data.
            let mut header: libc::mmsghdr = unsafe { std::mem::zeroed() };
            header.msg_hdr.msg_iov = iovec;
            header.msg_hdr.msg_iovlen = 1;
            self.headers.push(header);
        }
        // SAFETY: `headers[..len]` each point at one iovec of `self.iovecs` (not moved since:
        // the vector is not touched until the call returns) describing a datagram borrowed from
        // `chunk` for the whole call; the kernel only reads them and fills `msg_len`.
        let result = unsafe {
            libc::sendmmsg(
                self.socket.as_raw_fd(),
                self.headers.as_mut_ptr(),
                self.headers.len() as libc::c_uint,
                0,
            )
        };
        if result < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(result as usize)
        }
    }
}

/// Whether a GSO send failed because GSO itself is unavailable (old kernel, device or route
/// without it), rather than for a reason the datagram-by-datagram path would hit as well.
fn refuses_gso(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EINVAL | libc::EIO | libc::ENOPROTOOPT | libc::EOPNOTSUPP)
    )
}

/// Splits `shreds` into runs of consecutive shreds of the same FEC set (`(slot,
/// fec_set_index)`); a shred too short to name its set is a run of its own.
pub fn fec_set_runs<'a>(shreds: &'a [&'a [u8]]) -> impl Iterator<Item = &'a [&'a [u8]]> + 'a {
    let mut start = 0;
    std::iter::from_fn(move || {
        let first = shreds.get(start)?;
        let set = decoder::shred::peek_slot_and_fec_set(first);
        let len = match set {
            None => 1,
            Some(_) => shreds[start..]
                .iter()
                .take_while(|shred| decoder::shred::peek_slot_and_fec_set(shred) == set)
                .count(),
        };
        let run = &shreds[start..start + len];
        start += len;
        Some(run)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::time::Duration;

    fn shred(slot: u64, fec_set_index: u32, tag: u8) -> Vec<u8> {
        let mut payload = vec![tag; 88];
        payload[65..73].copy_from_slice(&slot.to_le_bytes());
        payload[79..83].copy_from_slice(&fec_set_index.to_le_bytes());
        payload
    }

    #[test]
    fn runs_follow_fec_set_changes() {
        let owned = [
            shred(7, 0, 1),
            shred(7, 0, 2),
            shred(7, 32, 3),
            b"short".to_vec(),
            b"short".to_vec(),
            shred(8, 32, 4),
            shred(8, 32, 5),
            shred(8, 32, 6),
        ];
        let shreds: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let lengths: Vec<usize> = fec_set_runs(&shreds).map(<[_]>::len).collect();
        assert_eq!(lengths, [2, 1, 1, 1, 3]);
    }

    /// A loopback receiver (reads time out after 5 s) and a burst sender connected to it.
    fn loopback_pair() -> (UdpSocket, BurstSender) {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        receiver
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let sender = BurstSender::connect(receiver.local_addr().unwrap()).unwrap();
        (receiver, sender)
    }

    #[test]
    fn a_burst_arrives_whole_and_in_order_over_udp() {
        let (receiver, sender) = loopback_pair();
        let mut sender = sender.without_segmenting();
        // More than one sendmmsg vector's worth, each datagram distinct.
        let owned: Vec<Vec<u8>> = (0..1_500u32)
            .map(|n| {
                let mut datagram = n.to_le_bytes().to_vec();
                datagram.resize(16 + (n as usize % 64), n as u8);
                datagram
            })
            .collect();
        let burst: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        // Loopback delivers synchronously into the receive buffer; send in pieces small enough
        // for the default buffer and read each piece back.
        for piece in burst.chunks(100) {
            assert_eq!(sender.send(piece).unwrap(), piece.len());
            for expected in piece {
                let mut buffer = [0u8; 128];
                let len = receiver.recv(&mut buffer).unwrap();
                assert_eq!(&buffer[..len], *expected);
            }
        }
        assert_eq!(sender.send(&[]).unwrap(), 0);
    }

    /// Distinct datagrams of `size` bytes, numbered from `first`.
    fn numbered(first: u32, count: u32, size: usize) -> Vec<Vec<u8>> {
        (first..first + count)
            .map(|n| {
                let mut datagram = vec![n as u8; size];
                datagram[..4].copy_from_slice(&n.to_le_bytes());
                datagram
            })
            .collect()
    }

    #[test]
    fn runs_of_one_size_go_out_as_gso_sends_and_arrive_as_datagrams() {
        let (receiver, mut sender) = loopback_pair();
        // A Merkle set's 32 data and 32 coding shreds; a run longer than one GSO send (64
        // segments); one that the 64 KiB limit splits (60 × 1,228 bytes); runs of one datagram.
        let pieces = [
            [numbered(0, 32, 1_203), numbered(32, 32, 1_228)].concat(),
            numbered(64, 70, 200),
            numbered(134, 60, 1_228),
            [
                numbered(194, 1, 90),
                numbered(195, 2, 91),
                numbered(197, 1, 92),
            ]
            .concat(),
        ];
        for piece in &pieces {
            let burst: Vec<&[u8]> = piece.iter().map(Vec::as_slice).collect();
            assert_eq!(sender.send(&burst).unwrap(), burst.len());
            for expected in &burst {
                let mut buffer = [0u8; 2_048];
                let len = receiver.recv(&mut buffer).unwrap();
                assert_eq!(&buffer[..len], *expected);
            }
        }
        assert!(sender.segmenting(), "loopback takes UDP GSO (Linux ≥ 4.18)");
    }
}
