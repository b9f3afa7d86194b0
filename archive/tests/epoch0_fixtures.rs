//! The real mainnet epoch-0 CAR pieces (copied from the reference repository, see
//! `fixtures/SOURCES.md`) read with the CAR, node and slot-range readers; every expected value is
//! a test vector listed in SOURCES.md.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use archive::block::{decode_slot_range, verify_sections};
use archive::car::{self, CarStream};
use archive::node::{self, BlockNode, Node};
use archive::{Cid, txwire};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

struct BlockVector {
    file: &'static str,
    slot: u64,
    cid: &'static str,
    offset: u64,
    size: u64,
    entries: usize,
    txs: usize,
    blockhash: &'static str,
}

const BLOCKS: [BlockVector; 6] = [
    BlockVector {
        file: "epoch-0-1.car",
        slot: 0,
        cid: "bafyreianr3wvyk6ulwuvtlgiu4xfzadob6wi7mwizemfhljbc5v2zvullq",
        offset: 4987,
        size: 2913,
        entries: 64,
        txs: 0,
        blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn",
    },
    BlockVector {
        file: "epoch-0-1.car",
        slot: 1,
        cid: "bafyreidpzfbqpwogpbwieqjxkxxbnopmrzmvpfw4rtbhc3lsiho7ejgpxa",
        offset: 14767,
        size: 3091,
        entries: 67,
        txs: 4,
        blockhash: "AcknnkY4ok5BZuk69WijDETKVRUPZoMtniZHMe4ZaK1e",
    },
    BlockVector {
        file: "epoch-0-1.car",
        slot: 2,
        cid: "bafyreidmjji26inmk6wcg5g4l5rkj2pu5jgfa7pijlv5bx2zhq7swre63i",
        offset: 24649,
        size: 3045,
        entries: 66,
        txs: 4,
        blockhash: "7nWqrmy668tQdQizJ7LSgSe4YstRc4kDuZ1wxukmMUoE",
    },
    BlockVector {
        file: "epoch-0-1.car",
        slot: 9,
        cid: "bafyreid33i7vut4agyv2pat5hu2dwbdris54jhl5x44s6iw34wt4hknmrq",
        offset: 93388,
        size: 3091,
        entries: 67,
        txs: 3,
        blockhash: "D1g3wfdhqPMTLAH5vtkv22yHd3x6DtfvfbX4fGM5XQDK",
    },
    BlockVector {
        file: "epoch-0-2.car",
        slot: 10,
        cid: "bafyreiauwfax74ajfwbz7ppfuaygdhkpdofawdrbmxzh2k6oyk4qptmkqi",
        offset: 7407,
        size: 3137,
        entries: 68,
        txs: 5,
        blockhash: "HK89J3ijkEeiEDL7hcPP2czotYjMk16znaR8SfcpFptt",
    },
    BlockVector {
        file: "epoch-0-3.car",
        slot: 20,
        cid: "bafyreib3qaqveqqdui6rvcqligli3bqwamzrmwksxn3oqxdslkmr6fhotq",
        offset: 7321,
        size: 3091,
        entries: 67,
        txs: 5,
        blockhash: "CxqJEUSSLsdjHBEAHjqUhJaSkuYbeeC5puVmibMSUkad",
    },
];

const FIRST_SIGNATURES: [(u64, &str); 3] = [
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
];

const PIECES: [(&str, &str, u64, u64, usize, usize); 3] = [
    // file, root (Subset), first slot, last slot, entries, transactions
    (
        "epoch-0-1.car",
        "bafyreia7j4o364whssrt36odmq3tgryjcjfyjy7ab73akykjppk2f2qnhi",
        0,
        9,
        667,
        34,
    ),
    (
        "epoch-0-2.car",
        "bafyreiczg5fhqxp72bjtfr7fa2giuni75rpff6rg4vkfw5xug5mhqmn5le",
        10,
        19,
        668,
        41,
    ),
    (
        "epoch-0-3.car",
        "bafyreigywdbfkql2vnu3vodbmyhlhkfuegnkv5jorcilumi3gf6yo2jncy",
        20,
        29,
        667,
        40,
    ),
];

/// Sections of a whole file with their offsets (streamed through the bounded reader).
fn all_sections(bytes: &[u8]) -> Vec<(u64, u64, Cid, Vec<u8>)> {
    let mut stream = CarStream::new(bytes, 1 << 20).unwrap();
    let mut out = Vec::new();
    while let Some(section) = stream.next_section().unwrap() {
        out.push((
            section.offset,
            section.size,
            section.cid,
            section.node.to_vec(),
        ));
    }
    out
}

