//! The AF_XDP single-producer/single-consumer rings, over the kernel ABI of
//! `Documentation/networking/af_xdp.rst` and `include/uapi/linux/if_xdp.h`: a mapped region holds
//! a `u32` producer index, a `u32` consumer index, a `u32` flags word and a power-of-two array of
//! descriptors, at the offsets `getsockopt(XDP_MMAP_OFFSETS)` reports.
//!
//! Indices run freely (wrapping `u32`); slot `i` is `desc[i & (size - 1)]`. The side that writes
//! descriptors publishes them with a store-release of its index after writing them, and the other
//! side reads that index with a load-acquire before reading the descriptors (the kernel pairs
//! these with `smp_load_acquire` / `smp_store_release` in `net/xdp/xsk_queue.h`). We are the
//! consumer of the RX ring and the producer of the fill ring; we never use TX or completion.
//!
//! Every pointer here points into a mapping owned by [`Mapping`]; a ring never outlives the
//! mapping it was cut from (both live in the same socket struct, dropped together).
#![deny(unsafe_op_in_unsafe_fn)]

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};

/// One `mmap`ed region, unmapped on drop.
pub struct Mapping {
    base: *mut u8,
    len: usize,
}

impl Mapping {
    /// Maps `len` bytes of `fd` at page offset `offset` (a ring), shared with the kernel.
    pub fn ring(fd: i32, len: usize, offset: u64) -> io::Result<Self> {
        // SAFETY: a fresh shared mapping of a ring the kernel created for `fd`; the kernel checks
        // `len` against the ring's size and fails the call rather than mapping past it. The
        // result is checked for MAP_FAILED before use.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                offset as libc::off_t,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            base: base.cast(),
            len,
        })
    }

    /// Maps `len` bytes of zeroed private anonymous memory (the UMEM), populated up front so the
    /// receive path takes no page faults.
    pub fn anonymous(len: usize) -> io::Result<Self> {
        // SAFETY: an anonymous mapping touches no existing memory; checked for MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            base: base.cast(),
            len,
        })
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true for a mapping that was made (mmap refuses zero lengths).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly what mmap returned, and nothing borrows the region
        // any more (rings and frames are dropped with their socket, before or with this).
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

/// The ring layout of one mapping: where its indices and descriptors are.
#[derive(Debug, Clone, Copy)]
pub struct RingLayout {
    pub producer: u64,
    pub consumer: u64,
    pub flags: u64,
    pub desc: u64,
    /// Descriptors (a power of two).
    pub size: u32,
    /// Bytes per descriptor: 16 (`struct xdp_desc`) for RX, 8 (`u64` address) for fill.
    pub desc_bytes: usize,
}

impl RingLayout {
    /// Bytes to map: the descriptor array's end.
    pub fn map_len(&self) -> usize {
        self.desc as usize + self.size as usize * self.desc_bytes
    }
}

/// The indices and descriptor array of one ring, as raw pointers into its [`Mapping`].
struct RawRing {
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    desc: *mut u8,
    mask: u32,
}

impl RawRing {
    /// # Safety
    /// `mapping` must be the mapping of a ring with this `layout` (offsets as the kernel reported
    /// them, `map_len()` bytes mapped), and must outlive the returned value.
    unsafe fn new(mapping: &Mapping, layout: &RingLayout) -> Self {
        assert!(layout.size.is_power_of_two());
        assert!(layout.map_len() <= mapping.len());
        let base = mapping.base();
        // SAFETY: the offsets are inside the mapping (checked above against map_len, which
        // includes every field); the kernel aligns the u32 indices to their cache lines.
        unsafe {
            Self {
                producer: base.add(layout.producer as usize).cast(),
                consumer: base.add(layout.consumer as usize).cast(),
                flags: base.add(layout.flags as usize).cast(),
                desc: base.add(layout.desc as usize),
                mask: layout.size - 1,
            }
        }
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: points into the live mapping (RawRing::new's contract), 4-byte aligned, and
        // the kernel only ever accesses it atomically.
        unsafe { &*self.producer }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.consumer }
    }

