//! The user-space half of the XDP filter: cut the UDP payload out of a redirected Ethernet frame.
//! The XDP program only looked at the headers it needed to steer the frame; here the lengths are
//! checked too (IPv4 total length, UDP length), so padding of short frames and truncated frames
//! never reach the decoder. Untrusted input: every bound is checked, nothing panics.
//!
//! ```text
//! | Ethernet 14 | IPv4 IHL×4 (20..=60) | UDP 8 | payload (UDP length − 8) | padding |
//!                 └──────── IPv4 total length ────────────────────────────┘
//! ```
#![forbid(unsafe_code)]

const ETHERNET_HEADER_BYTES: usize = 14;
const ETH_P_IP: u16 = 0x0800;
const IPV4_MIN_HEADER_BYTES: usize = 20;
const IPPROTO_UDP: u8 = 17;
const UDP_HEADER_BYTES: usize = 8;

/// Why a frame is not an intact IPv4/UDP datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {len} bytes is shorter than its headers")]
    Short { len: usize },
    #[error("EtherType {0:#06x} is not IPv4")]
    NotIpv4(u16),
    #[error("IP version {0} is not 4")]
    IpVersion(u8),
    #[error("IPv4 header length {0} bytes is below 20")]
    IpHeaderLength(usize),
    #[error("IP protocol {0} is not UDP")]
    NotUdp(u8),
    #[error("IPv4 fragment")]
    Fragment,
    #[error("IPv4 total length {total} does not fit the frame of {available} bytes")]
    IpTotalLength { total: usize, available: usize },
    #[error("UDP length {udp} does not fit the IP payload of {available} bytes")]
    UdpLength { udp: usize, available: usize },
}

impl FrameError {
    /// A short stable name of the reason.
    pub fn label(&self) -> &'static str {
        match self {
            FrameError::Short { .. } => "short",
            FrameError::NotIpv4(_) => "not_ipv4",
            FrameError::IpVersion(_) => "ip_version",
            FrameError::IpHeaderLength(_) => "ip_header_length",
            FrameError::NotUdp(_) => "not_udp",
            FrameError::Fragment => "fragment",
            FrameError::IpTotalLength { .. } => "ip_total_length",
            FrameError::UdpLength { .. } => "udp_length",
        }
    }
}

fn u16_at(frame: &[u8], offset: usize) -> Option<u16> {
    let bytes = frame.get(offset..offset + 2)?;
    Some(u16::from_be_bytes([bytes[0], bytes[1]]))
}

/// The UDP payload of an Ethernet/IPv4/UDP frame, and its destination port.
pub fn udp_payload(frame: &[u8]) -> Result<(&[u8], u16), FrameError> {
    let short = FrameError::Short { len: frame.len() };
    let ethertype = u16_at(frame, 12).ok_or(short)?;
    if ethertype != ETH_P_IP {
        return Err(FrameError::NotIpv4(ethertype));
    }
    let ip = frame.get(ETHERNET_HEADER_BYTES..).ok_or(short)?;
    let version_ihl = *ip.first().ok_or(short)?;
    if version_ihl >> 4 != 4 {
        return Err(FrameError::IpVersion(version_ihl >> 4));
    }
    let header_bytes = usize::from(version_ihl & 0x0f) * 4;
    if header_bytes < IPV4_MIN_HEADER_BYTES {
        return Err(FrameError::IpHeaderLength(header_bytes));
    }
    if ip.len() < header_bytes + UDP_HEADER_BYTES {
        return Err(short);
    }
    if ip[9] != IPPROTO_UDP {
        return Err(FrameError::NotUdp(ip[9]));
    }
    let fragment = u16_at(ip, 6).ok_or(short)?;
    if fragment & 0x3fff != 0 {
        return Err(FrameError::Fragment);
    }
    let total = usize::from(u16_at(ip, 2).ok_or(short)?);
    if total > ip.len() || total < header_bytes + UDP_HEADER_BYTES {
        return Err(FrameError::IpTotalLength {
            total,
            available: ip.len(),
        });
    }
    let udp = &ip[header_bytes..total];
    let port = u16_at(udp, 2).ok_or(short)?;
    let udp_len = usize::from(u16_at(udp, 4).ok_or(short)?);
    if udp_len < UDP_HEADER_BYTES || udp_len > udp.len() {
        return Err(FrameError::UdpLength {
            udp: udp_len,
            available: udp.len(),
        });
    }
    Ok((&udp[UDP_HEADER_BYTES..udp_len], port))
}

