//! Arithmetic in GF(2^8) with the field of Solana's shred erasure code (polynomial
//! x⁸ + x⁴ + x³ + x² + 1, `0x11D`, the one of `reed-solomon-erasure`), and the bulk kernels
//! Reed-Solomon recovery spends its time in:
//!
//! - [`dot_products`]: `outputs[j] = Σᵢ coefficients[j][i] · inputs[i]`, every missing shard of a
//!   set from all the shards it is recovered from in one pass. Each 32-byte column of an input is
//!   loaded once per group of at most eleven outputs (the groups of one call near-equal in
//!   size) and accumulated in registers, instead of one load-multiply-store pass over the
//!   output per (input, output) pair;
//! - [`invert`]: Gauss-Jordan inversion of a square matrix of at most 32 × 32 (the decoding
//!   matrix of a loss pattern), with every row operation a 64-byte vector multiply-add;
//! - [`mul_add`]: `output ^= c · input`, byte at a time (small rows; the scalar elimination).
//!
//! Multiplication by a constant is two 16-entry table lookups (low and high nibble), which AVX2
//! does 32 bytes at a time with `vpshufb` (the technique of ISA-L and of the erasure crate's C
//! kernel). AVX2 is detected at run time; without it a portable byte-at-a-time path gives the
//! same results. All `unsafe` lives in [`avx2`]: intrinsics and unaligned loads and stores
//! within slices whose lengths were checked.

mod avx2;
mod scalar;
mod tables;

pub use tables::{div, inverse, mul};

/// Length of the column chunk the vector kernels work on.
pub const VECTOR_BYTES: usize = 32;

/// Most inputs or outputs of one [`dot_products`] call (the 32 data shreds of a FEC set).
pub const MAX_TERMS: usize = 32;

/// A square matrix of at most [`MAX_TERMS`] rows, stored as `[M | I]` rows of twice that width
/// for [`invert`].
pub type AugmentedRows = [[u8; 2 * MAX_TERMS]; MAX_TERMS];

/// Why a kernel refused its arguments (programming errors of the caller, reported not panicked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelError {
    /// A slice's length differs from the first input's.
    LengthMismatch,
    /// More than [`MAX_TERMS`] inputs or outputs, or a coefficient matrix of the wrong size.
    Shape,
    /// The matrix has no inverse.
    Singular,
}

/// Inverts the `size × size` matrix whose rows are `matrix[..size]` (row `r`, column `c` at
/// `matrix[r][c]`); returns the inverse in the same layout.
pub fn invert(
    matrix: &[[u8; MAX_TERMS]],
    size: usize,
) -> Result<[[u8; MAX_TERMS]; MAX_TERMS], KernelError> {
    if size > MAX_TERMS || matrix.len() < size {
        return Err(KernelError::Shape);
    }
    let mut rows: AugmentedRows = [[0; 2 * MAX_TERMS]; MAX_TERMS];
    for (r, (row, source)) in rows.iter_mut().zip(matrix).take(size).enumerate() {
        row[..size].copy_from_slice(&source[..size]);
        row[size + r] = 1;
    }
    if !avx2::eliminate(&mut rows, size) {
        return Err(KernelError::Singular);
    }
    let mut inverse = [[0u8; MAX_TERMS]; MAX_TERMS];
    for (out, row) in inverse.iter_mut().zip(&rows).take(size) {
        out[..size].copy_from_slice(&row[size..2 * size]);
    }
    Ok(inverse)
}

/// Asks the CPU to start loading every cache line of `bytes` (a hint: no effect on results, never
/// faults). The FEC resolver hints a shred it is about to hash or copy into its pool, so that the
/// misses of all its lines overlap instead of coming one after another.
pub fn prefetch(bytes: &[u8]) {
    avx2::prefetch_lines(bytes);
}

/// `output[k] ^= c · input[k]` for every byte (portable; nothing on the hot path uses it).
pub fn mul_add(c: u8, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
    if input.len() != output.len() {
        return Err(KernelError::LengthMismatch);
    }
    if c != 0 {
        scalar::mul_add(c, input, output);
    }
    Ok(())
}

/// `outputs[j][k] = Σᵢ coefficients[j · inputs.len() + i] · inputs[i][k]`: the coefficient matrix
/// is row-major, one row per output. Every slice has the same length.
pub fn dot_products(
    coefficients: &[u8],
    inputs: &[&[u8]],
    outputs: &mut [&mut [u8]],
) -> Result<(), KernelError> {
    if inputs.len() > MAX_TERMS
        || outputs.len() > MAX_TERMS
        || coefficients.len() != inputs.len() * outputs.len()
    {
        return Err(KernelError::Shape);
    }
    let len = match (inputs.first(), outputs.first()) {
        (Some(input), _) => input.len(),
        (None, Some(output)) => output.len(),
        (None, None) => 0,
    };
    if inputs.iter().any(|input| input.len() != len)
        || outputs.iter().any(|output| output.len() != len)
    {
        return Err(KernelError::LengthMismatch);
    }
    let done = avx2::dot_products(coefficients, inputs, outputs, len);
    // The vector kernel does every byte from 32 on; the scalar one only what it left.
    if done < len {
        scalar::dot_products(coefficients, inputs, outputs, done);
    }
    Ok(())
}
