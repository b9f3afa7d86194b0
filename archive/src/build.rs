//! Length: over 600 lines because the pass, its address feeder and the sealing jobs share the
//! builder's private types (partitions, per-kind writers); ~75 of the lines are its options, report and
//! error types.
//!
//! The index builder behind `appliance archive index`: one sequential pass over a CAR (whole
//! epoch or piece) feeding every index that is still missing next to it, then sealing each one.
//! The pass runs on two threads (CAR parsing and the compact/slot indexes; metadata decoding and
//! the address index, fed per block over a bounded channel); sealing runs on two threads.
//! Memory stays bounded: keys are spilled to partition files (count chosen from the CAR size),
//! per-block state is dropped at each Block node, slot tables are fixed-size. Each index is written
//! under a temporary name and renamed when complete, so an interrupted build redoes only the
//! indexes that were not finished.

use std::collections::HashMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::car::{CarStream, CarStreamError, Section};
use crate::cid::{Cid, NODE_CID_LEN};
use crate::error::FormatError;
use crate::frame;
use crate::index::addr::{AddressIndexBuilder, TxRecord, with_kind};
use crate::index::compact::{BuildError, CompactBuilder, CompactOptions};
use crate::index::meta::IndexMeta;
use crate::index::sigexists::SigExistsBuilder;
use crate::index::slots::SlotTables;
use crate::index::{IndexPaths, NETWORK};
use crate::meta;
use crate::node::{self, BlockNode, EntryNode, TransactionNode};
use crate::txwire;

/// Builder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildOptions {
    /// Draw a progress bar on stderr (hidden when stderr is not a terminal).
    pub progress: bool,
    /// Spill partitions; `None` = one per GiB of CAR, between 1 and 256.
    pub partitions: Option<u32>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            progress: true,
            partitions: None,
        }
    }
}

/// What one build did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildReport {
    pub car: PathBuf,
    pub root: Cid,
    pub epoch: Option<u64>,
    /// Index kinds built now.
    pub built: Vec<&'static str>,
    /// Index kinds found complete and left alone.
    pub skipped: Vec<&'static str>,
    pub bytes: u64,
    pub blocks: u64,
    pub transactions: u64,
    pub elapsed: Duration,
}

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
pub enum IndexBuildError {
    #[error("{path}: i/o: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Car {
        path: PathBuf,
        #[source]
        source: CarStreamError,
    },
    #[error("{path}: {source}")]
    Format {
        path: PathBuf,
        #[source]
        source: FormatError,
    },
    #[error("{path}: {source}")]
    Build {
        path: PathBuf,
        #[source]
        source: BuildError,
    },
    #[error("{path}: the CAR holds no block")]
    NoBlocks { path: PathBuf },
}

impl IndexBuildError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Io { .. } => "io",
            Self::Car { .. } => "car",
            Self::Format { .. } => "format",
            Self::Build { .. } => "build",
            Self::NoBlocks { .. } => "no_blocks",
        }
    }
}

const KIND_SLOT_TO_CID: &str = "slot-to-cid";
const KIND_SIG_TO_CID: &str = "sig-to-cid";
const KIND_CID_TO_OFFSET: &str = "cid-to-offset-and-size";
const KIND_SIG_EXISTS: &str = "sig-exists";
const KIND_BLOCKTIME: &str = "slot-to-blocktime";
const KIND_RANGES: &str = "slot-ranges";
const KIND_BLOCKHASH: &str = "slot-to-blockhash";
const KIND_ADDRESS: &str = "address-signatures";

/// One index to seal.
type SealJob<'a> = Box<dyn FnOnce() -> Result<(), IndexBuildError> + Send + 'a>;

/// Threads sealing indexes at once (each holds one spill partition in memory).
const SEAL_THREADS: usize = 2;

/// Blocks queued between the pass and the address-index thread (each holds its transactions'
/// compressed metadata: a few hundred KB at most for ordinary blocks).
const ADDRESS_QUEUE_BLOCKS: usize = 64;

/// One transaction as the pass hands it to the address-index thread: what the wire bytes gave,
/// and the reassembled (still compressed) metadata payload.
struct PendingTx {
    signature: [u8; 64],
    slot: u64,
    index: u32,
    memo: Option<String>,
    static_keys: Vec<[u8; 32]>,
    metadata: Vec<u8>,
}

/// One block's transactions, in block order.
struct AddressBatch {
    block_time: i64,
    txs: Vec<PendingTx>,
}

