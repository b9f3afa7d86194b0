//! A bounded lock-free single-producer single-consumer ring of preallocated slots, filled and
//! read in place.
//!
//! The slots are built once (`T::default()`), so neither side allocates per item: the producer
//! writes the tail slot with [`Producer::push_with`] (it fails at once when the ring is full: the
//! caller drops and counts, it never waits), the consumer reads the head slot with
//! [`Consumer::pop_with`].
//!
//! How it stays correct without locks:
//! - `tail` (items published, ever) is written only by the producer, `head` (items taken, ever)
//!   only by the consumer. The producer fills slot `tail % capacity` and then stores `tail + 1`
//!   with `Release`; the consumer loads `tail` with `Acquire` before reading a slot, so it sees
//!   the slot's contents. Symmetrically the consumer stores `head + 1` with `Release` after
//!   reading, and the producer loads `head` with `Acquire` before overwriting that slot.
//! - Each side keeps its own index and a cached copy of the other side's index in its handle, and
//!   reloads the shared atomic only when the cache says the ring looks full (producer) or empty
//!   (consumer): in steady state neither side touches the other's cache line per item.
//! - `head`, `tail` and the drop counter each sit on their own 128-byte line (two 64-byte lines:
//!   the adjacent-line prefetcher pairs them), so the two threads never false-share.
//! - There is exactly one [`Producer`] and one [`Consumer`] per ring: neither is `Clone`, both
//!   are `Send` (they move to their thread) but not `Sync`, and the filling/reading methods take
//!   `&mut self`. The `unsafe` blocks below rely on that and on nothing else.
//!
//! The capacity is rounded up to a power of two so a slot index is a mask, not a division.

use std::cell::{Cell, UnsafeCell};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Keeps its value on its own pair of cache lines.
#[repr(align(128))]
struct Padded<T>(T);

struct Shared<T> {
    /// Items taken by the consumer, ever (written by the consumer only).
    head: Padded<AtomicUsize>,
    /// Items published by the producer, ever (written by the producer only).
    tail: Padded<AtomicUsize>,
    /// Items refused because the ring was full (written by the producer only).
    full_drops: Padded<AtomicU64>,
    /// `slots.len() - 1`; `slots.len()` is a power of two.
    mask: usize,
    slots: Box<[UnsafeCell<T>]>,
}

// SAFETY: `Shared` is reached from two threads (one `Producer`, one `Consumer`, any number of
// `RingStats`). `RingStats` only touches the atomics. A slot is written only by the producer
// while it is outside `[head, tail)` and read only by the consumer while it is inside; the
// Release/Acquire pairs on `head` and `tail` hand each slot over, so no slot is ever accessed
// from both threads at once. `T: Send` is required because items written on one thread are read
// on the other.
unsafe impl<T: Send> Sync for Shared<T> {}

/// Makes a handle `!Sync` (and keeps it `Send`): one thread at a time drives each end.
type NotSync = PhantomData<Cell<()>>;

/// The writing end; exactly one per ring (not `Clone`, not `Sync`).
pub struct Producer<T> {
    shared: Arc<Shared<T>>,
    /// Equal to `shared.tail` (only this handle writes it).
    tail: usize,
    /// A value `shared.head` had; the true head is never behind it.
    cached_head: usize,
    _not_sync: NotSync,
}

/// The reading end; exactly one per ring (not `Clone`, not `Sync`).
pub struct Consumer<T> {
    shared: Arc<Shared<T>>,
    /// Equal to `shared.head` (only this handle writes it).
    head: usize,
    /// A value `shared.tail` had; the true tail is never behind it.
    cached_tail: usize,
    _not_sync: NotSync,
}

/// A read-only view for metrics (occupancy, drops).
pub struct RingStats<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for RingStats<T> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// A ring of at least `capacity` slots (at least 1, rounded up to a power of two).
pub fn ring<T: Default>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let size = capacity.max(1).next_power_of_two();
    let slots = (0..size).map(|_| UnsafeCell::new(T::default())).collect();
    let shared = Arc::new(Shared {
        head: Padded(AtomicUsize::new(0)),
        tail: Padded(AtomicUsize::new(0)),
        full_drops: Padded(AtomicU64::new(0)),
        mask: size - 1,
        slots,
    });
    (
        Producer {
            shared: Arc::clone(&shared),
            tail: 0,
            cached_head: 0,
            _not_sync: PhantomData,
        },
        Consumer {
            shared,
            head: 0,
            cached_tail: 0,
            _not_sync: PhantomData,
        },
    )
}

