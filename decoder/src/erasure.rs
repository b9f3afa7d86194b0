//! Reed-Solomon over GF(2^8) for the fixed 32 data + 32 coding FEC sets (spec §8).
//!
//! The code is bit-exact with Agave's `reed_solomon_erasure::galois_8::ReedSolomon::new(32, 32)`
//! (Vandermonde(64, 32) × inverse of its top 32×32 block): parity shard j is
//! `Σ_i P[j][i] · data_i`. At construction we read the parity matrix `P` off that crate's own
//! encoder (32 unit vectors), so our arithmetic cannot drift from the reference.
//!
//! Recovery rebuilds only the missing **data** shards, the only ones deshredding needs. With `r`
//! data shards missing (set `M`), `r` present parity shards (set `J`) and the present data shards
//! (set `K`):
//!
//! ```text
//! syndrome s_j = p_j ⊕ Σ_{k∈K} P[j][k]·d_k          r × |K| slice multiply-adds
//! d_M          = (P[J][M])⁻¹ · s                      r × r slice multiply-adds + r×r inversion
//! ```
//! That is `32·r` multiply-adds over the shard, against the general decoder's fresh 32×32 matrix
//! inversion for every new loss pattern. Every square submatrix of `P` is invertible because the
//! code is MDS, so any `r` present parity shards work. The slice kernels are the crate's SIMD
//! `mul_slice_xor`. Scratch space is reserved at construction; recovery does not allocate.

use reed_solomon_erasure::galois_8::{self, ReedSolomon};
use thiserror::Error;

use crate::shred::{CODING_SHREDS_PER_FEC_SET, DATA_SHREDS_PER_FEC_SET, SHREDS_PER_FEC_SET};

/// Longest erasure shard of any variant: a coding shred minus its headers (unchained, no proof).
pub const SHARD_LEN_MAX: usize = 1228 - 89;

const DATA: usize = DATA_SHREDS_PER_FEC_SET;
const CODING: usize = CODING_SHREDS_PER_FEC_SET;

/// Why reconstruction did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ErasureError {
    #[error(
        "only {present} of {SHREDS_PER_FEC_SET} shards present, {DATA_SHREDS_PER_FEC_SET} needed"
    )]
    TooFewShards { present: usize },
    #[error("shards of {len} bytes exceed {SHARD_LEN_MAX} or differ in length")]
    BadShardLength { len: usize },
    #[error("the parity submatrix is singular")]
    SingularMatrix,
    #[error("the reference encoder refused the shards")]
    Encoder,
}

impl ErasureError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::TooFewShards { .. } => "too_few_shards",
            Self::BadShardLength { .. } => "bad_shard_length",
            Self::SingularMatrix => "singular_matrix",
            Self::Encoder => "erasure_encoder",
        }
    }
}

/// A 32:32 Reed-Solomon coder with its scratch space, built once at start-up.
pub struct ErasureCoder {
    reed_solomon: ReedSolomon,
    /// `parity[j][i]`: the coefficient of data shard `i` in parity shard `j`.
    parity: [[u8; DATA]; CODING],
    /// Syndrome buffers, one per missing data shard at most.
    syndromes: Box<[[u8; SHARD_LEN_MAX]; DATA]>,
}

impl std::fmt::Debug for ErasureCoder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("ErasureCoder(32:32)")
    }
}

impl Default for ErasureCoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ErasureCoder {
    pub fn new() -> Self {
        // 32 + 32 ≤ 256 shards is within GF(2^8)'s limit, so construction cannot fail; the match
        // keeps the invariant visible without an unwrap.
        let reed_solomon = match ReedSolomon::new(DATA, CODING) {
            Ok(reed_solomon) => reed_solomon,
            Err(error) => panic!("32:32 Reed-Solomon must be constructible: {error:?}"),
        };
        let mut parity = [[0u8; DATA]; CODING];
        for (data_index, column) in (0..DATA).zip(0..) {
            let mut shards = [[0u8; 1]; SHREDS_PER_FEC_SET];
            shards[data_index][0] = 1;
            if reed_solomon.encode(&mut shards[..]).is_err() {
                panic!("encoding 1-byte unit shards cannot fail");
            }
            for (row, shard) in parity.iter_mut().zip(&shards[DATA..]) {
                row[column] = shard[0];
            }
        }
        Self {
            reed_solomon,
            parity,
            syndromes: Box::new([[0; SHARD_LEN_MAX]; DATA]),
        }
    }

