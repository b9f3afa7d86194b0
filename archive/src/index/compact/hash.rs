//! The hashing of compactindexsized: bucket selection (XXH64 with the reference's fmix64
//! rejection loop), the 24-bit entry hash under a bucket's domain ([`DomainHasher`]) and the
//! Eytzinger layout of a bucket's entries.

use xxhash_rust::xxh64::xxh64;

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
