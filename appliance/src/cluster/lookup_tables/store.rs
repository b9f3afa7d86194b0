//! The persisted lookup-table cache: a redb file in the data directory (`lookup-tables.redb`),
//! table address → the cache's entry bytes (`decoder::lookup::persist`, format version 1). Loaded
//! at start (warm cache), written by the service thread from the cache's change log.

use std::path::{Path, PathBuf};

use decoder::lookup::{Address, CacheChange, LookupTableCache};
use redb::{Database, ReadableTable, TableDefinition};

const TABLES: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("lookup_tables");

/// Why the store failed; the label names it in logs.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error("lookup-table store: {0}")]
    Io(String),
}

macro_rules! io_error {
    ($($ty:ty),*) => {$(
        impl From<$ty> for StoreError {
            fn from(error: $ty) -> Self {
                Self::Io(error.to_string())
            }
        }
    )*};
}
io_error!(
    redb::Error,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// The store file in the data directory.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("lookup-tables.redb")
}

/// The open store.
pub struct TableStore {
    db: Database,
}

impl TableStore {
    /// Opens (or creates) the store, creating the data directory.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_error = |reason: String| StoreError::Open {
            path: path.to_owned(),
            reason,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|error| open_error(error.to_string()))?;
        }
        let db = Database::create(path).map_err(|error| open_error(error.to_string()))?;
        let txn = db.begin_write()?;
        txn.open_table(TABLES)?;
        txn.commit()?;
        Ok(Self { db })
    }

    /// Imports every stored entry into `cache` (the cache's bounds apply); returns (loaded,
    /// refused) counts. Refused entries (another format) are skipped.
    pub fn load_into(&self, cache: &mut LookupTableCache) -> Result<(usize, usize), StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(TABLES)?;
        let (mut loaded, mut refused) = (0, 0);
        for entry in table.iter()? {
            let (key, bytes) = entry?;
            match cache.import_entry(key.value(), bytes.value()) {
                Ok(()) => loaded += 1,
                Err(_) => refused += 1,
            }
        }
        Ok((loaded, refused))
    }

    /// Writes `changes` (upserts with their bytes, removals) in one transaction; with
    /// `rewrite`, the store is cleared first (the change log overflowed).
    pub fn write(
        &self,
        changes: &[(Address, CacheChange, Vec<u8>)],
        rewrite: bool,
    ) -> Result<(), StoreError> {
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(TABLES)?;
            if rewrite {
                table.retain(|_, _| false)?;
            }
            for (key, change, bytes) in changes {
                match change {
                    CacheChange::Upserted => {
                        table.insert(key, bytes.as_slice())?;
                    }
                    CacheChange::Removed => {
                        table.remove(key)?;
                    }
                }
            }
        }
        txn.commit()?;
        Ok(())
    }
}

/// The cache's changes since the last call, with each upserted entry's bytes; `true` when the
/// whole store must be rewritten (the log overflowed: then every cached entry is returned).
pub fn take_changes(
    cache: &mut LookupTableCache,
    out: &mut Vec<(Address, CacheChange, Vec<u8>)>,
) -> bool {
    let mut changes = Vec::new();
    let complete = cache.drain_changes(&mut changes);
    if !complete {
        changes = cache
            .keys()
            .map(|key| (*key, CacheChange::Upserted))
            .collect();
    }
    for (key, change) in changes {
        let mut bytes = Vec::new();
        let change = match change {
            CacheChange::Upserted if cache.export_entry(&key, &mut bytes) => CacheChange::Upserted,
            _ => CacheChange::Removed,
        };
        out.push((key, change, bytes));
    }
    !complete
}
