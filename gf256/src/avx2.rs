//! The AVX2 kernels and the cache-line prefetch hint (x86-64 only; elsewhere [`available`] is
//! false, nothing here runs and the hint does nothing).
//!
//! A byte times a constant is `LOW[c][b & 15] ^ HIGH[c][b >> 4]`; `vpshufb` looks up 32 nibbles
//! in a 16-entry table broadcast to both lanes. Each entry point checks for AVX2 itself (the one
//! safety gate) and falls back to nothing (`dot_products` returns 0 bytes done, the caller's
//! scalar kernel does the rest) or to the scalar path (`eliminate`). Loads and stores are
//! unaligned and stay inside the slices: a chunk starting at `offset` is only touched when
//! `offset + 32 <= len`, with `len` checked equal for every slice; an odd length ends with one
//! chunk overlapping the previous one.

/// Whether the running CPU has AVX2 (cached by the standard library after the first call).
#[inline]
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn dot_products(
    _coefficients: &[u8],
    _inputs: &[&[u8]],
    _outputs: &mut [&mut [u8]],
    _len: usize,
) -> usize {
    0
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn eliminate(rows: &mut crate::AugmentedRows, size: usize) -> bool {
    crate::scalar::eliminate(rows, size)
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn prefetch_lines(_bytes: &[u8]) {}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{dot_products, eliminate, prefetch_lines};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m256i, _MM_HINT_T0, _mm_loadu_si128, _mm_prefetch, _mm256_and_si256,
        _mm256_broadcastsi128_si256, _mm256_loadu_si256, _mm256_set1_epi8, _mm256_setzero_si256,
        _mm256_shuffle_epi8, _mm256_srli_epi64, _mm256_storeu_si256, _mm256_xor_si256,
    };

    use std::mem::MaybeUninit;

    use super::available;
    use crate::tables::{HIGH, LOW};
    use crate::{AugmentedRows, MAX_TERMS, VECTOR_BYTES};

    /// Most outputs accumulated in registers per pass over the inputs: eleven sums, the two
    /// nibble vectors, the mask and two table temporaries fill the sixteen `ymm` registers
    /// (twelve measured no better, eight up to 18 % slower: bench/README.md, "The kernel again,
    /// measured in one process").
    const GROUP: usize = 11;

    /// How far ahead of the column being summed each input is prefetched. A recovery reads 32
    /// shards at one column each step, shards that arrived over many other datagrams and are
    /// no longer in L1/L2; without the hint each step stalls on 32 misses the hardware
    /// prefetcher does not follow (bench/README.md, "Decode path"). Two lines: with four
    /// (256 bytes) the lines in flight for 32 inputs crowd the tables out of L1, with one they
    /// come too late (`kernel_ab.sh`: 128 bytes 10–17 % faster than 256 on inputs in L3).
    const PREFETCH_AHEAD_BYTES: usize = 128;

    /// The two lookup tables of one coefficient, broadcast to both 128-bit lanes.
    #[derive(Clone, Copy)]
    struct Tables {
        low: __m256i,
        high: __m256i,
    }

    #[target_feature(enable = "avx2")]
    fn tables(c: u8) -> Tables {
        broadcast(&LOW[usize::from(c)], &HIGH[usize::from(c)])
    }

    /// Both 16-byte tables broadcast to both lanes (one `vbroadcasti128` load each).
    #[target_feature(enable = "avx2")]
    fn broadcast(low: &[u8; 16], high: &[u8; 16]) -> Tables {
        // SAFETY: both tables are 16 bytes, exactly one unaligned 128-bit load each.
        unsafe {
            Tables {
                low: _mm256_broadcastsi128_si256(_mm_loadu_si128(low.as_ptr().cast())),
                high: _mm256_broadcastsi128_si256(_mm_loadu_si128(high.as_ptr().cast())),
            }
        }
    }

    /// The two tables of one coefficient in 32 bytes (half of [`Tables`]): a group's tables
    /// take half the L1 they would broadcast, and are broadcast as they are read.
    #[derive(Clone, Copy)]
    #[repr(C, align(32))]
    struct PackedTables {
        low: [u8; 16],
        high: [u8; 16],
    }

    impl PackedTables {
        fn of(c: u8) -> Self {
            Self {
                low: LOW[usize::from(c)],
                high: HIGH[usize::from(c)],
            }
        }
    }

    /// The low and high nibbles of 32 bytes, each in the low half of its byte.
    #[target_feature(enable = "avx2")]
    fn nibbles(bytes: __m256i) -> (__m256i, __m256i) {
        let mask = _mm256_set1_epi8(0x0f);
        (
            _mm256_and_si256(bytes, mask),
            _mm256_and_si256(_mm256_srli_epi64::<4>(bytes), mask),
        )
    }

    /// `c · bytes` given the nibbles of `bytes`.
    #[target_feature(enable = "avx2")]
    fn product(tables: Tables, (low, high): (__m256i, __m256i)) -> __m256i {
        _mm256_xor_si256(
            _mm256_shuffle_epi8(tables.low, low),
            _mm256_shuffle_epi8(tables.high, high),
        )
    }

    /// Bytes per cache line, the step of [`prefetch_lines`].
    const LINE_BYTES: usize = 64;

    /// Asks for the cache line at `offset` of `slice` (clamped to its last byte); never faults.
    /// `prefetcht0` is SSE, part of the x86-64 baseline: no feature gate.
    #[inline]
    fn prefetch(slice: &[u8], offset: usize) {
        let Some(last) = slice.len().checked_sub(1) else {
            return;
        };
        // SAFETY: the address lies inside `slice`; a prefetch reads nothing architecturally.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(slice.as_ptr().add(offset.min(last)).cast()) }
    }

    /// Every cache line of `bytes`.
    pub(crate) fn prefetch_lines(bytes: &[u8]) {
        for offset in (0..bytes.len()).step_by(LINE_BYTES) {
            prefetch(bytes, offset);
        }
    }

    /// 32 bytes of `slice` from `offset`.
    ///
    /// # Safety
    /// `offset + 32 <= slice.len()`.
    #[target_feature(enable = "avx2")]
    unsafe fn load(slice: &[u8], offset: usize) -> __m256i {
        debug_assert!(offset + VECTOR_BYTES <= slice.len());
        // SAFETY: the caller keeps the 32 bytes inside `slice`; the load is unaligned.
        unsafe { _mm256_loadu_si256(slice.as_ptr().add(offset).cast()) }
    }

    /// Writes 32 bytes of `slice` from `offset`.
    ///
    /// # Safety
    /// `offset + 32 <= slice.len()`.
    #[target_feature(enable = "avx2")]
    unsafe fn store(slice: &mut [u8], offset: usize, value: __m256i) {
        debug_assert!(offset + VECTOR_BYTES <= slice.len());
        // SAFETY: the caller keeps the 32 bytes inside `slice`; the store is unaligned.
        unsafe { _mm256_storeu_si256(slice.as_mut_ptr().add(offset).cast(), value) }
    }

    /// The dot products of `crate::dot_products` over `len` bytes (every slice is `len` long, at
    /// most [`MAX_TERMS`] inputs); returns the bytes done: all of them from 32 bytes on.
    pub(crate) fn dot_products(
        coefficients: &[u8],
        inputs: &[&[u8]],
        outputs: &mut [&mut [u8]],
        len: usize,
    ) -> usize {
        if !available() || inputs.len() > MAX_TERMS {
            return 0;
        }
        // SAFETY: AVX2 was detected on this CPU just above.
        unsafe { dot_products_avx2(coefficients, inputs, outputs, len) }
    }

    #[target_feature(enable = "avx2")]
    fn dot_products_avx2(
        coefficients: &[u8],
        inputs: &[&[u8]],
        outputs: &mut [&mut [u8]],
        len: usize,
    ) -> usize {
        let terms = inputs.len();
        let mut first_output = 0;
        // Groups of near-equal size (sixteen outputs are two of eight, not eleven and five): every
        // group amortises its loads of the inputs over as many outputs as the others.
        let groups = outputs.len().div_ceil(GROUP);
        let group_len = outputs.len().div_ceil(groups.max(1)).max(1);
        for group in outputs.chunks_mut(group_len) {
            let rows = &coefficients[first_output * terms..(first_output + group.len()) * terms];
            match group.len() {
                11 => group_products::<11>(rows, inputs, group, len),
                10 => group_products::<10>(rows, inputs, group, len),
                9 => group_products::<9>(rows, inputs, group, len),
                8 => group_products::<8>(rows, inputs, group, len),
                7 => group_products::<7>(rows, inputs, group, len),
                6 => group_products::<6>(rows, inputs, group, len),
                5 => group_products::<5>(rows, inputs, group, len),
                4 => group_products::<4>(rows, inputs, group, len),
                3 => group_products::<3>(rows, inputs, group, len),
                2 => group_products::<2>(rows, inputs, group, len),
                _ => group_products::<1>(rows, inputs, group, len),
            }
            first_output += group.len();
        }
        // Short of one chunk, nothing was done; otherwise the overlapping last chunk did the tail.
        if len < VECTOR_BYTES { 0 } else { len }
    }

    /// `G` outputs at once: per 32-byte column, every input is loaded once and its products are
    /// accumulated in `G` registers, stored once at the end.
    #[target_feature(enable = "avx2")]
    fn group_products<const G: usize>(
        rows: &[u8],
        inputs: &[&[u8]],
        outputs: &mut [&mut [u8]],
        len: usize,
    ) {
        let terms = inputs.len();
        // The lines the loop's own hints will not cover (it asks `PREFETCH_AHEAD_BYTES` ahead of
        // the column it reads), asked for before the tables are built so that the misses
        // overlap that work instead of stalling the first columns one input at a time.
        for input in inputs {
            for offset in (0..PREFETCH_AHEAD_BYTES).step_by(LINE_BYTES) {
                prefetch(input, offset);
            }
        }
        // The lookup tables of every (output, input) coefficient, built once per group: at most
        // 11 × 32 × 32 bytes (11 KB, L1-resident), reused for every column. Left uninitialised
        // rather than zeroed: zeroing them per call cost as much as building them, and only the
        // first `terms` rows are ever read.
        let mut tables_by_term = [[MaybeUninit::<PackedTables>::uninit(); G]; MAX_TERMS];
        for (term, tables_of_term) in tables_by_term.iter_mut().enumerate().take(terms) {
            for (g, slot) in tables_of_term.iter_mut().enumerate() {
                slot.write(PackedTables::of(rows[g * terms + term]));
            }
        }
        // The whole chunks, then, when `len` is not a multiple of 32, one more chunk ending at
        // `len`: it overlaps the previous one, which is harmless because the outputs are
        // overwritten with values that depend only on the inputs at the same offsets (and the
        // inputs, borrowed shared, cannot alias the outputs).
        let whole = len / VECTOR_BYTES;
        let tail = (!len.is_multiple_of(VECTOR_BYTES) && whole > 0).then(|| len - VECTOR_BYTES);
        let offsets = (0..whole).map(|chunk| chunk * VECTOR_BYTES).chain(tail);
        for offset in offsets {
            let mut sums = [_mm256_setzero_si256(); G];
            // One hint per cache line: on even chunks only.
            let hint = offset.is_multiple_of(LINE_BYTES);
            for (input, tables_of_term) in inputs.iter().zip(&tables_by_term) {
                if hint {
                    prefetch(input, offset + PREFETCH_AHEAD_BYTES);
                }
                // SAFETY: offset + 32 <= len = input.len() (checked by the caller).
                let nibbles = nibbles(unsafe { load(input, offset) });
                for (sum, tables) in sums.iter_mut().zip(tables_of_term) {
                    // SAFETY: `zip` with `inputs` reads only the first `terms` rows, every one
                    // of whose `G` entries was written above.
                    let tables = unsafe { tables.assume_init_ref() };
                    let tables = broadcast(&tables.low, &tables.high);
                    *sum = _mm256_xor_si256(*sum, product(tables, nibbles));
                }
            }
            for (output, sum) in outputs.iter_mut().zip(sums) {
                // SAFETY: offset + 32 <= len = output.len() (checked by the caller).
                unsafe { store(output, offset, sum) };
            }
        }
    }

    /// Gauss-Jordan on the `[M | I]` rows (see `crate::scalar::eliminate`), every row operation
    /// two 32-byte multiply-adds inlined here instead of a kernel call.
    pub(crate) fn eliminate(rows: &mut AugmentedRows, size: usize) -> bool {
        if !available() {
            return crate::scalar::eliminate(rows, size);
        }
        // SAFETY: AVX2 was detected on this CPU just above.
        unsafe { eliminate_avx2(rows, size) }
    }

    #[target_feature(enable = "avx2")]
    fn eliminate_avx2(rows: &mut AugmentedRows, size: usize) -> bool {
        for pivot in 0..size {
            let Some(scale) = crate::scalar::take_pivot(rows, pivot, size) else {
                return false;
            };
            // SAFETY (every load and store below): offsets 0 and 32 of 64-byte rows.
            let (left, right) = unsafe { (load(&rows[pivot], 0), load(&rows[pivot], 32)) };
            let scale = tables(scale);
            let normalized = (
                product(scale, nibbles(left)),
                product(scale, nibbles(right)),
            );
            let normalized_nibbles = (nibbles(normalized.0), nibbles(normalized.1));
            unsafe {
                store(&mut rows[pivot], 0, normalized.0);
                store(&mut rows[pivot], 32, normalized.1);
            }
            for (index, row) in rows.iter_mut().enumerate().take(size) {
                let factor = row[pivot];
                if index == pivot || factor == 0 {
                    continue;
                }
                let factor = tables(factor);
                unsafe {
                    let left =
                        _mm256_xor_si256(load(row, 0), product(factor, normalized_nibbles.0));
                    let right =
                        _mm256_xor_si256(load(row, 32), product(factor, normalized_nibbles.1));
                    store(row, 0, left);
                    store(row, 32, right);
                }
            }
        }
        true
    }
}
