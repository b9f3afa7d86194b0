//! Reed-Solomon on one 32 data + 32 coding set of 987-byte shards (the erasure shard of an
//! ordinary Merkle shred): encode, and reconstruct with 1 and with all 32 data shards missing.
//! Goal: worst-case recovery ≤ 20 µs per set.
//!
//! The coder caches the inverted decode matrix per erasure pattern (an LRU of 254 patterns), so
//! each reconstruction is timed twice: `cached` repeats one pattern on one coder (the matrix is
//! inverted once, then reused), `cold` gets a fresh coder per iteration (built in the untimed
//! setup), so every call inverts the 32×32 matrix as for a pattern not seen before.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use decoder::erasure::ErasureCoder;
use decoder::shred::{DATA_SHREDS_PER_FEC_SET, SHREDS_PER_FEC_SET};

const SHARD_LEN: usize = 987;

/// 32 data shards of pseudo-random bytes and their 32 parity shards.
fn encoded_set(coder: &ErasureCoder) -> Vec<Vec<u8>> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut shards = vec![vec![0_u8; SHARD_LEN]; SHREDS_PER_FEC_SET];
    for shard in shards.iter_mut().take(DATA_SHREDS_PER_FEC_SET) {
        for byte in shard.iter_mut() {
            // xorshift64: deterministic, incompressible enough for GF(2^8) kernels.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = (state >> 24) as u8;
        }
    }
    encode(coder, &mut shards);
    shards
}

/// Recomputes the 32 parity shards from the 32 data shards, in place.
fn encode(coder: &ErasureCoder, shards: &mut [Vec<u8>]) {
    let mut iter = shards.iter_mut();
    let mut refs: [&mut [u8]; SHREDS_PER_FEC_SET] =
        std::array::from_fn(|_| iter.next().expect("64 shards").as_mut_slice());
    coder.encode(&mut refs).expect("encode");
}

/// Rebuilds the shards whose bit is set in `missing` (bit = erasure index), in place.
fn reconstruct(coder: &ErasureCoder, shards: &mut [Vec<u8>], missing: u64) {
    let mut iter = shards.iter_mut().enumerate();
    let mut flagged: [(&mut [u8], bool); SHREDS_PER_FEC_SET] = std::array::from_fn(|_| {
        let (index, shard) = iter.next().expect("64 shards");
        (shard.as_mut_slice(), missing >> index & 1 == 0)
    });
    coder.reconstruct(&mut flagged).expect("reconstruct");
}

fn rs_recovery(c: &mut Criterion) {
    let coder = ErasureCoder::new();
    let original = encoded_set(&coder);
    let one_data: u64 = 1 << 17;
    let all_data: u64 = (1 << DATA_SHREDS_PER_FEC_SET) - 1;

    // Correctness once: the rebuilt shards equal the originals.
    for missing in [one_data, all_data] {
        let mut damaged = original.clone();
        for (index, shard) in damaged.iter_mut().enumerate() {
            if missing >> index & 1 == 1 {
                shard.fill(0xEE);
            }
        }
        reconstruct(&coder, &mut damaged, missing);
        assert_eq!(damaged, original, "reconstruction is exact");
    }

    let mut group = c.benchmark_group("rs_recovery");
    group.throughput(Throughput::Elements(1)); // one FEC set
    group.bench_function("encode_32_parity", |b| {
        let mut shards = original.clone();
        b.iter(|| encode(&coder, black_box(&mut shards)));
    });
    for (name, missing) in [("missing_1_data", one_data), ("missing_32_data", all_data)] {
        group.bench_function(format!("{name}/cached"), |b| {
            let mut shards = original.clone();
            b.iter(|| reconstruct(&coder, black_box(&mut shards), missing));
        });
        group.bench_function(format!("{name}/cold"), |b| {
            let mut shards = original.clone();
            b.iter_batched(
                ErasureCoder::new,
                |fresh| {
                    reconstruct(&fresh, black_box(&mut shards), missing);
                    fresh // dropped outside the timed region
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, rs_recovery);
criterion_main!(benches);
