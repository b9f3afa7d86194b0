//! Length: over 600 lines because the compactindexsized reader and writer are the two halves of one
//! layout; ~70 of the lines are tests.
//!
//! compactindexsized (magic `compiszd`, format §3.2): a hash table storing only a 24-bit hash per
//! key. Reader (bucket selection with the XXH64/fmix64 rejection rule, Eytzinger search, positioned
//! reads) and a bounded-memory builder: keys are spilled to `P` partition files by `XXH64 mod P`
//! while streaming; with the bucket count a multiple of `P`, partition `p` holds exactly the
//! buckets `b ≡ p (mod P)`, so each partition is sealed on its own in memory. Entry tables are
//! written partition by partition; bucket headers carry absolute offsets (as the format requires
//! readers to use) and are patched at the end.

use std::fs::{self, File};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh64::xxh64;

use crate::error::FormatError;
use crate::index::meta::IndexMeta;
use crate::readat::ReadAt;

pub const MAGIC: &[u8; 8] = b"compiszd";
const BUCKET_HEADER_LEN: u64 = 16;
const HASH_LEN: usize = 3;
/// Target entries per bucket (the reference's choice).
pub const TARGET_BUCKET_ENTRIES: u64 = 10_000;
/// Hash domains tried per bucket before giving up.
const MAX_DOMAINS: u32 = 1_000;

/// MurmurHash3's 64-bit finalizer.
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x
}

/// Bucket of a key's XXH64 among `buckets` (with the reference's rejection loop).
pub fn bucket_of_hash(mut h: u64, buckets: u32) -> u32 {
    let n = u64::from(buckets.max(1));
    let r = n.wrapping_neg() % n;
    while h < r {
        h = fmix64(h);
    }
    (h % n) as u32
}

/// Bucket of `key`.
pub fn bucket_of(key: &[u8], buckets: u32) -> u32 {
    bucket_of_hash(xxh64(key, 0), buckets)
}

/// The 24-bit entry hash of `key` in a bucket with `domain`: XXH64 (seed 0) of the domain as
/// 4 little-endian bytes, zero-padded to 32, followed by the key.
pub fn entry_hash(domain: u32, key: &[u8]) -> u32 {
    DomainHasher::new(domain).entry_hash(key)
}

const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME64_5: u64 = 0x27D4_EB2F_1656_67C5;

/// XXH64 of `domain prefix ‖ key` with the prefix's 32-byte stripe absorbed once per domain: the
/// builder hashes every key of a bucket under up to hundreds of domains until one is free of
/// 24-bit collisions, and this skips building the concatenation and hashing the prefix each time.
/// Equal to `xxh64(prefix ‖ key, 0)` (tested against `xxhash_rust`).
#[derive(Debug, Clone, Copy)]
pub struct DomainHasher {
    /// The four accumulators after the prefix stripe.
    lanes: [u64; 4],
}

#[inline]
fn xxh_round(acc: u64, input: u64) -> u64 {
    acc.wrapping_add(input.wrapping_mul(PRIME64_2))
        .rotate_left(31)
        .wrapping_mul(PRIME64_1)
}

#[inline]
fn xxh_merge(acc: u64, lane: u64) -> u64 {
    (acc ^ xxh_round(0, lane))
        .wrapping_mul(PRIME64_1)
        .wrapping_add(PRIME64_4)
}

#[inline]
fn read_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

impl DomainHasher {
    pub fn new(domain: u32) -> Self {
        let mut prefix = [0u8; 32];
        prefix[..4].copy_from_slice(&domain.to_le_bytes());
        let mut lanes = [
            PRIME64_1.wrapping_add(PRIME64_2),
            PRIME64_2,
            0,
            0u64.wrapping_sub(PRIME64_1),
        ];
        for (i, lane) in lanes.iter_mut().enumerate() {
            *lane = xxh_round(*lane, read_u64(&prefix[i * 8..]));
        }
        DomainHasher { lanes }
    }

