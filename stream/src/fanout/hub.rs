//! `Hub`: the registry of started sessions, the lock-free snapshot the publisher reads, and
//! `publish` (match once, encode once, enqueue per session).
//!
//! ```text
//! session change ─ lock registry ─► new Snapshot { same index, direct ± session, stale + slot }
//!                                   └─ schedule a rebuild (coalesced, in the background)
//! rebuild ─ Index::build(all registrations) ─► Snapshot { new index, direct = newer ones }
//! publish ─ snapshot.load() (no lock) ─ view ─ candidates ─ evaluate ─ group ─► try_send
//! ```
//! A change costs O(changed sessions since the last rebuild), never O(all keys): the session goes
//! to the snapshot's `direct` list (evaluated filter by filter for each update) and its old index
//! entries are marked stale. The rebuild, O(all keys), runs on a blocking thread after a delay that
//! grows with the last rebuild's duration (at least [`REBUILD_DELAY_MIN`], four times the last
//! build), so that it coalesces bursts of changes and takes at most a fifth of a core.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use stream_proto::stream::SubscribeUpdate;
use tracing::{debug, warn};

use super::encode::EncodedUpdate;
use super::index::{Entry, Index};
use super::queue::{Delivery, Offer, QueueBounds, SessionQueue};
use super::recent::{RecentBounds, RecentBuffer};
use super::registration::{Registration, SessionId};
use crate::filter::{Filters, IndexSet, Matches, UpdateKind, UpdateView};

/// A random, non-zero 64-bit number (the standard library's per-process random hash keys, mixed
/// with the time).
fn random_numbering() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    hasher.finish().max(1)
}

/// The shortest wait before a rebuild (coalescing window).
pub const REBUILD_DELAY_MIN: Duration = Duration::from_millis(10);
/// The longest wait before a rebuild.
pub const REBUILD_DELAY_MAX: Duration = Duration::from_secs(2);

/// What the publisher reads: an index and the changes since it was built.
#[derive(Debug)]
struct Snapshot {
    index: Arc<Index>,
    /// Registrations newer than the index: evaluated directly.
    direct: Vec<Arc<Registration>>,
    /// Per index slot: the session changed or ended since the index was built.
    stale: Vec<bool>,
    /// Index slots not stale.
    live: usize,
}

impl Snapshot {
    fn new(index: Arc<Index>, direct: Vec<Arc<Registration>>, stale: Vec<bool>) -> Self {
        let live = stale.iter().filter(|stale| !**stale).count();
        Self {
            index,
            direct,
            stale,
            live,
        }
    }

    fn is_empty(&self) -> bool {
        self.direct.is_empty() && self.live == 0
    }
}

#[derive(Debug, Default)]
struct Registry {
    /// The current registration of every started session.
    current: HashMap<SessionId, Arc<Registration>>,
    version: u64,
    rebuild_pending: bool,
    last_build: Duration,
}

/// Counters of the hub (for tests, benches and metrics).
#[derive(Debug, Default)]
pub struct HubStats {
    pub rebuilds: AtomicU64,
    pub changes: AtomicU64,
}

/// The fan-out hub shared by the publisher and every session.
#[derive(Debug)]
pub struct Hub {
    bounds: QueueBounds,
    recent: RecentBuffer,
    snapshot: ArcSwap<Snapshot>,
    registry: Mutex<Registry>,
    next_session: AtomicU64,
    sessions: AtomicUsize,
    stats: HubStats,
    /// This hub's numbering of `SubscribeUpdate.sequence`: random, new with every process, so
    /// that a client (a relay) tells a restarted server's numbers from the ones it had.
    numbering: u64,
    /// The budget every resuming session's replay shares.
    replay_pace: super::pace::ReplayPace,
}

impl Hub {
    /// A hub whose sessions each queue at most `queue_capacity` updates (and the default bytes
    /// and age bounds).
    pub fn new(queue_capacity: usize) -> Arc<Self> {
        Self::with_bounds(QueueBounds::updates(queue_capacity))
    }

    /// A hub whose sessions' queues have these bounds, without a recent-slot buffer.
    pub fn with_bounds(bounds: QueueBounds) -> Arc<Self> {
        Self::with_recent(bounds, RecentBounds { slots: 0, bytes: 0 })
    }

    /// A hub whose sessions' queues have these bounds, keeping the recent updates `recent` allows
    /// (numbered, for resuming sessions).
    pub fn with_recent(bounds: QueueBounds, recent: RecentBounds) -> Arc<Self> {
        Arc::new(Self {
            bounds,
            recent: RecentBuffer::new(recent),
            snapshot: ArcSwap::from_pointee(Snapshot::new(
                Arc::new(Index::empty()),
                Vec::new(),
                Vec::new(),
            )),
            registry: Mutex::new(Registry::default()),
            next_session: AtomicU64::new(1),
            sessions: AtomicUsize::new(0),
            stats: HubStats::default(),
            numbering: random_numbering(),
            replay_pace: super::pace::ReplayPace::default(),
        })
    }

