//! The lookup tables' background thread: takes requested tables off the bounded queue in
//! batches of at most 100, fetches them (`getMultipleAccounts`, one request at a time, so one in
//! flight per table), re-fetches tables the stream changed once `confirm_after` passed (to
//! confirm or contradict what was learned), and writes the cache's changes to the store every
//! second and at shutdown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use decoder::lookup::Address;
use front::jsonrpc::JsonRpcClient;
use tracing::{debug, warn};

use super::LookupTables;
use super::fetch::{MAX_BATCH, TableAnswer, apply, fetch_tables};
use super::store::{TableStore, take_changes};

/// How long the thread waits for a request before it looks at shutdown and the store.
const IDLE: Duration = Duration::from_millis(100);
/// How often the cache's changes are written.
const PERSIST_EVERY: Duration = Duration::from_secs(1);

/// The cluster side: client and request queue.
pub struct Fetching {
    pub client: JsonRpcClient,
    pub requests: Receiver<Address>,
    pub confirm_after: Duration,
}

/// The thread's parts.
pub struct Service {
    pub tables: Arc<LookupTables>,
    pub fetching: Option<Fetching>,
    pub store: Option<TableStore>,
}

impl Service {
    pub fn spawn(self, shutdown: Arc<AtomicBool>) -> std::io::Result<JoinHandle<()>> {
        std::thread::Builder::new()
            .name("lookup-tables".into())
            .spawn(move || self.run(&shutdown))
    }

    fn run(self, shutdown: &AtomicBool) {
        let mut persisted = Instant::now();
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while !shutdown.load(Ordering::Acquire) {
            match &self.fetching {
                Some(fetching) => {
                    self.collect(fetching, &mut batch);
                    if !batch.is_empty() {
                        self.fetch(&fetching.client, &batch);
                        batch.clear();
                    }
                }
                None => std::thread::sleep(IDLE),
            }
            if persisted.elapsed() >= PERSIST_EVERY {
                self.persist();
                persisted = Instant::now();
            }
        }
        self.persist();
    }

    /// Up to [`MAX_BATCH`] tables: requested ones (waiting up to [`IDLE`] for the first), then
    /// tables due for confirmation.
    fn collect(&self, fetching: &Fetching, batch: &mut Vec<Address>) {
        match fetching.requests.recv_timeout(IDLE) {
            Ok(table) => batch.push(table),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
        }
        while batch.len() < MAX_BATCH {
            match fetching.requests.try_recv() {
                Ok(table) => batch.push(table),
                Err(_) => break,
            }
        }
        let room = MAX_BATCH - batch.len();
        for table in self
            .tables
            .due_for_confirmation(fetching.confirm_after, room)
        {
            if !batch.contains(&table) {
                batch.push(table);
            }
        }
    }

    /// One `getMultipleAccounts` for `batch`, its answers applied and counted.
    fn fetch(&self, client: &JsonRpcClient, batch: &[Address]) {
        let counters = &self.tables.counters;
        counters.requests.fetch_add(1, Ordering::Relaxed);
        counters
            .tables_requested
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        match fetch_tables(client, batch) {
            Ok((slot, answers)) => {
                self.tables.with_cache(|cache| {
                    for (table, answer) in batch.iter().zip(&answers) {
                        apply(cache, table, answer, slot);
                    }
                });
                let mut failed = Vec::new();
                for (table, answer) in batch.iter().zip(&answers) {
                    let counter = match answer {
                        TableAnswer::Found(_) => &counters.found,
                        TableAnswer::Absent => &counters.absent,
                        TableAnswer::WrongOwner => &counters.wrong_owner,
                        TableAnswer::InvalidData => &counters.invalid_data,
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                    if !matches!(answer, TableAnswer::Found(_)) {
                        debug!(table = %bs58::encode(table).into_string(), outcome = answer.label(), "lookup table not usable");
                        failed.push(*table);
                    }
                }
                self.tables.answered(batch, &failed);
            }
            Err(error) => {
                counters.errors.fetch_add(1, Ordering::Relaxed);
                warn!(%error, reason = error.label(), tables = batch.len(), "lookup table fetch failed");
                self.tables.answered(batch, batch);
            }
        }
    }

    /// Writes the cache's changes since the last call.
    fn persist(&self) {
        let Some(store) = &self.store else {
            return;
        };
        let mut changes = Vec::new();
        let rewrite = self
            .tables
            .with_cache(|cache| take_changes(cache, &mut changes));
        if changes.is_empty() && !rewrite {
            return;
        }
        if let Err(error) = store.write(&changes, rewrite) {
            self.tables
                .counters
                .store_errors
                .fetch_add(1, Ordering::Relaxed);
            warn!(%error, "lookup-table store not written");
        }
    }
}