    /// XXH64 of the prefix followed by `key`.
    #[inline(always)]
    pub fn hash(&self, key: &[u8]) -> u64 {
        let [mut v1, mut v2, mut v3, mut v4] = self.lanes;
        let mut stripes = key.chunks_exact(32);
        for stripe in &mut stripes {
            v1 = xxh_round(v1, read_u64(&stripe[0..]));
            v2 = xxh_round(v2, read_u64(&stripe[8..]));
            v3 = xxh_round(v3, read_u64(&stripe[16..]));
            v4 = xxh_round(v4, read_u64(&stripe[24..]));
        }
        let mut h = v1
            .rotate_left(1)
            .wrapping_add(v2.rotate_left(7))
            .wrapping_add(v3.rotate_left(12))
            .wrapping_add(v4.rotate_left(18));
        h = xxh_merge(h, v1);
        h = xxh_merge(h, v2);
        h = xxh_merge(h, v3);
        h = xxh_merge(h, v4);
        h = h.wrapping_add(32 + key.len() as u64);
        let mut rest = stripes.remainder();
        while rest.len() >= 8 {
            h ^= xxh_round(0, read_u64(rest));
            h = h
                .rotate_left(27)
                .wrapping_mul(PRIME64_1)
                .wrapping_add(PRIME64_4);
            rest = &rest[8..];
        }
        if rest.len() >= 4 {
            let word = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
            h ^= u64::from(word).wrapping_mul(PRIME64_1);
            h = h
                .rotate_left(23)
                .wrapping_mul(PRIME64_2)
                .wrapping_add(PRIME64_3);
            rest = &rest[4..];
        }
        for &byte in rest {
            h ^= u64::from(byte).wrapping_mul(PRIME64_5);
            h = h.rotate_left(11).wrapping_mul(PRIME64_1);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(PRIME64_2);
        h ^= h >> 29;
        h = h.wrapping_mul(PRIME64_3);
        h ^ (h >> 32)
    }

    /// The 24-bit entry hash of `key`.
    #[inline(always)]
    pub fn entry_hash(&self, key: &[u8]) -> u32 {
        (self.hash(key) & 0xff_ffff) as u32
    }
}

/// Permutes a sorted slice into Eytzinger (BFS) order.
pub fn eytzinger<T: Copy + Default>(sorted: &[T]) -> Vec<T> {
    fn fill<T: Copy>(sorted: &[T], out: &mut [T], k: usize, i: &mut usize) {
        if k <= sorted.len() {
            fill(sorted, out, 2 * k, i);
            out[k - 1] = sorted[*i];
            *i += 1;
            fill(sorted, out, 2 * k + 1, i);
        }
    }
    let mut out = vec![T::default(); sorted.len()];
    let mut i = 0;
    fill(sorted, &mut out, 1, &mut i);
    out
}

/// Parsed header of a compactindexsized file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactHeader {
    pub value_size: u64,
    pub num_buckets: u32,
    pub meta: IndexMeta,
    /// Offset of the bucket-header table.
    pub header_size: u64,
}

/// A compactindexsized reader over any positioned-read source.
pub struct CompactIndex<R> {
    source: R,
    header: CompactHeader,
}

impl<R: ReadAt> CompactIndex<R> {
    /// Reads and checks the header.
    pub fn open(source: R) -> Result<Self, FormatError> {
        let io = |e: std::io::Error| FormatError::Index(format!("header: {e}"));
        let mut fixed = [0u8; 12];
        source.read_exact_at(&mut fixed, 0).map_err(io)?;
        if &fixed[..8] != MAGIC {
            return Err(FormatError::Index(
                "not a compactindexsized file (magic)".into(),
            ));
        }
        let rest_len = u32::from_le_bytes([fixed[8], fixed[9], fixed[10], fixed[11]]);
        if !(13..=1 << 16).contains(&rest_len) {
            return Err(FormatError::Index(format!("header length {rest_len}")));
        }
        let rest = source.read_vec(12, rest_len as usize).map_err(io)?;
        let value_size = u64::from_le_bytes(
            rest[0..8]
                .try_into()
                .map_err(|_| FormatError::Truncated("header"))?,
        );
        let num_buckets = u32::from_le_bytes(
            rest[8..12]
                .try_into()
                .map_err(|_| FormatError::Truncated("header"))?,
        );
        if rest[12] != 1 {
            return Err(FormatError::Index(format!("version {}", rest[12])));
        }
        if value_size == 0 || value_size > 1 << 16 || num_buckets == 0 {
            return Err(FormatError::Index(
                "value size or bucket count out of range".into(),
            ));
        }
        let (meta, _) = IndexMeta::parse(&rest[13..])?;
        let header_size = 12 + u64::from(rest_len);
        if header_size + u64::from(num_buckets) * BUCKET_HEADER_LEN > source.len() {
            return Err(FormatError::Index(
                "bucket table past the end of the file".into(),
            ));
        }
        Ok(CompactIndex {
            source,
            header: CompactHeader {
                value_size,
                num_buckets,
                meta,
                header_size,
            },
        })
    }

