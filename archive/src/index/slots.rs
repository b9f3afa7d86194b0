//! Per-slot tables of one epoch (or piece), fixed-size records, read with one positioned read per
//! lookup:
//! - slot-to-blocktime (magic `blocktimeindex`, format §3.4): u32 Unix time per slot, 0 = unknown.
//! - slot-ranges (format §3.8): u64 offset + u32 length of the byte range holding every node of the
//!   slot, ending with its Block section; all zero = no block.
//! - slot-to-blockhash (ours, magic `slothash`, indexmeta, u64 first slot, u64 count, then 32 bytes
//!   per slot, zero = no block): previousBlockhash without reading the parent's range.
//!
//! The two published formats cover the whole epoch (432,000 records); we write them as sparse
//! files, only the span from the first to the last block held is written, so a small piece
//! takes a few KB of disk, not 7 MB. Ours covers only that span (its header says which).

use std::fs::{self, File};
use std::path::Path;

use crate::SLOTS_PER_EPOCH;
use crate::error::FormatError;
use crate::index::meta::IndexMeta;
use crate::readat::ReadAt;

pub const BLOCKTIME_MAGIC: &[u8; 14] = b"blocktimeindex";
pub const BLOCKHASH_MAGIC: &[u8; 8] = b"slothash";
const BLOCKTIME_HEADER: u64 = 14 + 32;
const RANGE_RECORD: u64 = 12;

fn write_atomically(out: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_sparse_atomically(out, bytes.len() as u64, &[(0, bytes)])
}

/// Writes a file of `len` bytes of which only `parts` (offset, bytes) are written; the rest reads
/// as zeros and takes no disk (holes). As `*.tmp`, fsynced, then renamed.
fn write_sparse_atomically(out: &Path, len: u64, parts: &[(u64, &[u8])]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let tmp = out.with_extension("tmp");
    let file = File::create(&tmp)?;
    file.set_len(len)?;
    for (offset, bytes) in parts {
        file.write_all_at(bytes, *offset)?;
    }
    file.sync_all()?;
    fs::rename(&tmp, out)
}

/// In-memory tables filled while scanning one CAR, written at the end.
#[derive(Debug, Clone)]
pub struct SlotTables {
    pub epoch: u64,
    pub block_times: Vec<u32>,
    pub ranges: Vec<(u64, u32)>,
    pub hashes: Vec<[u8; 32]>,
}

impl SlotTables {
    pub fn new(epoch: u64) -> Self {
        let n = SLOTS_PER_EPOCH as usize;
        SlotTables {
            epoch,
            block_times: vec![0; n],
            ranges: vec![(0, 0); n],
            hashes: vec![[0; 32]; n],
        }
    }

    fn index(&self, slot: u64) -> Option<usize> {
        let start = self.epoch * SLOTS_PER_EPOCH;
        (slot >= start && slot < start + SLOTS_PER_EPOCH).then(|| (slot - start) as usize)
    }

    /// Records one block.
    pub fn set(
        &mut self,
        slot: u64,
        block_time: i64,
        range: (u64, u32),
        hash: [u8; 32],
    ) -> Result<(), FormatError> {
        let i = self.index(slot).ok_or_else(|| {
            FormatError::Index(format!("slot {slot} outside epoch {}", self.epoch))
        })?;
        self.block_times[i] = u32::try_from(block_time.max(0)).unwrap_or(0);
        self.ranges[i] = range;
        self.hashes[i] = hash;
        Ok(())
    }

    /// The records from the first to the last slot with a block (empty when none has one).
    pub fn held(&self) -> std::ops::Range<usize> {
        let present = |range: &(u64, u32)| range.1 != 0;
        match (
            self.ranges.iter().position(present),
            self.ranges.iter().rposition(present),
        ) {
            (Some(first), Some(last)) => first..last + 1,
            _ => 0..0,
        }
    }

    /// Writes slot-to-blocktime: the whole epoch's size, only the held span on disk.
    pub fn write_blocktime(&self, out: &Path) -> std::io::Result<()> {
        let start = self.epoch * SLOTS_PER_EPOCH;
        let mut header = Vec::with_capacity(BLOCKTIME_HEADER as usize);
        header.extend_from_slice(BLOCKTIME_MAGIC);
        header.extend_from_slice(&start.to_le_bytes());
        header.extend_from_slice(&(start + SLOTS_PER_EPOCH - 1).to_le_bytes());
        header.extend_from_slice(&self.epoch.to_le_bytes());
        header.extend_from_slice(&SLOTS_PER_EPOCH.to_le_bytes());
        let held = self.held();
        let times: Vec<u8> = self.block_times[held.clone()]
            .iter()
            .flat_map(|t| t.to_le_bytes())
            .collect();
        let len = BLOCKTIME_HEADER + 4 * SLOTS_PER_EPOCH;
        let at = BLOCKTIME_HEADER + 4 * held.start as u64;
        write_sparse_atomically(out, len, &[(0, &header), (at, &times)])
    }

