//! compactindexsized (magic `compiszd`, format §3.2): a hash table storing only a 24-bit hash per
//! key. Reader (bucket selection with the XXH64/fmix64 rejection rule, Eytzinger search, positioned
//! reads) and a bounded-memory builder: keys are spilled to `P` partition files by `XXH64 mod P`
//! while streaming; with the bucket count a multiple of `P`, partition `p` holds exactly the
//! buckets `b ≡ p (mod P)`, so each partition is sealed on its own in memory. Entry tables are
//! written partition by partition; bucket headers carry absolute offsets (as the format requires
//! readers to use) and are patched at the end.

mod builder;
mod hash;
mod seal;

use crate::error::FormatError;
use crate::index::meta::IndexMeta;
use crate::readat::ReadAt;

pub use builder::{CompactBuilder, CompactOptions};
pub use hash::{DomainHasher, bucket_of, bucket_of_hash, entry_hash, eytzinger, fmix64};

pub const MAGIC: &[u8; 8] = b"compiszd";
const BUCKET_HEADER_LEN: u64 = 16;
const HASH_LEN: usize = 3;
/// Target entries per bucket (the reference's choice).
pub const TARGET_BUCKET_ENTRIES: u64 = 10_000;
/// Hash domains tried per bucket before giving up.
const MAX_DOMAINS: u32 = 1_000;

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
    use xxhash_rust::xxh64::xxh64;

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
