//! Multi-frame payloads (format §2.7): reassembling a payload from its inline first DataFrame and
//! the continuation frames reachable through `next`, checking the whole-payload checksum
//! (CRC-64/GO-ISO, or 64-bit FNV-1a in very old CARs), and splitting a payload into frames for the
//! writer (at most 5 links per frame, linked so that a depth-first walk visits frames in order).

use std::borrow::Cow;
use std::collections::HashSet;

use crate::cid::Cid;
use crate::error::FormatError;
use crate::node::DataFrame;

/// Most links a frame's `next` holds.
pub const LINKS_PER_FRAME: usize = 5;
/// Bound on the frames of one payload (32 MiB frames: far beyond any real payload).
pub const MAX_FRAMES: usize = 1 << 16;

const CRC64_GO_ISO: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_GO_ISO);

/// CRC-64 "GO-ISO" of `bytes` (Go's `crc64.Checksum` with the ISO table).
pub fn crc64_go_iso(bytes: &[u8]) -> u64 {
    CRC64_GO_ISO.checksum(bytes)
}

/// 64-bit FNV-1a of `bytes` (the checksum of very old CARs).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Reassembles the payload that starts with `first`. `fetch` returns the encoded continuation
/// frame for a CID (from the same slot range or through the CID index); `None` is an error.
pub fn reassemble<'a, F>(first: &DataFrame<'a>, mut fetch: F) -> Result<Cow<'a, [u8]>, FormatError>
where
    F: FnMut(&Cid) -> Option<Vec<u8>>,
{
    if first.next.is_empty() && first.total.is_none_or(|total| total <= 1) {
        return Ok(Cow::Borrowed(first.data));
    }
    let total = first
        .total
        .ok_or_else(|| FormatError::Frames("frame with links but no total".into()))?;
    let total = usize::try_from(total)
        .ok()
        .filter(|&t| t <= MAX_FRAMES)
        .ok_or_else(|| FormatError::Frames(format!("{total} frames")))?;
    let mut frames: Vec<(u64, Vec<u8>)> = vec![(first.index.unwrap_or(0), first.data.to_vec())];
    let mut pending: Vec<Cid> = first.next.iter().rev().copied().collect();
    let mut seen: HashSet<Cid> = HashSet::new();
    while let Some(cid) = pending.pop() {
        if !seen.insert(cid) || frames.len() > total {
            return Err(FormatError::Frames(
                "frame links repeat or exceed total".into(),
            ));
        }
        let bytes =
            fetch(&cid).ok_or_else(|| FormatError::Frames(format!("frame {cid} missing")))?;
        let frame = DataFrame::decode(&bytes)?;
        let index = frame
            .index
            .ok_or_else(|| FormatError::Frames("continuation frame without index".into()))?;
        pending.extend(frame.next.iter().rev().copied());
        frames.push((index, frame.data.to_vec()));
    }
    if frames.len() != total {
        return Err(FormatError::Frames(format!(
            "{} frames found, {total} declared",
            frames.len()
        )));
    }
    frames.sort_by_key(|(index, _)| *index);
    if frames
        .iter()
        .enumerate()
        .any(|(i, (index, _))| *index != i as u64)
    {
        return Err(FormatError::Frames("frame indexes are not 0..total".into()));
    }
    let payload: Vec<u8> = frames.into_iter().flat_map(|(_, data)| data).collect();
    if let Some(expected) = first.hash
        && crc64_go_iso(&payload) != expected
        && fnv1a64(&payload) != expected
    {
        return Err(FormatError::Checksum);
    }
    Ok(Cow::Owned(payload))
}

/// A payload cut into frames for the writer.
#[derive(Debug)]
pub struct SplitPayload<'a> {
    /// The first frame, to embed inline in the parent node.
    pub first: DataFrame<'a>,
    /// Encoded continuation DataFrame nodes with their CIDs, in the order they must be written
    /// (children before the frames that link to them).
    pub continuation: Vec<(Cid, Vec<u8>)>,
}

/// Splits `payload` into a first frame of at most `first_max` bytes and later frames of at most
/// `later_max` bytes. A payload that fits is one frame with null hash/index/total.
pub fn split(
    payload: &[u8],
    first_max: usize,
    later_max: usize,
) -> Result<SplitPayload<'_>, FormatError> {
    let first_max = first_max.max(1);
    let later_max = later_max.max(1);
    if payload.len() <= first_max {
        return Ok(SplitPayload {
            first: DataFrame {
                data: payload,
                ..DataFrame::default()
            },
            continuation: Vec::new(),
        });
    }
    let (head, tail) = payload.split_at(first_max);
    let chunks: Vec<&[u8]> = tail.chunks(later_max).collect();
    let total = (chunks.len() + 1) as u64;
    let hash = Some(crc64_go_iso(payload));
    // Frames 1.. are grouped by LINKS_PER_FRAME; the first frame links the first group and the
    // last frame of each group links the next group, so depth-first order is index order. Written
    // from the last group backwards because a frame's CID depends on its children.
    let groups: Vec<&[&[u8]]> = chunks.chunks(LINKS_PER_FRAME).collect();
    let mut continuation = Vec::with_capacity(chunks.len());
    let mut next_group_links: Vec<Cid> = Vec::new();
    for (g, group) in groups.iter().enumerate().rev() {
        let mut links = Vec::with_capacity(group.len());
        for (i, data) in group.iter().enumerate() {
            let index = (1 + g * LINKS_PER_FRAME + i) as u64;
            let next = if i + 1 == group.len() {
                std::mem::take(&mut next_group_links)
            } else {
                Vec::new()
            };
            let frame = DataFrame {
                hash,
                index: Some(index),
                total: Some(total),
                data,
                next,
            };
            let bytes = frame.encode()?;
            let cid = Cid::for_node(&bytes);
            links.push(cid);
            continuation.push((cid, bytes));
        }
        next_group_links = links;
    }
    Ok(SplitPayload {
        first: DataFrame {
            hash,
            index: Some(0),
            total: Some(total),
            data: head,
            next: next_group_links,
        },
        continuation,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn checksum_check_values() {
        // Check values of the two algorithms for "123456789" (format §2.7; FNV-1a 64 reference).
        assert_eq!(crc64_go_iso(b"123456789"), 0xB909_56C7_75A4_1001);
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn split_and_reassemble_many_frames() {
        let payload: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let split = split(&payload, 10, 7).unwrap();
        assert!(split.first.next.len() <= LINKS_PER_FRAME);
        let store: HashMap<Cid, Vec<u8>> = split.continuation.iter().cloned().collect();
        let back = reassemble(&split.first, |cid| store.get(cid).cloned()).unwrap();
        assert_eq!(back.as_ref(), payload.as_slice());
        // A missing frame or a wrong checksum is an error.
        let mut first = split.first.clone();
        first.hash = Some(1);
        assert_eq!(
            reassemble(&first, |cid| store.get(cid).cloned()),
            Err(FormatError::Checksum)
        );
        assert!(reassemble(&split.first, |_| None).is_err());
    }
}
