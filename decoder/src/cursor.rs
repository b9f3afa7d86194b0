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
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, position: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The whole input the cursor was created over.
    pub fn input(&self) -> &'a [u8] {
        self.bytes
    }

    /// Takes the next `len` bytes.
    #[inline]
    pub fn take(&mut self, len: usize, field: &'static str) -> Result<&'a [u8], CursorError> {
        let available = self.remaining();
        if len > available {
            return Err(CursorError::Truncated {
                field,
                needed: len,
                available,
            });
        }
        let start = self.position;
        self.position += len;
        Ok(&self.bytes[start..start + len])
    }

    /// Takes a fixed-size array by reference.
    #[inline]
    pub fn take_array<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<&'a [u8; N], CursorError> {
        let bytes = self.take(N, field)?;
        // The slice has exactly N bytes (checked by `take`), so the conversion cannot fail.
        bytes.try_into().map_err(|_| CursorError::Truncated {
            field,
            needed: N,
            available: 0,
        })
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
        let start = self.position;
        let mut value: u32 = 0;
        for byte_index in 0..3 {
            let byte = match self.take_u8(field) {
                Ok(byte) => byte,
                Err(error) => {
                    self.position = start;
                    return Err(error);
                }
            };
            let is_last_allowed = byte_index == 2;
            if is_last_allowed && byte > 0x03 {
                // Third byte may carry only the top 2 bits of a u16 and no continuation bit.
                self.position = start;
                return Err(CursorError::BadCompactU16 { field });
            }
            value |= u32::from(byte & 0x7F) << (7 * byte_index);
            if byte & 0x80 == 0 {
                // Minimality: a continuation byte of zero (other than a lone first byte) is an alias.
                if byte == 0 && byte_index > 0 {
                    self.position = start;
                    return Err(CursorError::BadCompactU16 { field });
                }
                return Ok(value as u16);
            }
        }
        self.position = start;
        Err(CursorError::BadCompactU16 { field })
    }
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
