//! Our address → signatures index ("asig"): everything getSignaturesForAddress returns, without
//! reading the CAR. Four files per CAR (layout in `docs/archive.md`):
//!
//! - `asig-txs`: one fixed 96-byte row per transaction in CAR order (the *ordinal* is the row
//!   number; CAR order = (slot, position) order): signature, slot, position, block time and a
//!   pointer to a variable-length extra (bincode error, memo) stored after the rows.
//! - `asig-sig-to-ordinal`: compactindexsized, signature → u32 ordinal (confirmed by the row).
//! - `asig-postings`: per address a block `address, u32 count, count × u32 ordinal` descending.
//! - `asig-address-to-postings`: compactindexsized, address → u48 offset + u32 count of its block
//!   (confirmed by the address at the block start).
//!
//! Paging newest first: the `before` signature's ordinal bounds a binary search in the posting
//! list, `until`'s ordinal stops the walk; each page is one read of the postings plus one read per
//! row.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh64::xxh64;

use crate::error::FormatError;
use crate::index::compact::{BuildError, CompactBuilder, CompactIndex, CompactOptions};
use crate::index::meta::IndexMeta;
use crate::model::SignatureInfo;
use crate::readat::ReadAt;

pub const TXS_MAGIC: &[u8; 8] = b"asigtxs1";
pub const POSTINGS_MAGIC: &[u8; 8] = b"asigpst1";
pub const ROW_LEN: u64 = 96;
const DIR_VALUE_LEN: usize = 10;

/// One transaction as the builder receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxRecord {
    pub signature: [u8; 64],
    pub slot: u64,
    pub index: u32,
    pub err: Option<Vec<u8>>,
    pub memo: Option<String>,
    /// Referenced addresses (static and loaded; duplicates and sysvars are removed here).
    pub addresses: Vec<[u8; 32]>,
}

/// Builds the four asig files.
pub struct AddressIndexBuilder {
    dir: PathBuf,
    rows: BufWriter<File>,
    extras: BufWriter<File>,
    extras_len: u64,
    count: u32,
    sig_to_ordinal: CompactBuilder,
    postings: Vec<BufWriter<File>>,
}