    /// The parity coefficient of data shard `data_index` in parity shard `parity_index`.
    pub fn parity_coefficient(&self, parity_index: usize, data_index: usize) -> u8 {
        self.parity[parity_index][data_index]
    }

    /// Rebuilds, in place, every data shard (0..32) whose bit in `present` is clear, from the
    /// present shards (bits 32..64 are the parity shards). Parity shards are not rebuilt. All
    /// shards have the same length. Nothing is written when an error is returned.
    pub fn reconstruct_data(
        &mut self,
        shards: &mut [&mut [u8]; SHREDS_PER_FEC_SET],
        present: u64,
    ) -> Result<(), ErasureError> {
        let present_count = present.count_ones() as usize;
        if present_count < DATA {
            return Err(ErasureError::TooFewShards {
                present: present_count,
            });
        }
        let len = shards[0].len();
        if len > SHARD_LEN_MAX || shards.iter().any(|shard| shard.len() != len) {
            return Err(ErasureError::BadShardLength { len });
        }
        let mut missing = [0usize; DATA];
        let mut missing_count = 0;
        for index in (0..DATA).filter(|&index| present >> index & 1 == 0) {
            missing[missing_count] = index;
            missing_count += 1;
        }
        if missing_count == 0 {
            return Ok(());
        }
        let missing = &missing[..missing_count];
        let mut chosen = [0usize; DATA];
        for (slot, parity_index) in chosen
            .iter_mut()
            .zip((0..CODING).filter(|&j| present >> (DATA + j) & 1 == 1))
            .take(missing_count)
        {
            *slot = parity_index;
        }
        let chosen = &chosen[..missing_count];
        let inverse = self.invert_submatrix(chosen, missing)?;
        self.compute_syndromes(shards, present, chosen, len);
        for (row, &data_index) in missing.iter().enumerate() {
            let out = &mut *shards[data_index];
            out.fill(0);
            for (position, syndrome) in self.syndromes[..missing_count].iter().enumerate() {
                let coefficient = inverse[row][position];
                if coefficient != 0 {
                    galois_8::mul_slice_xor(coefficient, &syndrome[..len], out);
                }
            }
        }
        Ok(())
    }

    /// `s_j = p_j ⊕ Σ_{k present} P[j][k]·d_k` for each chosen parity shard `j`.
    fn compute_syndromes(
        &mut self,
        shards: &[&mut [u8]; SHREDS_PER_FEC_SET],
        present: u64,
        chosen: &[usize],
        len: usize,
    ) {
        for (syndrome, &parity_index) in self.syndromes.iter_mut().zip(chosen) {
            let syndrome = &mut syndrome[..len];
            syndrome.copy_from_slice(&shards[DATA + parity_index][..len]);
            for data_index in (0..DATA).filter(|&index| present >> index & 1 == 1) {
                let coefficient = self.parity[parity_index][data_index];
                if coefficient != 0 {
                    galois_8::mul_slice_xor(coefficient, &shards[data_index][..len], syndrome);
                }
            }
        }
    }