    fn flags(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.flags }
    }
}

/// An RX descriptor: a frame's address in the UMEM and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxDesc {
    pub addr: u64,
    pub len: u32,
}

/// The RX ring: the kernel produces descriptors of received frames, we consume them.
pub struct RxRing {
    raw: RawRing,
    cached_consumer: u32,
}

impl RxRing {
    /// # Safety
    /// As [`RawRing::new`]: `mapping` is this RX ring's mapping and outlives the ring.
    pub unsafe fn new(mapping: &Mapping, layout: &RingLayout) -> Self {
        debug_assert_eq!(layout.desc_bytes, 16);
        // SAFETY: forwarded contract.
        let raw = unsafe { RawRing::new(mapping, layout) };
        let cached_consumer = raw.consumer().load(Ordering::Relaxed);
        Self {
            raw,
            cached_consumer,
        }
    }

    /// Descriptors ready to read (at most `max`), without consuming them.
    pub fn available(&self, max: u32) -> u32 {
        let producer = self.raw.producer().load(Ordering::Acquire);
        producer.wrapping_sub(self.cached_consumer).min(max)
    }

    /// The `n`-th ready descriptor; `n` < [`Self::available`].
    pub fn read(&self, n: u32) -> RxDesc {
        let slot = (self.cached_consumer.wrapping_add(n) & self.raw.mask) as usize;
        // SAFETY: `slot` ≤ mask, inside the descriptor array; the producer's store-release
        // (observed by `available`'s load-acquire) made the descriptor's bytes visible, and the
        // kernel does not rewrite a slot before we advance the consumer index past it.
        // `struct xdp_desc` is `{ u64 addr; u32 len; u32 options; }`, 8-byte aligned.
        let desc = unsafe { self.raw.desc.add(slot * 16).cast::<libc::xdp_desc>().read() };
        RxDesc {
            addr: desc.addr,
            len: desc.len,
        }
    }

    /// Hands `n` read descriptors back to the kernel.
    pub fn release(&mut self, n: u32) {
        self.cached_consumer = self.cached_consumer.wrapping_add(n);
        self.raw
            .consumer()
            .store(self.cached_consumer, Ordering::Release);
    }
}

/// The fill ring: we produce addresses of free frames, the kernel consumes them for RX.
pub struct FillRing {
    raw: RawRing,
    cached_producer: u32,
    size: u32,
}

impl FillRing {
    /// # Safety
    /// As [`RawRing::new`]: `mapping` is this fill ring's mapping and outlives the ring.
    pub unsafe fn new(mapping: &Mapping, layout: &RingLayout) -> Self {
        debug_assert_eq!(layout.desc_bytes, 8);
        // SAFETY: forwarded contract.
        let raw = unsafe { RawRing::new(mapping, layout) };
        let cached_producer = raw.producer().load(Ordering::Relaxed);
        Self {
            raw,
            cached_producer,
            size: layout.size,
        }
    }

    /// Free slots.
    pub fn free(&self) -> u32 {
        let consumer = self.raw.consumer().load(Ordering::Acquire);
        self.size - self.cached_producer.wrapping_sub(consumer)
    }

    /// Writes `addrs` (at most [`Self::free`] of them) and publishes them; returns how many.
    pub fn fill(&mut self, addrs: impl IntoIterator<Item = u64>, max: u32) -> u32 {
        let room = self.free().min(max);
        let mut written = 0;
        for addr in addrs.into_iter().take(room as usize) {
            let slot = (self.cached_producer.wrapping_add(written) & self.raw.mask) as usize;
            // SAFETY: `slot` ≤ mask, inside the array; the slot is free (the kernel's consumer
            // index, loaded with acquire in `free`, is past it), so the kernel does not read it
            // until the store-release below publishes it.
            unsafe { self.raw.desc.add(slot * 8).cast::<u64>().write(addr) };
            written += 1;
        }
        self.cached_producer = self.cached_producer.wrapping_add(written);
        self.raw
            .producer()
            .store(self.cached_producer, Ordering::Release);
        written
    }

