//! Address lookup tables in the appliance (issue 20, docs/lookup-tables.md): the one cache every
//! worker resolves through ([`LookupTables`]), the fetch requests it raises for unknown tables,
//! and its metrics. The background thread ([`service`]) fetches tables from the cluster
//! ([`fetch`]) and persists the cache ([`store`]); [`setup`] builds it all from the configuration.
//!
//! Sharing: one `Mutex<LookupTableCache>`, taken once per transaction that has lookups or calls
//! the lookup-table program (never per shred, never for other transactions), held for the
//! resolution (~100–300 ns), by the fetcher for applying one answer, and by the persister for
//! draining the change log. Workers never wait on I/O under it.

pub mod fetch;
mod metrics_text;
pub mod service;
pub mod setup;
pub mod store;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use decoder::lookup::{
    Address, CacheConfig, CacheConfigError, LoadedAddresses, LookupStatus, LookupTableCache,
    UnresolvedReason, learn_from_transaction, lookup_program_calls, resolve_lookups,
};
use decoder::transaction::TransactionView;

/// How long a table the cluster did not give (absent, failed, refused) is not asked for again.
const RETRY_AFTER: Duration = Duration::from_secs(10);

const STATUSES: [LookupStatus; 5] = [
    LookupStatus::NoLookups,
    LookupStatus::Resolved,
    LookupStatus::ProvisionallyResolved,
    LookupStatus::PartlyResolved,
    LookupStatus::Unresolved,
];

const REASONS: [&str; 4] = [
    "unknown_table",
    "index_out_of_range",
    "deactivated",
    "invalid_table_data",
];

fn reason_index(reason: UnresolvedReason) -> usize {
    match reason {
        UnresolvedReason::UnknownTable => 0,
        UnresolvedReason::IndexOutOfRange { .. } => 1,
        UnresolvedReason::Deactivated => 2,
        UnresolvedReason::InvalidTableData => 3,
    }
}

fn status_index(status: LookupStatus) -> usize {
    STATUSES
        .iter()
        .position(|known| *known == status)
        .unwrap_or(0)
}

/// What the fetcher and the service count (atomics: read by `/metrics`).
#[derive(Default)]
pub struct FetchCounters {
    /// `getMultipleAccounts` requests sent, and tables asked for in them.
    pub requests: AtomicU64,
    pub tables_requested: AtomicU64,
    /// Requests that failed (transport, status, unreadable answer, RPC error).
    pub errors: AtomicU64,
    /// Tables answered per outcome: found, absent (no account), wrong_owner, invalid_data.
    pub found: AtomicU64,
    pub absent: AtomicU64,
    pub wrong_owner: AtomicU64,
    pub invalid_data: AtomicU64,
    /// Requests dropped because the queue was full.
    pub queue_full: AtomicU64,
    /// Writes of the persistent store that failed.
    pub store_errors: AtomicU64,
}

/// Everything under the one lock.
struct State {
    cache: LookupTableCache,
    /// Tables requested and not answered yet (one request in flight per table).
    pending: HashSet<Address>,
    /// Tables the cluster did not give, and when they may be asked for again.
    retry_at: HashMap<Address, Instant>,
    /// Transactions resolved per status; lookups unresolved per reason.
    statuses: [u64; 5],
    unresolved: [u64; 4],
    /// Tables changed by the stream, to fetch again for confirmation (bounded as `pending`).
    to_confirm: HashMap<Address, Instant>,
}

/// The shared cache and its fetch queue.
pub struct LookupTables {
    state: Mutex<State>,
    requests: Option<SyncSender<Address>>,
    queue_capacity: usize,
    pub counters: FetchCounters,
}

