//! The CARv1 container (format §1): the header (`{"roots": [cid], "version": 1}` as DAG-CBOR after
//! a uvarint length) and the sequence of sections `uvarint(len) CID node`. Offsets and sizes are
//! those of the indexes: a section's offset is the first byte of its varint, its size the whole
//! section. Sections can be split out of an in-memory range ([`sections`]) or streamed from a
//! reader with a bounded buffer ([`CarStream`]).

use std::io::Read;

use minicbor::{Decoder, Encoder};

use crate::cid::Cid;
use crate::error::FormatError;
use crate::varint;

/// Largest section accepted: the writer's 32 MiB object limit plus room for varint and CID.
pub const MAX_SECTION_LEN: u64 = (32 << 20) + (64 << 10);
/// Largest header accepted.
pub const MAX_HEADER_LEN: u64 = 1 << 16;

/// A parsed CAR header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarHeader {
    /// The single root (an Epoch node, or a Subset for split pieces).
    pub root: Cid,
    /// File offset of the first section.
    pub data_start: u64,
}

/// Parses the header at the start of `bytes` (which must hold at least the whole header).
pub fn parse_header(bytes: &[u8]) -> Result<CarHeader, FormatError> {
    let (len, used) = varint::decode(bytes)?;
    if len == 0 || len > MAX_HEADER_LEN {
        return Err(FormatError::CarHeader(format!("header length {len}")));
    }
    let end = used + len as usize;
    let block = bytes
        .get(used..end)
        .ok_or(FormatError::Truncated("CAR header"))?;
    let mut d = Decoder::new(block);
    let entries = d
        .map()?
        .ok_or_else(|| FormatError::CarHeader("indefinite map".into()))?;
    let mut roots: Option<Vec<Cid>> = None;
    let mut version: Option<u64> = None;
    for _ in 0..entries {
        match d.str()? {
            "roots" => {
                let count = d
                    .array()?
                    .ok_or_else(|| FormatError::CarHeader("indefinite roots".into()))?;
                let mut list = Vec::new();
                for _ in 0..count.min(16) {
                    d.tag()?;
                    let bytes = d.bytes()?;
                    match bytes.split_first() {
                        Some((0, cid)) => list.push(Cid::from_bytes(cid)?),
                        _ => return Err(FormatError::CarHeader("root link".into())),
                    }
                }
                roots = Some(list);
            }
            "version" => version = Some(d.u64()?),
            _ => d.skip()?,
        }
    }
    if version != Some(1) {
        return Err(FormatError::CarHeader(format!(
            "version {version:?}, want 1"
        )));
    }
    let root = match roots.as_deref() {
        Some([root]) => *root,
        _ => return Err(FormatError::CarHeader("want exactly one root".into())),
    };
    Ok(CarHeader {
        root,
        data_start: end as u64,
    })
}

/// Encodes a header with one root.
pub fn encode_header(root: &Cid) -> Result<Vec<u8>, FormatError> {
    let mut e = Encoder::new(Vec::new());
    let mut link = vec![0u8];
    link.extend_from_slice(root.as_bytes());
    let err =
        |e: minicbor::encode::Error<std::convert::Infallible>| FormatError::Cbor(e.to_string());
    e.map(2).map_err(err)?;
    e.str("roots").map_err(err)?.array(1).map_err(err)?;
    e.tag(minicbor::data::Tag::new(42))
        .map_err(err)?
        .bytes(&link)
        .map_err(err)?;
    e.str("version").map_err(err)?.u64(1).map_err(err)?;
    let block = e.into_writer();
    let mut out = Vec::with_capacity(block.len() + 2);
    varint::encode(block.len() as u64, &mut out);
    out.extend_from_slice(&block);
    Ok(out)
}

/// One section, borrowed from the bytes it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    /// File offset of the section's varint.
    pub offset: u64,
    /// Whole section size (varint + CID + node).
    pub size: u64,
    pub cid: Cid,
    pub node: &'a [u8],
}

/// Parses the section at the start of `bytes`, which lies at file offset `offset`.
pub fn parse_section(bytes: &[u8], offset: u64) -> Result<Section<'_>, FormatError> {
    let (len, used) = varint::decode(bytes)?;
    if len > MAX_SECTION_LEN {
        return Err(FormatError::SectionTooLarge(len, MAX_SECTION_LEN));
    }
    let end = used + len as usize;
    let body = bytes
        .get(used..end)
        .ok_or(FormatError::Truncated("CAR section"))?;
    let (cid, cid_len) = Cid::read(body)?;
    Ok(Section {
        offset,
        size: end as u64,
        cid,
        node: &body[cid_len..],
    })
}

