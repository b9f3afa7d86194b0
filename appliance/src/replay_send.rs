//! The replay's burst sender: one `sendmmsg(2)` per FEC set, so a replayed set reaches the
//! receive path within microseconds, as a leader's broadcast does (`appliance run
//! --replay-burst`), instead of one `sendto` per shred.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// Most datagrams handed to one `sendmmsg` call (the kernel's `UIO_MAXIOV`).
const MAX_BATCH: usize = 1_024;

/// A connected UDP socket and the `sendmmsg` argument arrays, reused for every burst.
pub struct BurstSender {
    socket: UdpSocket,
    iovecs: Vec<libc::iovec>,
    headers: Vec<libc::mmsghdr>,
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
        })
    }

    /// Sends every datagram of `burst`, in order, with as few `sendmmsg` calls as the kernel
    /// allows (one when it takes them all); returns how many went out.
    pub fn send(&mut self, burst: &[&[u8]]) -> io::Result<usize> {
        let mut sent = 0;
        while sent < burst.len() {
            let chunk = &burst[sent..burst.len().min(sent + MAX_BATCH)];
            let accepted = self.sendmmsg(chunk)?;
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

    fn sendmmsg(&mut self, chunk: &[&[u8]]) -> io::Result<usize> {
        self.iovecs.clear();
        self.iovecs.extend(chunk.iter().map(|datagram| libc::iovec {
            iov_base: datagram.as_ptr().cast_mut().cast(),
            iov_len: datagram.len(),
        }));
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

    #[test]
    fn a_burst_arrives_whole_and_in_order_over_udp() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        receiver
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut sender = BurstSender::connect(receiver.local_addr().unwrap()).unwrap();
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
}