/// The address-index thread: decodes each transaction's metadata (error, loaded addresses) and
/// adds the block to the builder; returns the builder when the pass closes the channel.
fn feed_addresses(
    mut builder: AddressIndexBuilder,
    queue: std::sync::mpsc::Receiver<AddressBatch>,
    path: &Path,
) -> Result<AddressIndexBuilder, IndexBuildError> {
    let format_err = |source| IndexBuildError::Format {
        path: path.to_path_buf(),
        source,
    };
    let mut records: Vec<TxRecord> = Vec::new();
    for batch in queue {
        records.clear();
        for tx in batch.txs {
            let status = meta::decode_index_fields(&tx.metadata).map_err(format_err)?;
            let mut addresses = tx.static_keys;
            let mut err = None;
            if let Some(status) = status {
                for key in status
                    .loaded_writable_addresses
                    .iter()
                    .chain(&status.loaded_readonly_addresses)
                {
                    if let Ok(key) = <[u8; 32]>::try_from(key.as_slice()) {
                        addresses.push(key);
                    }
                }
                err = status.err.map(|e| e.err);
            }
            records.push(TxRecord {
                signature: tx.signature,
                slot: tx.slot,
                index: tx.index,
                err,
                memo: tx.memo,
                addresses,
            });
        }
        builder
            .add_block(batch.block_time, &records)
            .map_err(|source| IndexBuildError::Build {
                path: path.to_path_buf(),
                source,
            })?;
    }
    Ok(builder)
}

/// Runs `jobs` on `threads` scoped threads, in order of the list; the first error is returned
/// (after every started job has ended).
fn run_jobs(jobs: Vec<SealJob<'_>>, threads: usize) -> Result<(), IndexBuildError> {
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let next = || queue.lock().ok().and_then(|mut jobs| jobs.next());
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    while let Some(job) = next() {
                        job()?;
                    }
                    Ok::<(), IndexBuildError>(())
                })
            })
            .collect();
        let mut result = Ok(());
        for worker in workers {
            let outcome = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            if result.is_ok() {
                result = outcome;
            }
        }
        result
    })
}

/// The state of the one pass over a CAR's sections: the builders it feeds, the slot tables, the
/// report's counts, and what a block collects until its `Block` node closes it.
struct Pass<'a> {
    path: &'a Path,
    slot_to_cid: Option<&'a mut CompactBuilder>,
    sig_to_cid: Option<&'a mut CompactBuilder>,
    cid_to_offset: Option<&'a mut CompactBuilder>,
    sig_exists: Option<&'a mut SigExistsBuilder>,
    need_tables: bool,
    tables: &'a mut Option<SlotTables>,
    report: &'a mut BuildReport,
    /// Blocks for the address thread, when the address index is built.
    address_feed: Option<std::sync::mpsc::SyncSender<AddressBatch>>,
    /// Where the current slot's range starts (after the previous `Block` node).
    range_start: u64,
    entry_hashes: HashMap<Cid, [u8; 32]>,
    frames: HashMap<Cid, Vec<u8>>,
    pending: Vec<PendingTx>,
}

