//! Block marker layouts, built byte by byte from docs/decoder.md, format §9a.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

/// `u16 version, u8 variant, u16 length, data`: a marker after its zero entry count.
fn marker(version: u16, variant: u8, data: &[u8]) -> Vec<u8> {
    let mut out = version.to_le_bytes().to_vec();
    out.push(variant);
    out.extend_from_slice(&(data.len() as u16).to_le_bytes());
    out.extend_from_slice(data);
    out
}

fn current_footer(time: u64, agent: &[u8], tags: &[u8]) -> Vec<u8> {
    let mut data = vec![1u8];
    data.extend_from_slice(&[0xAB; 32]);
    data.extend_from_slice(&time.to_le_bytes());
    data.push(agent.len() as u8);
    data.extend_from_slice(agent);
    data.extend_from_slice(tags);
    data
}

fn earlier_footer(time: u64, agent: &[u8]) -> Vec<u8> {
    let mut data = vec![1u8];
    data.extend_from_slice(&time.to_le_bytes());
    data.push(agent.len() as u8);
    data.extend_from_slice(agent);
    data
}

fn parent(slot: u64, id: u8) -> Vec<u8> {
    let mut data = vec![1u8];
    data.extend_from_slice(&slot.to_le_bytes());
    data.extend_from_slice(&[id; 32]);
    data
}

fn read(bytes: &[u8]) -> Result<(BlockMarker<'_>, usize), MarkerError> {
    let mut cursor = Cursor::new(bytes);
    let marker = read_marker(&mut cursor)?;
    Ok((marker, cursor.position()))
}

#[test]
fn current_footer_reads_time_agent_and_bank_hash() {
    let wire = marker(
        1,
        0,
        &current_footer(1_764_000_000_123_456_789, b"agave/3.1.0", &[0, 0, 0]),
    );
    let (marker, used) = read(&wire).unwrap();
    assert_eq!(used, wire.len());
    let BlockMarker::Footer(footer) = marker else {
        panic!("{marker:?}")
    };
    assert_eq!(footer.producer_time_ns, 1_764_000_000_123_456_789);
    assert_eq!(footer.user_agent, b"agave/3.1.0");
    assert_eq!(footer.bank_hash, Some(&[0xAB; 32]));
    assert_eq!(marker.kind().label(), "block_footer");
}

#[test]
fn current_footer_with_a_certificate_reads_its_fixed_fields() {
    // A present finalization certificate (tag 1) then opaque bytes: skipped by the length.
    let mut tail = vec![1u8];
    tail.extend_from_slice(&[9; 150]);
    tail.extend_from_slice(&[0, 0]);
    let wire = marker(1, 0, &current_footer(77, b"x", &tail));
    let (BlockMarker::Footer(footer), used) = read(&wire).unwrap() else {
        panic!()
    };
    assert_eq!(
        (footer.producer_time_ns, footer.user_agent),
        (77, &b"x"[..])
    );
    assert_eq!(used, wire.len());
}

#[test]
fn earlier_footer_layout_is_read_when_it_fills_the_data() {
    let wire = marker(1, 0, &earlier_footer(5_000_000_000, b"jito-solana/2.3"));
    let (BlockMarker::Footer(footer), _) = read(&wire).unwrap() else {
        panic!()
    };
    assert_eq!(footer.producer_time_ns, 5_000_000_000);
    assert_eq!(footer.user_agent, b"jito-solana/2.3");
    assert_eq!(footer.bank_hash, None);
    // A long ASCII agent in the earlier layout is not mistaken for the current one.
    let agent = [b'a'; 200];
    let wire = marker(1, 0, &earlier_footer(6, &agent));
    let (BlockMarker::Footer(footer), _) = read(&wire).unwrap() else {
        panic!()
    };
    assert_eq!((footer.producer_time_ns, footer.user_agent.len()), (6, 200));
}

#[test]
fn header_and_update_parent_read_their_parent() {
    let wire = marker(1, 1, &parent(361_199_999, 0x11));
    let (BlockMarker::Header(header), _) = read(&wire).unwrap() else {
        panic!()
    };
    assert_eq!(header.parent_slot, 361_199_999);
    assert_eq!(header.parent_block_id, &[0x11; 32]);
    let wire = marker(1, 2, &parent(361_199_997, 0x22));
    let (BlockMarker::UpdateParent(update), _) = read(&wire).unwrap() else {
        panic!()
    };
    assert_eq!(update.parent_slot, 361_199_997);
    assert_eq!(update.parent_block_id, &[0x22; 32]);
}

#[test]
fn unknown_and_malformed_variants_are_skipped_by_their_length() {
    let wire = marker(1, 9, &[1, 2, 3]);
    assert_eq!(
        read(&wire).unwrap(),
        (
            BlockMarker::Unknown {
                variant: 9,
                data: &[1, 2, 3]
            },
            8
        )
    );
    // A header one byte short, and one with inner version 2.
    let short = parent(1, 1);
    let wire = marker(1, 1, &short[..40]);
    assert_eq!(read(&wire).unwrap().0.kind(), MarkerKind::Malformed);
    let mut wrong = parent(1, 1);
    wrong[0] = 2;
    assert_eq!(
        read(&marker(1, 2, &wrong)).unwrap().0.kind(),
        MarkerKind::Malformed
    );
    let mut footer = current_footer(1, b"", &[0, 0, 0]);
    footer[0] = 0;
    assert_eq!(
        read(&marker(1, 0, &footer)).unwrap().0.kind(),
        MarkerKind::Malformed
    );
    let genesis = marker(1, 3, &[4; 300]);
    assert_eq!(
        read(&genesis).unwrap().0.kind(),
        MarkerKind::GenesisCertificate
    );
}

#[test]
fn other_versions_and_truncations_fail() {
    assert_eq!(
        read(&marker(2, 0, &[])).unwrap_err(),
        MarkerError::UnsupportedVersion { version: 2 }
    );
    let wire = marker(1, 1, &parent(3, 3));
    for cut in 0..wire.len() {
        let error = read(&wire[..cut]).unwrap_err();
        assert_eq!(error.label(), "marker_truncated", "cut {cut}");
    }
    assert_eq!(marker_len(&wire), Some(wire.len()));
    assert_eq!(marker_len(&wire[..4]), None);
    assert_eq!(marker_len(&marker(7, 0, &[])), None);
}

#[test]
fn counts_add_up_by_kind() {
    let mut counts = MarkerCounts::default();
    counts.add(MarkerKind::BlockFooter);
    counts.add(MarkerKind::Unknown);
    counts.add(MarkerKind::BlockFooter);
    let mut total = MarkerCounts::default();
    total.merge(&counts);
    total.merge(&counts);
    assert_eq!(
        (total.block_footer, total.unknown, total.total()),
        (4, 2, 6)
    );
    assert_eq!(total.by_label()[0], ("block_footer", 4));
}

proptest! {
    #[test]
    fn arbitrary_markers_never_panic_and_stay_in_bounds(bytes in vec(any::<u8>(), 0..400)) {
        let mut cursor = Cursor::new(&bytes);
        if read_marker(&mut cursor).is_ok() {
            prop_assert_eq!(marker_len(&bytes), Some(cursor.position()));
        }
    }
}
