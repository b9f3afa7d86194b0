//! The index builder behind `appliance archive index`: one sequential pass over a CAR (whole
//! epoch or piece) feeding every index that is still missing next to it, then sealing each one.
//! The pass runs on two threads (CAR parsing and the compact/slot indexes; metadata decoding and
//! the address index, fed per block over a bounded channel); sealing runs on two threads.
//! Memory stays bounded: keys are spilled to partition files (count chosen from the CAR size),
//! per-block state is dropped at each Block node, slot tables are fixed-size. Each index is written
//! under a temporary name and renamed when complete, so an interrupted build redoes only the
//! indexes that were not finished.

mod address;
mod pass;
mod seal;

use std::fs::{self, File};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::car::{CarStream, CarStreamError};
use crate::cid::Cid;
use crate::error::FormatError;
use crate::index::IndexPaths;
use crate::index::compact::BuildError;
use seal::Builders;

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

/// Builds the missing indexes of one CAR.
pub fn build_indexes(car: &Path, options: &BuildOptions) -> Result<BuildReport, IndexBuildError> {
    let started = Instant::now();
    let path = car.to_path_buf();
    let (size, mut stream) = open_car(car)?;
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
    let mut builders = Builders::new(&work, &built, partitions, &path)?;
    let has = |k: &str| built.contains(&k);
    let need_tables = has(KIND_BLOCKTIME) || has(KIND_RANGES) || has(KIND_BLOCKHASH);
    let bar = progress_bar(&path, size, options.progress);
    pass::run(
        &mut stream,
        &mut builders,
        need_tables,
        &mut report,
        (&path, &bar),
    )?;
    bar.set_position(size);
    let epoch = report
        .epoch
        .ok_or_else(|| IndexBuildError::NoBlocks { path: path.clone() })?;
    bar.set_message(format!("{}: sealing", path.display()));
    seal::seal(builders, &paths, &built, (epoch, &root), &path)?;
    let _ = fs::remove_dir_all(&work);
    bar.finish_and_clear();
    report.elapsed = started.elapsed();
    Ok(report)
}

/// Opens the CAR for the pass: its size and a stream over its sections.
fn open_car(car: &Path) -> Result<(u64, CarStream<BufReader<File>>), IndexBuildError> {
    let io = |source| IndexBuildError::Io {
        path: car.to_path_buf(),
        source,
    };
    let file = File::open(car).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let stream =
        CarStream::new(BufReader::with_capacity(1 << 20, file), 32 << 20).map_err(|source| {
            IndexBuildError::Car {
                path: car.to_path_buf(),
                source,
            }
        })?;
    Ok((size, stream))
}
