//! The kernels against an independent implementation of the same field: `reed-solomon-erasure`'s
//! `galois_8` (the crate Solana's shreds are coded with), exhaustively for scalar products and on
//! random slices, lengths and matrices for the bulk kernels (tails and whole chunks both).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use reed_solomon_erasure::galois_8;

#[test]
fn every_product_matches_the_erasure_crate() {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            assert_eq!(gf256::mul(a, b), galois_8::mul(a, b), "{a} · {b}");
        }
        if a != 0 {
            assert_eq!(gf256::div(1, a), Some(galois_8::div(1, a)), "1 / {a}");
            assert_eq!(gf256::mul(a, gf256::inverse(a).unwrap()), 1);
        }
    }
    assert_eq!(gf256::inverse(0), None);
    assert_eq!(gf256::div(7, 0), None);
}

/// A deterministic byte stream from `seed` (xorshift64).
fn xorshift(seed: u64) -> impl FnMut() -> u8 {
    let mut state = seed | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u8
    }
}

/// `output ^= c · input` the reference way.
fn reference_mul_add(c: u8, input: &[u8], output: &mut [u8]) {
    for (out, &byte) in output.iter_mut().zip(input) {
        *out ^= galois_8::mul(c, byte);
    }
}

proptest! {
    #[test]
    fn mul_add_matches(c: u8, input in proptest::collection::vec(any::<u8>(), 0..300), seed: u8) {
        let start: Vec<u8> = (0..input.len()).map(|i| (i as u8).wrapping_mul(seed)).collect();
        let mut expected = start.clone();
        reference_mul_add(c, &input, &mut expected);
        let mut actual = start;
        gf256::mul_add(c, &input, &mut actual).unwrap();
        prop_assert_eq!(actual, expected);
    }

    #[test]
    fn dot_products_match(
        terms in 0usize..=32,
        outputs in 0usize..=32,
        len in 0usize..200,
        seed: u64,
    ) {
        let mut next = xorshift(seed);
        let inputs: Vec<Vec<u8>> = (0..terms).map(|_| (0..len).map(|_| next()).collect()).collect();
        let coefficients: Vec<u8> = (0..terms * outputs).map(|_| next()).collect();
        let mut expected = vec![vec![0u8; len]; outputs];
        for (j, out) in expected.iter_mut().enumerate() {
            for (i, input) in inputs.iter().enumerate() {
                reference_mul_add(coefficients[j * terms + i], input, out);
            }
        }
        // Outputs start dirty: the kernel overwrites, it does not accumulate.
        let mut actual: Vec<Vec<u8>> = (0..outputs).map(|_| (0..len).map(|_| next()).collect()).collect();
        let input_views: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let mut output_views: Vec<&mut [u8]> = actual.iter_mut().map(Vec::as_mut_slice).collect();
        gf256::dot_products(&coefficients, &input_views, &mut output_views).unwrap();
        prop_assert_eq!(actual, expected);
    }
}

#[test]
fn bad_shapes_are_refused() {
    let a = [0u8; 32];
    let mut b = [0u8; 31];
    assert_eq!(
        gf256::mul_add(3, &a, &mut b),
        Err(gf256::KernelError::LengthMismatch)
    );
    let inputs = [&a[..]; 2];
    let mut out = [0u8; 32];
    let mut outputs = [&mut out[..]];
    assert_eq!(
        gf256::dot_products(&[1, 2, 3], &inputs, &mut outputs),
        Err(gf256::KernelError::Shape)
    );
    let short = [0u8; 16];
    let mixed = [&a[..], &short[..]];
    assert_eq!(
        gf256::dot_products(&[1, 2], &mixed, &mut outputs),
        Err(gf256::KernelError::LengthMismatch)
    );
    let too_many = [&a[..]; 33];
    assert_eq!(
        gf256::dot_products(&[1; 33], &too_many, &mut outputs),
        Err(gf256::KernelError::Shape)
    );
}

/// `a · b` of two square matrices with the reference field.
fn reference_product(a: &[[u8; 32]], b: &[[u8; 32]], size: usize) -> Vec<Vec<u8>> {
    (0..size)
        .map(|r| {
            (0..size)
                .map(|c| (0..size).fold(0u8, |sum, k| sum ^ galois_8::mul(a[r][k], b[k][c])))
                .collect()
        })
        .collect()
}

proptest! {
    #[test]
    fn inverse_times_matrix_is_identity(size in 0usize..=32, seed: u64) {
        let mut next = xorshift(seed);
        let mut matrix = [[0u8; 32]; 32];
        for row in matrix.iter_mut().take(size) {
            for entry in row.iter_mut().take(size) {
                *entry = next();
            }
        }
        match gf256::invert(&matrix, size) {
            Ok(inverse) => {
                let product = reference_product(&matrix, &inverse, size);
                for (r, row) in product.iter().enumerate() {
                    for (c, &entry) in row.iter().enumerate() {
                        prop_assert_eq!(entry, u8::from(r == c), "({}, {})", r, c);
                    }
                }
            }
            Err(error) => {
                // Only a singular matrix may be refused: some row is then a combination of the
                // others; check the cheap witness that random matrices hit (a zero determinant
                // by elimination in the reference field).
                prop_assert_eq!(error, gf256::KernelError::Singular);
                prop_assert!(reference_is_singular(&matrix, size));
            }
        }
    }
}

/// Gaussian elimination with the reference field: true when no pivot is found in some column.
fn reference_is_singular(matrix: &[[u8; 32]; 32], size: usize) -> bool {
    let mut rows: Vec<Vec<u8>> = matrix
        .iter()
        .take(size)
        .map(|row| row[..size].to_vec())
        .collect();
    for pivot in 0..size {
        let Some(source) = (pivot..size).find(|&r| rows[r][pivot] != 0) else {
            return true;
        };
        rows.swap(pivot, source);
        let scale = galois_8::div(1, rows[pivot][pivot]);
        let pivot_row: Vec<u8> = rows[pivot]
            .iter()
            .map(|&x| galois_8::mul(scale, x))
            .collect();
        for (r, row) in rows.iter_mut().enumerate() {
            if r != pivot {
                let factor = row[pivot];
                for (x, &p) in row.iter_mut().zip(&pivot_row) {
                    *x ^= galois_8::mul(factor, p);
                }
            }
        }
    }
    false
}

#[test]
fn singular_matrices_are_refused() {
    let mut matrix = [[0u8; 32]; 32];
    matrix[0][0] = 5;
    matrix[0][1] = 7;
    matrix[1][0] = galois_8::mul(3, 5);
    matrix[1][1] = galois_8::mul(3, 7);
    assert_eq!(gf256::invert(&matrix, 2), Err(gf256::KernelError::Singular));
    assert_eq!(gf256::invert(&matrix, 33), Err(gf256::KernelError::Shape));
}
