//! Shred capture files in memory: the three framings `appliance decode` and the replay source read,
//! told apart by their first bytes.
//!
//! - **pcap** (magic `a1b2c3d4`/`a1b23c4d` in either byte order): one shred per UDP datagram over
//!   Ethernet (optionally one 802.1Q tag), raw IP or Linux cooked capture, IPv4 or IPv6; each record
//!   keeps its capture timestamp.
//! - **ar** (`!<arch>\n`): one shred per member (the Firedancer fixture format).
//! - **length-prefixed** (anything else): records of a u16 little-endian length then that many
//!   bytes (`decoder/tests/fixtures/shreds/README.md`).
//!
//! Records borrow from the input; malformed framing ends the iteration with a [`FramingError`].
//! Non-UDP pcap frames are skipped, not errors.

use thiserror::Error;

/// One captured shred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub payload: &'a [u8],
    /// Capture time in ns since the Unix epoch (pcap only).
    pub timestamp_ns: Option<u64>,
}

/// Which framing a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    LengthPrefixed,
    Pcap {
        big_endian: bool,
        nanosecond: bool,
        link_type: u32,
    },
    Ar,
}

/// Why a file could not be read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FramingError {
    #[error("record at byte {offset} is cut short")]
    TruncatedRecord { offset: usize },
    #[error("pcap header is cut short")]
    TruncatedPcapHeader,
    #[error("pcap link type {link_type} is not supported")]
    UnsupportedLinkType { link_type: u32 },
    #[error("ar member header at byte {offset} is malformed")]
    BadArHeader { offset: usize },
}

impl FramingError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::TruncatedRecord { .. } => "truncated_record",
            Self::TruncatedPcapHeader => "truncated_pcap_header",
            Self::UnsupportedLinkType { .. } => "unsupported_link_type",
            Self::BadArHeader { .. } => "bad_ar_header",
        }
    }
}

const AR_MAGIC: &[u8] = b"!<arch>\n";
const AR_MEMBER_HEADER_LEN: usize = 60;
const PCAP_HEADER_LEN: usize = 24;
const PCAP_RECORD_HEADER_LEN: usize = 16;
const LINK_TYPE_ETHERNET: u32 = 1;
const LINK_TYPE_RAW: u32 = 101;
const LINK_TYPE_LINUX_SLL: u32 = 113;
const LINK_TYPE_IPV4: u32 = 228;
const LINK_TYPE_IPV6: u32 = 229;

/// Detects the framing from the first bytes.
pub fn detect(bytes: &[u8]) -> Framing {
    if bytes.starts_with(AR_MAGIC) {
        return Framing::Ar;
    }
    if bytes.len() >= 4 {
        let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
        let (big_endian, nanosecond) = match magic {
            [0xD4, 0xC3, 0xB2, 0xA1] => (false, false),
            [0xA1, 0xB2, 0xC3, 0xD4] => (true, false),
            [0x4D, 0x3C, 0xB2, 0xA1] => (false, true),
            [0xA1, 0xB2, 0x3C, 0x4D] => (true, true),
            _ => return Framing::LengthPrefixed,
        };
        let link_type = bytes.get(20..24).map_or(0, |raw| read_u32(raw, big_endian));
        return Framing::Pcap {
            big_endian,
            nanosecond,
            link_type,
        };
    }
    Framing::LengthPrefixed
}

/// Iterates the records of a capture in any of the three framings.
pub fn records(bytes: &[u8]) -> Records<'_> {
    let framing = detect(bytes);
    let position = match framing {
        Framing::LengthPrefixed => 0,
        Framing::Pcap { .. } => PCAP_HEADER_LEN,
        Framing::Ar => AR_MAGIC.len(),
    };
    Records {
        bytes,
        framing,
        position,
        failed: false,
    }
}

/// Iterator over the records of a capture; see [`records`].
#[derive(Debug, Clone)]
pub struct Records<'a> {
    bytes: &'a [u8],
    framing: Framing,
    position: usize,
    failed: bool,
}

impl<'a> Records<'a> {
    pub fn framing(&self) -> Framing {
        self.framing
    }

