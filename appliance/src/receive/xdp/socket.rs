//! One AF_XDP socket bound to one queue of one interface, with its own UMEM, fill ring and RX
//! ring (`Documentation/networking/af_xdp.rst`), implementing [`ShredSource`].
//!
//! Sizes: `FRAMES` = 4,096 chunks of 2,048 bytes (8 MiB of UMEM per queue, pinned: the process
//! needs CAP_IPC_LOCK or a memlock limit above it), a fill ring with room for every frame twice
//! over, an RX ring of 2,048 descriptors. Every frame is always in exactly one place: on the fill ring, in
//! the kernel, or on the RX ring. A receive call copies each ready frame's UDP payload into the
//! batch and puts the frame straight back on the fill ring (re-filling before any wait, so the
//! kernel never starves for frames while the thread sleeps); the fill ring can always take it
//! because it is twice as large as the UMEM.
//!
//! The completion ring is created because bind requires it; with no TX ring nothing uses it.
#![deny(unsafe_op_in_unsafe_fn)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use super::XdpError;
use super::ring::{FillRing, Mapping, RingLayout, RxRing};
use crate::handoff::SLOT_BYTES;
use crate::receive::frame;
use crate::receive::sockopt::{self, SO_BUSY_POLL, SO_BUSY_POLL_BUDGET, SO_PREFER_BUSY_POLL};
use crate::receive::{DropCounts, DropReason, ReceiveError, RxBatch, ShredSource, unix_nanos};

/// UMEM chunks per socket.
pub const FRAMES: u32 = 4096;
/// Bytes per UMEM chunk (`XDP_UMEM_MIN_CHUNK_SIZE`, a power of two so masking finds a frame's
/// start in aligned mode).
pub const FRAME_BYTES: u32 = 2048;
/// Fill ring descriptors: twice the frames. The kernel publishes its consumer index lazily
/// (`xskq_cons_release` only moves a cached copy; `__xskq_cons_peek` publishes it when the
/// cache runs dry), so frames it has already taken can still count as occupying the ring. With
/// room for every frame twice over, a returned frame always fits.
pub const FILL_RING_SIZE: u32 = 2 * FRAMES;
/// RX ring descriptors.
pub const RX_RING_SIZE: u32 = 2048;
/// Completion ring descriptors (required by bind, unused without TX).
const COMPLETION_RING_SIZE: u32 = 64;
/// How long one receive call waits for the first frame.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// `SO_BUSY_POLL` microseconds and `SO_BUSY_POLL_BUDGET` packets for the busy-polling option.
const BUSY_POLL_MICROSECONDS: libc::c_int = 50;
const BUSY_POLL_BUDGET: libc::c_int = 64;

const _: () = assert!(FRAMES.is_power_of_two() && RX_RING_SIZE.is_power_of_two());
const _: () = assert!(FILL_RING_SIZE >= 2 * FRAMES && FILL_RING_SIZE.is_power_of_two());
const _: () = assert!(FRAME_BYTES.is_power_of_two() && FRAME_BYTES >= 2048);

/// How the socket was bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindMode {
    /// The NIC's DMA lands in the UMEM (drivers with AF_XDP zero-copy support).
    ZeroCopy,
    /// The kernel copies each frame into the UMEM (any driver, including veth and generic XDP).
    Copy,
}

impl BindMode {
    pub fn label(self) -> &'static str {
        match self {
            BindMode::ZeroCopy => "zerocopy",
            BindMode::Copy => "copy",
        }
    }

    fn flag(self) -> u16 {
        match self {
            BindMode::ZeroCopy => libc::XDP_ZEROCOPY,
            BindMode::Copy => libc::XDP_COPY,
        }
    }
}

/// An AF_XDP socket receiving one queue.
pub struct XskSocket {
    // Field order is drop order: the socket closes (releasing the UMEM and rings in the kernel)
    // before the mappings it used are unmapped. The rings point into their mappings.
    fd: OwnedFd,
    rx: RxRing,
    fill: FillRing,
    _rx_mapping: Mapping,
    _fill_mapping: Mapping,
    _completion_mapping: Mapping,
    umem: Mapping,
    mode: BindMode,
    busy_poll: bool,
    /// Frames read, to go back on the fill ring (capacity FRAMES, reused).
    returning: Vec<u64>,
    /// Drops seen in user space (bad frames); kernel counts are added on read.
    user_drops: DropCounts,
}

// SAFETY: the raw pointers in the rings point into mappings owned by this same struct, which
// moves with them; nothing else aliases them, and all access goes through `&mut self` (or
// `&self` for atomic loads), so sending the whole socket to its receive thread is sound.
unsafe impl Send for XskSocket {}

