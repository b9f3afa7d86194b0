//! One bounds-checked cursor for every untrusted byte string the decoder reads.
//!
//! `Cursor` borrows its input and never indexes out of bounds: every `take_*` either returns the
//! requested bytes and advances, or returns [`CursorError::Truncated`] naming the field that did not
//! fit, leaving the position unchanged. Wire parsers (entries, transactions) are written against it so
//! that a malformed input can only ever produce an error value, never a panic.

use thiserror::Error;

/// Why a read through the cursor failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CursorError {
    /// The input ended before `field` could be read in full.
    #[error("truncated: {field} needs {needed} bytes, {available} left")]
    Truncated {
        field: &'static str,
        needed: usize,
        available: usize,
    },
    /// A compact-u16 (`short_vec` length) was not minimally encoded or exceeded 0xFFFF.
    #[error("invalid compact-u16 length in {field}")]
    BadCompactU16 { field: &'static str },
}

/// A read position inside a borrowed byte slice.
///
/// Held as the unread tail rather than an index, so that each read is one length comparison
/// (`split_at_checked`) and the slice it returns needs no second bounds check.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    /// The bytes not yet consumed: always a suffix of `bytes`.
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, rest: bytes }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.bytes.len() - self.rest.len()
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The whole input the cursor was created over.
    pub fn input(&self) -> &'a [u8] {
        self.bytes
    }

    /// Takes the next `len` bytes.
    #[inline]
    pub fn take(&mut self, len: usize, field: &'static str) -> Result<&'a [u8], CursorError> {
        let (taken, rest) = self
            .rest
            .split_at_checked(len)
            .ok_or_else(|| self.truncated(field, len))?;
        self.rest = rest;
        Ok(taken)
    }

    /// Takes a fixed-size array by reference.
    #[inline]
    pub fn take_array<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<&'a [u8; N], CursorError> {
        let (taken, rest) = self
            .rest
            .split_first_chunk::<N>()
            .ok_or_else(|| self.truncated(field, N))?;
        self.rest = rest;
        Ok(taken)
    }

    /// The error of a read of `needed` bytes that does not fit in what is left.
    #[cold]
    fn truncated(&self, field: &'static str, needed: usize) -> CursorError {
        CursorError::Truncated {
            field,
            needed,
            available: self.rest.len(),
        }
    }

    #[inline]
    pub fn take_u8(&mut self, field: &'static str) -> Result<u8, CursorError> {
        Ok(self.take_array::<1>(field)?[0])
    }

    #[inline]
    pub fn take_u16_le(&mut self, field: &'static str) -> Result<u16, CursorError> {
        Ok(u16::from_le_bytes(*self.take_array(field)?))
    }

    #[inline]
    pub fn take_u32_le(&mut self, field: &'static str) -> Result<u32, CursorError> {
        Ok(u32::from_le_bytes(*self.take_array(field)?))
    }

    #[inline]
    pub fn take_u64_le(&mut self, field: &'static str) -> Result<u64, CursorError> {
        Ok(u64::from_le_bytes(*self.take_array(field)?))
    }

    /// Reads a Solana `short_vec` length (compact-u16): 1–3 bytes, 7 bits each, low bits first.
    /// Rejects non-minimal encodings and values above 0xFFFF, as `solana-short-vec` does.
    #[inline]
    pub fn take_compact_u16(&mut self, field: &'static str) -> Result<u16, CursorError> {
        // Almost every length on the wire is below 128: one byte, no continuation bit.
        if let Some((&byte, rest)) = self.rest.split_first()
            && byte & 0x80 == 0
        {
            self.rest = rest;
            return Ok(u16::from(byte));
        }
        let (value, len) = multi_byte_compact_u16(self.rest, field)?;
        self.rest = self.rest.get(len..).unwrap_or_default();
        Ok(value)
    }
}

