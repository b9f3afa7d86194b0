//! The bounded-memory compactindexsized builder: (key, value) pairs are spilled to partition
//! files by `XXH64 mod P`, then each partition is sealed in memory ([`super::seal`]) and the file
//! written (header, bucket headers patched at the end, entry tables).

use std::fs::{self, File};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh64::xxh64;

use super::hash::bucket_of;
use super::seal::{Shape, seal_partition};
use super::{BUCKET_HEADER_LEN, BuildError, HASH_LEN, MAGIC, TARGET_BUCKET_ENTRIES};
use crate::error::FormatError;
use crate::index::meta::IndexMeta;

/// Builder options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactOptions {
    /// Partitions (power of two); more partitions = less memory when sealing.
    pub partitions: u32,
}

/// Streams (key, value) pairs to partition files, then writes the index.
pub struct CompactBuilder {
    key_len: usize,
    value_len: usize,
    dir: PathBuf,
    parts: Vec<BufWriter<File>>,
    /// Keys whose hash could be moved by the rejection loop, kept aside (practically none).
    suspicious: Vec<Vec<u8>>,
    count: u64,
}

impl CompactBuilder {
    /// A builder spilling to `dir` (created; removed by [`CompactBuilder::finish`]).
    pub fn new(
        dir: &Path,
        key_len: usize,
        value_len: usize,
        options: CompactOptions,
    ) -> std::io::Result<Self> {
        fs::create_dir_all(dir)?;
        let partitions = options.partitions.max(1).next_power_of_two();
        let mut parts = Vec::with_capacity(partitions as usize);
        for p in 0..partitions {
            let file = File::create(dir.join(format!("part-{p:05}")))?;
            parts.push(BufWriter::with_capacity(64 << 10, file));
        }
        Ok(CompactBuilder {
            key_len,
            value_len,
            dir: dir.to_path_buf(),
            parts,
            suspicious: Vec::new(),
            count: 0,
        })
    }

    /// Adds one pair; a later pair with the same key replaces an earlier one.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<(), BuildError> {
        if key.len() != self.key_len || value.len() != self.value_len {
            return Err(BuildError::Format(FormatError::Index(
                "key or value of the wrong size".into(),
            )));
        }
        let h = xxh64(key, 0);
        if h < 1 << 32 {
            if self.suspicious.len() >= 1 << 20 {
                return Err(BuildError::Format(FormatError::Index(
                    "too many low key hashes".into(),
                )));
            }
            let mut record = key.to_vec();
            record.extend_from_slice(value);
            self.suspicious.push(record);
        } else {
            let part = (h % self.parts.len() as u64) as usize;
            self.parts[part].write_all(key)?;
            self.parts[part].write_all(value)?;
        }
        self.count += 1;
        Ok(())
    }

    /// Pairs added so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Seals every bucket and writes the index to `out` (via `out.tmp`, renamed when complete).
    pub fn finish(self, out: &Path, meta: &IndexMeta) -> Result<(), BuildError> {
        let CompactBuilder {
            key_len,
            value_len,
            dir,
            parts,
            suspicious,
            count,
        } = self;
        let partitions = parts.len() as u32;
        let part_paths = flush_parts(parts, &dir)?;
        let wanted = count.div_ceil(TARGET_BUCKET_ENTRIES).max(1);
        let num_buckets =
            u32::try_from(wanted.div_ceil(u64::from(partitions)) * u64::from(partitions))
                .map_err(|_| BuildError::Format(FormatError::Index("too many buckets".into())))?;
        let tmp = out.with_extension("index.tmp");
        let mut file = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        let table_start = write_header(&mut file, meta, value_len, num_buckets)?;
        let mut bucket_headers = vec![0u8; num_buckets as usize * BUCKET_HEADER_LEN as usize];
        file.write_all(&bucket_headers)?;
        let mut pos = table_start + bucket_headers.len() as u64;
        let shape = Shape {
            stride: key_len + value_len,
            key_len,
            num_buckets,
        };
        // Suspicious keys: route by their real bucket.
        let mut aside: Vec<Vec<Vec<u8>>> = vec![Vec::new(); partitions as usize];
        for record in suspicious {
            let bucket = bucket_of(&record[..key_len], num_buckets);
            aside[(bucket % partitions) as usize].push(record);
        }
        let mut keys: Vec<u8> = Vec::new();
        for (p, path) in part_paths.iter().enumerate() {
            let records = read_partition(path, &mut aside[p], shape.stride)?;
            seal_partition(
                &records,
                shape,
                &mut keys,
                &mut bucket_headers,
                (&mut file, &mut pos),
            )?;
        }
        let file = file
            .into_inner()
            .map_err(|e| BuildError::Io(e.into_error()))?;
        patch_bucket_headers(file, table_start, &mut bucket_headers, pos)?;
        fs::rename(&tmp, out)?;
        fs::remove_dir_all(&dir).ok();
        Ok(())
    }
}

/// Flushes the spill files and returns their paths, partition by partition.
fn flush_parts(parts: Vec<BufWriter<File>>, dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
    let mut part_paths = Vec::with_capacity(parts.len());
    for (p, part) in parts.into_iter().enumerate() {
        // Spill files are read back below and deleted: flushed, not synced to disk.
        part.into_inner()
            .map_err(|e| BuildError::Io(e.into_error()))?;
        part_paths.push(dir.join(format!("part-{p:05}")));
    }
    Ok(part_paths)
}

/// Writes the file header (magic, value size, bucket count, version, metadata); returns where the
/// bucket-header table starts.
fn write_header(
    file: &mut impl Write,
    meta: &IndexMeta,
    value_len: usize,
    num_buckets: u32,
) -> Result<u64, BuildError> {
    let mut header = Vec::with_capacity(64 + meta.encoded_len());
    header.extend_from_slice(MAGIC);
    let rest_len = 8 + 4 + 1 + meta.encoded_len();
    header.extend_from_slice(&(rest_len as u32).to_le_bytes());
    header.extend_from_slice(&(value_len as u64).to_le_bytes());
    header.extend_from_slice(&num_buckets.to_le_bytes());
    header.push(1);
    meta.encode(&mut header)?;
    file.write_all(&header)?;
    Ok(header.len() as u64)
}

/// One partition's records: its spill file (deleted once read) and the suspicious keys routed to
/// it (`aside`, drained).
fn read_partition(
    path: &Path,
    aside: &mut Vec<Vec<u8>>,
    stride: usize,
) -> Result<Vec<u8>, BuildError> {
    let mut records = fs::read(path)?;
    fs::remove_file(path)?;
    for record in aside.drain(..) {
        records.extend_from_slice(&record);
    }
    if records.len() % stride != 0 {
        return Err(BuildError::Format(FormatError::Index(
            "torn spill file".into(),
        )));
    }
    Ok(records)
}

/// Points the empty buckets at the end of the entry tables (`end`), writes the bucket headers
/// over their placeholder at `table_start` and syncs the file.
fn patch_bucket_headers(
    mut file: File,
    table_start: u64,
    bucket_headers: &mut [u8],
    end: u64,
) -> Result<(), BuildError> {
    // Empty buckets point at the end of the entry tables.
    for bh in bucket_headers.chunks_exact_mut(16) {
        if bh[8] == 0 {
            bh[8] = HASH_LEN as u8;
            bh[10..16].copy_from_slice(&end.to_le_bytes()[..6]);
        }
    }
    file.seek(SeekFrom::Start(table_start))?;
    file.write_all(bucket_headers)?;
    file.sync_all()?;
    Ok(())
}
