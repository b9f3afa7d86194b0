//! The portable kernels, byte at a time through the nibble tables: the whole job without AVX2,
//! and the tail (`len % 32` bytes) after the vector kernels.

use crate::AugmentedRows;
use crate::tables::{HIGH, LOW, inverse};

/// `output ^= c · input`.
pub(crate) fn mul_add(c: u8, input: &[u8], output: &mut [u8]) {
    let (low, high) = (&LOW[usize::from(c)], &HIGH[usize::from(c)]);
    for (out, &byte) in output.iter_mut().zip(input) {
        *out ^= low[usize::from(byte & 15)] ^ high[usize::from(byte >> 4)];
    }
}

/// The dot products of `crate::dot_products` over the bytes from `start` on.
pub(crate) fn dot_products(
    coefficients: &[u8],
    inputs: &[&[u8]],
    outputs: &mut [&mut [u8]],
    start: usize,
) {
    let terms = inputs.len();
    for (j, output) in outputs.iter_mut().enumerate() {
        let row = &coefficients[j * terms..(j + 1) * terms];
        let output = &mut output[start..];
        output.fill(0);
        for (&c, input) in row.iter().zip(inputs) {
            if c != 0 {
                mul_add(c, &input[start..], output);
            }
        }
    }
}

/// Moves a row with a non-zero entry in column `pivot` (from `pivot` on) to row `pivot` and returns
/// the inverse of that entry, the row's scale; `None` when the column has no such row (singular).
pub(crate) fn take_pivot(rows: &mut AugmentedRows, pivot: usize, size: usize) -> Option<u8> {
    let source = (pivot..size).find(|&row| rows[row][pivot] != 0)?;
    rows.swap(pivot, source);
    inverse(rows[pivot][pivot])
}

/// Gauss-Jordan on the `[M | I]` rows: afterwards the right half holds `M⁻¹`. False when `M` is
/// singular (no pivot in some column).
pub(crate) fn eliminate(rows: &mut AugmentedRows, size: usize) -> bool {
    for pivot in 0..size {
        let Some(scale) = take_pivot(rows, pivot, size) else {
            return false;
        };
        let mut normalized = [0u8; 2 * crate::MAX_TERMS];
        mul_add(scale, &rows[pivot], &mut normalized);
        rows[pivot] = normalized;
        for (index, row) in rows.iter_mut().enumerate().take(size) {
            let factor = row[pivot];
            if index != pivot && factor != 0 {
                mul_add(factor, &normalized, row);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    //! The portable path in full (on an AVX2 machine the public API only uses it for tails),
    //! against the field's definition in `tables::mul`, itself checked exhaustively against the
    //! erasure crate in `tests/against_reference.rs`.
    use super::*;
    use crate::mul;

    fn bytes(seed: u32, len: usize) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
            .collect()
    }

    #[test]
    fn portable_dot_products_match_the_definition() {
        let inputs: Vec<Vec<u8>> = (0..7).map(|i| bytes(i, 100)).collect();
        let coefficients = bytes(99, 3 * 7);
        let mut outputs = vec![vec![0xAAu8; 100]; 3];
        let views: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let mut out_views: Vec<&mut [u8]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
        dot_products(&coefficients, &views, &mut out_views, 0);
        for (j, output) in outputs.iter().enumerate() {
            for (k, &byte) in output.iter().enumerate() {
                let expected =
                    (0..7).fold(0, |sum, i| sum ^ mul(coefficients[j * 7 + i], inputs[i][k]));
                assert_eq!(byte, expected);
            }
        }
    }

    #[test]
    fn portable_elimination_inverts() {
        let mut rows: AugmentedRows = [[0; 64]; 32];
        let size = 5;
        let source = bytes(7, size * size);
        for r in 0..size {
            rows[r][..size].copy_from_slice(&source[r * size..(r + 1) * size]);
            rows[r][size + r] = 1;
        }
        assert!(eliminate(&mut rows, size));
        for r in 0..size {
            for c in 0..size {
                let entry = (0..size).fold(0, |sum, k| {
                    sum ^ mul(source[r * size + k], rows[k][size + c])
                });
                assert_eq!(entry, u8::from(r == c));
            }
        }
    }
}
