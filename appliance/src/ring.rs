//! A bounded single-producer single-consumer ring of preallocated slots, filled and read in place.
//!
//! The slots are built once (`T::default()`), so neither side allocates per item: the producer
//! writes the tail slot with [`Producer::push_with`] (it fails at once when the ring is full: the
//! caller drops and counts, it never waits), the consumer reads the head slot with
//! [`Consumer::pop_with`]. Head and tail are atomics; each slot sits behind its own mutex only so
//! that the code stays safe Rust: producer and consumer never touch the same slot at the same
//! time, so the lock is never contended (one uncontended compare-and-swap per item).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

struct Shared<T> {
    slots: Box<[Mutex<T>]>,
    /// Items taken by the consumer, ever.
    head: AtomicUsize,
    /// Items published by the producer, ever.
    tail: AtomicUsize,
    /// Items refused because the ring was full.
    full_drops: AtomicU64,
}

/// The writing end; one owner.
pub struct Producer<T> {
    shared: Arc<Shared<T>>,
}

/// The reading end; one owner.
pub struct Consumer<T> {
    shared: Arc<Shared<T>>,
}

/// A read-only view for metrics (occupancy, drops).
#[derive(Clone)]
pub struct RingStats<T> {
    shared: Arc<Shared<T>>,
}

/// A ring of `capacity` slots (at least 1).
pub fn ring<T: Default>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let slots = (0..capacity.max(1))
        .map(|_| Mutex::new(T::default()))
        .collect();
    let shared = Arc::new(Shared {
        slots,
        head: AtomicUsize::new(0),
        tail: AtomicUsize::new(0),
        full_drops: AtomicU64::new(0),
    });
    (
        Producer {
            shared: Arc::clone(&shared),
        },
        Consumer { shared },
    )
}

impl<T> Shared<T> {
    fn len(&self) -> usize {
        let tail = self.tail.load(Ordering::Acquire);
        let head = self.head.load(Ordering::Acquire);
        tail.wrapping_sub(head)
    }
}

impl<T> Producer<T> {
    /// Fills the next slot with `fill` and publishes it; `false` (counted as a drop) when the ring
    /// is full.
    pub fn push_with(&mut self, fill: impl FnOnce(&mut T)) -> bool {
        let shared = &*self.shared;
        let tail = shared.tail.load(Ordering::Relaxed);
        let head = shared.head.load(Ordering::Acquire);
        if tail.wrapping_sub(head) >= shared.slots.len() {
            shared.full_drops.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let slot = &shared.slots[tail % shared.slots.len()];
        fill(&mut slot.lock().unwrap_or_else(PoisonError::into_inner));
        shared.tail.store(tail.wrapping_add(1), Ordering::Release);
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
        let head = shared.head.load(Ordering::Relaxed);
        let tail = shared.tail.load(Ordering::Acquire);
        if head == tail {
            return None;
        }
        let slot = &shared.slots[head % shared.slots.len()];
        let result = read(&slot.lock().unwrap_or_else(PoisonError::into_inner));
        shared.head.store(head.wrapping_add(1), Ordering::Release);
        Some(result)
    }
}

impl<T> RingStats<T> {
    /// Items waiting.
    pub fn occupancy(&self) -> usize {
        self.shared.len()
    }

    pub fn capacity(&self) -> usize {
        self.shared.slots.len()
    }

    /// Items refused because the ring was full.
    pub fn full_drops(&self) -> u64 {
        self.shared.full_drops.load(Ordering::Relaxed)
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
}