impl XskSocket {
    /// Opens a socket on `ifindex`/`queue`, bound in `mode`.
    pub fn open(
        ifindex: u32,
        queue: u32,
        mode: BindMode,
        busy_poll: bool,
    ) -> Result<Self, XdpError> {
        // SAFETY: plain socket(2) call; the result is checked and owned at once.
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(XdpError::Socket(io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let umem = Mapping::anonymous((FRAMES * FRAME_BYTES) as usize).map_err(XdpError::Umem)?;
        let registration = libc::xdp_umem_reg {
            addr: umem.base() as u64,
            len: umem.len() as u64,
            chunk_size: FRAME_BYTES,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        let set = |name, value: &libc::c_int, ring: &'static str| {
            sockopt::set(raw, libc::SOL_XDP, name, value)
                .map_err(|error| XdpError::RingSetup { ring, error })
        };
        sockopt::set(raw, libc::SOL_XDP, libc::XDP_UMEM_REG, &registration)
            .map_err(XdpError::UmemRegister)?;
        set(
            libc::XDP_UMEM_FILL_RING,
            &(FILL_RING_SIZE as libc::c_int),
            "fill",
        )?;
        set(
            libc::XDP_UMEM_COMPLETION_RING,
            &(COMPLETION_RING_SIZE as libc::c_int),
            "completion",
        )?;
        set(libc::XDP_RX_RING, &(RX_RING_SIZE as libc::c_int), "rx")?;
        let (offsets, len) =
            sockopt::get::<libc::xdp_mmap_offsets>(raw, libc::SOL_XDP, libc::XDP_MMAP_OFFSETS)
                .map_err(XdpError::MmapOffsets)?;
        if len < std::mem::size_of::<libc::xdp_mmap_offsets>() {
            return Err(XdpError::MmapOffsets(io::Error::other(
                "kernel without ring flags (before 5.4)",
            )));
        }
        let layout = |ring: &libc::xdp_ring_offset, size, desc_bytes| RingLayout {
            producer: ring.producer,
            consumer: ring.consumer,
            flags: ring.flags,
            desc: ring.desc,
            size,
            desc_bytes,
        };
        let rx_layout = layout(&offsets.rx, RX_RING_SIZE, 16);
        let fill_layout = layout(&offsets.fr, FILL_RING_SIZE, 8);
        let completion_layout = layout(&offsets.cr, COMPLETION_RING_SIZE, 8);
        let map = |layout: &RingLayout, offset: u64| {
            Mapping::ring(raw, layout.map_len(), offset).map_err(XdpError::RingMap)
        };
        let rx_mapping = map(&rx_layout, libc::XDP_PGOFF_RX_RING as u64)?;
        let fill_mapping = map(&fill_layout, libc::XDP_UMEM_PGOFF_FILL_RING)?;
        let completion_mapping = map(&completion_layout, libc::XDP_UMEM_PGOFF_COMPLETION_RING)?;
        // SAFETY: each mapping is the ring the layout describes (offsets from the kernel, the
        // sizes we set), and both are stored in the same struct, mapping dropped after ring.
        let rx = unsafe { RxRing::new(&rx_mapping, &rx_layout) };
        // SAFETY: as above.
        let mut fill = unsafe { FillRing::new(&fill_mapping, &fill_layout) };
        let filled = fill.fill(
            (0..FRAMES).map(|frame| u64::from(frame * FRAME_BYTES)),
            FRAMES,
        );
        debug_assert_eq!(filled, FRAMES);
        if busy_poll {
            enable_busy_poll(raw);
        }
        bind(raw, ifindex, queue, mode)?;
        Ok(Self {
            fd,
            rx,
            fill,
            _rx_mapping: rx_mapping,
            _fill_mapping: fill_mapping,
            _completion_mapping: completion_mapping,
            umem,
            mode,
            busy_poll,
            returning: Vec::with_capacity(FRAMES as usize),
            user_drops: DropCounts::default(),
        })
    }

    pub fn mode(&self) -> BindMode {
        self.mode
    }

    /// The socket's fd, the value of its XSKMAP entry.
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Waits for frames: `poll(2)` (sleeps), or spinning on the ring with wakeup calls when
    /// busy polling. Returns how many descriptors are ready (at most `max`).
    fn wait(&mut self, max: u32) -> Result<u32, ReceiveError> {
        let deadline = Instant::now() + POLL_INTERVAL;
        loop {
            let ready = self.rx.available(max);
            if ready > 0 || Instant::now() >= deadline {
                return Ok(ready);
            }
            if self.busy_poll {
                // recvfrom drives the driver's NAPI loop under SO_PREFER_BUSY_POLL; without
                // it, this is a cheap wakeup.
                self.kick();
                std::hint::spin_loop();
                continue;
            }
            let mut poll = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let timeout = deadline.saturating_duration_since(Instant::now());
            // SAFETY: one valid pollfd, for the duration of the call.
            let result = unsafe { libc::poll(&mut poll, 1, timeout.as_millis() as libc::c_int) };
            if result < 0 {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(ReceiveError::Poll(error));
                }
            }
        }
    }

    /// Asks the kernel to process the rings (`recvfrom` with no buffer, non-blocking).
    fn kick(&self) {
        // SAFETY: a zero-length receive with null buffers is the documented AF_XDP wakeup; it
        // writes nothing.
        unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
        }
    }