impl AddressIndexBuilder {
    pub fn new(dir: &Path, partitions: u32) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        let partitions = partitions.max(1).next_power_of_two();
        let mut postings = Vec::with_capacity(partitions as usize);
        for p in 0..partitions {
            postings.push(BufWriter::with_capacity(
                64 << 10,
                File::create(dir.join(format!("post-{p:05}")))?,
            ));
        }
        Ok(AddressIndexBuilder {
            dir: dir.to_path_buf(),
            rows: BufWriter::with_capacity(1 << 20, File::create(dir.join("rows"))?),
            extras: BufWriter::with_capacity(1 << 20, File::create(dir.join("extras"))?),
            extras_len: 0,
            count: 0,
            sig_to_ordinal: CompactBuilder::new(
                &dir.join("sig"),
                64,
                4,
                CompactOptions { partitions },
            )?,
            postings,
        })
    }

    /// Adds the transactions of one block (in block order) with the block's time (0 = unknown).
    pub fn add_block(&mut self, block_time: i64, txs: &[TxRecord]) -> Result<(), BuildError> {
        for tx in txs {
            let ordinal = self.count;
            self.count = self.count.checked_add(1).ok_or_else(|| {
                FormatError::Index("more than 2^32 transactions in one CAR".into())
            })?;
            let err = tx.err.as_deref().unwrap_or_default();
            let memo = tx.memo.as_deref().unwrap_or_default().as_bytes();
            let err_len = u16::try_from(err.len())
                .map_err(|_| FormatError::Index("error over 64 KiB".into()))?;
            let extra_len = if err.is_empty() && memo.is_empty() {
                0
            } else {
                2 + err.len() + memo.len()
            };
            let mut row = [0u8; ROW_LEN as usize];
            row[..64].copy_from_slice(&tx.signature);
            row[64..72].copy_from_slice(&tx.slot.to_le_bytes());
            row[72..76].copy_from_slice(&tx.index.to_le_bytes());
            row[76..80].copy_from_slice(&(extra_len as u32).to_le_bytes());
            row[80..88].copy_from_slice(&self.extras_len.to_le_bytes());
            row[88..96].copy_from_slice(&block_time.to_le_bytes());
            self.rows.write_all(&row)?;
            if extra_len > 0 {
                self.extras.write_all(&err_len.to_le_bytes())?;
                self.extras.write_all(err)?;
                self.extras.write_all(memo)?;
                self.extras_len += extra_len as u64;
            }
            self.sig_to_ordinal
                .add(&tx.signature, &ordinal.to_le_bytes())?;
            let mut addresses = tx.addresses.clone();
            addresses.sort_unstable();
            addresses.dedup();
            for address in addresses.iter().filter(|a| !crate::txwire::is_sysvar(a)) {
                let part = (xxh64(address, 0) % self.postings.len() as u64) as usize;
                self.postings[part].write_all(address)?;
                self.postings[part].write_all(&ordinal.to_le_bytes())?;
            }
        }
        Ok(())
    }

    /// Writes the files named by `out` (`txs`, `sig_to_ordinal`, `postings`, `directory`).
    pub fn finish(self, out: &AddressIndexPaths, meta: &IndexMeta) -> Result<(), BuildError> {
        let dir = self.dir.clone();
        let (txs, sig_to_ordinal, postings) = self.into_parts()?;
        txs.finish(&out.txs, meta)?;
        sig_to_ordinal.finish(&out.sig_to_ordinal, &with_kind(meta, "asig-sig-to-ordinal"))?;
        postings.finish(&out.postings, &out.directory, meta)?;
        fs::remove_dir_all(&dir).ok();
        Ok(())
    }

    /// Splits the sealing into its three independent parts (the txs file, sig-to-ordinal, the
    /// postings with their directory), so that they can be sealed on different threads; the
    /// outputs are the same bytes as [`AddressIndexBuilder::finish`]'s.
    pub fn into_parts(self) -> Result<(TxsSeal, CompactBuilder, PostingsSeal), BuildError> {
        let AddressIndexBuilder {
            dir,
            rows,
            extras,
            count,
            sig_to_ordinal,
            postings,
            ..
        } = self;
        rows.into_inner()
            .map_err(|e| BuildError::Io(e.into_error()))?;
        extras
            .into_inner()
            .map_err(|e| BuildError::Io(e.into_error()))?;
        let mut parts = Vec::with_capacity(postings.len());
        for (p, part) in postings.into_iter().enumerate() {
            part.into_inner()
                .map_err(|e| BuildError::Io(e.into_error()))?;
            parts.push(dir.join(format!("post-{p:05}")));
        }
        Ok((
            TxsSeal {
                dir: dir.clone(),
                count,
            },
            sig_to_ordinal,
            PostingsSeal { dir, parts },
        ))
    }
}

/// The `asig-txs` part of a sealing: header, rows, extras.
pub struct TxsSeal {
    dir: PathBuf,
    count: u32,
}

impl TxsSeal {
    /// Writes `asig-txs` to `out` (via a temporary name).
    pub fn finish(self, out: &Path, meta: &IndexMeta) -> Result<(), BuildError> {
        let tmp = out.with_extension("index.tmp");
        {
            let mut file = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
            let mut header = Vec::new();
            header.extend_from_slice(TXS_MAGIC);
            header.extend_from_slice(&(meta.encoded_len() as u32).to_le_bytes());
            meta.encode(&mut header)?;
            header.extend_from_slice(&u64::from(self.count).to_le_bytes());
            file.write_all(&header)?;
            io::copy(&mut File::open(self.dir.join("rows"))?, &mut file)?;
            io::copy(&mut File::open(self.dir.join("extras"))?, &mut file)?;
            file.into_inner()
                .map_err(|e| BuildError::Io(e.into_error()))?
                .sync_all()?;
        }
        fs::rename(&tmp, out)?;
        Ok(())
    }
}

/// The postings part of a sealing: `asig-postings` and its directory.
pub struct PostingsSeal {
    dir: PathBuf,
    parts: Vec<PathBuf>,
}

