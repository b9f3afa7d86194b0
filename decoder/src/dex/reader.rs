//! Borsh arguments of an Anchor instruction, read through the bounds-checked cursor: each read
//! names the argument, so a failure says which argument was short or malformed
//! (docs/dex-mapping.md, dex §2, rule 2, for the encoding).

use thiserror::Error;

use crate::cursor::Cursor;

/// Anchor discriminator length.
pub const DISCRIMINATOR_LEN: usize = 8;

/// Why a supported program's instruction produced no decoded instruction. One variant per
/// reason; `label()` is the metric label (counted per program).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DexError {
    #[error("instruction data of {len} bytes has no 8-byte discriminator")]
    MissingDiscriminator { len: usize },
    #[error("unknown discriminator {discriminator:016x}")]
    UnknownDiscriminator { discriminator: u64 },
    #[error("instruction {instruction} has no logical name in the stream")]
    Unmapped { instruction: &'static str },
    #[error("argument {argument} is truncated")]
    TruncatedArgument { argument: &'static str },
    #[error("argument {argument} has bool byte {value}")]
    InvalidBool { argument: &'static str, value: u8 },
    #[error("argument {argument} has Option tag {tag}")]
    InvalidOptionTag { argument: &'static str, tag: u8 },
    #[error("argument {argument} has enum variant {index}")]
    InvalidEnumVariant { argument: &'static str, index: u8 },
    #[error("argument {argument} is not UTF-8")]
    InvalidUtf8 { argument: &'static str },
    #[error("swap_mode {mode} is not exact-in (0), partial-fill (1) or exact-out (2)")]
    InvalidSwapMode { mode: u8 },
}

impl DexError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::MissingDiscriminator { .. } => "missing_discriminator",
            Self::UnknownDiscriminator { .. } => "unknown_discriminator",
            Self::Unmapped { .. } => "unmapped_instruction",
            Self::TruncatedArgument { .. } => "truncated_argument",
            Self::InvalidBool { .. } => "invalid_bool",
            Self::InvalidOptionTag { .. } => "invalid_option_tag",
            Self::InvalidEnumVariant { .. } => "invalid_enum_variant",
            Self::InvalidUtf8 { .. } => "invalid_utf8",
            Self::InvalidSwapMode { .. } => "invalid_swap_mode",
        }
    }

    /// Every label, in [`DexError::index`] order.
    pub const LABELS: [&'static str; 9] = [
        "missing_discriminator",
        "unknown_discriminator",
        "unmapped_instruction",
        "truncated_argument",
        "invalid_bool",
        "invalid_option_tag",
        "invalid_enum_variant",
        "invalid_utf8",
        "invalid_swap_mode",
    ];

    /// A dense index of the reason, for counter arrays.
    pub const fn index(&self) -> usize {
        match self {
            Self::MissingDiscriminator { .. } => 0,
            Self::UnknownDiscriminator { .. } => 1,
            Self::Unmapped { .. } => 2,
            Self::TruncatedArgument { .. } => 3,
            Self::InvalidBool { .. } => 4,
            Self::InvalidOptionTag { .. } => 5,
            Self::InvalidEnumVariant { .. } => 6,
            Self::InvalidUtf8 { .. } => 7,
            Self::InvalidSwapMode { .. } => 8,
        }
    }

    /// True for instructions that are skipped by design (unknown or unmapped), false for
    /// malformed data of a known instruction.
    pub const fn is_skip(&self) -> bool {
        matches!(
            self,
            Self::UnknownDiscriminator { .. } | Self::Unmapped { .. }
        )
    }
}

/// Splits instruction data into its discriminator (as a little-endian u64, the form the dispatch
/// tables use) and the argument bytes.
pub fn split_discriminator(data: &[u8]) -> Result<(u64, &[u8]), DexError> {
    match data.split_first_chunk::<DISCRIMINATOR_LEN>() {
        Some((discriminator, arguments)) => Ok((u64::from_le_bytes(*discriminator), arguments)),
        None => Err(DexError::MissingDiscriminator { len: data.len() }),
    }
}

/// Parses a 16-digit hex discriminator at compile time into the dispatch form.
pub const fn discriminator(hex: &str) -> u64 {
    let digits = hex.as_bytes();
    assert!(
        digits.len() == 2 * DISCRIMINATOR_LEN,
        "a discriminator has 16 hex digits"
    );
    let mut bytes = [0u8; DISCRIMINATOR_LEN];
    let mut index = 0;
    while index < DISCRIMINATOR_LEN {
        bytes[index] = hex_digit(digits[2 * index]) << 4 | hex_digit(digits[2 * index + 1]);
        index += 1;
    }
    u64::from_le_bytes(bytes)
}

const fn hex_digit(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        b'a'..=b'f' => digit - b'a' + 10,
        _ => panic!("discriminators are lowercase hex"),
    }
}

/// Reads Borsh arguments in order.
pub struct Arguments<'a> {
    cursor: Cursor<'a>,
}