impl LookupTables {
    /// The cache with these bounds; `fetch_queue`: capacity of the request queue (the receiver
    /// goes to the fetcher), `None` without a cluster RPC.
    pub fn new(
        config: CacheConfig,
        fetch_queue: Option<usize>,
    ) -> Result<(Self, Option<Receiver<Address>>), CacheConfigError> {
        let cache = LookupTableCache::new(config)?;
        let (requests, receiver) = match fetch_queue {
            Some(capacity) => {
                let (sender, receiver) = std::sync::mpsc::sync_channel(capacity);
                (Some(sender), Some(receiver))
            }
            None => (None, None),
        };
        let tables = Self {
            state: Mutex::new(State {
                cache,
                pending: HashSet::new(),
                retry_at: HashMap::new(),
                statuses: [0; 5],
                unresolved: [0; 4],
                to_confirm: HashMap::new(),
            }),
            requests,
            queue_capacity: fetch_queue.unwrap_or(0),
            counters: FetchCounters::default(),
        };
        Ok((tables, receiver))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the cache under the lock (the fetcher, the store, tests).
    pub fn with_cache<T>(&self, f: impl FnOnce(&mut LookupTableCache) -> T) -> T {
        f(&mut self.lock().cache)
    }

    /// A worker's step for one transaction of `slot` (see `pipeline::lookups`), under one lock:
    /// resolve its lookups into `loaded`, then, with `learn`, apply its lookup-table
    /// instructions; unknown tables are requested. `scratch` is the caller's reused buffer.
    pub fn process(
        &self,
        transaction: &TransactionView<'_>,
        slot: u64,
        learn: bool,
        loaded: &mut LoadedAddresses,
        scratch: &mut Vec<Address>,
    ) {
        let mut state = self.lock();
        let status = resolve_lookups(transaction, slot, &mut state.cache, loaded);
        if status != LookupStatus::NoLookups {
            state.statuses[status_index(status)] += 1;
            for (_, table, reason) in loaded.unresolved() {
                state.unresolved[reason_index(reason)] += 1;
                if reason == UnresolvedReason::UnknownTable {
                    scratch.push(*table);
                }
            }
        }
        if learn {
            let summary =
                learn_from_transaction(transaction, slot, loaded, &mut state.cache, |table| {
                    scratch.push(*table)
                });
            if summary.applied > 0 {
                self.mark_for_confirmation(&mut state, transaction, loaded);
            }
        }
        for table in scratch.drain(..) {
            self.request(&mut state, table);
        }
    }

    /// Resolves `transaction`'s lookups into `loaded` for the Yellowstone deshred stream, which
    /// sees every transaction: nothing is learned and the status metrics are left to
    /// [`LookupTables::process`] (so a transaction published on both streams counts once);
    /// unknown tables are requested.
    pub fn resolve(
        &self,
        transaction: &TransactionView<'_>,
        slot: u64,
        loaded: &mut LoadedAddresses,
    ) -> LookupStatus {
        let mut state = self.lock();
        let status = resolve_lookups(transaction, slot, &mut state.cache, loaded);
        for (_, table, reason) in loaded.unresolved() {
            if reason == UnresolvedReason::UnknownTable {
                let table = *table;
                self.request(&mut state, table);
            }
        }
        status
    }

    /// The tables of a transaction's lookup-table calls, to fetch again once the stream's
    /// change is old enough for the cluster to confirm or contradict it.
    fn mark_for_confirmation(
        &self,
        state: &mut State,
        transaction: &TransactionView<'_>,
        loaded: &LoadedAddresses,
    ) {
        if self.requests.is_none() {
            return;
        }
        let now = Instant::now();
        let static_keys = transaction.static_account_keys();
        for call in lookup_program_calls(transaction) {
            let table = call
                .account_indices
                .first()
                .and_then(|&index| loaded.account_key(static_keys, index).address());
            if let Some(table) = table
                && state.to_confirm.len() < self.queue_capacity.max(1)
            {
                state.to_confirm.entry(*table).or_insert(now);
            }
        }
    }

    /// Queues a fetch of `table` unless one is in flight, it failed recently, or the queue is
    /// full (counted).
    fn request(&self, state: &mut State, table: Address) {
        let Some(requests) = &self.requests else {
            return;
        };
        if state.pending.contains(&table) {
            return;
        }
        if let Some(at) = state.retry_at.get(&table) {
            if Instant::now() < *at {
                return;
            }
            state.retry_at.remove(&table);
        }
        if state.pending.len() >= self.queue_capacity {
            self.counters.queue_full.fetch_add(1, Ordering::Relaxed);
            return;
        }
        match requests.try_send(table) {
            Ok(()) => {
                state.pending.insert(table);
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.counters.queue_full.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Queues `tables` for a fetch (the preload list, confirmations); same rules as a miss.
    pub fn request_all(&self, tables: &[Address]) {
        let mut state = self.lock();
        for table in tables {
            self.request(&mut state, *table);
        }
    }

    /// The fetcher answered for `table` (whatever the outcome): another request may follow;
    /// `failed`: not asked again for a while.
    pub fn answered(&self, tables: &[Address], failed: &[Address]) {
        let mut state = self.lock();
        for table in tables {
            state.pending.remove(table);
        }
        if state.retry_at.len() + failed.len() > self.queue_capacity.max(1) * 4 {
            let now = Instant::now();
            state.retry_at.retain(|_, at| *at > now);
        }
        let at = Instant::now() + RETRY_AFTER;
        for table in failed {
            if state.retry_at.len() < self.queue_capacity.max(1) * 4 {
                state.retry_at.insert(*table, at);
            }
        }
    }

    /// Tables the stream changed at least `age` ago, taken off the confirmation list (at most
    /// `limit`).
    pub fn due_for_confirmation(&self, age: Duration, limit: usize) -> Vec<Address> {
        let mut state = self.lock();
        let now = Instant::now();
        let due: Vec<Address> = state
            .to_confirm
            .iter()
            .filter(|(_, since)| now.duration_since(**since) >= age)
            .map(|(table, _)| *table)
            .take(limit)
            .collect();
        for table in &due {
            state.to_confirm.remove(table);
        }
        due
    }
}