impl PostingsSeal {
    /// Writes `asig-postings` to `postings_out` and `asig-address-to-postings` to
    /// `directory_out`, partition by partition.
    pub fn finish(
        self,
        postings_out: &Path,
        directory_out: &Path,
        meta: &IndexMeta,
    ) -> Result<(), BuildError> {
        let partitions = self.parts.len() as u32;
        let mut directory = CompactBuilder::new(
            &self.dir.join("dir"),
            32,
            DIR_VALUE_LEN,
            CompactOptions { partitions },
        )?;
        let tmp = postings_out.with_extension("index.tmp");
        let mut file = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        let mut header = Vec::new();
        header.extend_from_slice(POSTINGS_MAGIC);
        header.extend_from_slice(&(meta.encoded_len() as u32).to_le_bytes());
        meta.encode(&mut header)?;
        file.write_all(&header)?;
        let mut pos = header.len() as u64;
        for path in &self.parts {
            let raw = fs::read(path)?;
            fs::remove_file(path)?;
            // Grouped without a comparison sort: each distinct address gets an id in a hash map,
            // the ids are ranked by address, and the ordinals are placed by counting (the spill
            // file holds them in increasing order, so each group is written back to front).
            let groups = group_postings(&raw);
            drop(raw);
            for (address, ordinals) in groups.iter() {
                let n = ordinals.len() as u32;
                file.write_all(address)?;
                file.write_all(&n.to_le_bytes())?;
                for ordinal in ordinals.iter().rev() {
                    file.write_all(&ordinal.to_le_bytes())?;
                }
                let mut value = [0u8; DIR_VALUE_LEN];
                value[..6].copy_from_slice(&pos.to_le_bytes()[..6]);
                value[6..].copy_from_slice(&n.to_le_bytes());
                directory.add(address, &value)?;
                pos += 36 + 4 * u64::from(n);
            }
        }
        file.into_inner()
            .map_err(|e| BuildError::Io(e.into_error()))?
            .sync_all()?;
        fs::rename(&tmp, postings_out)?;
        directory.finish(directory_out, &with_kind(meta, "asig-address-to-postings"))?;
        Ok(())
    }
}

/// One spill partition's postings grouped by address: addresses in byte order, each with its
/// ordinals in spill (increasing) order.
struct PostingGroups {
    /// Distinct addresses, sorted.
    addresses: Vec<[u8; 32]>,
    /// Start of each address's ordinals in `ordinals` (one more entry than addresses).
    starts: Vec<usize>,
    ordinals: Vec<u32>,
}

impl PostingGroups {
    fn iter(&self) -> impl Iterator<Item = (&[u8; 32], &[u32])> {
        self.addresses
            .iter()
            .enumerate()
            .map(|(i, a)| (a, &self.ordinals[self.starts[i]..self.starts[i + 1]]))
    }
}

/// Groups `address[32] | ordinal u32` records (in increasing ordinal order) by address.
fn group_postings(raw: &[u8]) -> PostingGroups {
    let mut ids: std::collections::HashMap<[u8; 32], u32> = std::collections::HashMap::new();
    let mut distinct: Vec<[u8; 32]> = Vec::new();
    let mut id_of: Vec<u32> = Vec::with_capacity(raw.len() / 36);
    for record in raw.chunks_exact(36) {
        let mut address = [0u8; 32];
        address.copy_from_slice(&record[..32]);
        let next = distinct.len() as u32;
        let id = *ids.entry(address).or_insert_with(|| {
            distinct.push(address);
            next
        });
        id_of.push(id);
    }
    drop(ids);
    let mut by_address: Vec<u32> = (0..distinct.len() as u32).collect();
    by_address.sort_unstable_by(|&a, &b| distinct[a as usize].cmp(&distinct[b as usize]));
    let mut counts = vec![0usize; distinct.len()];
    for &id in &id_of {
        counts[id as usize] += 1;
    }
    // Start of each id's group, in address order.
    let mut next_slot = vec![0usize; distinct.len()];
    let mut starts = Vec::with_capacity(distinct.len() + 1);
    let mut at = 0;
    for &id in &by_address {
        starts.push(at);
        next_slot[id as usize] = at;
        at += counts[id as usize];
    }
    starts.push(at);
    let mut ordinals = vec![0u32; id_of.len()];
    for (record, &id) in raw.chunks_exact(36).zip(&id_of) {
        let slot = &mut next_slot[id as usize];
        ordinals[*slot] = u32::from_le_bytes([record[32], record[33], record[34], record[35]]);
        *slot += 1;
    }
    let addresses = by_address.iter().map(|&id| distinct[id as usize]).collect();
    PostingGroups {
        addresses,
        starts,
        ordinals,
    }
}

