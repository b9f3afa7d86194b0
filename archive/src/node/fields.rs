//! The CBOR readers behind the node decoders: a positional reader over a node array's elements
//! ([`Fields`]: required, optional and unknown trailing fields) and the field types (integers of
//! any width and sign, nullable values, 32-byte hashes, IPLD links, shredding pairs, slot meta).

use minicbor::Decoder;
use minicbor::data::{Tag, Type};

use super::{PREALLOC_MAX, TAG_LINK};
use crate::cid::Cid;
use crate::error::FormatError;

/// Positional reader over the elements of a node array.
pub(super) struct Fields<'a> {
    pub(super) d: Decoder<'a>,
    pub(super) len: u64,
    pub(super) read: u64,
}

impl<'a> Fields<'a> {
    pub(super) fn required<T>(
        &mut self,
        name: &'static str,
        read: impl FnOnce(&mut Decoder<'a>) -> Result<T, FormatError>,
    ) -> Result<T, FormatError> {
        if self.read >= self.len {
            return Err(FormatError::Field(name));
        }
        self.read += 1;
        read(&mut self.d)
    }

    pub(super) fn optional<T>(
        &mut self,
        read: impl FnOnce(&mut Decoder<'a>) -> Result<T, FormatError>,
    ) -> Result<Option<T>, FormatError> {
        if self.read >= self.len {
            return Ok(None);
        }
        self.read += 1;
        read(&mut self.d).map(Some)
    }

    /// Skips trailing elements this reader does not know (forward compatibility).
    pub(super) fn skip_rest(&mut self) -> Result<(), FormatError> {
        while self.read < self.len {
            self.d.skip()?;
            self.read += 1;
        }
        Ok(())
    }
}

pub(super) fn array_len(d: &mut Decoder<'_>) -> Result<u64, FormatError> {
    d.array()?
        .ok_or_else(|| FormatError::Cbor("indefinite-length array".into()))
}

fn int(d: &mut Decoder<'_>) -> Result<i128, FormatError> {
    Ok(i128::from(d.int()?))
}

pub(super) fn uint(d: &mut Decoder<'_>, name: &'static str) -> Result<u64, FormatError> {
    u64::try_from(int(d)?).map_err(|_| FormatError::Field(name))
}

/// A 64-bit value written as a signed integer: reinterpret its bits (also accepts large uints).
pub(super) fn bits64(d: &mut Decoder<'_>) -> Result<u64, FormatError> {
    let value = int(d)?;
    if let Ok(signed) = i64::try_from(value) {
        Ok(signed as u64)
    } else {
        u64::try_from(value).map_err(|_| FormatError::Field("frame hash"))
    }
}

pub(super) fn nullable<'a, T>(
    d: &mut Decoder<'a>,
    read: impl FnOnce(&mut Decoder<'a>) -> Result<T, FormatError>,
) -> Result<Option<T>, FormatError> {
    if matches!(d.datatype()?, Type::Null | Type::Undefined) {
        d.skip()?;
        Ok(None)
    } else {
        read(d).map(Some)
    }
}

pub(super) fn hash32(d: &mut Decoder<'_>) -> Result<[u8; 32], FormatError> {
    d.bytes()?
        .try_into()
        .map_err(|_| FormatError::Field("32-byte hash"))
}

pub(super) fn link(d: &mut Decoder<'_>) -> Result<Cid, FormatError> {
    let tag = d.tag()?;
    if tag != Tag::new(TAG_LINK) {
        return Err(FormatError::Cid("link without tag 42"));
    }
    match d.bytes()?.split_first() {
        Some((0, cid)) => Cid::from_bytes(cid),
        _ => Err(FormatError::Cid(
            "link bytes without identity multibase prefix",
        )),
    }
}

/// Bounded pre-allocation for a declared length: each element needs at least one byte.
fn capacity(d: &Decoder<'_>, declared: u64) -> usize {
    let remaining = d.input().len().saturating_sub(d.position());
    usize::try_from(declared)
        .unwrap_or(usize::MAX)
        .min(remaining)
        .min(PREALLOC_MAX)
}

pub(super) fn links(d: &mut Decoder<'_>) -> Result<Vec<Cid>, FormatError> {
    let len = array_len(d)?;
    let mut out = Vec::with_capacity(capacity(d, len));
    for _ in 0..len {
        out.push(link(d)?);
    }
    Ok(out)
}

pub(super) fn shredding(d: &mut Decoder<'_>) -> Result<Vec<(i64, i64)>, FormatError> {
    let len = array_len(d)?;
    let mut out = Vec::with_capacity(capacity(d, len));
    for _ in 0..len {
        let pair_len = array_len(d)?;
        if pair_len < 2 {
            return Err(FormatError::Field("shredding pair"));
        }
        let entry_end = i64::try_from(int(d)?).map_err(|_| FormatError::Field("shredding"))?;
        let shred_end = i64::try_from(int(d)?).map_err(|_| FormatError::Field("shredding"))?;
        for _ in 2..pair_len {
            d.skip()?;
        }
        out.push((entry_end, shred_end));
    }
    Ok(out)
}

pub(super) fn slot_meta(d: &mut Decoder<'_>) -> Result<(u64, i64, Option<u64>), FormatError> {
    let len = array_len(d)?;
    let mut f = Fields {
        d: d.clone(),
        len,
        read: 0,
    };
    let parent = f.required("parent slot", |d| uint(d, "parent slot"))?;
    let blocktime = f
        .optional(|d| {
            nullable(d, |d| {
                i64::try_from(int(d)?).map_err(|_| FormatError::Field("blocktime"))
            })
        })?
        .flatten()
        .unwrap_or(0);
    let height = f
        .optional(|d| nullable(d, |d| uint(d, "block height")))?
        .flatten();
    f.skip_rest()?;
    d.set_position(f.d.position());
    Ok((parent, blocktime, height))
}