    /// Writes slot-ranges: the whole epoch's size (format §3.8), only the held span on disk.
    pub fn write_ranges(&self, out: &Path) -> std::io::Result<()> {
        let held = self.held();
        let mut bytes = Vec::with_capacity(12 * held.len());
        for (offset, len) in &self.ranges[held.clone()] {
            bytes.extend_from_slice(&offset.to_le_bytes());
            bytes.extend_from_slice(&len.to_le_bytes());
        }
        let at = RANGE_RECORD * held.start as u64;
        write_sparse_atomically(out, RANGE_RECORD * SLOTS_PER_EPOCH, &[(at, &bytes)])
    }

    /// Writes slot-to-blockhash for the held span only (its header names the first slot and
    /// the count).
    pub fn write_blockhashes(&self, out: &Path, meta: &IndexMeta) -> Result<(), FormatError> {
        let held = self.held();
        let mut bytes = Vec::with_capacity(64 + 32 * held.len());
        bytes.extend_from_slice(BLOCKHASH_MAGIC);
        bytes.extend_from_slice(&(meta.encoded_len() as u32).to_le_bytes());
        meta.encode(&mut bytes)?;
        let first = self.epoch * SLOTS_PER_EPOCH + held.start as u64;
        bytes.extend_from_slice(&first.to_le_bytes());
        bytes.extend_from_slice(&(held.len() as u64).to_le_bytes());
        for h in &self.hashes[held] {
            bytes.extend_from_slice(h);
        }
        write_atomically(out, &bytes).map_err(|e| FormatError::Index(e.to_string()))
    }
}

/// slot-to-blocktime reader.
pub struct BlockTimes<R> {
    source: R,
    start: u64,
    end: u64,
}

impl<R: ReadAt> BlockTimes<R> {
    pub fn open(source: R) -> Result<Self, FormatError> {
        let header = source
            .read_vec(0, BLOCKTIME_HEADER as usize)
            .map_err(|e| FormatError::Index(format!("blocktime header: {e}")))?;
        if &header[..14] != BLOCKTIME_MAGIC {
            return Err(FormatError::Index(
                "not a slot-to-blocktime file (magic)".into(),
            ));
        }
        let word = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&header[14 + 8 * i..22 + 8 * i]);
            u64::from_le_bytes(b)
        };
        let (start, end, epoch, capacity) = (word(0), word(1), word(2), word(3));
        if start / SLOTS_PER_EPOCH != epoch
            || end / SLOTS_PER_EPOCH != epoch
            || end < start
            || capacity != end - start + 1
            || source.len() < BLOCKTIME_HEADER + 4 * capacity
        {
            return Err(FormatError::Index(
                "slot-to-blocktime header is inconsistent".into(),
            ));
        }
        Ok(BlockTimes { source, start, end })
    }

    pub fn epoch(&self) -> u64 {
        self.start / SLOTS_PER_EPOCH
    }

    /// The stored time (0 = unknown or skipped); `None` outside the file's range.
    pub fn get(&self, slot: u64) -> Result<Option<u32>, FormatError> {
        if slot < self.start || slot > self.end {
            return Ok(None);
        }
        let mut b = [0u8; 4];
        self.source
            .read_exact_at(&mut b, BLOCKTIME_HEADER + 4 * (slot - self.start))
            .map_err(|e| FormatError::Index(format!("blocktime read: {e}")))?;
        Ok(Some(u32::from_le_bytes(b)))
    }
}

/// slot-ranges reader.
pub struct SlotRanges<R> {
    source: R,
    start: u64,
}

impl<R: ReadAt> SlotRanges<R> {
    pub fn open(source: R, epoch: u64) -> Result<Self, FormatError> {
        if source.len() != SLOTS_PER_EPOCH * RANGE_RECORD {
            return Err(FormatError::Index(format!(
                "slot-ranges file of {} bytes",
                source.len()
            )));
        }
        Ok(SlotRanges {
            source,
            start: epoch * SLOTS_PER_EPOCH,
        })
    }