/// `meta` with its `kind` replaced by `kind` (first pair).
pub fn with_kind(meta: &IndexMeta, kind: &str) -> IndexMeta {
    let mut meta = meta.clone();
    meta.pairs.retain(|(k, _)| k != b"kind");
    meta.pairs
        .insert(0, (b"kind".to_vec(), kind.as_bytes().to_vec()));
    meta
}

/// The four files of one asig index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressIndexPaths {
    pub txs: PathBuf,
    pub sig_to_ordinal: PathBuf,
    pub postings: PathBuf,
    pub directory: PathBuf,
}

impl AddressIndexPaths {
    pub fn all(&self) -> [&Path; 4] {
        [
            &self.txs,
            &self.sig_to_ordinal,
            &self.postings,
            &self.directory,
        ]
    }
}

/// Newest-first bounds of one query inside one CAR: ordinals strictly below `below` and strictly
/// above `above`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OrdinalBounds {
    pub below: Option<u32>,
    pub above: Option<u32>,
}

/// Reader of one CAR's asig files.
pub struct AddressIndex<R> {
    txs: R,
    meta: IndexMeta,
    rows_start: u64,
    count: u64,
    sig_to_ordinal: CompactIndex<R>,
    postings: R,
    directory: CompactIndex<R>,
}

fn io_err(what: &'static str) -> impl Fn(io::Error) -> FormatError {
    move |e| FormatError::Index(format!("{what}: {e}"))
}

impl<R: ReadAt> AddressIndex<R> {
    pub fn open(txs: R, sig_to_ordinal: R, postings: R, directory: R) -> Result<Self, FormatError> {
        let head = txs.read_vec(0, 12).map_err(io_err("asig-txs header"))?;
        if &head[..8] != TXS_MAGIC {
            return Err(FormatError::Index("not an asig-txs file (magic)".into()));
        }
        let meta_len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        if meta_len > 4096 {
            return Err(FormatError::Index("asig-txs metadata length".into()));
        }
        let rest = txs
            .read_vec(12, meta_len + 8)
            .map_err(io_err("asig-txs header"))?;
        let (meta, _) = IndexMeta::parse(&rest[..meta_len])?;
        let mut c = [0u8; 8];
        c.copy_from_slice(&rest[meta_len..]);
        let count = u64::from_le_bytes(c);
        let rows_start = 12 + meta_len as u64 + 8;
        if count > u64::from(u32::MAX) || txs.len() < rows_start + count * ROW_LEN {
            return Err(FormatError::Index("asig-txs is truncated".into()));
        }
        let postings_head = postings
            .read_vec(0, 8)
            .map_err(io_err("asig-postings header"))?;
        if postings_head != POSTINGS_MAGIC {
            return Err(FormatError::Index(
                "not an asig-postings file (magic)".into(),
            ));
        }
        Ok(AddressIndex {
            txs,
            meta,
            rows_start,
            count,
            sig_to_ordinal: CompactIndex::open(sig_to_ordinal)?,
            postings,
            directory: CompactIndex::open(directory)?,
        })
    }

    pub fn meta(&self) -> &IndexMeta {
        &self.meta
    }

    pub fn directory_meta(&self) -> &IndexMeta {
        self.directory.meta()
    }

    pub fn sig_to_ordinal_meta(&self) -> &IndexMeta {
        self.sig_to_ordinal.meta()
    }

    /// Transactions in this CAR.
    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The ordinal of a signature, confirmed against its row.
    pub fn ordinal_of(&self, signature: &[u8; 64]) -> Result<Option<u32>, FormatError> {
        let Some(value) = self.sig_to_ordinal.lookup(signature)? else {
            return Ok(None);
        };
        let ordinal = u32::from_le_bytes(
            value
                .try_into()
                .map_err(|_| FormatError::Index("ordinal value".into()))?,
        );
        if u64::from(ordinal) >= self.count {
            return Ok(None);
        }
        let mut sig = [0u8; 64];
        self.txs
            .read_exact_at(&mut sig, self.rows_start + u64::from(ordinal) * ROW_LEN)
            .map_err(io_err("asig-txs row"))?;
        Ok((&sig == signature).then_some(ordinal))
    }

