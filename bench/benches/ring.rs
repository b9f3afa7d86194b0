//! Push/pop throughput of the worker rings across two threads: the lock-free SPSC ring of
//! `appliance::handoff::ring` (used through the appliance's library target)
//! against the previous design, one uncontended `Mutex` per slot (`MutexRing` below, the ring as
//! of commit 14a7f76, kept only as the baseline).
//!
//! Each measurement moves `iters` items from a producer thread to the consumer (the measuring
//! thread), both filling and reading the slots in place; a full ring makes the producer spin and
//! retry (in the appliance it would drop). Two payloads: a `u64` (the synchronisation cost
//! alone) and a 1,232-byte datagram copied in and checksummed out (what a receive thread and a
//! worker do per shred).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

use appliance::handoff::ring;

/// Slots per ring (the appliance's receive rings default to 8,192; a smaller ring keeps the
/// full/empty edges in play).
const SLOTS: usize = 1_024;
/// A shred-sized datagram.
const DATAGRAM: usize = 1_232;

/// The baseline: the previous ring, each slot behind its own mutex.
mod mutex_ring {
    use super::*;

    struct Shared<T> {
        slots: Box<[Mutex<T>]>,
        head: AtomicUsize,
        tail: AtomicUsize,
        full_drops: AtomicU64,
    }

    pub struct Producer<T> {
        shared: Arc<Shared<T>>,
    }

    pub struct Consumer<T> {
        shared: Arc<Shared<T>>,
    }

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

    impl<T> Producer<T> {
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
    }

    impl<T> Consumer<T> {
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
}

/// The two rings behind one interface.
trait Spsc<T>: Sized {
    type Producer: Send + 'static;
    type Consumer;
    fn ring(slots: usize) -> (Self::Producer, Self::Consumer);
    fn push(producer: &mut Self::Producer, fill: impl FnOnce(&mut T)) -> bool;
    fn pop<R>(consumer: &mut Self::Consumer, read: impl FnOnce(&T) -> R) -> Option<R>;
}

struct LockFree;
struct PerSlotMutex;

impl<T: Default + Send + 'static> Spsc<T> for LockFree {
    type Producer = ring::Producer<T>;
    type Consumer = ring::Consumer<T>;
    fn ring(slots: usize) -> (Self::Producer, Self::Consumer) {
        ring::ring(slots)
    }
    fn push(producer: &mut Self::Producer, fill: impl FnOnce(&mut T)) -> bool {
        producer.push_with(fill)
    }
    fn pop<R>(consumer: &mut Self::Consumer, read: impl FnOnce(&T) -> R) -> Option<R> {
        consumer.pop_with(read)
    }
}

impl<T: Default + Send + 'static> Spsc<T> for PerSlotMutex {
    type Producer = mutex_ring::Producer<T>;
    type Consumer = mutex_ring::Consumer<T>;
    fn ring(slots: usize) -> (Self::Producer, Self::Consumer) {
        mutex_ring::ring(slots)
    }
    fn push(producer: &mut Self::Producer, fill: impl FnOnce(&mut T)) -> bool {
        producer.push_with(fill)
    }
    fn pop<R>(consumer: &mut Self::Consumer, read: impl FnOnce(&T) -> R) -> Option<R> {
        consumer.pop_with(read)
    }
}

/// A shred-sized slot, as the receive rings hold.
struct Datagram(Box<[u8; DATAGRAM]>);

impl Default for Datagram {
    fn default() -> Self {
        Self(Box::new([0; DATAGRAM]))
    }
}

/// Moves `iters` items across threads; the time from the first push to the last pop.
fn transfer<R, T, F, G>(iters: u64, fill: F, read: G) -> Duration
where
    R: Spsc<T>,
    F: Fn(&mut T, u64) + Send + 'static,
    G: Fn(&T) -> u64,
{
    let (mut producer, mut consumer) = R::ring(SLOTS);
    let start = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut next = 0u64;
        while next < iters {
            if R::push(&mut producer, |slot| fill(slot, next)) {
                next += 1;
            } else {
                std::hint::spin_loop();
            }
        }
    });
    let mut taken = 0u64;
    let mut check = 0u64;
    while taken < iters {
        match R::pop(&mut consumer, &read) {
            Some(value) => {
                check = check.wrapping_add(value);
                taken += 1;
            }
            None => std::hint::spin_loop(),
        }
    }
    let elapsed = start.elapsed();
    let _ = writer.join();
    // Every item arrived once, intact (the sum of 0..iters).
    assert_eq!(check, iters.wrapping_mul(iters.wrapping_sub(1)) / 2);
    elapsed
}

fn fill_u64(slot: &mut u64, n: u64) {
    *slot = n;
}

fn read_u64(slot: &u64) -> u64 {
    *slot
}

fn fill_datagram(slot: &mut Datagram, n: u64) {
    slot.0[..8].copy_from_slice(&n.to_le_bytes());
    slot.0[8..].fill(n as u8);
}

fn read_datagram(slot: &Datagram) -> u64 {
    let mut n = [0u8; 8];
    n.copy_from_slice(&slot.0[..8]);
    let n = u64::from_le_bytes(n);
    // Touch the whole payload, as the worker's parser does.
    let sum = slot.0[8..].iter().fold(0u8, |acc, &b| acc.wrapping_add(b));
    std::hint::black_box(sum);
    n
}

fn ring_throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("ring_spsc");
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::new("u64", "lock_free"), |b| {
        b.iter_custom(|iters| transfer::<LockFree, u64, _, _>(iters, fill_u64, read_u64));
    });
    group.bench_function(BenchmarkId::new("u64", "mutex_per_slot"), |b| {
        b.iter_custom(|iters| transfer::<PerSlotMutex, u64, _, _>(iters, fill_u64, read_u64));
    });
    group.bench_function(BenchmarkId::new("datagram_1232", "lock_free"), |b| {
        b.iter_custom(|iters| {
            transfer::<LockFree, Datagram, _, _>(iters, fill_datagram, read_datagram)
        });
    });
    group.bench_function(BenchmarkId::new("datagram_1232", "mutex_per_slot"), |b| {
        b.iter_custom(|iters| {
            transfer::<PerSlotMutex, Datagram, _, _>(iters, fill_datagram, read_datagram)
        });
    });
    group.finish();
}

criterion_group!(benches, ring_throughput);
criterion_main!(benches);
