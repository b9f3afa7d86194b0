//! Hostile variations of genuine shreds for the trust tests (the decoder's and the appliance's):
//! a shred moved to another slot, and a deterministic junk flood of bit flips and random bytes.

/// Offset of the slot field in a shred's common header.
const SLOT_OFFSET: usize = 65;

/// Sets the slot field of a shred (its Merkle leaf changes with it, so on a trusted feed the
/// shred alone is still self-consistent).
pub fn with_slot(shred: &[u8], slot: u64) -> Vec<u8> {
    let mut out = shred.to_vec();
    out[SLOT_OFFSET..SLOT_OFFSET + 8].copy_from_slice(&slot.to_le_bytes());
    out
}

/// A small deterministic generator (xorshift64*), so a failure reproduces.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// `count` copies of random genuine shreds, each with random bytes, a flipped slot bit (half of
/// them) or one flipped bit anywhere.
pub fn junk(genuine: &[Vec<u8>], rng: &mut Rng, count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|_| {
            let mut shred = genuine[rng.below(genuine.len())].clone();
            match rng.below(4) {
                0 => (0..shred.len()).for_each(|i| shred[i] = rng.next_u64() as u8),
                1 | 2 => {
                    let bit = rng.below(64);
                    shred[SLOT_OFFSET + bit / 8] ^= 1 << (bit % 8);
                }
                _ => {
                    let at = rng.below(shred.len());
                    shred[at] ^= 1 << rng.below(8);
                }
            }
            shred
        })
        .collect()
}
