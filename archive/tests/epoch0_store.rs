//! The real epoch-0 pieces indexed by our builder and served by `LocalArchive`: the published
//! index formats answer the SOURCES.md vectors directly (slot → CID, CID → offset and size), and
//! the store returns blocks (also across pieces), transactions, block times and signatures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use archive::build::{BuildOptions, build_indexes};
use archive::index::IndexPaths;
use archive::index::compact::CompactIndex;
use archive::index::sigexists::SigExists;
use archive::readat::LocalFile;
use archive::{ArchiveStore, Cid, LocalArchive, SignatureQuery, SlotLookup, car};

const ROOTS: [(&str, &str); 3] = [
    (
        "epoch-0-1.car",
        "bafyreia7j4o364whssrt36odmq3tgryjcjfyjy7ab73akykjppk2f2qnhi",
    ),
    (
        "epoch-0-2.car",
        "bafyreiczg5fhqxp72bjtfr7fa2giuni75rpff6rg4vkfw5xug5mhqmn5le",
    ),
    (
        "epoch-0-3.car",
        "bafyreigywdbfkql2vnu3vodbmyhlhkfuegnkv5jorcilumi3gf6yo2jncy",
    ),
];

fn indexed_copy() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let mut cars = Vec::new();
    for (name, _) in ROOTS {
        let src = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        let dst = dir.path().join(name);
        std::fs::copy(src, &dst).unwrap();
        let options = BuildOptions {
            progress: false,
            partitions: None,
        };
        let report = build_indexes(&dst, &options).unwrap();
        assert_eq!(report.epoch, Some(0));
        assert_eq!(report.blocks, 10);
        assert!(report.skipped.is_empty());
        cars.push(dst);
    }
    (dir, cars)
}

fn paths(car_path: &Path) -> IndexPaths {
    let bytes = std::fs::read(car_path).unwrap();
    IndexPaths::for_car(car_path, &car::parse_header(&bytes).unwrap().root)
}

fn b58(bytes: &[u8]) -> String {
    bs58::encode(bytes).into_string()
}

fn sig(text: &str) -> [u8; 64] {
    bs58::decode(text).into_vec().unwrap().try_into().unwrap()
}