    pub fn header(&self) -> &CompactHeader {
        &self.header
    }

    pub fn meta(&self) -> &IndexMeta {
        &self.header.meta
    }

    /// The value stored for `key`'s hash, if any. An absent key may return another key's value
    /// (24-bit hashes): callers must confirm hits against the CAR.
    pub fn lookup(&self, key: &[u8]) -> Result<Option<Vec<u8>>, FormatError> {
        let io = |e: std::io::Error| FormatError::Index(format!("read: {e}"));
        let bucket = bucket_of(key, self.header.num_buckets);
        let mut bh = [0u8; 16];
        let header_at = self.header.header_size + u64::from(bucket) * BUCKET_HEADER_LEN;
        if self.source.prefers_bulk() {
            // Remote: bucket headers and buckets come from the bounded range cache.
            bh.copy_from_slice(&self.source.read_shared(header_at, 16).map_err(io)?);
        } else {
            self.source.read_exact_at(&mut bh, header_at).map_err(io)?;
        }
        let domain = u32::from_le_bytes([bh[0], bh[1], bh[2], bh[3]]);
        let n = u64::from(u32::from_le_bytes([bh[4], bh[5], bh[6], bh[7]]));
        if bh[8] != HASH_LEN as u8 && n > 0 {
            return Err(FormatError::Index(format!("hash length {}", bh[8])));
        }
        let mut off = [0u8; 8];
        off[..6].copy_from_slice(&bh[10..16]);
        let table = u64::from_le_bytes(off);
        let stride = HASH_LEN as u64 + self.header.value_size;
        let target = entry_hash(domain, key);
        // Remote sources fetch the whole bucket in one request (bounded); local ones probe.
        let bulk = if self.source.prefers_bulk() && n * stride <= 4 << 20 {
            Some(
                self.source
                    .read_shared(table, (n * stride) as usize)
                    .map_err(io)?,
            )
        } else {
            None
        };
        let mut entry = vec![0u8; stride as usize];
        let mut i: u64 = 0;
        while i < n {
            match &bulk {
                Some(all) => {
                    let at = (i * stride) as usize;
                    entry.copy_from_slice(&all[at..at + stride as usize]);
                }
                None => self
                    .source
                    .read_exact_at(&mut entry, table + i * stride)
                    .map_err(io)?,
            }
            let hash = u32::from(entry[0]) | u32::from(entry[1]) << 8 | u32::from(entry[2]) << 16;
            if hash == target {
                return Ok(Some(entry[HASH_LEN..].to_vec()));
            }
            i = 2 * i + 1;
            if hash < target {
                i += 1;
            }
        }
        Ok(None)
    }
}

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
        let mut part_paths = Vec::with_capacity(parts.len());
        for (p, part) in parts.into_iter().enumerate() {
            // Spill files are read back below and deleted: flushed, not synced to disk.
            part.into_inner()
                .map_err(|e| BuildError::Io(e.into_error()))?;
            part_paths.push(dir.join(format!("part-{p:05}")));
        }
        let wanted = count.div_ceil(TARGET_BUCKET_ENTRIES).max(1);
        let num_buckets =
            u32::try_from(wanted.div_ceil(u64::from(partitions)) * u64::from(partitions))
                .map_err(|_| BuildError::Format(FormatError::Index("too many buckets".into())))?;
        let tmp = out.with_extension("index.tmp");
        let mut file = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        let mut header = Vec::with_capacity(64 + meta.encoded_len());
        header.extend_from_slice(MAGIC);
        let rest_len = 8 + 4 + 1 + meta.encoded_len();
        header.extend_from_slice(&(rest_len as u32).to_le_bytes());
        header.extend_from_slice(&(value_len as u64).to_le_bytes());
        header.extend_from_slice(&num_buckets.to_le_bytes());
        header.push(1);
        meta.encode(&mut header)?;
        file.write_all(&header)?;
        let table_start = header.len() as u64;
        let mut bucket_headers = vec![0u8; num_buckets as usize * BUCKET_HEADER_LEN as usize];
        file.write_all(&bucket_headers)?;
        let mut pos = table_start + bucket_headers.len() as u64;
        let stride = key_len + value_len;
        // Suspicious keys: route by their real bucket.
        let mut aside: Vec<Vec<Vec<u8>>> = vec![Vec::new(); partitions as usize];
        for record in suspicious {
            let bucket = bucket_of(&record[..key_len], num_buckets);
            aside[(bucket % partitions) as usize].push(record);
        }
        let mut keys: Vec<u8> = Vec::new();
        for (p, path) in part_paths.iter().enumerate() {
            let mut records = fs::read(path)?;
            fs::remove_file(path)?;
            for record in aside[p].drain(..) {
                records.extend_from_slice(&record);
            }
            if records.len() % stride != 0 {
                return Err(BuildError::Format(FormatError::Index(
                    "torn spill file".into(),
                )));
            }
            // (bucket, XXH64 of the key, insertion sequence), ordered by bucket with a counting
            // sort (stable: sequences stay increasing), then each bucket by (hash, sequence) while
            // it is in cache; equal keys share a hash, so duplicates (keep the last insertion)
            // are found within equal-hash runs.
            let order = order_by_bucket(&records, stride, key_len, num_buckets);
            let mut start = 0;
            while start < order.len() {
                let bucket = order[start].0;
                let mut end = start;
                while end < order.len() && order[end].0 == bucket {
                    end += 1;
                }
                let mut members: Vec<u32> = Vec::with_capacity(end - start);
                let mut run = start;
                while run < end {
                    let mut run_end = run + 1;
                    while run_end < end && order[run_end].1 == order[run].1 {
                        run_end += 1;
                    }
                    for x in run..run_end {
                        let key = key_at(&records, stride, key_len, order[x].2);
                        let replaced_later = (x + 1..run_end)
                            .any(|y| key_at(&records, stride, key_len, order[y].2) == key);
                        if !replaced_later {
                            members.push(order[x].2);
                        }
                    }
                    run = run_end;
                }
                let (domain, table) = seal_bucket(&records, stride, key_len, &members, &mut keys)?;
                let entries = members.len() as u32;
                let bh = &mut bucket_headers[bucket as usize * 16..bucket as usize * 16 + 16];
                bh[0..4].copy_from_slice(&domain.to_le_bytes());
                bh[4..8].copy_from_slice(&entries.to_le_bytes());
                bh[8] = HASH_LEN as u8;
                bh[10..16].copy_from_slice(&pos.to_le_bytes()[..6]);
                file.write_all(&table)?;
                pos += table.len() as u64;
                start = end;
            }
        }
        // Empty buckets point at the end of the entry tables.
        for b in 0..num_buckets as usize {
            let bh = &mut bucket_headers[b * 16..b * 16 + 16];
            if bh[8] == 0 {
                bh[8] = HASH_LEN as u8;
                bh[10..16].copy_from_slice(&pos.to_le_bytes()[..6]);
            }
        }
        let mut file = file
            .into_inner()
            .map_err(|e| BuildError::Io(e.into_error()))?;
        file.seek(SeekFrom::Start(table_start))?;
        file.write_all(&bucket_headers)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, out)?;
        fs::remove_dir_all(&dir).ok();
        Ok(())
    }
}