impl Pass<'_> {
    fn format_err(&self, source: FormatError) -> IndexBuildError {
        IndexBuildError::Format {
            path: self.path.to_path_buf(),
            source,
        }
    }

    /// Indexes one section; false when the address thread stopped (its error comes from it).
    fn section(&mut self, section: &Section<'_>) -> Result<bool, IndexBuildError> {
        self.offset_of(section)?;
        let kind = node::peek_kind(section.node).map_err(|e| self.format_err(e))?;
        match kind {
            node::kind::DATA_FRAME => {
                self.frames.insert(section.cid, section.node.to_vec());
            }
            node::kind::ENTRY => {
                let hash = EntryNode::decode_hash(section.node).map_err(|e| self.format_err(e))?;
                self.entry_hashes.insert(section.cid, hash);
            }
            node::kind::TRANSACTION => self.transaction(section)?,
            node::kind::BLOCK => return self.block(section),
            _ => {}
        }
        Ok(true)
    }

    /// The cid-to-offset entry of every section.
    fn offset_of(&mut self, section: &Section<'_>) -> Result<(), IndexBuildError> {
        let path = self.path;
        let Some(builder) = self.cid_to_offset.as_mut() else {
            return Ok(());
        };
        let key = section.cid.as_bytes();
        if key.len() != NODE_CID_LEN {
            return Err(IndexBuildError::Format {
                path: self.path.to_path_buf(),
                source: FormatError::Cid("section CID is not 36 bytes"),
            });
        }
        // Sizes of 16 MiB and more do not fit the 24-bit field: stored as 0, meaning "read the
        // varint at the offset" (docs/archive.md).
        let size = if section.size < 1 << 24 {
            section.size
        } else {
            0
        };
        let mut value = [0u8; 9];
        value[..6].copy_from_slice(&section.offset.to_le_bytes()[..6]);
        value[6..].copy_from_slice(&size.to_le_bytes()[..3]);
        builder
            .add(key, &value)
            .map_err(|source| build_err(path, source))
    }

    fn transaction(&mut self, section: &Section<'_>) -> Result<(), IndexBuildError> {
        let path = self.path;
        self.report.transactions += 1;
        let tx = TransactionNode::decode(section.node).map_err(|e| self.format_err(e))?;
        let frames = &self.frames;
        let wire = frame::reassemble(&tx.data, |cid: &Cid| frames.get(cid).cloned())
            .map_err(|e| self.format_err(e))?;
        let summary = txwire::summarize(&wire).map_err(|e| self.format_err(e))?;
        if let Some(b) = self.sig_to_cid.as_mut() {
            b.add(&summary.first_signature, section.cid.as_bytes())
                .map_err(|source| build_err(path, source))?;
        }
        if let Some(b) = self.sig_exists.as_mut() {
            b.add(&summary.first_signature)
                .map_err(|e| build_err(path, BuildError::Io(e)))?;
        }
        if self.address_feed.is_none() {
            return Ok(());
        }
        let frames = &self.frames;
        let metadata = frame::reassemble(&tx.metadata, |cid: &Cid| frames.get(cid).cloned())
            .map_err(|e| self.format_err(e))?
            .into_owned();
        let index = match tx.index {
            Some(i) => {
                u32::try_from(i).map_err(|_| self.format_err(FormatError::Field("index")))?
            }
            None => self.pending.len() as u32,
        };
        self.pending.push(PendingTx {
            signature: summary.first_signature,
            slot: tx.slot,
            index,
            memo: summary.memo,
            static_keys: summary.static_keys,
            metadata,
        });
        Ok(())
    }

    /// A `Block` node closes its slot: slot index, slot tables, the address batch.
    fn block(&mut self, section: &Section<'_>) -> Result<bool, IndexBuildError> {
        let path = self.path;
        self.report.blocks += 1;
        let block = BlockNode::decode(section.node).map_err(|e| self.format_err(e))?;
        let epoch = crate::epoch_of(block.slot);
        if self.report.epoch.is_some_and(|e| e != epoch) {
            return Err(self.format_err(FormatError::Index(format!(
                "slot {} is outside epoch {epoch:?}",
                block.slot
            ))));
        }
        self.report.epoch = Some(epoch);
        if let Some(b) = self.slot_to_cid.as_mut() {
            b.add(&block.slot.to_le_bytes(), section.cid.as_bytes())
                .map_err(|source| build_err(path, source))?;
        }
        if self.need_tables {
            self.slot_tables(&block, section, epoch)?;
        }
        let mut fed = true;
        if let Some(feed) = self.address_feed.as_ref() {
            let batch = AddressBatch {
                block_time: block.blocktime,
                txs: std::mem::take(&mut self.pending),
            };
            fed = feed.send(batch).is_ok();
        }
        self.pending.clear();
        self.entry_hashes.clear();
        self.frames.clear();
        self.range_start = section.offset + section.size;
        Ok(fed)
    }

    /// The slot's block time, byte range and blockhash (its last entry's hash).
    fn slot_tables(
        &mut self,
        block: &BlockNode,
        section: &Section<'_>,
        epoch: u64,
    ) -> Result<(), IndexBuildError> {
        let last_entry = block
            .entries
            .last()
            .ok_or_else(|| self.format_err(FormatError::Field("block without entries")))?;
        let hash = *self.entry_hashes.get(last_entry).ok_or_else(|| {
            self.format_err(FormatError::Field("last entry not in the slot's range"))
        })?;
        let end = section.offset + section.size;
        let len = u32::try_from(end - self.range_start)
            .map_err(|_| self.format_err(FormatError::Index("slot range over 4 GiB".into())))?;
        let range_start = self.range_start;
        let tables = self.tables.get_or_insert_with(|| SlotTables::new(epoch));
        tables
            .set(block.slot, block.blocktime, (range_start, len), hash)
            .map_err(|source| IndexBuildError::Format {
                path: self.path.to_path_buf(),
                source,
            })
    }
}