    /// Whether the kernel asks for a wakeup (`XDP_RING_NEED_WAKEUP`) before it refills from
    /// this ring (zero-copy drivers with `XDP_USE_NEED_WAKEUP`).
    pub fn needs_wakeup(&self) -> bool {
        self.raw.flags().load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring laid out in ordinary anonymous memory, playing the kernel's side by hand.
    fn layout(size: u32, desc_bytes: usize) -> RingLayout {
        RingLayout {
            producer: 0,
            consumer: 64,
            flags: 128,
            desc: 192,
            size,
            desc_bytes,
        }
    }

    fn word(mapping: &Mapping, offset: usize) -> &AtomicU32 {
        // SAFETY: test helper; offset is one of the layout's aligned index fields.
        unsafe { &*mapping.base().add(offset).cast::<AtomicU32>() }
    }

    #[test]
    fn fill_ring_publishes_addresses_and_respects_free_space() {
        let layout = layout(4, 8);
        let mapping = Mapping::anonymous(layout.map_len()).unwrap();
        // SAFETY: the mapping has the layout's size and outlives the ring.
        let mut fill = unsafe { FillRing::new(&mapping, &layout) };
        assert_eq!(fill.free(), 4);
        assert_eq!(fill.fill([10, 20, 30, 40, 50], 8), 4);
        assert_eq!(word(&mapping, 0).load(Ordering::Acquire), 4);
        assert_eq!(fill.free(), 0);
        // The "kernel" consumes two; the indices wrap past the array.
        word(&mapping, 64).store(2, Ordering::Release);
        assert_eq!(fill.fill([60, 70, 80], 8), 2);
        // SAFETY: reading the descriptor array of the test mapping.
        let slots: Vec<u64> = (0..4)
            .map(|slot| unsafe { mapping.base().add(192 + slot * 8).cast::<u64>().read() })
            .collect();
        assert_eq!(slots, vec![60, 70, 30, 40]);
        assert!(!fill.needs_wakeup());
        word(&mapping, 128).store(libc::XDP_RING_NEED_WAKEUP, Ordering::Relaxed);
        assert!(fill.needs_wakeup());
    }

    #[test]
    fn rx_ring_reads_what_the_producer_published_and_wraps() {
        let layout = layout(2, 16);
        let mapping = Mapping::anonymous(layout.map_len()).unwrap();
        // SAFETY: the mapping has the layout's size and outlives the ring.
        let mut rx = unsafe { RxRing::new(&mapping, &layout) };
        assert_eq!(rx.available(8), 0);
        let write = |slot: usize, addr: u64, len: u32| {
            // SAFETY: writing a descriptor of the test mapping.
            unsafe {
                mapping
                    .base()
                    .add(192 + slot * 16)
                    .cast::<libc::xdp_desc>()
                    .write(libc::xdp_desc {
                        addr,
                        len,
                        options: 0,
                    })
            }
        };
        write(0, 4096, 60);
        write(1, 8192, 1200);
        word(&mapping, 0).store(2, Ordering::Release);
        assert_eq!(rx.available(8), 2);
        assert_eq!(rx.available(1), 1);
        assert_eq!(
            rx.read(1),
            RxDesc {
                addr: 8192,
                len: 1200
            }
        );
        rx.release(1);
        assert_eq!(word(&mapping, 64).load(Ordering::Acquire), 1);
        write(0, 0, 99);
        word(&mapping, 0).store(3, Ordering::Release);
        assert_eq!(rx.available(8), 2);
        assert_eq!(rx.read(0).addr, 8192);
        assert_eq!(rx.read(1), RxDesc { addr: 0, len: 99 });
    }
}
