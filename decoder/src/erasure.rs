//! Reed-Solomon over GF(2^8) for the fixed 32 data + 32 coding FEC sets (spec §8).
//!
//! The code is bit-exact with Agave's `reed_solomon_erasure::galois_8::ReedSolomon::new(32, 32)`
//! (Vandermonde(64, 32) × inverse of its top 32×32 block): parity shard j is the degree < 32
//! polynomial through the data bytes at x = 0..31, evaluated at x = 32 + j. We use that crate with
//! its SIMD kernels. Shards are slices into the FEC set's preallocated shred buffers, so recovery
//! writes the missing shards in place. The crate allocates small scratch (a decode-matrix cache
//! entry) once per recovered set, never per shred; a hand-written kernel with a per-pattern
//! coefficient cache is the planned route to the ≤ 20 µs goal (see docs/decoder.md).

use reed_solomon_erasure::galois_8::ReedSolomon;
use thiserror::Error;

use crate::shred::{CODING_SHREDS_PER_FEC_SET, DATA_SHREDS_PER_FEC_SET, SHREDS_PER_FEC_SET};

/// Why reconstruction did not run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ErasureError {
    #[error(
        "only {present} of {SHREDS_PER_FEC_SET} shards present, {DATA_SHREDS_PER_FEC_SET} needed"
    )]
    TooFewShards { present: usize },
    #[error("erasure coder refused the shards: {reason}")]
    Coder { reason: String },
}

impl ErasureError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::TooFewShards { .. } => "too_few_shards",
            Self::Coder { .. } => "erasure_coder",
        }
    }
}

/// A 32:32 Reed-Solomon coder, built once at start-up.
pub struct ErasureCoder {
    reed_solomon: ReedSolomon,
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
        match ReedSolomon::new(DATA_SHREDS_PER_FEC_SET, CODING_SHREDS_PER_FEC_SET) {
            Ok(reed_solomon) => Self { reed_solomon },
            Err(error) => panic!("32:32 Reed-Solomon must be constructible: {error:?}"),
        }
    }

    /// Fills every shard whose flag is false from the present ones, in place. All shards have the
    /// same length. Nothing is written when an error is returned.
    pub fn reconstruct(
        &self,
        shards: &mut [(&mut [u8], bool); SHREDS_PER_FEC_SET],
    ) -> Result<(), ErasureError> {
        let present = shards.iter().filter(|(_, is_present)| *is_present).count();
        if present < DATA_SHREDS_PER_FEC_SET {
            return Err(ErasureError::TooFewShards { present });
        }
        self.reed_solomon
            .reconstruct(&mut shards[..])
            .map_err(|error| ErasureError::Coder {
                reason: format!("{error:?}"),
            })
    }

    /// Computes the 32 parity shards from the 32 data shards (used by tests and the replay tools
    /// that build FEC sets).
    pub fn encode(&self, shards: &mut [&mut [u8]; SHREDS_PER_FEC_SET]) -> Result<(), ErasureError> {
        self.reed_solomon
            .encode(&mut shards[..])
            .map_err(|error| ErasureError::Coder {
                reason: format!("{error:?}"),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_any_32_of_64() {
        let coder = ErasureCoder::new();
        let mut buffers = vec![vec![0u8; 100]; SHREDS_PER_FEC_SET];
        for (index, buffer) in buffers.iter_mut().take(DATA_SHREDS_PER_FEC_SET).enumerate() {
            for (offset, byte) in buffer.iter_mut().enumerate() {
                *byte = (index * 31 + offset * 7) as u8;
            }
        }
        {
            let mut refs: Vec<&mut [u8]> = buffers.iter_mut().map(|b| b.as_mut_slice()).collect();
            let refs: &mut [&mut [u8]; SHREDS_PER_FEC_SET] = (&mut refs[..]).try_into().unwrap();
            coder.encode(refs).unwrap();
        }
        let original = buffers.clone();
        // Lose the first 32 (all data): rebuild from parity alone.
        let mut damaged = buffers.clone();
        for shard in damaged.iter_mut().take(32) {
            shard.fill(0xEE);
        }
        let mut iter = damaged.iter_mut().enumerate();
        let mut shards: [(&mut [u8], bool); 64] = std::array::from_fn(|_| {
            let (index, shard) = iter.next().unwrap();
            (shard.as_mut_slice(), index >= 32)
        });
        coder.reconstruct(&mut shards).unwrap();
        assert_eq!(damaged, original);
    }

    #[test]
    fn refuses_fewer_than_32() {
        let coder = ErasureCoder::new();
        let mut buffers = vec![vec![0u8; 10]; SHREDS_PER_FEC_SET];
        let mut iter = buffers.iter_mut().enumerate();
        let mut shards: [(&mut [u8], bool); 64] = std::array::from_fn(|_| {
            let (index, shard) = iter.next().unwrap();
            (shard.as_mut_slice(), index < 31)
        });
        assert_eq!(
            coder.reconstruct(&mut shards),
            Err(ErasureError::TooFewShards { present: 31 })
        );
    }
}