/// `(bucket, XXH64, sequence)` of every record, sorted.
fn order_by_bucket(
    records: &[u8],
    stride: usize,
    key_len: usize,
    num_buckets: u32,
) -> Vec<(u32, u64, u32)> {
    let n = records.len() / stride;
    let hashed: Vec<(u32, u64)> = (0..n)
        .map(|i| {
            let h = xxh64(&records[i * stride..i * stride + key_len], 0);
            (bucket_of_hash(h, num_buckets), h)
        })
        .collect();
    let mut starts = vec![0usize; num_buckets as usize + 1];
    for &(bucket, _) in &hashed {
        starts[bucket as usize + 1] += 1;
    }
    for b in 0..num_buckets as usize {
        starts[b + 1] += starts[b];
    }
    let mut next = starts.clone();
    let mut order = vec![(0u32, 0u64, 0u32); n];
    for (i, &(bucket, h)) in hashed.iter().enumerate() {
        let slot = &mut next[bucket as usize];
        order[*slot] = (bucket, h, i as u32);
        *slot += 1;
    }
    for b in 0..num_buckets as usize {
        order[starts[b]..starts[b + 1]].sort_unstable();
    }
    order
}

fn key_at(records: &[u8], stride: usize, key_len: usize, i: u32) -> &[u8] {
    let start = i as usize * stride;
    &records[start..start + key_len]
}