/// Splits a contiguous range of whole sections (e.g. one slot's bytes) that starts at file
/// offset `offset`.
pub fn sections(bytes: &[u8], offset: u64) -> Sections<'_> {
    Sections {
        bytes,
        pos: 0,
        base: offset,
    }
}

/// Iterator over the sections of an in-memory range; stops at the first error (yielded).
pub struct Sections<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Iterator for Sections<'a> {
    type Item = Result<Section<'a>, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.bytes.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        match parse_section(rest, self.base + self.pos as u64) {
            Ok(section) => {
                self.pos += section.size as usize;
                Some(Ok(section))
            }
            Err(error) => {
                self.pos = self.bytes.len();
                Some(Err(error))
            }
        }
    }
}

/// Streams the sections of a CAR from a reader through a bounded buffer.
pub struct CarStream<R> {
    reader: R,
    buf: Vec<u8>,
    /// Valid bytes are `buf[start..end]`; `start` is at file offset `file_pos`.
    start: usize,
    end: usize,
    file_pos: u64,
    eof: bool,
    header: CarHeader,
}

impl<R: Read> CarStream<R> {
    /// Reads the header; `buffer` bytes of read-ahead (at least one maximal section).
    pub fn new(mut reader: R, buffer: usize) -> Result<Self, CarStreamError> {
        let capacity = buffer.max(MAX_SECTION_LEN as usize + 16);
        let mut buf = vec![0u8; capacity];
        let mut end = 0;
        // Fill enough for the header (it is tiny) or until EOF.
        while end < (MAX_HEADER_LEN as usize + 16).min(capacity) {
            let n = reader.read(&mut buf[end..]).map_err(CarStreamError::Io)?;
            if n == 0 {
                break;
            }
            end += n;
        }
        let header = parse_header(&buf[..end])?;
        let start = header.data_start as usize;
        Ok(CarStream {
            reader,
            buf,
            start,
            end,
            file_pos: header.data_start,
            eof: false,
            header,
        })
    }

    /// The header.
    pub fn header(&self) -> &CarHeader {
        &self.header
    }

    /// File offset of the next section.
    pub fn position(&self) -> u64 {
        self.file_pos
    }

    fn fill(&mut self) -> Result<(), CarStreamError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end < self.buf.len() && !self.eof {
            let n = self
                .reader
                .read(&mut self.buf[self.end..])
                .map_err(CarStreamError::Io)?;
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
        Ok(())
    }

    /// The next section, or `None` at a clean end of file.
    pub fn next_section(&mut self) -> Result<Option<Section<'_>>, CarStreamError> {
        loop {
            let avail = &self.buf[self.start..self.end];
            if avail.is_empty() && self.eof {
                return Ok(None);
            }
            let complete = match varint::decode(avail) {
                Ok((len, used)) => {
                    if len > MAX_SECTION_LEN {
                        return Err(FormatError::SectionTooLarge(len, MAX_SECTION_LEN).into());
                    }
                    avail.len() >= used + len as usize
                }
                Err(FormatError::Truncated(_)) => false,
                Err(other) => return Err(other.into()),
            };
            if complete {
                break;
            }
            if self.eof {
                return Err(FormatError::Truncated("CAR section at end of file").into());
            }
            self.fill()?;
        }
        let section = parse_section(&self.buf[self.start..self.end], self.file_pos)?;
        self.start += section.size as usize;
        self.file_pos += section.size;
        Ok(Some(section))
    }
}

/// Why streaming a CAR failed.
#[derive(Debug, thiserror::Error)]
pub enum CarStreamError {
    #[error("i/o: {0}")]
    Io(std::io::Error),
    #[error(transparent)]
    Format(#[from] FormatError),
}

impl CarStreamError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Io(_) => "io",
            Self::Format(error) => error.label(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn header_round_trip() {
        let root = Cid::for_node(b"x");
        let bytes = encode_header(&root).unwrap();
        // A 36-byte root gives the 58-byte header block of the published files.
        assert_eq!(bytes[0], 58);
        let header = parse_header(&bytes).unwrap();
        assert_eq!(header.root, root);
        assert_eq!(header.data_start, 59);
    }
}
