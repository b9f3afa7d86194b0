//! The park/unpark handshake between an idle worker and the threads that feed its rings.
//!
//! A worker with nothing to do announces it is about to park ([`Sleeper::park`] sets `parked`),
//! re-checks its rings, and parks with a timeout (a safety net, never needed for correctness). A
//! producer, after publishing into one of that worker's rings, calls [`Waker::wake`]: it reads
//! `parked` and unparks the worker only when it is set, so a busy worker costs its producers a
//! fence and a load, never a system call. Producers call `wake` per batch, not per item: a receive
//! thread right after a worker's first datagram of the batch and, if more followed, once more at
//! the end; a worker once after its pass over one of its rings.
//!
//! Why no wakeup is lost (a Dekker-style handshake; both sides have a `SeqCst` fence between
//! their store and their load):
//!
//! ```text
//!  worker (Sleeper::park)                 producer (push, then Waker::wake)
//!  parked.store(true)                     ring tail.store(n + 1)      (Release, in the ring)
//!  fence(SeqCst)                          fence(SeqCst)
//!  any ring non-empty? (tail loads)       parked.load() → swap(false) → unpark
//! ```
//!
//! The two fences are totally ordered. If the worker's fence comes first, the producer's load
//! sees `parked == true` and unparks; if the producer's fence comes first, the worker's re-check
//! sees the new tail and does not park. `std::thread::park` keeps an unpark that arrives before
//! the park as a token, so the unpark may land anywhere after the announcement. The `swap` makes
//! concurrent producers issue at most one unpark per park.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::Duration;

struct State {
    /// Set by the worker just before it parks, cleared by the producer that unparks it (or by
    /// the worker when it resumes).
    parked: AtomicBool,
    /// The worker's thread, registered at its first park.
    thread: OnceLock<Thread>,
    /// Unparks issued by producers.
    unparks: AtomicU64,
}

/// The producers' side: cloned into every thread that pushes into the worker's rings.
#[derive(Clone)]
pub struct Waker {
    state: Arc<State>,
}

/// The worker's side; one per worker (not `Clone`). It parks the thread that calls
/// [`Sleeper::park`] first, so it must stay on that thread.
pub struct Sleeper {
    state: Arc<State>,
}

/// How a call to [`Sleeper::park`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParkOutcome {
    /// Work showed up between the announcement and the park: not parked.
    Skipped,
    /// Parked and a producer unparked it.
    Woken,
    /// Parked and the timeout (or a spurious wakeup) ended it with no producer's unpark.
    TimedOut,
}

/// A connected pair for one worker.
pub fn wake_pair() -> (Sleeper, Waker) {
    let state = Arc::new(State {
        parked: AtomicBool::new(false),
        thread: OnceLock::new(),
        unparks: AtomicU64::new(0),
    });
    (
        Sleeper {
            state: Arc::clone(&state),
        },
        Waker { state },
    )
}

impl Waker {
    /// Unparks the worker if it announced parking; call after publishing into its rings. `true`
    /// when it issued the unpark.
    pub fn wake(&self) -> bool {
        // Orders the ring's tail store before the `parked` load (see the module doc).
        fence(Ordering::SeqCst);
        let state = &*self.state;
        // The plain load keeps the busy case free of a locked instruction; the swap elects one
        // producer to unpark. Acquire pairs with the worker's Release store of `parked`, so its
        // thread registration is visible here.
        if !state.parked.load(Ordering::Relaxed) || !state.parked.swap(false, Ordering::Acquire) {
            return false;
        }
        // Counted before the unpark, which synchronizes with the park: the woken worker sees it.
        state.unparks.fetch_add(1, Ordering::Relaxed);
        if let Some(thread) = state.thread.get() {
            thread.unpark();
        }
        true
    }
}

impl Sleeper {
    /// Announces the park, re-checks `has_work` and parks for at most `timeout` unless work
    /// showed up. `has_work` must look at every ring whose producers hold this sleeper's waker.
    pub fn park(&self, timeout: Duration, has_work: impl FnOnce() -> bool) -> ParkOutcome {
        let state = &*self.state;
        state.thread.get_or_init(std::thread::current);
        state.parked.store(true, Ordering::Release);
        // Orders the `parked` store before the rings' tail loads (see the module doc).
        fence(Ordering::SeqCst);
        if has_work() {
            state.parked.store(false, Ordering::Relaxed);
            return ParkOutcome::Skipped;
        }
        std::thread::park_timeout(timeout);
        // Still set: no producer elected itself to unpark us (a timeout or a spurious wakeup).
        if state.parked.swap(false, Ordering::Relaxed) {
            ParkOutcome::TimedOut
        } else {
            ParkOutcome::Woken
        }
    }

    /// Unparks producers issued for this worker, ever.
    pub fn unparks(&self) -> u64 {
        self.state.unparks.load(Ordering::Relaxed)
    }
}

/// The bit of worker `index` in a set of workers to wake; every bit past the 64th worker (the
/// configured maximum is 64).
pub fn worker_bit(index: usize) -> u64 {
    1u64.checked_shl(index as u32).unwrap_or(u64::MAX)
}

/// Wakes every worker of `touched` (bits from [`worker_bit`]), by index into `wakers`.
pub fn wake_touched(touched: u64, wakers: &[Waker]) {
    if touched == 0 {
        return;
    }
    for (index, waker) in wakers.iter().enumerate() {
        if touched & worker_bit(index) != 0 {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_worker_that_did_not_announce_costs_no_unpark() {
        let (sleeper, waker) = wake_pair();
        for _ in 0..1_000 {
            assert!(!waker.wake());
        }
        assert_eq!(sleeper.unparks(), 0);
    }

    #[test]
    fn work_found_at_the_re_check_skips_the_park() {
        let (sleeper, waker) = wake_pair();
        let outcome = sleeper.park(Duration::from_secs(3_600), || true);
        assert_eq!(outcome, ParkOutcome::Skipped);
        // The announcement was withdrawn: producers do not unpark.
        assert!(!waker.wake());
    }

    #[test]
    fn an_unpark_before_the_park_is_not_lost() {
        let (sleeper, waker) = wake_pair();
        // A producer publishes between the re-check and the park: its unpark is kept as the
        // thread's token, so the park returns at once instead of after an hour.
        let outcome = sleeper.park(Duration::from_secs(3_600), || {
            assert!(waker.wake(), "the announcement is visible to the producer");
            false
        });
        assert_eq!(outcome, ParkOutcome::Woken);
        assert_eq!(sleeper.unparks(), 1);
    }

    #[test]
    fn a_park_with_no_producer_times_out() {
        let (sleeper, waker) = wake_pair();
        let outcome = sleeper.park(Duration::from_millis(1), || false);
        // A spurious wakeup also reports TimedOut; either way no producer unparked.
        assert_eq!(outcome, ParkOutcome::TimedOut);
        assert_eq!(sleeper.unparks(), 0);
        assert!(!waker.wake(), "the announcement was withdrawn");
    }
}