/// Finds a domain giving distinct 24-bit hashes and lays the bucket out in Eytzinger order.
///
/// The bucket's keys are first copied next to each other (`keys`, reused between buckets): the
/// domain search hashes every key about ten times, and reading them scattered over the partition
/// (one cache miss per key and domain) cost more than the hashing. The key length is made a
/// constant for the lengths the builder uses, so that the hash is unrolled.
fn seal_bucket(
    records: &[u8],
    stride: usize,
    key_len: usize,
    members: &[u32],
    keys: &mut Vec<u8>,
) -> Result<(u32, Vec<u8>), BuildError> {
    keys.clear();
    for &m in members {
        keys.extend_from_slice(key_at(records, stride, key_len, m));
    }
    let domain = match key_len {
        64 => find_domain::<64>(keys, members.len()),
        36 => find_domain::<36>(keys, members.len()),
        32 => find_domain::<32>(keys, members.len()),
        8 => find_domain::<8>(keys, members.len()),
        _ => find_domain_any(keys, key_len, members.len()),
    }
    .ok_or_else(|| {
        BuildError::Format(FormatError::Index(
            "no collision-free hash domain for a bucket".into(),
        ))
    })?;
    let hasher = DomainHasher::new(domain);
    let mut hashed: Vec<(u32, u32)> = members
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let key = &keys[i * key_len..(i + 1) * key_len];
            (hasher.entry_hash(key), m)
        })
        .collect();
    hashed.sort_unstable();
    let layout = eytzinger(&hashed);
    let value_len = stride - key_len;
    let mut table = Vec::with_capacity(layout.len() * (HASH_LEN + value_len));
    for (hash, m) in layout {
        table.extend_from_slice(&hash.to_le_bytes()[..HASH_LEN]);
        let start = m as usize * stride + key_len;
        table.extend_from_slice(&records[start..start + value_len]);
    }
    Ok((domain, table))
}

/// An open-addressing set of a domain's 24-bit hashes: finds a domain's first collision without
/// sorting (most domains of a 10,000-entry bucket collide about halfway). Four slots per member
/// keep probes short and the table small enough for the L2 cache (160 KB for a 10,000-entry
/// bucket; a 2^24-bit set was 2 MB of cache misses).
struct HashSet24 {
    seen: Vec<u32>,
    mask: usize,
}

impl HashSet24 {
    fn new(members: usize) -> Self {
        let slots = (members * 4).next_power_of_two().clamp(64, 1 << 24);
        HashSet24 {
            seen: vec![0u32; slots],
            mask: slots - 1,
        }
    }

    fn clear(&mut self) {
        self.seen.fill(0);
    }