impl<'a> Arguments<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            cursor: Cursor::new(bytes),
        }
    }

    /// The input from its start up to the current position.
    pub fn consumed(&self) -> &'a [u8] {
        &self.cursor.input()[..self.cursor.position()]
    }

    fn take(&mut self, len: usize, argument: &'static str) -> Result<&'a [u8], DexError> {
        self.cursor
            .take(len, argument)
            .map_err(|_| DexError::TruncatedArgument { argument })
    }

    pub fn skip(&mut self, len: usize, argument: &'static str) -> Result<(), DexError> {
        self.take(len, argument).map(|_| ())
    }

    pub fn u8(&mut self, argument: &'static str) -> Result<u8, DexError> {
        Ok(self.take(1, argument)?[0])
    }

    pub fn u16(&mut self, argument: &'static str) -> Result<u16, DexError> {
        let bytes = self.take(2, argument)?;
        Ok(u16::from_le_bytes([bytes[0], bytes[1]]))
    }

    pub fn u32(&mut self, argument: &'static str) -> Result<u32, DexError> {
        let mut word = [0u8; 4];
        word.copy_from_slice(self.take(4, argument)?);
        Ok(u32::from_le_bytes(word))
    }

    pub fn u64(&mut self, argument: &'static str) -> Result<u64, DexError> {
        let mut word = [0u8; 8];
        word.copy_from_slice(self.take(8, argument)?);
        Ok(u64::from_le_bytes(word))
    }

    pub fn u128(&mut self, argument: &'static str) -> Result<u128, DexError> {
        let mut word = [0u8; 16];
        word.copy_from_slice(self.take(16, argument)?);
        Ok(u128::from_le_bytes(word))
    }

    pub fn bool(&mut self, argument: &'static str) -> Result<bool, DexError> {
        match self.u8(argument)? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(DexError::InvalidBool { argument, value }),
        }
    }

    /// A `string`: u32 length, then UTF-8 bytes.
    pub fn string(&mut self, argument: &'static str) -> Result<&'a str, DexError> {
        let len = self.u32(argument)? as usize;
        let bytes = self.take(len, argument)?;
        std::str::from_utf8(bytes).map_err(|_| DexError::InvalidUtf8 { argument })
    }

    /// An `Option<T>` tag: `Ok(true)` when a value follows.
    pub fn option_tag(&mut self, argument: &'static str) -> Result<bool, DexError> {
        match self.u8(argument)? {
            0 => Ok(false),
            1 => Ok(true),
            tag => Err(DexError::InvalidOptionTag { argument, tag }),
        }
    }

    /// An enum's variant index, which must be below `variants`.
    pub fn variant(&mut self, argument: &'static str, variants: u8) -> Result<u8, DexError> {
        let index = self.u8(argument)?;
        if index >= variants {
            return Err(DexError::InvalidEnumVariant { argument, index });
        }
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_the_index() {
        let errors = [
            DexError::MissingDiscriminator { len: 0 },
            DexError::UnknownDiscriminator { discriminator: 0 },
            DexError::Unmapped { instruction: "x" },
            DexError::TruncatedArgument { argument: "x" },
            DexError::InvalidBool {
                argument: "x",
                value: 2,
            },
            DexError::InvalidOptionTag {
                argument: "x",
                tag: 2,
            },
            DexError::InvalidEnumVariant {
                argument: "x",
                index: 9,
            },
            DexError::InvalidUtf8 { argument: "x" },
            DexError::InvalidSwapMode { mode: 3 },
        ];
        for error in errors {
            assert_eq!(DexError::LABELS[error.index()], error.label());
        }
    }

    #[test]
    fn discriminator_is_little_endian_of_the_bytes() {
        assert_eq!(
            discriminator("66063d1201daebea"),
            u64::from_le_bytes([0x66, 0x06, 0x3d, 0x12, 0x01, 0xda, 0xeb, 0xea])
        );
        let data = [0x66, 0x06, 0x3d, 0x12, 0x01, 0xda, 0xeb, 0xea, 7];
        assert_eq!(
            split_discriminator(&data),
            Ok((discriminator("66063d1201daebea"), &data[8..]))
        );
        assert_eq!(
            split_discriminator(&data[..7]),
            Err(DexError::MissingDiscriminator { len: 7 })
        );
    }

    #[test]
    fn reads_name_the_argument() {
        let mut arguments = Arguments::new(&[2, 0, 0, 0, 0xFF, 0xFE, 5]);
        assert_eq!(
            arguments.string("name"),
            Err(DexError::InvalidUtf8 { argument: "name" })
        );
        let mut arguments = Arguments::new(&[9, 0, 0, 0, b'a']);
        assert_eq!(
            arguments.string("uri"),
            Err(DexError::TruncatedArgument { argument: "uri" })
        );
        let mut arguments = Arguments::new(&[2, 2, 3]);
        assert_eq!(
            arguments.bool("flag"),
            Err(DexError::InvalidBool {
                argument: "flag",
                value: 2
            })
        );
        assert_eq!(
            arguments.option_tag("opt"),
            Err(DexError::InvalidOptionTag {
                argument: "opt",
                tag: 2
            })
        );
        assert_eq!(
            arguments.variant("kind", 3),
            Err(DexError::InvalidEnumVariant {
                argument: "kind",
                index: 3
            })
        );
    }
}