#[test]
fn published_formats_answer_the_vectors() {
    let (_dir, cars) = indexed_copy();
    // Names as the file host names them, with the piece's stem and root.
    let p = paths(&cars[0]);
    assert_eq!(
        p.slot_to_cid.file_name().unwrap().to_str().unwrap(),
        format!("epoch-0-1-{}-mainnet-slot-to-cid.index", ROOTS[0].1)
    );
    let slot_to_cid = CompactIndex::open(LocalFile::open(&p.slot_to_cid).unwrap()).unwrap();
    assert_eq!(slot_to_cid.meta().kind(), Some("slot-to-cid"));
    assert_eq!(slot_to_cid.meta().epoch(), Some(0));
    assert_eq!(
        slot_to_cid.meta().root_cid().unwrap().to_string(),
        ROOTS[0].1
    );
    let cid_to_offset = CompactIndex::open(LocalFile::open(&p.cid_to_offset).unwrap()).unwrap();
    for (slot, cid, offset, size) in [
        (
            1u64,
            "bafyreidpzfbqpwogpbwieqjxkxxbnopmrzmvpfw4rtbhc3lsiho7ejgpxa",
            14767u64,
            3091u64,
        ),
        (
            9,
            "bafyreid33i7vut4agyv2pat5hu2dwbdris54jhl5x44s6iw34wt4hknmrq",
            93388,
            3091,
        ),
    ] {
        let value = slot_to_cid.lookup(&slot.to_le_bytes()).unwrap().unwrap();
        assert_eq!(Cid::from_bytes(&value).unwrap().to_string(), cid);
        let value = cid_to_offset.lookup(&value).unwrap().unwrap();
        let mut o = [0u8; 8];
        o[..6].copy_from_slice(&value[..6]);
        let found_size = u64::from(value[6]) | u64::from(value[7]) << 8 | u64::from(value[8]) << 16;
        assert_eq!((u64::from_le_bytes(o), found_size), (offset, size));
    }
    // Piece 2: slot 10 vector.
    let p2 = paths(&cars[1]);
    let slot_to_cid = CompactIndex::open(LocalFile::open(&p2.slot_to_cid).unwrap()).unwrap();
    let cid_to_offset = CompactIndex::open(LocalFile::open(&p2.cid_to_offset).unwrap()).unwrap();
    let value = slot_to_cid.lookup(&10u64.to_le_bytes()).unwrap().unwrap();
    assert_eq!(
        Cid::from_bytes(&value).unwrap().to_string(),
        "bafyreiauwfax74ajfwbz7ppfuaygdhkpdofawdrbmxzh2k6oyk4qptmkqi"
    );
    let value = cid_to_offset.lookup(&value).unwrap().unwrap();
    assert_eq!(&value[..6], &7407u64.to_le_bytes()[..6]);
    assert_eq!(&value[6..], &3137u32.to_le_bytes()[..3]);
    // sig-exists knows the first signature of slot 10 and not one of slot 1 (other piece).
    let exists = SigExists::open(LocalFile::open(&p2.sig_exists).unwrap()).unwrap();
    assert!(exists.contains(&sig("63TicBLuzbCVgHZKbSN3dnmU1PTqdfqQYtHyrKxWrPSQWc4LZsSgiji96W3WpAwpvJ4ahdCABqMpjMcQgCBbAvoU")).unwrap());
    assert!(!exists.contains(&sig("39V8tR2Q8Ar3WwMBfVTRPFr7AakLHy5wp7skJNBL7ET6ARoikqc1TaMiuXEtHiNPLQKoeiVr5XnKH8QtjdonN4yM")).unwrap());
    // sig-exists header size with mainnet metadata (format §3.3: 655,465 bytes before content).
    let bytes = std::fs::read(&p2.sig_exists).unwrap();
    assert_eq!(
        u32::from_le_bytes(bytes[..4].try_into().unwrap()) + 4,
        655_465
    );
    // slot-to-blocktime is 1,728,046 bytes, all zero for epoch 0.
    let bytes = std::fs::read(&p2.slot_to_blocktime).unwrap();
    assert_eq!(bytes.len(), 1_728_046);
    assert!(bytes[46..].iter().all(|&b| b == 0));
}