    /// Inserts `hash`; `false` when it was already there.
    #[inline(always)]
    fn insert(&mut self, hash: u32) -> bool {
        // Tagged so that hash 0 differs from an empty slot.
        let tagged = hash | 1 << 24;
        let mut slot = hash as usize & self.mask;
        loop {
            match self.seen[slot] {
                0 => {
                    self.seen[slot] = tagged;
                    return true;
                }
                other if other == tagged => return false,
                _ => slot = (slot + 1) & self.mask,
            }
        }
    }
}

/// The first domain under which the `n` keys of `N` bytes packed in `keys` have distinct 24-bit
/// hashes.
fn find_domain<const N: usize>(keys: &[u8], n: usize) -> Option<u32> {
    let mut set = HashSet24::new(n);
    (0..MAX_DOMAINS).find(|&domain| {
        set.clear();
        let hasher = DomainHasher::new(domain);
        keys[..n * N].chunks_exact(N).all(|key| {
            let key: &[u8; N] = key.try_into().unwrap_or(&[0u8; N]);
            set.insert(hasher.entry_hash(key))
        })
    })
}

/// [`find_domain`] for any key length.
fn find_domain_any(keys: &[u8], key_len: usize, n: usize) -> Option<u32> {
    let mut set = HashSet24::new(n);
    (0..MAX_DOMAINS).find(|&domain| {
        set.clear();
        let hasher = DomainHasher::new(domain);
        keys[..n * key_len]
            .chunks_exact(key_len.max(1))
            .all(|key| set.insert(hasher.entry_hash(key)))
    })
}

/// Why building an index failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Format(#[from] FormatError),
}

impl BuildError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Io(_) => "io",
            Self::Format(error) => error.label(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn domain_hasher_is_xxh64_of_the_concatenation() {
        let mut rng = testkit::synth::Rng::new(11);
        for domain in [0u32, 1, 7, 999, u32::MAX] {
            let hasher = DomainHasher::new(domain);
            for len in 0..200 {
                let mut key = vec![0u8; len];
                rng.fill(&mut key);
                let mut joined = domain.to_le_bytes().to_vec();
                joined.resize(32, 0);
                joined.extend_from_slice(&key);
                assert_eq!(
                    hasher.hash(&key),
                    xxh64(&joined, 0),
                    "domain {domain} len {len}"
                );
                assert_eq!(
                    entry_hash(domain, &key),
                    (xxh64(&joined, 0) & 0xff_ffff) as u32
                );
            }
        }
    }

    #[test]
    fn eytzinger_layout_of_seven() {
        // In-order traversal of the BFS tree of 1..=7 is sorted: root 4, then 2 6, then 1 3 5 7.
        assert_eq!(eytzinger(&[1, 2, 3, 4, 5, 6, 7]), vec![4, 2, 6, 1, 3, 5, 7]);
        assert_eq!(eytzinger(&[1, 2, 3, 4, 5]), vec![4, 2, 5, 1, 3]);
    }

    #[test]
    fn later_duplicate_wins_and_every_key_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let mut builder = CompactBuilder::new(
            &dir.path().join("work"),
            8,
            4,
            CompactOptions { partitions: 4 },
        )
        .unwrap();
        for k in 0u64..25_000 {
            builder
                .add(&k.to_le_bytes(), &(k as u32).to_le_bytes())
                .unwrap();
        }
        builder
            .add(&7u64.to_le_bytes(), &99u32.to_le_bytes())
            .unwrap();
        let out = dir.path().join("x.index");
        builder.finish(&out, &IndexMeta::default()).unwrap();
        let index = CompactIndex::open(std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(index.header().num_buckets, 4); // ceil(25,001 / 10,000) rounded to 4 partitions
        for k in 0u64..25_000 {
            let want = if k == 7 { 99 } else { k as u32 };
            assert_eq!(
                index.lookup(&k.to_le_bytes()).unwrap(),
                Some(want.to_le_bytes().to_vec())
            );
        }
    }

    #[test]
    fn bucket_selection_power_of_two_is_plain_modulo() {
        let h = xxh64(b"key", 0);
        assert_eq!(bucket_of(b"key", 64), (h % 64) as u32);
    }
}
