//! Sealing one partition of a compactindexsized build in memory: records ordered by bucket, later
//! duplicates dropped, a collision-free hash domain found per bucket, entry tables laid out in
//! Eytzinger order.

use std::io::Write;

use xxhash_rust::xxh64::xxh64;

use super::hash::{DomainHasher, bucket_of_hash, eytzinger};
use super::{BuildError, HASH_LEN, MAX_DOMAINS};
use crate::error::FormatError;

/// The geometry of the records being sealed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    /// Bytes of one record: the key, then the value.
    pub(super) stride: usize,
    pub(super) key_len: usize,
    pub(super) num_buckets: u32,
}

/// Seals the buckets of one partition's `records`: each bucket's entry table is written to `file`
/// at `*pos` (advanced past it) and its header filled in `bucket_headers`.
pub(super) fn seal_partition(
    records: &[u8],
    shape: Shape,
    keys: &mut Vec<u8>,
    bucket_headers: &mut [u8],
    (file, pos): (&mut impl Write, &mut u64),
) -> Result<(), BuildError> {
    let Shape {
        stride,
        key_len,
        num_buckets,
    } = shape;
    // (bucket, XXH64 of the key, insertion sequence), ordered by bucket with a counting
    // sort (stable: sequences stay increasing), then each bucket by (hash, sequence) while
    // it is in cache; equal keys share a hash, so duplicates (keep the last insertion)
    // are found within equal-hash runs.
    let order = order_by_bucket(records, stride, key_len, num_buckets);
    let mut start = 0;
    while start < order.len() {
        let bucket = order[start].0;
        let mut end = start;
        while end < order.len() && order[end].0 == bucket {
            end += 1;
        }
        let members = bucket_members(records, shape, &order[start..end]);
        let (domain, table) = seal_bucket(records, stride, key_len, &members, keys)?;
        let entries = members.len() as u32;
        let bh = &mut bucket_headers[bucket as usize * 16..bucket as usize * 16 + 16];
        bh[0..4].copy_from_slice(&domain.to_le_bytes());
        bh[4..8].copy_from_slice(&entries.to_le_bytes());
        bh[8] = HASH_LEN as u8;
        bh[10..16].copy_from_slice(&pos.to_le_bytes()[..6]);
        file.write_all(&table)?;
        *pos += table.len() as u64;
        start = end;
    }
    Ok(())
}

/// The records of one bucket (`order`: its run, sorted by hash and sequence) except those a later
/// insertion of the same key replaces.
fn bucket_members(records: &[u8], shape: Shape, order: &[(u32, u64, u32)]) -> Vec<u32> {
    let Shape {
        stride, key_len, ..
    } = shape;
    let end = order.len();
    let mut members: Vec<u32> = Vec::with_capacity(end);
    let mut run = 0;
    while run < end {
        let mut run_end = run + 1;
        while run_end < end && order[run_end].1 == order[run].1 {
            run_end += 1;
        }
        for x in run..run_end {
            let key = key_at(records, stride, key_len, order[x].2);
            let replaced_later =
                (x + 1..run_end).any(|y| key_at(records, stride, key_len, order[y].2) == key);
            if !replaced_later {
                members.push(order[x].2);
            }
        }
        run = run_end;
    }
    members
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