/// Builds the missing indexes of one CAR.
/// The index kinds to build (their files missing) and to skip (present), in build order.
fn wanted_kinds(paths: &IndexPaths) -> (Vec<&'static str>, Vec<&'static str>) {
    let exists = |p: &Path| p.is_file();
    let want = |kind: &'static str| -> bool {
        match kind {
            KIND_SLOT_TO_CID => !exists(&paths.slot_to_cid),
            KIND_SIG_TO_CID => !exists(&paths.sig_to_cid),
            KIND_CID_TO_OFFSET => !exists(&paths.cid_to_offset),
            KIND_SIG_EXISTS => !exists(&paths.sig_exists),
            KIND_BLOCKTIME => !exists(&paths.slot_to_blocktime),
            KIND_RANGES => !exists(&paths.slot_ranges),
            KIND_BLOCKHASH => !exists(&paths.slot_to_blockhash),
            _ => !paths.address.all().iter().all(|p| exists(p)),
        }
    };
    let kinds = [
        KIND_SLOT_TO_CID,
        KIND_SIG_TO_CID,
        KIND_CID_TO_OFFSET,
        KIND_SIG_EXISTS,
        KIND_BLOCKTIME,
        KIND_RANGES,
        KIND_BLOCKHASH,
        KIND_ADDRESS,
    ];
    kinds.iter().partition(|k| want(k))
}

/// The progress bar of one CAR's build (hidden unless asked for).
fn progress_bar(path: &Path, size: u64, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(size);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar.set_message(path.display().to_string());
    bar
}

/// What the pass filled, to be sealed into index files.
struct Builders {
    slot_to_cid: Option<CompactBuilder>,
    sig_to_cid: Option<CompactBuilder>,
    cid_to_offset: Option<CompactBuilder>,
    sig_exists: Option<SigExistsBuilder>,
    address: Option<AddressIndexBuilder>,
    tables: SlotTables,
}

