//! Zero panics on garbage: every parser of the crate gets random bytes and mutated real bytes
//! (the epoch-0 fixtures and a written epoch's indexes) and must return, never panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::LazyLock;

use archive::block::{decode_slot_range, decode_transaction};
use archive::index::addr::{AddressIndex, OrdinalBounds};
use archive::index::compact::CompactIndex;
use archive::index::sigexists::SigExists;
use archive::index::slots::{BlockHashes, BlockTimes, SlotRanges};
use archive::{car, meta, node, txwire};
use proptest::prelude::*;

static FIXTURE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    std::fs::read(format!(
        "{}/tests/fixtures/epoch-0-1.car",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
});

/// Index files of the first epoch-0 piece, built once.
static INDEXES: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    let car_path = dir.path().join("epoch-0-1.car");
    std::fs::write(&car_path, &*FIXTURE).unwrap();
    let options = archive::build::BuildOptions {
        progress: false,
        partitions: None,
    };
    archive::build::build_indexes(&car_path, &options).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "index" || x == "raw"))
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
});

fn exercise_all(bytes: &[u8]) {
    let _ = car::parse_header(bytes);
    for section in car::sections(bytes, 0).take(64) {
        let Ok(section) = section else { break };
        let _ = node::decode(section.node);
    }
    let _ = node::decode(bytes);
    let _ = node::peek_kind(bytes);
    let _ = node::EntryNode::decode_hash(bytes);
    let _ = decode_slot_range(bytes, 0);
    let _ = decode_transaction(bytes, 0, |_| Some(bytes.to_vec()));
    let _ = meta::decode_metadata(bytes);
    let _ = meta::decode_status_meta(bytes);
    let _ = meta::decode_rewards(bytes);
    let _ = txwire::summarize(bytes);
    let _ = archive::Cid::read(bytes);
    let _ = archive::index::meta::IndexMeta::parse(bytes);
    let mut stream_ok = car::CarStream::new(bytes, 1 << 10).ok();
    if let Some(stream) = stream_ok.as_mut() {
        for _ in 0..64 {
            match stream.next_section() {
                Ok(Some(_)) => {}
                _ => break,
            }
        }
    }
}

fn exercise_indexes(bytes: Vec<u8>) {
    if let Ok(index) = CompactIndex::open(bytes.clone()) {
        for key in [
            &[1u8; 8][..],
            &[2u8; 36][..],
            &[3u8; 64][..],
            &[4u8; 32][..],
        ] {
            let _ = index.lookup(key);
        }
    }
    if let Ok(exists) = SigExists::open(bytes.clone()) {
        let _ = exists.contains(&[9u8; 64]);
    }
    if let Ok(times) = BlockTimes::open(bytes.clone()) {
        let _ = times.get(5);
    }
    if let Ok(hashes) = BlockHashes::open(bytes.clone()) {
        let _ = hashes.get(5);
    }
    if let Ok(ranges) = SlotRanges::open(bytes.clone(), 0) {
        let _ = ranges.get(5);
        let _ = ranges.bounds();
    }
    if let Ok(index) = AddressIndex::open(bytes.clone(), bytes.clone(), bytes.clone(), bytes) {
        let _ = index.query(&[1u8; 32], OrdinalBounds::default(), 10);
        let _ = index.ordinal_of(&[1u8; 64]);
        let _ = index.row(0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        exercise_all(&bytes);
        exercise_indexes(bytes);
    }

    #[test]
    fn mutated_car_bytes_never_panic(
        start in 0usize..90_000,
        len in 1usize..6_000,
        flips in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..8),
    ) {
        let end = (start + len).min(FIXTURE.len());
        let mut bytes = FIXTURE[start.min(end)..end].to_vec();
        for (at, value) in flips {
            if !bytes.is_empty() {
                let i = usize::from(at) % bytes.len();
                bytes[i] = value;
            }
        }
        exercise_all(&bytes);
        // The header region with mutations, too.
        let mut head = FIXTURE[..200].to_vec();
        head[start % 59] ^= len as u8;
        exercise_all(&head);
    }

    #[test]
    fn mutated_index_files_never_panic(
        file in 0usize..32,
        flips in proptest::collection::vec((any::<u32>(), any::<u8>()), 1..6),
        cut in any::<u32>(),
    ) {
        let files = &*INDEXES;
        let mut bytes = files[file % files.len()].clone();
        for (at, value) in flips {
            // Mostly inside the headers, where lengths and offsets live.
            let i = (at as usize) % bytes.len().min(if at % 2 == 0 { 256 } else { usize::MAX });
            bytes[i] = value;
        }
        if cut % 4 == 0 {
            bytes.truncate((cut as usize) % bytes.len().max(1));
        }
        exercise_indexes(bytes);
    }
}