#[test]
fn headers_roots_and_node_counts() {
    for (file, root, first, last, entries, txs) in PIECES {
        let bytes = fixture(file);
        let header = car::parse_header(&bytes).unwrap();
        assert_eq!(header.data_start, 59, "{file}");
        assert_eq!(header.root.to_string(), root, "{file}");
        let sections = all_sections(&bytes);
        // Every CID is the sha256 of its node.
        assert_eq!(verify_sections(&bytes[59..], 59).unwrap(), sections.len());
        let mut counts: HashMap<u64, usize> = HashMap::new();
        for (_, _, _, node_bytes) in &sections {
            *counts
                .entry(node::peek_kind(node_bytes).unwrap())
                .or_default() += 1;
        }
        assert_eq!(counts.get(&node::kind::ENTRY), Some(&entries), "{file}");
        assert_eq!(counts.get(&node::kind::TRANSACTION), Some(&txs), "{file}");
        assert_eq!(counts.get(&node::kind::BLOCK), Some(&10), "{file}");
        assert_eq!(counts.get(&node::kind::SUBSET), Some(&1), "{file}");
        assert_eq!(counts.len(), 4, "no rewards or frames in epoch 0: {file}");
        // The last section is the root Subset over the ten slots.
        let (_, _, cid, node_bytes) = sections.last().unwrap();
        assert_eq!(cid.to_string(), root);
        let Node::Subset(subset) = node::decode(node_bytes).unwrap() else {
            panic!("root is not a Subset");
        };
        assert_eq!(
            (subset.first, subset.last, subset.blocks.len()),
            (first, last, 10)
        );
        // Sections end exactly at the end of the file.
        let (offset, size, _, _) = sections.last().unwrap();
        assert_eq!(offset + size, bytes.len() as u64);
    }
}

#[test]
fn block_vectors_from_slot_ranges() {
    for v in &BLOCKS {
        let bytes = fixture(v.file);
        let sections = all_sections(&bytes);
        let index = sections
            .iter()
            .position(|(offset, ..)| *offset == v.offset)
            .expect("a section starts at the vector's offset");
        let (offset, size, cid, node_bytes) = &sections[index];
        assert_eq!((*offset, *size), (v.offset, v.size), "slot {}", v.slot);
        assert_eq!(cid.to_string(), v.cid);
        let block = BlockNode::decode(node_bytes).unwrap();
        assert_eq!(block.slot, v.slot);
        assert_eq!(block.entries.len(), v.entries);
        assert_eq!(block.blocktime, 0);
        assert_eq!(block.block_height, None);
        assert_eq!(block.rewards, None, "placeholder rewards link");
        assert_eq!(block.parent_slot, v.slot.saturating_sub(1));
        assert_eq!(block.shredding.len(), v.entries);
        // Slot 0 records "no shred boundary" (-1, a negative CBOR integer) for its entries.
        if v.slot == 0 {
            assert_eq!(block.shredding[0], (0, -1));
        }
        // The slot's range: after the previous Block section (or the data start).
        let start = sections[..index]
            .iter()
            .rev()
            .find(|(_, _, _, n)| node::peek_kind(n).unwrap() == node::kind::BLOCK)
            .map_or(59, |(o, s, _, _)| o + s);
        let range = &bytes[start as usize..(v.offset + v.size) as usize];
        let decoded = decode_slot_range(range, start).unwrap();
        assert_eq!(decoded.block_cid.to_string(), v.cid);
        assert_eq!(decoded.entry_count, v.entries);
        assert_eq!(decoded.block.transactions.len(), v.txs, "slot {}", v.slot);
        assert_eq!(
            bs58::encode(decoded.block.blockhash).into_string(),
            v.blockhash
        );
        assert_eq!(decoded.block.block_time, None);
        assert_eq!(decoded.block.block_height, None);
        assert!(decoded.block.rewards.is_empty());
        for (position, tx) in decoded.block.transactions.iter().enumerate() {
            assert_eq!(tx.meta, None, "epoch 0 has no metadata");
            assert_eq!(tx.index as usize, position);
            assert_eq!(tx.slot, v.slot);
        }
        if let Some((_, sig)) = FIRST_SIGNATURES.iter().find(|(slot, _)| *slot == v.slot) {
            let first = txwire::first_signature(&decoded.block.transactions[0].wire).unwrap();
            assert_eq!(bs58::encode(first).into_string(), *sig);
        }
    }
}

#[test]
fn slot_zero_and_one_share_parent_zero() {
    let bytes = fixture("epoch-0-1.car");
    let parents: Vec<(u64, u64)> = all_sections(&bytes)
        .iter()
        .filter_map(|(_, _, _, n)| BlockNode::decode(n).ok())
        .map(|b| (b.slot, b.parent_slot))
        .collect();
    assert_eq!(parents[0], (0, 0));
    assert_eq!(parents[1], (1, 0));
    assert!(
        parents[2..]
            .iter()
            .all(|&(slot, parent)| parent == slot - 1)
    );
}