impl<T> Shared<T> {
    fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Items waiting, as seen from a third thread (a snapshot, never above the capacity).
    fn len(&self) -> usize {
        // Head first: the tail read after it is at least that head, so the difference is never
        // negative.
        let head = self.head.0.load(Ordering::Acquire);
        let tail = self.tail.0.load(Ordering::Acquire);
        tail.wrapping_sub(head).min(self.capacity())
    }
}

impl<T> Producer<T> {
    /// Fills the next slot with `fill` and publishes it; `false` (counted as a drop) when the ring
    /// is full. Never waits.
    pub fn push_with(&mut self, fill: impl FnOnce(&mut T)) -> bool {
        let shared = &*self.shared;
        let tail = self.tail;
        if tail.wrapping_sub(self.cached_head) >= shared.capacity() {
            // Acquire: the consumer's reads of the slots it freed happen before we overwrite them.
            self.cached_head = shared.head.0.load(Ordering::Acquire);
            if tail.wrapping_sub(self.cached_head) >= shared.capacity() {
                shared.full_drops.0.fetch_add(1, Ordering::Relaxed);
                return false;
            }
        }
        let cell = &shared.slots[tail & shared.mask];
        // SAFETY: slot `tail` is outside `[head, tail)`: the consumer has finished with it (its
        // `head` store that freed it was observed with Acquire above, or it was never used) and
        // will not read it before our Release store of `tail + 1` below. `&mut self` and the
        // single `Producer` (not Clone, not Sync) mean no other writer exists, so this is the
        // only reference to the slot.
        let slot = unsafe { &mut *cell.get() };
        fill(slot);
        self.tail = tail.wrapping_add(1);
        shared.tail.0.store(self.tail, Ordering::Release);
        true
    }

