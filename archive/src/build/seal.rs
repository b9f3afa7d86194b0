//! Sealing: the builders the pass filled ([`Builders`]) become index files, each an independent
//! job (own spill files, own output) run by two threads taking jobs largest first; the outputs are
//! the same bytes as sealing them one after the other.

use std::path::Path;

use super::{
    IndexBuildError, KIND_ADDRESS, KIND_BLOCKHASH, KIND_BLOCKTIME, KIND_CID_TO_OFFSET, KIND_RANGES,
    KIND_SIG_EXISTS, KIND_SIG_TO_CID, KIND_SLOT_TO_CID, build_err,
};
use crate::cid::{Cid, NODE_CID_LEN};
use crate::index::addr::{AddressIndexBuilder, AddressIndexPaths, with_kind};
use crate::index::compact::{BuildError, CompactBuilder, CompactOptions};
use crate::index::meta::IndexMeta;
use crate::index::sigexists::SigExistsBuilder;
use crate::index::slots::SlotTables;
use crate::index::{IndexPaths, NETWORK};

/// One index to seal.
type SealJob<'a> = Box<dyn FnOnce() -> Result<(), IndexBuildError> + Send + 'a>;

/// Threads sealing indexes at once (each holds one spill partition in memory).
const SEAL_THREADS: usize = 2;

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

/// The builders of the kinds being built: filled by the pass, then sealed into index files.
pub(super) struct Builders {
    pub(super) slot_to_cid: Option<CompactBuilder>,
    pub(super) sig_to_cid: Option<CompactBuilder>,
    pub(super) cid_to_offset: Option<CompactBuilder>,
    pub(super) sig_exists: Option<SigExistsBuilder>,
    pub(super) address: Option<AddressIndexBuilder>,
    /// Created at the first block (it fixes the epoch); `None` after the pass: none needed, or
    /// no block.
    pub(super) tables: Option<SlotTables>,
}

impl Builders {
    /// A builder for each kind in `built`, spilling under `work` to `partitions` partitions.
    pub(super) fn new(
        work: &Path,
        built: &[&'static str],
        partitions: u32,
        path: &Path,
    ) -> Result<Builders, IndexBuildError> {
        let builder_err = |source| build_err(path, source);
        let compact = |name: &str, key, value| {
            CompactBuilder::new(&work.join(name), key, value, CompactOptions { partitions })
                .map_err(|e| builder_err(BuildError::Io(e)))
        };
        let has = |k: &str| built.contains(&k);
        let slot_to_cid = has(KIND_SLOT_TO_CID)
            .then(|| compact("slot", 8, NODE_CID_LEN))
            .transpose()?;
        let sig_to_cid = has(KIND_SIG_TO_CID)
            .then(|| compact("sig", 64, NODE_CID_LEN))
            .transpose()?;
        let cid_to_offset = has(KIND_CID_TO_OFFSET)
            .then(|| compact("cid", NODE_CID_LEN, 9))
            .transpose()?;
        let sig_exists = has(KIND_SIG_EXISTS)
            .then(|| SigExistsBuilder::new(&work.join("exists"), partitions))
            .transpose()
            .map_err(|e| builder_err(BuildError::Io(e)))?;
        let address = has(KIND_ADDRESS)
            .then(|| AddressIndexBuilder::new(&work.join("asig"), partitions))
            .transpose()
            .map_err(|e| builder_err(BuildError::Io(e)))?;
        Ok(Builders {
            slot_to_cid,
            sig_to_cid,
            cid_to_offset,
            sig_exists,
            address,
            tables: None,
        })
    }
}

/// Seals every built index: each is independent (own spill files, own output), so they are
/// sealed by two threads taking jobs largest first; the outputs are the same bytes as sealing
/// them one after the other.
pub(super) fn seal(
    builders: Builders,
    paths: &IndexPaths,
    built: &[&'static str],
    (epoch, root): (u64, &Cid),
    path: &Path,
) -> Result<(), IndexBuildError> {
    let meta_with = |kind: Option<&str>| IndexMeta::standard(kind, epoch, root, NETWORK);
    let Builders {
        slot_to_cid,
        sig_to_cid,
        cid_to_offset,
        sig_exists,
        address,
        tables,
    } = builders;
    let tables = tables.unwrap_or_else(|| SlotTables::new(epoch));
    let builder_err = |source| build_err(path, source);
    let blockhash_meta = meta_with(Some(KIND_BLOCKHASH));
    let mut jobs: Vec<SealJob<'_>> = Vec::new();
    if let Some(b) = address {
        address_jobs(
            &mut jobs,
            b,
            &paths.address,
            meta_with(Some("asig-txs")),
            path,
        )?;
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
    jobs.push(Box::new(|| {
        write_tables(&tables, paths, built, &blockhash_meta, path)
    }));
    run_jobs(jobs, SEAL_THREADS)?;
    Ok(())
}

/// The address index's three independent jobs: postings + directory, sig-to-ordinal, the txs
/// file.
fn address_jobs<'a>(
    jobs: &mut Vec<SealJob<'a>>,
    builder: AddressIndexBuilder,
    out: &'a AddressIndexPaths,
    meta: IndexMeta,
    path: &'a Path,
) -> Result<(), IndexBuildError> {
    let builder_err = move |source| build_err(path, source);
    let (txs, sig_to_ordinal, postings) = builder.into_parts().map_err(builder_err)?;
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
    Ok(())
}

/// The slot tables' files among the kinds built: slot-to-blocktime, slot-ranges,
/// slot-to-blockhash.
fn write_tables(
    tables: &SlotTables,
    paths: &IndexPaths,
    built: &[&'static str],
    blockhash_meta: &IndexMeta,
    path: &Path,
) -> Result<(), IndexBuildError> {
    let has = |k: &str| built.contains(&k);
    let io = |source| IndexBuildError::Io {
        path: path.to_path_buf(),
        source,
    };
    let format_err = |source| IndexBuildError::Format {
        path: path.to_path_buf(),
        source,
    };
    if has(KIND_BLOCKTIME) {
        tables
            .write_blocktime(&paths.slot_to_blocktime)
            .map_err(io)?;
    }
    if has(KIND_RANGES) {
        tables.write_ranges(&paths.slot_ranges).map_err(io)?;
    }
    if has(KIND_BLOCKHASH) {
        tables
            .write_blockhashes(&paths.slot_to_blockhash, blockhash_meta)
            .map_err(format_err)?;
    }
    Ok(())
}
