//! The pace of replays: one budget of updates per second shared by every resuming session, so
//! that a burst of resumes never takes the CPU the live stream needs (docs/resume.md, "Many
//! resumes at once"). Reservations are taken in order (each batch books the next free moment),
//! so the resuming sessions share the budget fairly.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::recent::READ_BATCH;

/// The replay budget of a hub.
#[derive(Debug, Default)]
pub struct ReplayPace {
    /// Time one batch of [`READ_BATCH`] updates costs of the budget; 0 = unpaced.
    batch_nanos: AtomicU64,
    /// The next free moment of the budget.
    next_free: Mutex<Option<Instant>>,
}

impl ReplayPace {
    /// Replays of all sessions together send at most `updates_per_second` (0 = no limit).
    pub fn set_rate(&self, updates_per_second: u64) {
        let nanos = match updates_per_second {
            0 => 0,
            rate => (READ_BATCH as u64 * 1_000_000_000 / rate).max(1),
        };
        self.batch_nanos.store(nanos, Ordering::Relaxed);
    }

    /// The budget's cost of one batch; `None` when unpaced.
    fn batch_cost(&self) -> Option<Duration> {
        match self.batch_nanos.load(Ordering::Relaxed) {
            0 => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    /// Books the next batch at the first free moment not before now, if `may_book(moment, now)`
    /// accepts it; returns the moment.
    fn book(
        &self,
        cost: Duration,
        may_book: impl FnOnce(Instant, Instant) -> bool,
    ) -> Option<Instant> {
        let now = Instant::now();
        let mut next_free = self
            .next_free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = next_free.map_or(now, |free| free.max(now));
        may_book(at, now).then(|| {
            *next_free = Some(at + cost);
            at
        })
    }

    /// The moment the next batch may be read, booked now (`None` when unpaced).
    pub fn book_batch(&self) -> Option<Instant> {
        self.book(self.batch_cost()?, |_, _| true)
    }

    /// Books the next batch only if it may be read now (always true when unpaced).
    pub fn try_book_batch(&self) -> bool {
        let Some(cost) = self.batch_cost() else {
            return true;
        };
        self.book(cost, |at, now| at <= now).is_some()
    }

    /// Waits for this session's turn to read a batch.
    pub async fn wait_for_batch(&self) {
        if let Some(at) = self.book_batch()
            && at > Instant::now()
        {
            tokio::time::sleep_until(at.into()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn batches_are_booked_one_budget_slot_apart() {
        let pace = ReplayPace::default();
        assert_eq!(pace.book_batch(), None, "unpaced by default");
        pace.set_rate(64_000); // one batch per millisecond
        assert!(pace.try_book_batch(), "a free budget books at once");
        std::thread::sleep(Duration::from_millis(2));
        let first = pace.book_batch().unwrap();
        let booked: Vec<Instant> = (0..10).map(|_| pace.book_batch().unwrap()).collect();
        assert_eq!(booked[9] - first, Duration::from_millis(10));
        assert!(!pace.try_book_batch(), "booked ahead: not now");
        pace.set_rate(0);
        assert_eq!(pace.book_batch(), None);
        assert!(pace.try_book_batch());
    }
}
