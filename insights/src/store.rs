//! The insights store (redb, one file): per-block statistics by slot, the snapshot of the window
//! ending at each block (history), and the ingest cursor (every slot up to it has been handled,
//! produced or skipped). A block, its snapshot and the cursor move in one fsync'd transaction, so
//! a SIGKILL at any point loses at most the block being written, which the ingest fetches again.

use std::path::Path;
use std::sync::Arc;

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::block_stats::BlockStats;
use super::error::InsightsError;

const BLOCKS: TableDefinition<u64, &[u8]> = TableDefinition::new("blocks");
const SNAPSHOTS: TableDefinition<u64, &[u8]> = TableDefinition::new("snapshots");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const CURSOR: &str = "ingest_cursor";
/// Version byte in front of each stored [`BlockStats`] (postcard), bumped on layout changes.
const BLOCK_FORMAT: u8 = 1;

/// One block to write: its statistics and, when its window is full, that window's snapshot.
pub struct BlockRecord<'a> {
    pub stats: &'a BlockStats,
    pub snapshot: Option<&'a [u8]>,
}

/// Too many snapshots for one history call.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManySnapshots;

/// Handle to the store; cheap to clone and shared between the ingest and the HTTP workers.
#[derive(Clone)]
pub struct Store {
    db: Arc<Database>,
}

fn encode(stats: &BlockStats) -> Result<Vec<u8>, InsightsError> {
    let mut bytes = vec![BLOCK_FORMAT];
    postcard::to_io(stats, &mut bytes).map_err(|error| InsightsError::StoredRecord {
        slot: stats.slot,
        reason: error.to_string(),
    })?;
    Ok(bytes)
}

fn decode(slot: u64, bytes: &[u8]) -> Result<BlockStats, InsightsError> {
    match bytes.split_first() {
        Some((&BLOCK_FORMAT, rest)) => {
            postcard::from_bytes(rest).map_err(|error| InsightsError::StoredRecord {
                slot,
                reason: error.to_string(),
            })
        }
        _ => Err(InsightsError::StoredRecord {
            slot,
            reason: "unknown record format".into(),
        }),
    }
}

impl Store {
    /// Opens (or creates) the store at `path`, creating its parent directory.
    pub fn open(path: &Path) -> Result<Self, InsightsError> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent)
                .map_err(|error| InsightsError::Store(format!("{}: {error}", parent.display())))?;
        }
        let db = Database::create(path)?;
        let txn = db.begin_write()?;
        txn.open_table(BLOCKS)?;
        txn.open_table(SNAPSHOTS)?;
        txn.open_table(META)?;
        txn.commit()?;
        Ok(Self { db: Arc::new(db) })
    }

    /// The ingest cursor: every slot up to it has been handled.
    pub fn cursor(&self) -> Result<Option<u64>, InsightsError> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(CURSOR)?.map(|value| value.value()))
    }

    /// Writes blocks (and their snapshots) and, when given, moves the cursor, atomically.
    pub fn write(
        &self,
        records: &[BlockRecord<'_>],
        cursor: Option<u64>,
    ) -> Result<(), InsightsError> {
        let txn = self.db.begin_write()?;
        {
            let mut blocks = txn.open_table(BLOCKS)?;
            let mut snapshots = txn.open_table(SNAPSHOTS)?;
            for record in records {
                let slot = record.stats.slot;
                blocks.insert(slot, encode(record.stats)?.as_slice())?;
                if let Some(snapshot) = record.snapshot {
                    snapshots.insert(slot, snapshot)?;
                }
            }
            if let Some(cursor) = cursor {
                txn.open_table(META)?.insert(CURSOR, cursor)?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// The newest `count` blocks at or below `max_slot`, oldest first.
    pub fn blocks_up_to(
        &self,
        max_slot: u64,
        count: usize,
    ) -> Result<Vec<BlockStats>, InsightsError> {
        let txn = self.db.begin_read()?;
        let blocks = txn.open_table(BLOCKS)?;
        let mut found = Vec::with_capacity(count);
        for entry in blocks.range(..=max_slot)?.rev().take(count) {
            let (slot, bytes) = entry?;
            found.push(decode(slot.value(), bytes.value())?);
        }
        found.reverse();
        Ok(found)
    }

    /// Stored snapshot bodies for slots `from..=to`, ascending; an error when there are more
    /// than `max`.
    pub fn snapshots(
        &self,
        from: u64,
        to: u64,
        max: usize,
    ) -> Result<Result<Vec<Vec<u8>>, TooManySnapshots>, InsightsError> {
        let txn = self.db.begin_read()?;
        let snapshots = txn.open_table(SNAPSHOTS)?;
        let mut found = Vec::new();
        for entry in snapshots.range(from..=to)? {
            if found.len() == max {
                return Ok(Err(TooManySnapshots));
            }
            found.push(entry?.1.value().to_vec());
        }
        Ok(Ok(found))
    }

    /// Slots of stored snapshots (for tests and tools).
    pub fn snapshot_slots(&self) -> Result<Vec<u64>, InsightsError> {
        let txn = self.db.begin_read()?;
        let snapshots = txn.open_table(SNAPSHOTS)?;
        let mut slots = Vec::with_capacity(snapshots.len()? as usize);
        for entry in snapshots.iter()? {
            slots.push(entry?.0.value());
        }
        Ok(slots)
    }

    /// Deletes block statistics below `blocks_below` and snapshots below `snapshots_below`.
    pub fn prune(&self, blocks_below: u64, snapshots_below: u64) -> Result<(), InsightsError> {
        let txn = self.db.begin_write()?;
        txn.open_table(BLOCKS)?
            .retain_in(..blocks_below, |_, _| false)?;
        txn.open_table(SNAPSHOTS)?
            .retain_in(..snapshots_below, |_, _| false)?;
        txn.commit()?;
        Ok(())
    }
}