    pub fn stats(&self) -> RingStats<T> {
        RingStats {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Consumer<T> {
    /// Reads the oldest item in place and frees its slot; `None` when the ring is empty.
    pub fn pop_with<R>(&mut self, read: impl FnOnce(&T) -> R) -> Option<R> {
        let shared = &*self.shared;
        let head = self.head;
        if head == self.cached_tail {
            // Acquire: the producer's writes to the slots it published happen before our reads.
            self.cached_tail = shared.tail.0.load(Ordering::Acquire);
            if head == self.cached_tail {
                return None;
            }
        }
        let cell = &shared.slots[head & shared.mask];
        // SAFETY: slot `head` is inside `[head, tail)`: the producer published it with a Release
        // store of `tail` that we observed with Acquire, and it will not write it again before
        // our Release store of `head + 1` below. `&mut self` and the single `Consumer` (not
        // Clone, not Sync) mean this shared reference is the only access during `read`.
        let slot = unsafe { &*cell.get() };
        let result = read(slot);
        self.head = head.wrapping_add(1);
        shared.head.0.store(self.head, Ordering::Release);
        Some(result)
    }

    /// Whether an item is waiting (reloads the producer's index when the cache says empty).
    pub fn has_items(&mut self) -> bool {
        if self.head == self.cached_tail {
            self.cached_tail = self.shared.tail.0.load(Ordering::Acquire);
        }
        self.head != self.cached_tail
    }
}

impl<T> RingStats<T> {
    /// Items waiting.
    pub fn occupancy(&self) -> usize {
        self.shared.len()
    }

    pub fn capacity(&self) -> usize {
        self.shared.capacity()
    }

    /// Items refused because the ring was full.
    pub fn full_drops(&self) -> u64 {
        self.shared.full_drops.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_full_ring_refuses_and_counts_without_blocking() {
        let (mut producer, mut consumer) = ring::<u32>(2);
        let stats = producer.stats();
        assert!(producer.push_with(|slot| *slot = 1));
        assert!(producer.push_with(|slot| *slot = 2));
        assert!(!producer.push_with(|slot| *slot = 3));
        assert_eq!(stats.full_drops(), 1);
        assert_eq!(stats.occupancy(), 2);
        assert_eq!(consumer.pop_with(|v| *v), Some(1));
        assert!(producer.push_with(|slot| *slot = 4));
        assert_eq!(consumer.pop_with(|v| *v), Some(2));
        assert_eq!(consumer.pop_with(|v| *v), Some(4));
        assert_eq!(consumer.pop_with(|v| *v), None);
        assert_eq!(stats.occupancy(), 0);
    }

    #[test]
    fn capacity_rounds_up_to_a_power_of_two() {
        let (mut producer, _consumer) = ring::<u8>(5);
        let stats = producer.stats();
        assert_eq!(stats.capacity(), 8);
        let accepted = (0..10).filter(|_| producer.push_with(|_| {})).count();
        assert_eq!(accepted, 8);
        assert_eq!(stats.full_drops(), 2);
    }

    #[test]
    fn items_cross_threads_in_order() {
        let (mut producer, mut consumer) = ring::<u64>(8);
        let writer = std::thread::spawn(move || {
            let mut next = 0u64;
            while next < 100_000 {
                if producer.push_with(|slot| *slot = next) {
                    next += 1;
                } else {
                    std::thread::yield_now();
                }
            }
        });
        let mut expected = 0u64;
        while expected < 100_000 {
            match consumer.pop_with(|v| *v) {
                Some(value) => {
                    assert_eq!(value, expected);
                    expected += 1;
                }
                None => std::thread::yield_now(),
            }
        }
        writer.join().unwrap();
    }

    /// A slot payload whose every byte is derived from its sequence number, so a torn or stale
    /// read (a slot read before it was filled, or while being overwritten) shows up as a mismatch.
    #[derive(Default)]
    struct Stamped {
        sequence: u64,
        bytes: Vec<u8>,
    }

    fn byte_of(sequence: u64, index: usize) -> u8 {
        (sequence.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (index % 56)) as u8 ^ index as u8
    }

    #[test]
    fn stress_every_item_arrives_once_in_order_intact() {
        const ITEMS: u64 = 200_000;
        const LEN: usize = 96;
        // A small ring so the full and empty edges are hit constantly.
        let (mut producer, mut consumer) = ring::<Stamped>(16);
        let stats = producer.stats();
        let writer = std::thread::spawn(move || {
            let mut refused = 0u64;
            let mut next = 0u64;
            while next < ITEMS {
                let pushed = producer.push_with(|slot| {
                    slot.sequence = next;
                    slot.bytes.clear();
                    slot.bytes
                        .extend((0..LEN).map(|index| byte_of(next, index)));
                });
                if pushed {
                    next += 1;
                } else {
                    refused += 1;
                    std::hint::spin_loop();
                }
            }
            refused
        });
        let mut expected = 0u64;
        while expected < ITEMS {
            let read = consumer.pop_with(|slot| {
                let intact = slot.bytes.len() == LEN
                    && slot
                        .bytes
                        .iter()
                        .enumerate()
                        .all(|(index, &byte)| byte == byte_of(slot.sequence, index));
                (slot.sequence, intact)
            });
            match read {
                Some((sequence, intact)) => {
                    assert_eq!(sequence, expected, "out of order or duplicated");
                    assert!(intact, "item {sequence} torn");
                    expected += 1;
                }
                None => std::hint::spin_loop(),
            }
        }
        let refused = writer.join().unwrap();
        assert_eq!(
            consumer.pop_with(|slot| slot.sequence),
            None,
            "nothing extra"
        );
        // Every refusal was counted, and refused items were retried, not lost.
        assert_eq!(stats.full_drops(), refused);
        assert_eq!(stats.occupancy(), 0);
    }

    #[test]
    fn handles_are_send_but_not_sync_or_clone() {
        fn send<S: Send>() {}
        send::<Producer<u64>>();
        send::<Consumer<u64>>();
        fn stats_sync<S: Send + Sync>() {}
        stats_sync::<RingStats<u64>>();
        // Not Sync and not Clone: checked at compile time by the negative-impl probes below.
        trait AmbiguousIfSync<A> {
            fn probe() {}
        }
        impl<T: ?Sized> AmbiguousIfSync<()> for T {}
        struct IsSync;
        impl<T: ?Sized + Sync> AmbiguousIfSync<IsSync> for T {}
        // Compiles only while `Producer`/`Consumer` are not Sync (else the call is ambiguous).
        <Producer<u64> as AmbiguousIfSync<_>>::probe();
        <Consumer<u64> as AmbiguousIfSync<_>>::probe();
        trait AmbiguousIfClone<A> {
            fn probe() {}
        }
        impl<T: ?Sized> AmbiguousIfClone<()> for T {}
        struct IsClone;
        impl<T: Clone> AmbiguousIfClone<IsClone> for T {}
        <Producer<u64> as AmbiguousIfClone<_>>::probe();
        <Consumer<u64> as AmbiguousIfClone<_>>::probe();
    }
}