/// A compact-u16 at the start of `bytes` (any length): its value and how many bytes it took.
fn multi_byte_compact_u16(bytes: &[u8], field: &'static str) -> Result<(u16, usize), CursorError> {
    let mut value: u32 = 0;
    for byte_index in 0..3 {
        // Truncation is reported as the byte read that ran out: one byte needed, none left.
        let Some(&byte) = bytes.get(byte_index) else {
            return Err(CursorError::Truncated {
                field,
                needed: 1,
                available: 0,
            });
        };
        if byte_index == 2 && byte > 0x03 {
            // Third byte may carry only the top 2 bits of a u16 and no continuation bit.
            return Err(CursorError::BadCompactU16 { field });
        }
        value |= u32::from(byte & 0x7F) << (7 * byte_index);
        if byte & 0x80 == 0 {
            // Minimality: a continuation byte of zero (other than a lone first byte) is an alias.
            if byte == 0 && byte_index > 0 {
                return Err(CursorError::BadCompactU16 { field });
            }
            return Ok((value as u16, byte_index + 1));
        }
    }
    Err(CursorError::BadCompactU16 { field })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(bytes: &[u8]) -> Result<(u16, usize), CursorError> {
        let mut cursor = Cursor::new(bytes);
        let value = cursor.take_compact_u16("len")?;
        Ok((value, cursor.position()))
    }

    #[test]
    fn compact_u16_accepts_minimal_encodings() {
        assert_eq!(compact(&[0x00]).unwrap(), (0, 1));
        assert_eq!(compact(&[0x7F]).unwrap(), (0x7F, 1));
        assert_eq!(compact(&[0x80, 0x01]).unwrap(), (0x80, 2));
        assert_eq!(compact(&[0xFF, 0x7F]).unwrap(), (0x3FFF, 2));
        assert_eq!(compact(&[0x80, 0x80, 0x01]).unwrap(), (0x4000, 3));
        assert_eq!(compact(&[0xFF, 0xFF, 0x03]).unwrap(), (0xFFFF, 3));
    }

    #[test]
    fn compact_u16_rejects_aliases_and_overflow() {
        assert!(compact(&[0x80, 0x00]).is_err());
        assert!(compact(&[0x80, 0x80, 0x00]).is_err());
        assert!(compact(&[0xFF, 0xFF, 0x04]).is_err());
        assert!(compact(&[0x80, 0x80, 0x80]).is_err());
        assert!(compact(&[0x80]).is_err());
        assert!(compact(&[]).is_err());
    }

    #[test]
    fn compact_u16_errors_keep_position_and_name_the_field() {
        for bytes in [
            &[0x80][..],
            &[0x80, 0x00],
            &[0xFF, 0xFF, 0x04],
            &[0x80, 0x80, 0x80],
        ] {
            let mut cursor = Cursor::new(bytes);
            let error = cursor.take_compact_u16("len").unwrap_err();
            assert_eq!(cursor.position(), 0, "{bytes:?}");
            assert!(error.to_string().contains("len"), "{error}");
        }
        let mut cursor = Cursor::new(&[7, 0x80]);
        assert_eq!(cursor.take_compact_u16("first"), Ok(7));
        assert_eq!(
            cursor.take_compact_u16("second"),
            Err(CursorError::Truncated {
                field: "second",
                needed: 1,
                available: 0
            })
        );
        assert_eq!(cursor.position(), 1);
    }

    #[test]
    fn take_reports_the_field_and_keeps_position() {
        let mut cursor = Cursor::new(&[1, 2, 3]);
        assert_eq!(cursor.take(2, "a").unwrap(), &[1, 2]);
        assert_eq!(
            cursor.take(2, "b"),
            Err(CursorError::Truncated {
                field: "b",
                needed: 2,
                available: 1
            })
        );
        assert_eq!(cursor.position(), 2);
        assert_eq!(cursor.take_u8("c").unwrap(), 3);
        assert!(cursor.is_empty());
    }
}