    fn next_length_prefixed(&mut self) -> Option<Result<Record<'a>, FramingError>> {
        let offset = self.position;
        if offset >= self.bytes.len() {
            return None;
        }
        // A lone trailing byte is a cut length prefix, not the end of the file.
        let Some(header) = self.bytes.get(offset..offset + 2) else {
            return Some(Err(FramingError::TruncatedRecord { offset }));
        };
        let len = usize::from(u16::from_le_bytes([header[0], header[1]]));
        let Some(payload) = self.bytes.get(offset + 2..offset + 2 + len) else {
            return Some(Err(FramingError::TruncatedRecord { offset }));
        };
        self.position = offset + 2 + len;
        Some(Ok(Record {
            payload,
            timestamp_ns: None,
        }))
    }

    fn next_ar(&mut self) -> Option<Result<Record<'a>, FramingError>> {
        // Members are aligned to even offsets.
        if self.position % 2 == 1 && self.position < self.bytes.len() {
            self.position += 1;
        }
        let offset = self.position;
        if offset >= self.bytes.len() {
            return None;
        }
        let Some(header) = self.bytes.get(offset..offset + AR_MEMBER_HEADER_LEN) else {
            return Some(Err(FramingError::BadArHeader { offset }));
        };
        if &header[58..60] != b"`\n" {
            return Some(Err(FramingError::BadArHeader { offset }));
        }
        let size = std::str::from_utf8(&header[48..58])
            .ok()
            .and_then(|text| text.trim().parse::<usize>().ok());
        let Some(size) = size else {
            return Some(Err(FramingError::BadArHeader { offset }));
        };
        let start = offset + AR_MEMBER_HEADER_LEN;
        let Some(payload) = self.bytes.get(start..start + size) else {
            return Some(Err(FramingError::TruncatedRecord { offset }));
        };
        self.position = start + size;
        Some(Ok(Record {
            payload,
            timestamp_ns: None,
        }))
    }

    fn next_pcap(
        &mut self,
        big_endian: bool,
        nanosecond: bool,
        link_type: u32,
    ) -> Option<Result<Record<'a>, FramingError>> {
        if self.bytes.len() < PCAP_HEADER_LEN {
            return Some(Err(FramingError::TruncatedPcapHeader));
        }
        loop {
            let offset = self.position;
            if offset >= self.bytes.len() {
                return None;
            }
            let Some(header) = self.bytes.get(offset..offset + PCAP_RECORD_HEADER_LEN) else {
                return Some(Err(FramingError::TruncatedRecord { offset }));
            };
            let seconds = u64::from(read_u32(&header[0..4], big_endian));
            let fraction = u64::from(read_u32(&header[4..8], big_endian));
            let captured_len = read_u32(&header[8..12], big_endian) as usize;
            let start = offset + PCAP_RECORD_HEADER_LEN;
            let Some(frame) = self.bytes.get(start..start + captured_len) else {
                return Some(Err(FramingError::TruncatedRecord { offset }));
            };
            self.position = start + captured_len;
            let fraction_ns = if nanosecond {
                fraction
            } else {
                fraction * 1_000
            };
            let timestamp_ns = seconds * 1_000_000_000 + fraction_ns;
            match udp_payload(frame, link_type) {
                Ok(Some(payload)) => {
                    return Some(Ok(Record {
                        payload,
                        timestamp_ns: Some(timestamp_ns),
                    }));
                }
                Ok(None) => continue,
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, FramingError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = match self.framing {
            Framing::LengthPrefixed => self.next_length_prefixed(),
            Framing::Ar => self.next_ar(),
            Framing::Pcap {
                big_endian,
                nanosecond,
                link_type,
            } => self.next_pcap(big_endian, nanosecond, link_type),
        };
        if matches!(item, Some(Err(_))) {
            self.failed = true;
        }
        item
    }
}

/// The UDP payload of a captured frame; `None` for anything that is not IPv4/IPv6 UDP.
fn udp_payload(frame: &[u8], link_type: u32) -> Result<Option<&[u8]>, FramingError> {
    let ip = match link_type {
        LINK_TYPE_ETHERNET => {
            let Some(mut ether_type) = frame.get(12..14).map(|b| u16::from_be_bytes([b[0], b[1]]))
            else {
                return Ok(None);
            };
            let mut header_len = 14;
            if ether_type == 0x8100 {
                let Some(inner) = frame.get(16..18) else {
                    return Ok(None);
                };
                ether_type = u16::from_be_bytes([inner[0], inner[1]]);
                header_len = 18;
            }
            if ether_type != 0x0800 && ether_type != 0x86DD {
                return Ok(None);
            }
            &frame[header_len.min(frame.len())..]
        }
        LINK_TYPE_LINUX_SLL => &frame[16.min(frame.len())..],
        LINK_TYPE_RAW | LINK_TYPE_IPV4 | LINK_TYPE_IPV6 => frame,
        link_type => return Err(FramingError::UnsupportedLinkType { link_type }),
    };
    Ok(ip_udp_payload(ip))
}

fn ip_udp_payload(ip: &[u8]) -> Option<&[u8]> {
    let version = ip.first()? >> 4;
    let (protocol, udp_start) = match version {
        4 => {
            let header_len = usize::from(ip[0] & 0x0F) * 4;
            (*ip.get(9)?, header_len)
        }
        6 => (*ip.get(6)?, 40),
        _ => return None,
    };
    if protocol != 17 {
        return None;
    }
    let udp = ip.get(udp_start..)?;
    let udp_len = usize::from(u16::from_be_bytes([*udp.get(4)?, *udp.get(5)?]));
    udp.get(8..udp_len.max(8).min(udp.len()))
}

fn read_u32(bytes: &[u8], big_endian: bool) -> u32 {
    let word = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if big_endian {
        u32::from_be_bytes(word)
    } else {
        u32::from_le_bytes(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_prefixed_records() {
        let bytes = [2, 0, 0xAA, 0xBB, 1, 0, 0xCC];
        let records: Vec<_> = records(&bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].payload, &[0xAA, 0xBB]);
        assert_eq!(records[1].payload, &[0xCC]);
        let cut = [3, 0, 1];
        let mut iter = super::records(&cut);
        assert_eq!(
            iter.next(),
            Some(Err(FramingError::TruncatedRecord { offset: 0 }))
        );
        assert_eq!(iter.next(), None);
    }

    #[test]
    fn ar_members_with_padding() {
        let mut bytes = AR_MAGIC.to_vec();
        for payload in [&b"abc"[..], &b"de"[..]] {
            let header = format!(
                "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                "x",
                0,
                0,
                0,
                644,
                payload.len()
            );
            bytes.extend_from_slice(header.as_bytes());
            bytes.extend_from_slice(payload);
            if bytes.len() % 2 == 1 {
                bytes.push(b'\n');
            }
        }
        let records: Vec<_> = records(&bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(
            records.iter().map(|r| r.payload).collect::<Vec<_>>(),
            [&b"abc"[..], b"de"]
        );
    }
}