    /// The frame a descriptor points at, if it lies inside the UMEM.
    fn frame(&self, addr: u64, len: u32) -> Option<&[u8]> {
        let start = usize::try_from(addr).ok()?;
        let end = start.checked_add(len as usize)?;
        if end > self.umem.len() {
            return None;
        }
        // SAFETY: [start, end) is inside the UMEM mapping (checked above). The kernel handed
        // this frame to us through the RX ring and does not write it again until we put it back
        // on the fill ring, which happens after the caller has copied out of this slice.
        Some(unsafe { std::slice::from_raw_parts(self.umem.base().add(start), len as usize) })
    }
}

impl ShredSource for XskSocket {
    fn receive(&mut self, batch: &mut RxBatch) -> Result<(), ReceiveError> {
        batch.clear();
        let ready = self.wait(batch.capacity() as u32)?;
        if ready == 0 {
            return Ok(());
        }
        // Copy mode has no per-frame kernel timestamp: the batch is stamped when it is read.
        let rx_ns = unix_nanos();
        for index in 0..ready {
            let desc = self.rx.read(index);
            self.returning.push(desc.addr & !u64::from(FRAME_BYTES - 1));
            let Some(frame) = self.frame(desc.addr, desc.len) else {
                self.user_drops.add(DropReason::BadFrame, 1);
                continue;
            };
            match frame::udp_payload(frame) {
                Ok((payload, _port)) if payload.len() <= SLOT_BYTES => {
                    let pushed = batch.push(payload, rx_ns);
                    debug_assert!(pushed, "ready is capped at the batch capacity");
                }
                Ok(_) => self.user_drops.add(DropReason::BadFrame, 1),
                Err(error) => {
                    tracing::debug!(reason = error.label(), "redirected frame dropped");
                    self.user_drops.add(DropReason::BadFrame, 1);
                }
            }
        }
        self.rx.release(ready);
        // Frames the ring cannot take now (not expected, see FILL_RING_SIZE) wait for the next
        // call; `returning` never holds more than FRAMES, its capacity.
        let returned = self.fill.fill(self.returning.iter().copied(), u32::MAX);
        self.returning.drain(..returned as usize);
        if self.fill.needs_wakeup() {
            self.kick();
        }
        Ok(())
    }

    fn drops(&mut self) -> DropCounts {
        let mut drops = self.user_drops;
        if let Ok((stats, _)) = sockopt::get::<libc::xdp_statistics>(
            self.fd.as_raw_fd(),
            libc::SOL_XDP,
            libc::XDP_STATISTICS,
        ) {
            drops.set(DropReason::RingFull, stats.rx_ring_full);
            drops.set(DropReason::FillRingEmpty, stats.rx_fill_ring_empty_descs);
            drops.set(DropReason::InvalidDescriptor, stats.rx_invalid_descs);
            drops.set(DropReason::KernelDropped, stats.rx_dropped);
        }
        drops
    }
}

/// Binds to the queue with `XDP_USE_NEED_WAKEUP` and the mode's flag.
fn bind(fd: i32, ifindex: u32, queue: u32, mode: BindMode) -> Result<(), XdpError> {
    let address = libc::sockaddr_xdp {
        sxdp_family: libc::AF_XDP as u16,
        sxdp_flags: mode.flag() | libc::XDP_USE_NEED_WAKEUP,
        sxdp_ifindex: ifindex,
        sxdp_queue_id: queue,
        sxdp_shared_umem_fd: 0,
    };
    // SAFETY: a valid sockaddr_xdp of the size passed, read by the kernel during the call.
    let result = unsafe {
        libc::bind(
            fd,
            std::ptr::from_ref(&address).cast(),
            std::mem::size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(XdpError::Bind {
            mode: mode.label(),
            queue,
            error: io::Error::last_os_error(),
        })
    }
}

/// Best effort: the options only matter on NAPI drivers, and raising SO_BUSY_POLL above
/// `net.core.busy_read` needs CAP_NET_ADMIN.
fn enable_busy_poll(fd: i32) {
    for (name, option, value) in [
        ("SO_PREFER_BUSY_POLL", SO_PREFER_BUSY_POLL, 1),
        ("SO_BUSY_POLL", SO_BUSY_POLL, BUSY_POLL_MICROSECONDS),
        ("SO_BUSY_POLL_BUDGET", SO_BUSY_POLL_BUDGET, BUSY_POLL_BUDGET),
    ] {
        if let Err(error) = sockopt::set(fd, libc::SOL_SOCKET, option, &value) {
            tracing::warn!(option = name, %error, "busy-poll option refused; spinning anyway");
        }
    }
}