    /// The replays' shared budget (`set_rate` configures it; unpaced by default).
    pub fn replay_pace(&self) -> &super::pace::ReplayPace {
        &self.replay_pace
    }

    /// The identity of this hub's `sequence` numbers (sent as the `x-stream-numbering` response
    /// header): a number of another hub, or of this process before a restart, is not comparable.
    pub fn numbering(&self) -> u64 {
        self.numbering
    }

    pub fn queue_capacity(&self) -> usize {
        self.bounds.updates
    }

    /// The bounds of every session's queue.
    pub fn queue_bounds(&self) -> QueueBounds {
        self.bounds
    }

    /// Started sessions.
    pub fn session_count(&self) -> usize {
        self.sessions.load(Ordering::Relaxed)
    }

    pub fn stats(&self) -> &HubStats {
        &self.stats
    }

    /// The recent-slot buffer.
    pub fn recent(&self) -> &RecentBuffer {
        &self.recent
    }

    /// Sessions the installed index holds (current or not).
    pub fn indexed_sessions(&self) -> usize {
        self.snapshot.load().index.sessions().len()
    }

    /// Sessions changed since the installed index was built (evaluated directly per update).
    pub fn direct_sessions(&self) -> usize {
        self.snapshot.load().direct.len()
    }

    /// A new session number.
    pub(super) fn next_session(&self) -> SessionId {
        self.next_session.fetch_add(1, Ordering::Relaxed)
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        // A panic while holding the lock leaves consistent data (every change is one store).
        self.registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers (or replaces) a session's filters; the returned registration is in effect for
    /// every update published after this returns.
    pub(super) fn register(
        self: &Arc<Self>,
        session: SessionId,
        filters: Arc<Filters>,
        queue: &Arc<SessionQueue>,
    ) -> Arc<Registration> {
        let mut registry = self.registry();
        registry.version += 1;
        let registration = Arc::new(Registration {
            session,
            generation: registry.version,
            filters,
            queue: Arc::clone(queue),
        });
        if registry
            .current
            .insert(session, Arc::clone(&registration))
            .is_none()
        {
            self.sessions.fetch_add(1, Ordering::Relaxed);
        }
        self.changed(registry, session, Some(&registration));
        registration
    }

    /// Removes a session (its stream ended).
    pub(super) fn unregister(self: &Arc<Self>, session: SessionId) {
        let mut registry = self.registry();
        if registry.current.remove(&session).is_none() {
            return;
        }
        registry.version += 1;
        self.sessions.fetch_sub(1, Ordering::Relaxed);
        self.changed(registry, session, None);
    }

    /// Publishes the snapshot after one session's change and schedules a rebuild.
    fn changed(
        self: &Arc<Self>,
        mut registry: MutexGuard<'_, Registry>,
        session: SessionId,
        registration: Option<&Arc<Registration>>,
    ) {
        self.stats.changes.fetch_add(1, Ordering::Relaxed);
        let old = self.snapshot.load();
        let mut direct: Vec<Arc<Registration>> = old
            .direct
            .iter()
            .filter(|entry| entry.session != session)
            .cloned()
            .collect();
        direct.extend(registration.cloned());
        let mut stale = old.stale.clone();
        if let Some(slot) = old.index.slot_of(session)
            && let Some(flag) = stale.get_mut(slot as usize)
        {
            *flag = true;
        }
        self.snapshot.store(Arc::new(Snapshot::new(
            Arc::clone(&old.index),
            direct,
            stale,
        )));
        let schedule = !registry.rebuild_pending;
        registry.rebuild_pending = true;
        let delay = (registry.last_build * 4).clamp(REBUILD_DELAY_MIN, REBUILD_DELAY_MAX);
        drop(registry);
        if schedule {
            self.schedule_rebuild(delay);
        }
    }

    fn schedule_rebuild(self: &Arc<Self>, delay: Duration) {
        let hub = Arc::clone(self);
        let job = move || {
            std::thread::sleep(delay);
            hub.rebuild();
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            drop(runtime.spawn_blocking(job));
            return;
        }
        let hub = Arc::clone(self);
        if let Err(error) = std::thread::Builder::new()
            .name("fanout-index".into())
            .spawn(job)
        {
            warn!(%error, "no thread for the index rebuild; rebuilding inline");
            hub.rebuild();
        }
    }

    /// Builds a fresh index of every current registration and installs it (unless a newer one
    /// was installed meanwhile). Runs in the background after changes; callable directly.
    pub fn rebuild(&self) {
        let (registrations, version) = {
            let mut registry = self.registry();
            registry.rebuild_pending = false;
            let mut registrations: Vec<Arc<Registration>> =
                registry.current.values().cloned().collect();
            registrations.sort_by_key(|registration| registration.session);
            (registrations, registry.version)
        };
        let started = Instant::now();
        let index = Arc::new(Index::build(registrations, version));
        let took = started.elapsed();
        let mut registry = self.registry();
        registry.last_build = took;
        let old = self.snapshot.load();
        if old.index.version() >= version {
            // Nothing changed since the installed index, or a newer one is in.
            return;
        }
        let direct: Vec<Arc<Registration>> = registry
            .current
            .values()
            .filter(|registration| registration.generation > version)
            .cloned()
            .collect();
        let stale: Vec<bool> = index
            .sessions()
            .iter()
            .map(|indexed| {
                registry
                    .current
                    .get(&indexed.session)
                    .is_none_or(|current| current.generation != indexed.generation)
            })
            .collect();
        debug!(
            sessions = index.sessions().len(),
            filters = index.filter_count(),
            direct = direct.len(),
            took_us = took.as_micros() as u64,
            "fan-out index rebuilt"
        );
        self.stats.rebuilds.fetch_add(1, Ordering::Relaxed);
        self.snapshot
            .store(Arc::new(Snapshot::new(index, direct, stale)));
    }

    /// Matches an update against every session, encodes it once if anything matched, and offers
    /// it to each matching session's queue. Never waits on a session (no registry lock; each
    /// queue's own lock is held for a push). A session whose queue overflows leaves the hub here,
    /// whether or not it runs again.
    ///
    /// With a recent-slot buffer, every update is encoded, numbered and kept first, and the
    /// snapshot is read after that (the resume seam, see [`super::recent`]).
    pub fn publish(self: &Arc<Self>, update: SubscribeUpdate) {
        if self.recent.keeps() {
            let encoded = Arc::new(EncodedUpdate::new(update));
            self.recent.append(&encoded);
            let snapshot = self.snapshot.load();
            let deliveries = deliveries(&snapshot, encoded.update());
            let lagged = offer(&encoded, deliveries);
            drop(snapshot);
            self.cut(lagged);
            return;
        }
        let snapshot = self.snapshot.load();
        let deliveries = deliveries(&snapshot, &update);
        if deliveries.is_empty() {
            return;
        }
        let lagged = offer(&Arc::new(EncodedUpdate::new(update)), deliveries);
        drop(snapshot);
        self.cut(lagged);
    }

    /// Removes the sessions whose queue overflowed.
    fn cut(self: &Arc<Self>, lagged: Vec<SessionId>) {
        for session in lagged {
            self.unregister(session);
        }
    }
}

/// The sessions `update` goes to, with what each matched (none when no session is started).
fn deliveries<'a>(
    snapshot: &'a Snapshot,
    update: &SubscribeUpdate,
) -> Vec<(&'a Arc<Registration>, Matches)> {
    let mut out = Vec::new();
    if !snapshot.is_empty() {
        match_snapshot(snapshot, &UpdateView::new(update), &mut out);
    }
    out
}

