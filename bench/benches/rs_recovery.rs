//! Reed-Solomon on one 32 data + 32 coding set of 987-byte shards (the erasure shard of an
//! ordinary Merkle shred): encode, and rebuild the data shards with 1, 16 and all 32 missing
//! (the last from the 32 parity shards alone). Goal: worst-case recovery ≤ 20 µs per set.
//!
//! `ErasureCoder::reconstruct_data` keeps no per-pattern cache: every call inverts the r×r
//! submatrix for its own loss pattern, so each iteration costs what a never-seen pattern costs.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
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

/// Rebuilds the data shards whose bit is set in `missing` (bit = erasure index), in place.
fn reconstruct(coder: &ErasureCoder, shards: &mut [Vec<u8>], missing: u64) {
    let mut iter = shards.iter_mut();
    let mut refs: [&mut [u8]; SHREDS_PER_FEC_SET] =
        std::array::from_fn(|_| iter.next().expect("64 shards").as_mut_slice());
    coder
        .reconstruct_data(&mut refs, !missing)
        .expect("reconstruct");
}

fn rs_recovery(c: &mut Criterion) {
    let coder = ErasureCoder::new();
    let original = encoded_set(&coder);
    let one_data: u64 = 1 << 17;
    // Every other data shard and every other coding shred: exactly 32 of 64 remain.
    let half_data: u64 = 0x5555_5555_5555_5555;
    let all_data: u64 = (1 << DATA_SHREDS_PER_FEC_SET) - 1;

    // Correctness once: the rebuilt data shards equal the originals.
    for missing in [one_data, half_data, all_data] {
        let mut damaged = original.clone();
        for (index, shard) in damaged.iter_mut().enumerate() {
            if missing >> index & 1 == 1 {
                shard.fill(0xEE);
            }
        }
        reconstruct(&coder, &mut damaged, missing);
        assert_eq!(
            damaged[..DATA_SHREDS_PER_FEC_SET],
            original[..DATA_SHREDS_PER_FEC_SET]
        );
    }

    let mut group = c.benchmark_group("rs_recovery");
    group.throughput(Throughput::Elements(1)); // one FEC set
    group.bench_function("encode_32_parity", |b| {
        let mut shards = original.clone();
        b.iter(|| encode(&coder, black_box(&mut shards)));
    });
    for (name, missing) in [
        ("missing_1_data", one_data),
        ("missing_16_data_16_coding", half_data),
        ("missing_32_data", all_data),
    ] {
        group.bench_function(name, |b| {
            let mut shards = original.clone();
            b.iter(|| reconstruct(&coder, black_box(&mut shards), missing));
        });
    }
    group.finish();
}

criterion_group!(benches, rs_recovery);
criterion_main!(benches);