    /// The row of `ordinal`.
    pub fn row(&self, ordinal: u32) -> Result<SignatureInfo, FormatError> {
        if u64::from(ordinal) >= self.count {
            return Err(FormatError::Index(format!(
                "ordinal {ordinal} out of range"
            )));
        }
        let mut row = [0u8; ROW_LEN as usize];
        self.txs
            .read_exact_at(&mut row, self.rows_start + u64::from(ordinal) * ROW_LEN)
            .map_err(io_err("asig-txs row"))?;
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&row[at..at + 8]);
            u64::from_le_bytes(w)
        };
        let mut signature = [0u8; 64];
        signature.copy_from_slice(&row[..64]);
        let extra_len = u32::from_le_bytes([row[76], row[77], row[78], row[79]]) as usize;
        let extra_off = word(80);
        let block_time = word(88) as i64;
        let (mut err, mut memo) = (None, None);
        if extra_len > 0 {
            let extras_start = self.rows_start + self.count * ROW_LEN;
            let extra = self
                .txs
                .read_vec(extras_start + extra_off, extra_len)
                .map_err(io_err("asig-txs extra"))?;
            let err_len = usize::from(u16::from_le_bytes([extra[0], *extra.get(1).unwrap_or(&0)]));
            let err_bytes = extra
                .get(2..2 + err_len)
                .ok_or(FormatError::Index("asig extra".into()))?;
            if !err_bytes.is_empty() {
                err = Some(err_bytes.to_vec());
            }
            let memo_bytes = &extra[2 + err_len..];
            if !memo_bytes.is_empty() {
                memo = Some(String::from_utf8_lossy(memo_bytes).into_owned());
            }
        }
        Ok(SignatureInfo {
            signature,
            slot: word(64),
            index: u32::from_le_bytes([row[72], row[73], row[74], row[75]]),
            err,
            memo,
            block_time: (block_time != 0).then_some(block_time),
        })
    }

    /// Rows of `address` newest first within `bounds`, at most `limit`.
    pub fn query(
        &self,
        address: &[u8; 32],
        bounds: OrdinalBounds,
        limit: usize,
    ) -> Result<Vec<SignatureInfo>, FormatError> {
        let Some(value) = self.directory.lookup(address)? else {
            return Ok(Vec::new());
        };
        let mut off = [0u8; 8];
        off[..6].copy_from_slice(&value[..6]);
        let offset = u64::from_le_bytes(off);
        let count = u64::from(u32::from_le_bytes([value[6], value[7], value[8], value[9]]));
        let head = match self.postings.read_vec(offset, 36) {
            Ok(head) => head,
            Err(_) => return Ok(Vec::new()),
        };
        if head[..32] != address[..]
            || u64::from(u32::from_le_bytes([head[32], head[33], head[34], head[35]])) != count
        {
            return Ok(Vec::new()); // a false positive of the directory
        }
        let list = offset + 36;
        let at = |i: u64| -> Result<u32, FormatError> {
            let mut b = [0u8; 4];
            self.postings
                .read_exact_at(&mut b, list + 4 * i)
                .map_err(io_err("asig-postings"))?;
            Ok(u32::from_le_bytes(b))
        };
        // First position whose ordinal is below `below` (the list is descending).
        let mut start = 0u64;
        if let Some(below) = bounds.below {
            let (mut lo, mut hi) = (0u64, count);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if at(mid)? >= below {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            start = lo;
        }
        let end = count.min(start + limit as u64);
        if start >= end {
            return Ok(Vec::new());
        }
        let chunk = self
            .postings
            .read_vec(list + 4 * start, (4 * (end - start)) as usize)
            .map_err(io_err("asig-postings"))?;
        let mut out = Vec::with_capacity((end - start) as usize);
        for b in chunk.chunks_exact(4) {
            let ordinal = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if bounds.above.is_some_and(|above| ordinal <= above) {
                break;
            }
            out.push(self.row(ordinal)?);
        }
        Ok(out)
    }
}