/// Builds an Ethernet/IPv4/UDP frame (test helper; checksums left zero,
/// which IPv4 receivers of UDP accept and the XDP path never checks).
#[cfg(test)]
pub fn build_udp_frame(payload: &[u8], port: u16, ip_options_words: u8, padding: usize) -> Vec<u8> {
    let header_bytes = IPV4_MIN_HEADER_BYTES + usize::from(ip_options_words) * 4;
    let total = header_bytes + UDP_HEADER_BYTES + payload.len();
    let mut frame = Vec::with_capacity(ETHERNET_HEADER_BYTES + total + padding);
    frame.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00]);
    frame.push(0x40 | (5 + ip_options_words));
    frame.push(0);
    frame.extend_from_slice(&(total as u16).to_be_bytes());
    frame.extend_from_slice(&[0, 1, 0x40, 0, 64, IPPROTO_UDP, 0, 0]);
    frame.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2]);
    // Options: NOP (type 1) bytes, valid padding for any number of words.
    frame.extend(std::iter::repeat_n(1u8, usize::from(ip_options_words) * 4));
    frame.extend_from_slice(&40_000u16.to_be_bytes());
    frame.extend_from_slice(&port.to_be_bytes());
    frame.extend_from_slice(&((UDP_HEADER_BYTES + payload.len()) as u16).to_be_bytes());
    frame.extend_from_slice(&[0, 0]);
    frame.extend_from_slice(payload);
    frame.extend(std::iter::repeat_n(0u8, padding));
    frame
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn payload_and_port_of_a_plain_frame() {
        let frame = build_udp_frame(b"shred", 8001, 0, 0);
        assert_eq!(frame.len(), 14 + 20 + 8 + 5);
        assert_eq!(udp_payload(&frame), Ok((&b"shred"[..], 8001)));
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        // A 1-byte datagram is padded to the 60-byte Ethernet minimum.
        let frame = build_udp_frame(b"x", 9, 0, 60 - 43);
        assert_eq!(frame.len(), 60);
        assert_eq!(udp_payload(&frame), Ok((&b"x"[..], 9)));
    }

    #[test]
    fn ip_options_are_skipped() {
        let frame = build_udp_frame(b"after options", 8001, 10, 0);
        assert_eq!(udp_payload(&frame), Ok((&b"after options"[..], 8001)));
    }

    #[test]
    fn each_malformation_has_its_reason() {
        let good = build_udp_frame(b"payload", 8001, 0, 0);
        let mut vlan = good.clone();
        vlan[12..14].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(udp_payload(&vlan), Err(FrameError::NotIpv4(0x8100)));
        let mut v6 = good.clone();
        v6[14] = 0x65;
        assert_eq!(udp_payload(&v6), Err(FrameError::IpVersion(6)));
        let mut ihl = good.clone();
        ihl[14] = 0x44;
        assert_eq!(udp_payload(&ihl), Err(FrameError::IpHeaderLength(16)));
        let mut tcp = good.clone();
        tcp[14 + 9] = 6;
        assert_eq!(udp_payload(&tcp), Err(FrameError::NotUdp(6)));
        let mut fragment = good.clone();
        fragment[14 + 6] = 0x20; // more fragments
        assert_eq!(udp_payload(&fragment), Err(FrameError::Fragment));
        let mut long_ip = good.clone();
        long_ip[14 + 2..14 + 4].copy_from_slice(&500u16.to_be_bytes());
        assert!(matches!(
            udp_payload(&long_ip),
            Err(FrameError::IpTotalLength { total: 500, .. })
        ));
        let mut long_udp = good.clone();
        long_udp[14 + 20 + 4..14 + 20 + 6].copy_from_slice(&100u16.to_be_bytes());
        assert!(matches!(
            udp_payload(&long_udp),
            Err(FrameError::UdpLength { udp: 100, .. })
        ));
        assert_eq!(udp_payload(&good[..30]), Err(FrameError::Short { len: 30 }));
    }

    proptest! {
        #[test]
        fn built_frames_round_trip(
            payload in proptest::collection::vec(any::<u8>(), 0..1500),
            port in any::<u16>(),
            options in 0u8..=10,
            padding in 0usize..64,
        ) {
            let frame = build_udp_frame(&payload, port, options, padding);
            prop_assert_eq!(udp_payload(&frame), Ok((&payload[..], port)));
        }

        /// Valid frames with bytes overwritten and the end cut: whatever parses lies inside the
        /// frame, after the minimal headers, and within the UDP length the frame states.
        #[test]
        fn damaged_frames_never_panic_and_stay_inside(
            payload in proptest::collection::vec(any::<u8>(), 0..300),
            options in 0u8..=10,
            damage in proptest::collection::vec((0usize..400, any::<u8>()), 0..6),
            cut in 0usize..400,
        ) {
            let mut frame = build_udp_frame(&payload, 8001, options, 0);
            for (position, byte) in damage {
                if let Some(slot) = frame.get_mut(position) {
                    *slot = byte;
                }
            }
            frame.truncate(cut.max(1));
            if let Ok((parsed, _)) = udp_payload(&frame) {
                let start = parsed.as_ptr() as usize - frame.as_ptr() as usize;
                let header_bytes = usize::from(frame[14] & 0x0f) * 4;
                let udp_len = usize::from(u16::from_be_bytes([frame[14 + header_bytes + 4], frame[14 + header_bytes + 5]]));
                prop_assert_eq!(start, 14 + header_bytes + 8);
                prop_assert_eq!(parsed.len(), udp_len - 8);
                prop_assert!(start + parsed.len() <= frame.len());
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic_and_stay_inside(frame in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok((payload, _)) = udp_payload(&frame) {
                let start = payload.as_ptr() as usize - frame.as_ptr() as usize;
                prop_assert!(start >= 14 + 20 + 8);
                prop_assert!(start + payload.len() <= frame.len());
            }
        }
    }
}