/// Offers `encoded` to each matching session; returns the sessions whose queue overflowed.
fn offer(
    encoded: &Arc<EncodedUpdate>,
    deliveries: Vec<(&Arc<Registration>, Matches)>,
) -> Vec<SessionId> {
    if deliveries.is_empty() {
        return Vec::new();
    }
    let now = Instant::now();
    let mut lagged: Vec<SessionId> = Vec::new();
    for (registration, matches) in deliveries {
        let delivery = Delivery {
            update: Arc::clone(encoded),
            generation: registration.generation,
            matches,
        };
        if registration.queue.offer(delivery, now) == Offer::Lagged {
            lagged.push(registration.session);
        }
    }
    lagged
}

/// The sessions an update goes to, with what each matched.
fn match_snapshot<'a>(
    snapshot: &'a Snapshot,
    view: &UpdateView,
    out: &mut Vec<(&'a Arc<Registration>, Matches)>,
) {
    let index = &snapshot.index;
    let live = |slot: u32| !snapshot.stale.get(slot as usize).copied().unwrap_or(true);
    if view.kind() == UpdateKind::Unfiltered {
        for (slot, registration) in index.sessions().iter().enumerate() {
            if live(slot as u32) {
                out.push((registration, Matches::default()));
            }
        }
    } else {
        let mut candidates: Vec<Entry> = Vec::new();
        index.candidates(view, &mut candidates);
        candidates.retain(|entry| live(entry.slot));
        candidates.sort_unstable();
        candidates.dedup();
        for run in candidates.chunk_by(|a, b| a.slot == b.slot) {
            let Some(registration) = run
                .first()
                .and_then(|first| index.sessions().get(first.slot as usize))
            else {
                continue;
            };
            let filters = &registration.filters;
            let mut matched = IndexSet::with_capacity(filters.len());
            for entry in run {
                let position = entry.filter as usize;
                if filters
                    .get(position)
                    .is_some_and(|filter| filter.evaluate(view))
                {
                    matched.insert(position);
                }
            }
            if !matched.is_empty() {
                out.push((registration, filters.matches_of(view, matched)));
            }
        }
        for &slot in index.match_all() {
            if live(slot)
                && let Some(registration) = index.sessions().get(slot as usize)
            {
                out.push((registration, Matches::everything(view)));
            }
        }
    }
    for registration in &snapshot.direct {
        if let Some(matches) = registration.filters.match_view(view) {
            out.push((registration, matches));
        }
    }
}