/// Seals every built index: each is independent (own spill files, own output), so they are
/// sealed by two threads taking jobs largest first; the outputs are the same bytes as sealing
/// them one after the other.
fn seal(
    builders: Builders,
    paths: &IndexPaths,
    built: &[&'static str],
    (epoch, root): (u64, &Cid),
    path: &Path,
) -> Result<(), IndexBuildError> {
    let meta_with = |kind: Option<&str>| IndexMeta::standard(kind, epoch, root, NETWORK);
    // Sealing: each index is independent (own spill files, own output), so they are sealed by
    // two threads taking jobs largest first; the outputs are the same bytes as sealing them one
    // after the other.
    let Builders {
        slot_to_cid,
        sig_to_cid,
        cid_to_offset,
        sig_exists,
        address,
        tables,
    } = builders;
    let has = |k: &str| built.contains(&k);
    let io = |source| IndexBuildError::Io {
        path: path.to_path_buf(),
        source,
    };
    let format_err = |source| IndexBuildError::Format {
        path: path.to_path_buf(),
        source,
    };
    let builder_err = |source| build_err(path, source);
    let blockhash_meta = meta_with(Some(KIND_BLOCKHASH));
    let mut jobs: Vec<SealJob<'_>> = Vec::new();
    if let Some(b) = address {
        // Three independent jobs: postings + directory, sig-to-ordinal, the txs file.
        let (txs, sig_to_ordinal, postings) = b.into_parts().map_err(builder_err)?;
        let meta = meta_with(Some("asig-txs"));
        let out = &paths.address;
        let (m1, m2) = (meta.clone(), with_kind(&meta, "asig-sig-to-ordinal"));
        jobs.push(Box::new(move || {
            postings
                .finish(&out.postings, &out.directory, &m1)
                .map_err(builder_err)
        }));
        jobs.push(Box::new(move || {
            sig_to_ordinal
                .finish(&out.sig_to_ordinal, &m2)
                .map_err(builder_err)
        }));
        jobs.push(Box::new(move || {
            txs.finish(&out.txs, &meta).map_err(builder_err)
        }));
    }
    if let Some(b) = sig_to_cid {
        let meta = meta_with(Some(KIND_SIG_TO_CID));
        let out = &paths.sig_to_cid;
        jobs.push(Box::new(move || b.finish(out, &meta).map_err(builder_err)));
    }
    if let Some(b) = cid_to_offset {
        let meta = meta_with(Some(KIND_CID_TO_OFFSET));
        let out = &paths.cid_to_offset;
        jobs.push(Box::new(move || b.finish(out, &meta).map_err(builder_err)));
    }
    if let Some(b) = sig_exists {
        let meta = meta_with(None);
        let out = &paths.sig_exists;
        jobs.push(Box::new(move || b.finish(out, &meta).map_err(builder_err)));
    }
    if let Some(b) = slot_to_cid {
        let meta = meta_with(Some(KIND_SLOT_TO_CID));
        let out = &paths.slot_to_cid;
        jobs.push(Box::new(move || b.finish(out, &meta).map_err(builder_err)));
    }
    let (tables, paths_ref, has_ref, io_ref, format_ref) =
        (&tables, &paths, &has, &io, &format_err);
    jobs.push(Box::new(move || {
        if has_ref(KIND_BLOCKTIME) {
            tables
                .write_blocktime(&paths_ref.slot_to_blocktime)
                .map_err(io_ref)?;
        }
        if has_ref(KIND_RANGES) {
            tables
                .write_ranges(&paths_ref.slot_ranges)
                .map_err(io_ref)?;
        }
        if has_ref(KIND_BLOCKHASH) {
            tables
                .write_blockhashes(&paths_ref.slot_to_blockhash, &blockhash_meta)
                .map_err(format_ref)?;
        }
        Ok(())
    }));
    run_jobs(jobs, SEAL_THREADS)?;
    Ok(())
}

/// What the complete indexes of a CAR hold (a rerun that builds nothing): the epoch (from
/// slot-to-blocktime), the blocks (slots with a range in slot-ranges) and the transactions (rows
/// of asig-txs).
fn found(paths: &IndexPaths, report: &mut BuildReport) -> Result<(), IndexBuildError> {
    use crate::index::addr::AddressIndex;
    use crate::index::slots::{BlockTimes, SlotRanges};
    use crate::readat::LocalFile;
    let open = |path: &Path| {
        LocalFile::open_unmapped(path).map_err(|source| IndexBuildError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let format = |path: &Path| {
        let path = path.to_path_buf();
        move |source| IndexBuildError::Format { path, source }
    };
    let epoch = BlockTimes::open(open(&paths.slot_to_blocktime)?)
        .map_err(format(&paths.slot_to_blocktime))?
        .epoch();
    report.epoch = Some(epoch);
    report.blocks = SlotRanges::open(open(&paths.slot_ranges)?, epoch)
        .and_then(|ranges| ranges.count())
        .map_err(format(&paths.slot_ranges))?;
    let a = &paths.address;
    report.transactions = AddressIndex::open(
        open(&a.txs)?,
        open(&a.sig_to_ordinal)?,
        open(&a.postings)?,
        open(&a.directory)?,
    )
    .map_err(format(&a.txs))?
    .len();
    Ok(())
}

/// A builder's error, naming the CAR.
fn build_err(path: &Path, source: BuildError) -> IndexBuildError {
    IndexBuildError::Build {
        path: path.to_path_buf(),
        source,
    }
}

pub fn build_indexes(car: &Path, options: &BuildOptions) -> Result<BuildReport, IndexBuildError> {
    let started = Instant::now();
    let path = car.to_path_buf();
    let io = |source| IndexBuildError::Io {
        path: path.clone(),
        source,
    };
    let file = File::open(car).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut stream = CarStream::new(std::io::BufReader::with_capacity(1 << 20, file), 32 << 20)
        .map_err(|source| IndexBuildError::Car {
            path: path.clone(),
            source,
        })?;
    let root = stream.header().root;
    let paths = IndexPaths::for_car(car, &root);
    let partitions = options
        .partitions
        .unwrap_or_else(|| u32::try_from((size >> 30).max(1)).unwrap_or(256).min(256))
        .max(1)
        .next_power_of_two();
    let (built, skipped) = wanted_kinds(&paths);
    let mut report = BuildReport {
        car: path.clone(),
        root,
        epoch: None,
        built: built.clone(),
        skipped,
        bytes: size,
        blocks: 0,
        transactions: 0,
        elapsed: Duration::ZERO,
    };
    if built.is_empty() {
        found(&paths, &mut report)?;
        report.elapsed = started.elapsed();
        return Ok(report);
    }
    let work = car.with_file_name(format!(
        "{}.index-work",
        car.file_name().and_then(|n| n.to_str()).unwrap_or("car")
    ));
    let _ = fs::remove_dir_all(&work); // leftovers of an interrupted run
    let builder_err = |source| IndexBuildError::Build {
        path: path.clone(),
        source,
    };
    let compact = |name: &str, key, value| {
        CompactBuilder::new(&work.join(name), key, value, CompactOptions { partitions })
            .map_err(|e| builder_err(BuildError::Io(e)))
    };
    let has = |k: &str| built.contains(&k);
    let mut slot_to_cid = has(KIND_SLOT_TO_CID)
        .then(|| compact("slot", 8, NODE_CID_LEN))
        .transpose()?;
    let mut sig_to_cid = has(KIND_SIG_TO_CID)
        .then(|| compact("sig", 64, NODE_CID_LEN))
        .transpose()?;
    let mut cid_to_offset = has(KIND_CID_TO_OFFSET)
        .then(|| compact("cid", NODE_CID_LEN, 9))
        .transpose()?;
    let mut sig_exists = has(KIND_SIG_EXISTS)
        .then(|| SigExistsBuilder::new(&work.join("exists"), partitions))
        .transpose()
        .map_err(|e| builder_err(BuildError::Io(e)))?;
    let address = has(KIND_ADDRESS)
        .then(|| AddressIndexBuilder::new(&work.join("asig"), partitions))
        .transpose()
        .map_err(|e| builder_err(BuildError::Io(e)))?;
    let need_tables = has(KIND_BLOCKTIME) || has(KIND_RANGES) || has(KIND_BLOCKHASH);

    let bar = progress_bar(&path, size, options.progress);

    // The pass runs on this thread (CAR parsing, frames, first signatures, the compact and slot
    // indexes); the address index (metadata decompression and decoding, rows, postings) runs on
    // a second thread fed one block at a time over a bounded channel.
    let (address_feed, address_queue) = match address {
        Some(builder) => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<AddressBatch>(ADDRESS_QUEUE_BLOCKS);
            (Some(tx), Some((builder, rx)))
        }
        None => (None, None),
    };
    let mut tables: Option<SlotTables> = None;
    let (pass, address) = std::thread::scope(|scope| {
        let worker = address_queue.map(|(builder, rx)| {
            let path = &path;
            scope.spawn(move || feed_addresses(builder, rx, path))
        });
        let pass = (|| -> Result<(), IndexBuildError> {
            let mut pass = Pass {
                path: &path,
                slot_to_cid: slot_to_cid.as_mut(),
                sig_to_cid: sig_to_cid.as_mut(),
                cid_to_offset: cid_to_offset.as_mut(),
                sig_exists: sig_exists.as_mut(),
                need_tables,
                tables: &mut tables,
                report: &mut report,
                address_feed,
                range_start: stream.header().data_start,
                entry_hashes: HashMap::new(),
                frames: HashMap::new(),
                pending: Vec::new(),
            };
            let mut sections: u64 = 0;
            loop {
                let section = match stream.next_section() {
                    Ok(Some(section)) => section,
                    Ok(None) => break,
                    Err(source) => {
                        return Err(IndexBuildError::Car {
                            path: path.clone(),
                            source,
                        });
                    }
                };
                sections += 1;
                if sections.is_multiple_of(4096) {
                    bar.set_position(section.offset);
                }
                if !pass.section(&section)? {
                    // The address thread stopped on an error: it is returned below.
                    break;
                }
            }
            Ok(())
        })();
        let address = worker.map(|w| {
            w.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        (pass, address)
    });
    pass?;
    let address = address.transpose()?;
    bar.set_position(size);
    let epoch = report
        .epoch
        .ok_or_else(|| IndexBuildError::NoBlocks { path: path.clone() })?;
    bar.set_message(format!("{}: sealing", path.display()));
    let builders = Builders {
        slot_to_cid,
        sig_to_cid,
        cid_to_offset,
        sig_exists,
        address,
        tables: tables.unwrap_or_else(|| SlotTables::new(epoch)),
    };
    seal(builders, &paths, &built, (epoch, &root), &path)?;
    let _ = fs::remove_dir_all(&work);
    bar.finish_and_clear();
    report.elapsed = started.elapsed();
    Ok(report)
}
