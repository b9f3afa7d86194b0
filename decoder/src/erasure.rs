//! Reed-Solomon over GF(2^8) for the fixed 32 data + 32 coding FEC sets (format §8).
//!
//! The code is bit-exact with Agave's `reed_solomon_erasure::galois_8::ReedSolomon::new(32, 32)`
//! (Vandermonde(64, 32) × inverse of its top 32×32 block): parity shard j is
//! `Σ_i P[j][i] · data_i`. At construction we read the parity matrix `P` off that crate's own
//! encoder (32 unit vectors), so our arithmetic cannot drift from the reference.
//!
//! Recovery rebuilds only the missing **data** shards, the only ones deshredding needs. With `r`
//! data shards missing (set `M`), `r` present parity shards chosen (set `J`) and the present data
//! shards (set `K`, `32 − r` of them): `p_J = P[J][M]·d_M ⊕ P[J][K]·d_K`, so
//!
//! ```text
//! d_M = A · p_J ⊕ (A · P[J][K]) · d_K      with A = (P[J][M])⁻¹ (r × r, scalar inversion)
//! ```
//! Every missing shard is one dot product over the 32 shards it is recovered from, with
//! coefficients `A` (parity) and `A·P[J][K]` (data) computed on 32-byte rows. The slice work is
//! `gf256::dot_products`: each input column is loaded once per eight outputs and the products are
//! summed in registers, `32·r` multiply-adds in all (the minimum: each of the `r` outputs depends
//! on 32 inputs), instead of one load-multiply-store pass per pair. Every square submatrix of `P`
//! is invertible because the code is MDS, so any `r` present parity shards work. Recovery does not
//! allocate.

use reed_solomon_erasure::galois_8::ReedSolomon;
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

/// A 32:32 Reed-Solomon coder, built once at start-up.
pub struct ErasureCoder {
    reed_solomon: ReedSolomon,
    parity: [[u8; DATA]; CODING],
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
    /// Builds the reference encoder and reads its parity matrix.
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
        }
    }

    /// `P[parity_index][data_index]`: the coefficient of data shard `data_index` in parity shard
    /// `parity_index`.
    pub fn parity_coefficient(&self, parity_index: usize, data_index: usize) -> u8 {
        self.parity[parity_index][data_index]
    }

    /// Rebuilds, in place, every data shard whose bit is clear in `present` (bit `i` = shard `i`
    /// of the 64, data first). All shards have the same length; present ones are read only.
    /// Nothing is written when an error is returned.
    pub fn reconstruct_data(
        &self,
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
        let coefficients = self.decoding_coefficients(&inverse, chosen, present);

        // Inputs: the present data shards ascending, then the chosen parity shards ascending (the
        // column order of `coefficients`); outputs: the missing data shards ascending.
        let mut inputs: [&[u8]; DATA] = [&[]; DATA];
        let mut outputs: [&mut [u8]; DATA] = Default::default();
        let (mut input_count, mut output_count) = (0, 0);
        let mut next_chosen = chosen.iter().peekable();
        for (index, shard) in shards.iter_mut().enumerate() {
            let is_input = if index < DATA {
                present >> index & 1 == 1
            } else {
                next_chosen
                    .next_if(|&&parity| parity == index - DATA)
                    .is_some()
            };
            if is_input {
                inputs[input_count] = &**shard;
                input_count += 1;
            } else if index < DATA {
                outputs[output_count] = &mut **shard;
                output_count += 1;
            }
        }
        debug_assert_eq!((input_count, output_count), (DATA, missing_count));
        gf256::dot_products(
            &coefficients[..missing_count * DATA],
            &inputs[..input_count],
            &mut outputs[..output_count],
        )
        .map_err(|_| ErasureError::BadShardLength { len })
    }

    /// Row-major `r × 32` coefficients of the missing data shards over the inputs: the present
    /// data shards (`A · P[J][K]`) then the chosen parity shards (`A`).
    fn decoding_coefficients(
        &self,
        inverse: &[[u8; DATA]; DATA],
        chosen: &[usize],
        present: u64,
    ) -> [u8; DATA * DATA] {
        let size = chosen.len();
        let mut coefficients = [0u8; DATA * DATA];
        // (A · P[J]) over all 32 data columns: one dot product per row of A over the chosen
        // parity rows (32 bytes each); then the present columns picked out.
        let mut combined = [[0u8; DATA]; DATA];
        if size < DATA {
            let parity_rows: [&[u8]; DATA] =
                std::array::from_fn(|k| chosen.get(k).map_or(&[][..], |&j| &self.parity[j][..]));
            let mut row_major = [0u8; DATA * DATA];
            for (out, row) in row_major.chunks_exact_mut(size).zip(inverse).take(size) {
                out.copy_from_slice(&row[..size]);
            }
            let mut outputs: [&mut [u8]; DATA] = Default::default();
            for (output, row) in outputs.iter_mut().zip(combined.iter_mut()) {
                *output = &mut row[..];
            }
            // Square shapes of equal 32-byte rows: the kernel cannot refuse them.
            let _ = gf256::dot_products(
                &row_major[..size * size],
                &parity_rows[..size],
                &mut outputs[..size],
            );
        }
        for ((row, out), combined) in inverse
            .iter()
            .take(size)
            .zip(coefficients.chunks_exact_mut(DATA))
            .zip(&combined)
        {
            let present_data = (0..DATA).filter(|&index| present >> index & 1 == 1);
            let (data_part, parity_part) = out.split_at_mut(DATA - size);
            for (slot, index) in data_part.iter_mut().zip(present_data) {
                *slot = combined[index];
            }
            parity_part.copy_from_slice(&row[..size]);
        }
        coefficients
    }

    /// `(P[chosen][missing])⁻¹`.
    fn invert_submatrix(
        &self,
        chosen: &[usize],
        missing: &[usize],
    ) -> Result<[[u8; DATA]; DATA], ErasureError> {
        let mut submatrix = [[0u8; DATA]; DATA];
        for (row, &parity_index) in submatrix.iter_mut().zip(chosen) {
            for (entry, &data_index) in row.iter_mut().zip(missing) {
                *entry = self.parity[parity_index][data_index];
            }
        }
        gf256::invert(&submatrix, missing.len()).map_err(|_| ErasureError::SingularMatrix)
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
        let coder = ErasureCoder::new();
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
                    sum ^ reed_solomon_erasure::galois_8::mul(
                        coder.parity_coefficient(parity_index, data_index),
                        set[data_index][offset],
                    )
                });
                assert_eq!(*parity_byte, expected);
            }
        }
    }
}
