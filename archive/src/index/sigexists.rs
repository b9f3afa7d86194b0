//! sig-exists ("bucketteer" v2, format §3.3): a membership filter over the epoch's first
//! signatures. 65,536 prefix buckets (first two signature bytes as u16 LE), each a list of
//! full XXH64 hashes in Eytzinger order. The reader keeps the 640 KB prefix table in memory; the
//! builder spills (prefix, hash) pairs to partitions of contiguous prefix ranges.

use std::fs::{self, File};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh64::xxh64;

use crate::error::FormatError;
use crate::index::compact::{BuildError, eytzinger};
use crate::index::meta::IndexMeta;
use crate::readat::ReadAt;

pub const MAGIC: &[u8; 8] = b"buckette";
const VERSION: u64 = 2;
const PREFIXES: usize = 1 << 16;

fn prefix_of(sig: &[u8; 64]) -> u16 {
    u16::from_le_bytes([sig[0], sig[1]])
}

/// A sig-exists reader.
pub struct SigExists<R> {
    source: R,
    meta: IndexMeta,
    content_start: u64,
    /// Offset of each prefix's bucket relative to the content start (`u64::MAX` = absent).
    offsets: Vec<u64>,
}

impl<R: ReadAt> SigExists<R> {
    /// Reads the header and prefix table.
    pub fn open(source: R) -> Result<Self, FormatError> {
        let io = |e: std::io::Error| FormatError::Index(format!("sig-exists header: {e}"));
        let mut len = [0u8; 4];
        source.read_exact_at(&mut len, 0).map_err(io)?;
        let header_len = u32::from_le_bytes(len) as usize;
        if !(16 + 1 + 8..=(1 << 21)).contains(&header_len) {
            return Err(FormatError::Index(format!(
                "sig-exists header length {header_len}"
            )));
        }
        let header = source.read_vec(4, header_len).map_err(io)?;
        if &header[..8] != MAGIC {
            return Err(FormatError::Index("not a sig-exists file (magic)".into()));
        }
        let version = u64::from_le_bytes(
            header[8..16]
                .try_into()
                .map_err(|_| FormatError::Truncated("version"))?,
        );
        if version != VERSION {
            return Err(FormatError::Index(format!("sig-exists version {version}")));
        }
        let (meta, used) = IndexMeta::parse(&header[16..])?;
        let mut pos = 16 + used;
        let count_bytes = header
            .get(pos..pos + 8)
            .ok_or(FormatError::Truncated("prefix count"))?;
        let count = u64::from_le_bytes(
            count_bytes
                .try_into()
                .map_err(|_| FormatError::Truncated("prefix count"))?,
        );
        pos += 8;
        if count > PREFIXES as u64 || header.len() < pos + count as usize * 10 {
            return Err(FormatError::Index("sig-exists prefix table".into()));
        }
        let mut offsets = vec![u64::MAX; PREFIXES];
        for record in header[pos..pos + count as usize * 10].chunks_exact(10) {
            let prefix = u16::from_le_bytes([record[0], record[1]]);
            let mut off = [0u8; 8];
            off.copy_from_slice(&record[2..10]);
            offsets[usize::from(prefix)] = u64::from_le_bytes(off);
        }
        Ok(SigExists {
            source,
            meta,
            content_start: 4 + header_len as u64,
            offsets,
        })
    }

    pub fn meta(&self) -> &IndexMeta {
        &self.meta
    }

    /// Whether the signature is (very probably) in the epoch.
    pub fn contains(&self, sig: &[u8; 64]) -> Result<bool, FormatError> {
        let io = |e: std::io::Error| FormatError::Index(format!("sig-exists read: {e}"));
        let offset = self.offsets[usize::from(prefix_of(sig))];
        if offset == u64::MAX {
            return Ok(false);
        }
        let base = self.content_start + offset;
        let mut count = [0u8; 4];
        let remote = self.source.prefers_bulk();
        if remote {
            // Remote: counts and buckets come from the bounded range cache.
            count.copy_from_slice(&self.source.read_shared(base, 4).map_err(io)?);
        } else {
            self.source.read_exact_at(&mut count, base).map_err(io)?;
        }
        let n = u64::from(u32::from_le_bytes(count));
        let target = xxh64(sig, 0);
        let bulk = if remote && n * 8 <= 4 << 20 {
            Some(
                self.source
                    .read_shared(base + 4, (n * 8) as usize)
                    .map_err(io)?,
            )
        } else {
            None
        };
        let mut value = [0u8; 8];
        let mut i = 0u64;
        while i < n {
            match &bulk {
                Some(all) => value.copy_from_slice(&all[(8 * i) as usize..(8 * i + 8) as usize]),
                None => self
                    .source
                    .read_exact_at(&mut value, base + 4 + 8 * i)
                    .map_err(io)?,
            }
            let hash = u64::from_le_bytes(value);
            if hash == target {
                return Ok(true);
            }
            i = 2 * i + 1;
            if hash < target {
                i += 1;
            }
        }
        Ok(false)
    }
}