    /// The slot's byte range, `None` when no block is recorded or the slot is outside the epoch.
    pub fn get(&self, slot: u64) -> Result<Option<(u64, u32)>, FormatError> {
        if slot < self.start || slot >= self.start + SLOTS_PER_EPOCH {
            return Ok(None);
        }
        let mut b = [0u8; 12];
        self.source
            .read_exact_at(&mut b, RANGE_RECORD * (slot - self.start))
            .map_err(|e| FormatError::Index(format!("slot-ranges read: {e}")))?;
        let mut off = [0u8; 8];
        off.copy_from_slice(&b[..8]);
        let len = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
        Ok((len != 0).then(|| (u64::from_le_bytes(off), len)))
    }

    /// How many slots have a block (the whole file read in chunks).
    pub fn count(&self) -> Result<u64, FormatError> {
        const CHUNK: u64 = 4096;
        let mut count = 0;
        let mut i = 0;
        while i < SLOTS_PER_EPOCH {
            let n = CHUNK.min(SLOTS_PER_EPOCH - i);
            let bytes = self
                .source
                .read_vec(i * RANGE_RECORD, (n * RANGE_RECORD) as usize)
                .map_err(|e| FormatError::Index(format!("slot-ranges read: {e}")))?;
            count += bytes
                .chunks_exact(12)
                .filter(|rec| rec[8..12] != [0, 0, 0, 0])
                .count() as u64;
            i += n;
        }
        Ok(count)
    }

    /// Present slots at the two ends: (first, last), scanning in chunks.
    pub fn bounds(&self) -> Result<Option<(u64, u64)>, FormatError> {
        const CHUNK: u64 = 4096;
        let read = |from: u64, count: u64| -> Result<Vec<u8>, FormatError> {
            self.source
                .read_vec(from * RANGE_RECORD, (count * RANGE_RECORD) as usize)
                .map_err(|e| FormatError::Index(format!("slot-ranges read: {e}")))
        };
        let present = |rec: &[u8]| rec[8..12] != [0, 0, 0, 0];
        let mut first = None;
        let mut i = 0;
        while i < SLOTS_PER_EPOCH && first.is_none() {
            let n = CHUNK.min(SLOTS_PER_EPOCH - i);
            let bytes = read(i, n)?;
            first = bytes
                .chunks_exact(12)
                .position(present)
                .map(|p| i + p as u64);
            i += n;
        }
        let Some(first) = first else { return Ok(None) };
        let mut last = first;
        let mut end = SLOTS_PER_EPOCH;
        while end > first {
            let from = end.saturating_sub(CHUNK).max(first);
            let bytes = read(from, end - from)?;
            if let Some(p) = bytes.chunks_exact(12).rposition(present) {
                last = from + p as u64;
                break;
            }
            end = from;
        }
        Ok(Some((self.start + first, self.start + last)))
    }
}

/// slot-to-blockhash reader.
pub struct BlockHashes<R> {
    source: R,
    meta: IndexMeta,
    data_start: u64,
    start: u64,
    count: u64,
}

impl<R: ReadAt> BlockHashes<R> {
    pub fn open(source: R) -> Result<Self, FormatError> {
        let io = |e: std::io::Error| FormatError::Index(format!("blockhash header: {e}"));
        let head = source.read_vec(0, 12).map_err(io)?;
        if &head[..8] != BLOCKHASH_MAGIC {
            return Err(FormatError::Index(
                "not a slot-to-blockhash file (magic)".into(),
            ));
        }
        let meta_len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        if meta_len > 4096 {
            return Err(FormatError::Index("blockhash metadata length".into()));
        }
        let rest = source.read_vec(12, meta_len + 16).map_err(io)?;
        let (meta, _) = IndexMeta::parse(&rest[..meta_len])?;
        let mut w = [0u8; 8];
        w.copy_from_slice(&rest[meta_len..meta_len + 8]);
        let start = u64::from_le_bytes(w);
        w.copy_from_slice(&rest[meta_len + 8..meta_len + 16]);
        let count = u64::from_le_bytes(w);
        let data_start = 12 + meta_len as u64 + 16;
        if count > SLOTS_PER_EPOCH || source.len() < data_start + 32 * count {
            return Err(FormatError::Index("slot-to-blockhash is truncated".into()));
        }
        Ok(BlockHashes {
            source,
            meta,
            data_start,
            start,
            count,
        })
    }

    pub fn meta(&self) -> &IndexMeta {
        &self.meta
    }

    /// The blockhash of `slot`, `None` when no block is recorded.
    pub fn get(&self, slot: u64) -> Result<Option<[u8; 32]>, FormatError> {
        if slot < self.start || slot >= self.start + self.count {
            return Ok(None);
        }
        let mut h = [0u8; 32];
        self.source
            .read_exact_at(&mut h, self.data_start + 32 * (slot - self.start))
            .map_err(|e| FormatError::Index(format!("blockhash read: {e}")))?;
        Ok((h != [0; 32]).then_some(h))
    }
}