    /// Inverts `P[chosen][missing]` (r×r) by Gauss-Jordan elimination; the row operations on the
    /// augmented 2r-byte rows use the slice kernel.
    fn invert_submatrix(
        &self,
        chosen: &[usize],
        missing: &[usize],
    ) -> Result<[[u8; DATA]; DATA], ErasureError> {
        let size = missing.len();
        // Row a: [P[chosen[a]][missing[..]] | identity row a].
        let mut rows = [[0u8; 2 * DATA]; DATA];
        for (a, row) in rows.iter_mut().take(size).enumerate() {
            for (b, &data_index) in missing.iter().enumerate() {
                row[b] = self.parity[chosen[a]][data_index];
            }
            row[size + a] = 1;
        }
        for pivot in 0..size {
            let Some(source) = (pivot..size).find(|&row| rows[row][pivot] != 0) else {
                return Err(ErasureError::SingularMatrix);
            };
            rows.swap(pivot, source);
            let scale = galois_8::div(1, rows[pivot][pivot]);
            let mut normalized = [0u8; 2 * DATA];
            galois_8::mul_slice(scale, &rows[pivot][..2 * size], &mut normalized[..2 * size]);
            rows[pivot] = normalized;
            for row in (0..size).filter(|&row| row != pivot) {
                let factor = rows[row][pivot];
                if factor != 0 {
                    let pivot_row = rows[pivot];
                    galois_8::mul_slice_xor(
                        factor,
                        &pivot_row[..2 * size],
                        &mut rows[row][..2 * size],
                    );
                }
            }
        }
        let mut inverse = [[0u8; DATA]; DATA];
        for (out, row) in inverse.iter_mut().zip(&rows).take(size) {
            out[..size].copy_from_slice(&row[size..2 * size]);
        }
        Ok(inverse)
    }

    /// Computes the 32 parity shards from the 32 data shards with the reference encoder (tests and
    /// tools that build FEC sets).
    pub fn encode(&self, shards: &mut [&mut [u8]; SHREDS_PER_FEC_SET]) -> Result<(), ErasureError> {
        self.reed_solomon
            .encode(&mut shards[..])
            .map_err(|_| ErasureError::Encoder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded_set(len: usize, seed: u8) -> Vec<Vec<u8>> {
        let coder = ErasureCoder::new();
        let mut buffers = vec![vec![0u8; len]; SHREDS_PER_FEC_SET];
        for (index, buffer) in buffers.iter_mut().take(DATA).enumerate() {
            for (offset, byte) in buffer.iter_mut().enumerate() {
                *byte = (index * 31 + offset * 7) as u8 ^ seed;
            }
        }
        let mut refs: Vec<&mut [u8]> = buffers.iter_mut().map(|b| b.as_mut_slice()).collect();
        coder.encode((&mut refs[..]).try_into().unwrap()).unwrap();
        buffers
    }

    fn recover(buffers: &mut [Vec<u8>], present: u64) -> Result<(), ErasureError> {
        let mut coder = ErasureCoder::new();
        let mut refs: Vec<&mut [u8]> = buffers.iter_mut().map(|b| b.as_mut_slice()).collect();
        coder.reconstruct_data((&mut refs[..]).try_into().unwrap(), present)
    }

    #[test]
    fn recovers_data_from_any_32_of_64() {
        let original = encoded_set(987, 0x5A);
        // Patterns: all data lost; one lost; a deterministic pseudo-random mix of exactly 32.
        let mut patterns = vec![u64::MAX << 32, !1u64, !(1u64 << 31)];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200 {
            let mut present = 0u64;
            while present.count_ones() < 32 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                present |= 1 << (state % 64);
            }
            patterns.push(present);
        }
        for present in patterns {
            let mut damaged = original.clone();
            for (index, shard) in damaged.iter_mut().enumerate() {
                if present >> index & 1 == 0 {
                    shard.fill(0xEE);
                }
            }
            recover(&mut damaged, present).unwrap();
            assert_eq!(damaged[..DATA], original[..DATA], "pattern {present:016x}");
        }
    }

    #[test]
    fn refuses_fewer_than_32() {
        let mut buffers = encoded_set(10, 1);
        let present = (1u64 << 31) - 1;
        assert_eq!(
            recover(&mut buffers, present),
            Err(ErasureError::TooFewShards { present: 31 })
        );
    }

    #[test]
    fn matrix_matches_the_reference_encoder() {
        let coder = ErasureCoder::new();
        let set = encoded_set(3, 9);
        for parity_index in 0..CODING {
            for (offset, parity_byte) in set[DATA + parity_index].iter().enumerate() {
                let expected = (0..DATA).fold(0u8, |sum, data_index| {
                    sum ^ galois_8::mul(
                        coder.parity_coefficient(parity_index, data_index),
                        set[data_index][offset],
                    )
                });
                assert_eq!(*parity_byte, expected);
            }
        }
    }
}