/// Streams signatures to partition files, then writes the filter.
pub struct SigExistsBuilder {
    dir: PathBuf,
    parts: Vec<BufWriter<File>>,
    shift: u32,
}

impl SigExistsBuilder {
    /// `partitions` (power of two ≤ 65,536) contiguous prefix ranges.
    pub fn new(dir: &Path, partitions: u32) -> std::io::Result<Self> {
        fs::create_dir_all(dir)?;
        let partitions = partitions.clamp(1, PREFIXES as u32).next_power_of_two();
        let shift = 16 - partitions.trailing_zeros();
        let mut parts = Vec::with_capacity(partitions as usize);
        for p in 0..partitions {
            parts.push(BufWriter::with_capacity(
                64 << 10,
                File::create(dir.join(format!("part-{p:05}")))?,
            ));
        }
        Ok(SigExistsBuilder {
            dir: dir.to_path_buf(),
            parts,
            shift,
        })
    }

    /// Adds one first signature.
    pub fn add(&mut self, sig: &[u8; 64]) -> std::io::Result<()> {
        let prefix = prefix_of(sig);
        let part = (u32::from(prefix) >> self.shift) as usize;
        let w = &mut self.parts[part];
        w.write_all(&prefix.to_le_bytes())?;
        w.write_all(&xxh64(sig, 0).to_le_bytes())
    }

    /// Writes the filter to `out` (via a temporary name).
    pub fn finish(self, out: &Path, meta: &IndexMeta) -> Result<(), BuildError> {
        let mut paths = Vec::with_capacity(self.parts.len());
        for (p, part) in self.parts.into_iter().enumerate() {
            part.into_inner()
                .map_err(|e| BuildError::Io(e.into_error()))?;
            paths.push(self.dir.join(format!("part-{p:05}")));
        }
        let mut header = Vec::with_capacity(PREFIXES * 10 + 128);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&VERSION.to_le_bytes());
        meta.encode(&mut header)?;
        header.extend_from_slice(&(PREFIXES as u64).to_le_bytes());
        let table_at = header.len();
        header.resize(table_at + PREFIXES * 10, 0);
        let tmp = out.with_extension("index.tmp");
        let mut file = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        file.write_all(&(header.len() as u32).to_le_bytes())?;
        file.write_all(&header)?;
        let mut offset: u64 = 0;
        let mut next_prefix: usize = 0;
        let write_bucket = |file: &mut BufWriter<File>,
                            header: &mut Vec<u8>,
                            prefix: usize,
                            hashes: &[u64],
                            offset: &mut u64|
         -> std::io::Result<()> {
            let record = &mut header[table_at + prefix * 10..table_at + prefix * 10 + 10];
            record[..2].copy_from_slice(&(prefix as u16).to_le_bytes());
            record[2..].copy_from_slice(&offset.to_le_bytes());
            file.write_all(&(hashes.len() as u32).to_le_bytes())?;
            for hash in eytzinger(hashes) {
                file.write_all(&hash.to_le_bytes())?;
            }
            *offset += 4 + 8 * hashes.len() as u64;
            Ok(())
        };
        for path in &paths {
            let raw = fs::read(path)?;
            fs::remove_file(path)?;
            let mut pairs: Vec<(u16, u64)> = raw
                .chunks_exact(10)
                .map(|r| {
                    let mut h = [0u8; 8];
                    h.copy_from_slice(&r[2..]);
                    (u16::from_le_bytes([r[0], r[1]]), u64::from_le_bytes(h))
                })
                .collect();
            pairs.sort_unstable();
            pairs.dedup();
            let mut i = 0;
            while i < pairs.len() {
                let prefix = usize::from(pairs[i].0);
                while next_prefix < prefix {
                    write_bucket(&mut file, &mut header, next_prefix, &[], &mut offset)?;
                    next_prefix += 1;
                }
                let mut j = i;
                while j < pairs.len() && usize::from(pairs[j].0) == prefix {
                    j += 1;
                }
                let hashes: Vec<u64> = pairs[i..j].iter().map(|p| p.1).collect();
                write_bucket(&mut file, &mut header, prefix, &hashes, &mut offset)?;
                next_prefix = prefix + 1;
                i = j;
            }
        }
        while next_prefix < PREFIXES {
            write_bucket(&mut file, &mut header, next_prefix, &[], &mut offset)?;
            next_prefix += 1;
        }
        let mut file = file
            .into_inner()
            .map_err(|e| BuildError::Io(e.into_error()))?;
        file.seek(SeekFrom::Start(4))?;
        file.write_all(&header)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, out)?;
        fs::remove_dir_all(&self.dir).ok();
        Ok(())
    }
}
