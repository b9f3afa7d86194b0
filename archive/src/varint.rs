//! Unsigned LEB128 varints ("uvarint") as CAR sections and multiformats use them.

use crate::error::FormatError;

/// Longest encoding of a u64.
pub const MAX_LEN: usize = 10;

/// Decodes a uvarint at the start of `bytes`: the value and the number of bytes it used.
pub fn decode(bytes: &[u8]) -> Result<(u64, usize), FormatError> {
    let mut value: u64 = 0;
    for (i, &byte) in bytes.iter().enumerate().take(MAX_LEN) {
        let low = u64::from(byte & 0x7f);
        if i == MAX_LEN - 1 && byte > 1 {
            return Err(FormatError::VarintOverflow);
        }
        value |= low << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    if bytes.len() >= MAX_LEN {
        Err(FormatError::VarintOverflow)
    } else {
        Err(FormatError::Truncated("uvarint"))
    }
}

/// Appends the uvarint encoding of `value`.
pub fn encode(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Length of the uvarint encoding of `value`.
pub fn encoded_len(value: u64) -> usize {
    let bits = 64 - value.max(1).leading_zeros() as usize;
    bits.div_ceil(7)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn known_encodings() {
        // Values from the multiformats unsigned-varint spec.
        let cases: [(u64, &[u8]); 5] = [
            (1, &[0x01]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (255, &[0xff, 0x01]),
            (16384, &[0x80, 0x80, 0x01]),
        ];
        for (value, bytes) in cases {
            assert_eq!(decode(bytes).unwrap(), (value, bytes.len()));
            let mut out = Vec::new();
            encode(value, &mut out);
            assert_eq!(out, bytes);
            assert_eq!(encoded_len(value), bytes.len());
        }
        assert_eq!(encoded_len(0), 1);
        assert_eq!(decode(&[0x80]), Err(FormatError::Truncated("uvarint")));
        assert_eq!(decode(&[0xff; 11]), Err(FormatError::VarintOverflow));
        let mut out = Vec::new();
        encode(u64::MAX, &mut out);
        assert_eq!(decode(&out).unwrap(), (u64::MAX, 10));
    }
}