#[test]
fn local_archive_serves_epoch_zero() {
    let (dir, _cars) = indexed_copy();
    let store = LocalArchive::open(dir.path()).unwrap();
    assert_eq!(store.epochs(), vec![0]);
    assert_eq!(store.newest_slot(), Some(29));
    let vectors = [
        (0u64, "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn", 0usize),
        (1, "AcknnkY4ok5BZuk69WijDETKVRUPZoMtniZHMe4ZaK1e", 4),
        (2, "7nWqrmy668tQdQizJ7LSgSe4YstRc4kDuZ1wxukmMUoE", 4),
        (9, "D1g3wfdhqPMTLAH5vtkv22yHd3x6DtfvfbX4fGM5XQDK", 3),
        (10, "HK89J3ijkEeiEDL7hcPP2czotYjMk16znaR8SfcpFptt", 5),
        (20, "CxqJEUSSLsdjHBEAHjqUhJaSkuYbeeC5puVmibMSUkad", 5),
    ];
    for (slot, hash, txs) in vectors {
        let SlotLookup::Found(block) = store.block(slot).unwrap() else {
            panic!("slot {slot} not found");
        };
        assert_eq!(b58(&block.blockhash), hash);
        assert_eq!(block.transactions.len(), txs);
        assert_eq!(block.block_time, None);
        assert_eq!(block.block_height, None);
        assert_eq!(block.parent_slot, slot.saturating_sub(1));
        assert!(block.transactions.iter().all(|t| t.meta.is_none()));
    }
    // previousBlockhash = the parent's last entry hash, also across pieces (9 → 10).
    let prev = |slot| match store.block(slot).unwrap() {
        SlotLookup::Found(b) => b.previous_blockhash.map(|h| b58(&h)),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        prev(1).as_deref(),
        Some("4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn")
    );
    assert_eq!(
        prev(2).as_deref(),
        Some("AcknnkY4ok5BZuk69WijDETKVRUPZoMtniZHMe4ZaK1e")
    );
    assert_eq!(
        prev(10).as_deref(),
        Some("D1g3wfdhqPMTLAH5vtkv22yHd3x6DtfvfbX4fGM5XQDK")
    );
    // Slot 0's parent is slot 0 itself.
    assert_eq!(
        prev(0).as_deref(),
        Some("4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn")
    );
    for slot in 0..30 {
        assert!(
            matches!(store.block(slot).unwrap(), SlotLookup::Found(_)),
            "slot {slot}"
        );
        assert_eq!(store.block_time(slot).unwrap(), SlotLookup::Found(None));
    }
    assert_eq!(store.block(432_000).unwrap(), SlotLookup::NotHeld);
    // Transactions by signature, with position and null meta/block time.
    for (slot, text) in [
        (
            1,
            "39V8tR2Q8Ar3WwMBfVTRPFr7AakLHy5wp7skJNBL7ET6ARoikqc1TaMiuXEtHiNPLQKoeiVr5XnKH8QtjdonN4yM",
        ),
        (
            2,
            "3mabcf8u7eduVN3GfM8nyGwJ3g3GqApqbGq8m2CtoakgeEVHsw1ZgqSL7KWCRaEdK9rcHUwWNfpkGAb17ewC6XwV",
        ),
        (
            10,
            "63TicBLuzbCVgHZKbSN3dnmU1PTqdfqQYtHyrKxWrPSQWc4LZsSgiji96W3WpAwpvJ4ahdCABqMpjMcQgCBbAvoU",
        ),
    ] {
        let found = store.transaction(&sig(text)).unwrap().expect(text);
        assert_eq!(found.transaction.slot, slot);
        assert_eq!(found.transaction.index, 0);
        assert_eq!(found.transaction.meta, None);
        assert_eq!(found.block_time, None);
    }
    assert_eq!(store.transaction(&[7u8; 64]).unwrap(), None);
    // Signatures for the fee payer of slot 1's first transaction: every transaction of the
    // epoch-0 pieces that lists it, newest first (expectation from a scan of all blocks).
    let SlotLookup::Found(block) = store.block(1).unwrap() else {
        panic!()
    };
    let wire = &block.transactions[0].wire;
    let payer: [u8; 32] = wire[1 + 64 * usize::from(wire[0]) + 4..][..32]
        .try_into()
        .unwrap();
    let mut expected = Vec::new();
    for slot in (0..30).rev() {
        let SlotLookup::Found(block) = store.block(slot).unwrap() else {
            panic!()
        };
        for tx in block.transactions.iter().rev() {
            let view = decoder::transaction::parse_transaction_exact(&tx.wire).unwrap();
            if view.static_account_keys().contains(&payer) {
                expected.push((slot, tx.index, *view.first_signature()));
            }
        }
    }
    assert!(!expected.is_empty());
    let query = SignatureQuery {
        before: None,
        until: None,
        limit: 1000,
    };
    let rows = store.signatures_for_address(&payer, &query).unwrap();
    let got: Vec<(u64, u32, [u8; 64])> = rows
        .iter()
        .map(|r| (r.slot, r.index, r.signature))
        .collect();
    assert_eq!(got, expected);
    assert!(
        rows.iter()
            .all(|r| r.err.is_none() && r.memo.is_none() && r.block_time.is_none())
    );
}
