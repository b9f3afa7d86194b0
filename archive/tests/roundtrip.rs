//! Write realistic epochs with our CAR writer (two pieces of epoch 3 and a whole epoch 4, with
//! skipped slots, legacy/v0 transactions, protobuf and legacy bincode and empty metadata,
//! multi-frame payloads, rewards), build the indexes, and check every slot, signature and address
//! query of `LocalArchive` against expectations computed from the writer's *inputs*.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use archive::build::{BuildOptions, build_indexes};
use archive::index::IndexPaths;
use archive::index::compact::CompactIndex;
use archive::meta::{StoredReturnData, StoredTransactionStatusMeta};
use archive::proto;
use archive::readat::LocalFile;
use archive::txerror::TransactionError;
use archive::writer::{BlockInput, CarWriter, MetaInput, RootKind, WriterOptions};
use archive::{ArchiveStore, LocalArchive, SignatureQuery, SlotLookup, car};
use testkit::synth::{Synth, SynthOptions};

const EPOCH3_START: u64 = 3 * 432_000;
const MEMO_V1: &str = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo";
const MEMO_V3: &str = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
const CLOCK: &str = "SysvarC1ock11111111111111111111111111111111";

fn key(text: &str) -> [u8; 32] {
    bs58::decode(text).into_vec().unwrap().try_into().unwrap()
}

/// Blocks spanning the end of epoch 3 and the start of epoch 4, with some metadata rewritten as
/// legacy bincode or removed.
fn blocks() -> (Vec<BlockInput>, Vec<[u8; 32]>) {
    let options = SynthOptions {
        first_slot: EPOCH3_START + 431_880,
        slots: 200,
        skip_every: 7,
        entries_per_block: 4,
        txs_per_entry: 3,
        address_pool: 24,
        big_log_every: 9,
        big_log_bytes: 3_000,
        base_time: 1_700_000_000,
        seed: 11,
    };
    let mut synth = Synth::new(options);
    let pool = synth.pool().to_vec();
    let mut blocks: Vec<BlockInput> = synth.by_ref().collect();
    let mut n = 0;
    for block in &mut blocks {
        for entry in &mut block.entries {
            for tx in &mut entry.transactions {
                n += 1;
                let MetaInput::Protobuf(meta) = &tx.meta else {
                    continue;
                };
                if n % 13 == 0 {
                    tx.meta = MetaInput::None;
                } else if n % 10 == 0 && meta.loaded_writable_addresses.is_empty() {
                    let status = match &meta.err {
                        Some(e) => Err(TransactionError::from_bincode(&e.err).unwrap()),
                        None => Ok(()),
                    };
                    tx.meta = MetaInput::LegacyBincode(StoredTransactionStatusMeta {
                        status,
                        fee: meta.fee,
                        pre_balances: meta.pre_balances.clone(),
                        post_balances: meta.post_balances.clone(),
                        inner_instructions: None,
                        log_messages: Some(meta.log_messages.clone()),
                        pre_token_balances: None,
                        post_token_balances: None,
                        rewards: None,
                        return_data: Some(StoredReturnData {
                            program_id: [9; 32],
                            data: vec![1, 2],
                        }),
                        compute_units_consumed: meta.compute_units_consumed,
                        cost_units: None,
                    });
                }
            }
        }
    }
    (blocks, pool)
}

fn write_car(path: &Path, root: RootKind, blocks: &[&BlockInput]) {
    // Small frames: big metadata (and some wire payloads) become multi-frame payloads.
    let options = WriterOptions {
        first_frame_max: 700,
        rewards_first_frame_max: 900,
        later_frame_max: 500,
        blocks_per_subset: 16,
    };
    let mut writer =
        CarWriter::new(BufWriter::new(File::create(path).unwrap()), root, options).unwrap();
    for block in blocks {
        writer.write_block(block).unwrap();
    }
    writer.finish().unwrap();
}

/// One expected getSignaturesForAddress row: (slot, index, signature, err, memo, block time).
type Row = (
    u64,
    u32,
    [u8; 64],
    Option<Vec<u8>>,
    Option<String>,
    Option<i64>,
);

struct Expected {
    /// signature → (slot, index, wire)
    txs: HashMap<[u8; 64], (u64, u32, Vec<u8>)>,
    /// address → rows newest first
    by_address: HashMap<[u8; 32], Vec<Row>>,
}

fn memo_of(view: &decoder::transaction::TransactionView<'_>) -> Option<String> {
    let keys = view.static_account_keys();
    let memos: Vec<String> = view
        .instructions()
        .filter(|ix| {
            let program = keys[usize::from(ix.program_id_index)];
            program == key(MEMO_V1) || program == key(MEMO_V3)
        })
        .map(|ix| match std::str::from_utf8(ix.data) {
            Ok(text) => format!("[{}] {}", ix.data.len(), text),
            Err(_) => format!("[{}] (unparseable)", ix.data.len()),
        })
        .collect();
    (!memos.is_empty()).then(|| memos.join("; "))
}

fn expected(blocks: &[BlockInput]) -> Expected {
    let mut txs = HashMap::new();
    let mut by_address: HashMap<[u8; 32], Vec<_>> = HashMap::new();
    for block in blocks.iter().rev() {
        let all: Vec<_> = block.entries.iter().flat_map(|e| &e.transactions).collect();
        for (index, tx) in all.iter().enumerate().rev() {
            let view = decoder::transaction::parse_transaction_exact(&tx.wire).unwrap();
            let sig = *view.first_signature();
            txs.insert(sig, (block.slot, index as u32, tx.wire.clone()));
            let mut addresses: Vec<[u8; 32]> = view.static_account_keys().to_vec();
            let err = match &tx.meta {
                MetaInput::Protobuf(meta) => {
                    for k in meta
                        .loaded_writable_addresses
                        .iter()
                        .chain(&meta.loaded_readonly_addresses)
                    {
                        addresses.push(k.as_slice().try_into().unwrap());
                    }
                    meta.err.as_ref().map(|e| e.err.clone())
                }
                MetaInput::LegacyBincode(stored) => {
                    stored.status.clone().err().map(|e| e.to_bincode())
                }
                MetaInput::None => None,
            };
            addresses.sort();
            addresses.dedup();
            let time = (block.block_time != 0).then_some(block.block_time);
            for a in addresses {
                if a == key(CLOCK) {
                    continue;
                }
                by_address.entry(a).or_default().push((
                    block.slot,
                    index as u32,
                    sig,
                    err.clone(),
                    memo_of(&view),
                    time,
                ));
            }
        }
    }
    Expected { txs, by_address }
}

#[test]
fn written_epochs_answer_every_lookup() {
    let (blocks, pool) = blocks();
    let dir = tempfile::tempdir().unwrap();
    let epoch3: Vec<&BlockInput> = blocks
        .iter()
        .filter(|b| b.slot < EPOCH3_START + 432_000)
        .collect();
    let epoch4: Vec<&BlockInput> = blocks
        .iter()
        .filter(|b| b.slot >= EPOCH3_START + 432_000)
        .collect();
    let half = epoch3.len() / 2;
    write_car(
        &dir.path().join("epoch-3-1.car"),
        RootKind::Piece,
        &epoch3[..half],
    );
    write_car(
        &dir.path().join("epoch-3-2.car"),
        RootKind::Piece,
        &epoch3[half..],
    );
    write_car(&dir.path().join("epoch-4.car"), RootKind::Epoch(4), &epoch4);
    for name in ["epoch-3-1.car", "epoch-3-2.car", "epoch-4.car"] {
        let options = BuildOptions {
            progress: false,
            partitions: Some(4),
        };
        let report = build_indexes(&dir.path().join(name), &options).unwrap();
        assert!(report.skipped.is_empty());
        // Rerun: everything is complete and kept.
        let again = build_indexes(&dir.path().join(name), &options).unwrap();
        assert!(again.built.is_empty(), "{:?}", again.built);
    }
    // The small frame sizes did produce continuation DataFrame sections.
    let bytes = std::fs::read(dir.path().join("epoch-3-1.car")).unwrap();
    let start = car::parse_header(&bytes).unwrap().data_start;
    let frames = car::sections(&bytes[start as usize..], start)
        .filter(|s| {
            archive::node::peek_kind(s.as_ref().unwrap().node).unwrap()
                == archive::node::kind::DATA_FRAME
        })
        .count();
    assert!(frames > 10, "{frames} continuation frames");
    let store = LocalArchive::open(dir.path()).unwrap();
    assert_eq!(store.epochs(), vec![3, 4]);
    assert_eq!(store.newest_slot(), Some(blocks.last().unwrap().slot));

    // Every slot of the covered range: blocks as written, skipped slots as skipped.
    let by_slot: BTreeMap<u64, &BlockInput> = blocks.iter().map(|b| (b.slot, b)).collect();
    let first = blocks[0].slot;
    let last = blocks.last().unwrap().slot;
    for slot in first..=last {
        let Some(input) = by_slot.get(&slot) else {
            assert_eq!(
                store.block(slot).unwrap(),
                SlotLookup::Skipped,
                "slot {slot}"
            );
            assert_eq!(
                store.block_time(slot).unwrap(),
                SlotLookup::Skipped,
                "slot {slot}"
            );
            continue;
        };
        let SlotLookup::Found(block) = store.block(slot).unwrap() else {
            panic!("slot {slot} missing");
        };
        assert_eq!(block.parent_slot, input.parent_slot);
        assert_eq!(block.blockhash, input.entries.last().unwrap().hash);
        let parent_hash = by_slot
            .get(&input.parent_slot)
            .map(|p| p.entries.last().unwrap().hash);
        assert_eq!(block.previous_blockhash, parent_hash, "slot {slot}");
        assert_eq!(block.block_time, Some(input.block_time));
        assert_eq!(
            store.block_time(slot).unwrap(),
            SlotLookup::Found(Some(input.block_time))
        );
        assert_eq!(block.block_height, input.block_height);
        let mut rewards = input.rewards.clone().map(|r| r.rewards).unwrap_or_default();
        rewards.sort_by(|a, b| a.pubkey.cmp(&b.pubkey));
        assert_eq!(block.rewards, rewards);
        assert_eq!(
            block.num_partitions,
            input
                .rewards
                .as_ref()
                .and_then(|r| r.num_partitions.map(|p| p.num_partitions))
        );
        let txs: Vec<_> = input.entries.iter().flat_map(|e| &e.transactions).collect();
        assert_eq!(block.transactions.len(), txs.len());
        for (i, (got, want)) in block.transactions.iter().zip(&txs).enumerate() {
            assert_eq!(got.index as usize, i);
            assert_eq!(got.wire, want.wire);
            match &want.meta {
                MetaInput::None => assert_eq!(got.meta, None),
                MetaInput::Protobuf(meta) => assert_eq!(got.meta.as_ref(), Some(meta)),
                MetaInput::LegacyBincode(stored) => {
                    let meta = got.meta.as_ref().unwrap();
                    assert_eq!(meta.fee, stored.fee);
                    assert_eq!(meta.pre_balances, stored.pre_balances);
                    assert_eq!(
                        meta.err.as_ref().map(|e| e.err.clone()),
                        stored.status.clone().err().map(|e| e.to_bincode())
                    );
                    assert_eq!(Some(&meta.log_messages), stored.log_messages.as_ref());
                    assert!(meta.inner_instructions_none);
                    assert_eq!(
                        meta.return_data,
                        Some(proto::ReturnData {
                            program_id: vec![9; 32],
                            data: vec![1, 2]
                        })
                    );
                }
            }
        }
    }
    assert_eq!(store.block(EPOCH3_START - 1).unwrap(), SlotLookup::NotHeld);
    assert_eq!(
        store.block(EPOCH3_START + 5 * 432_000).unwrap(),
        SlotLookup::NotHeld
    );

    // Every signature.
    let expected = expected(&blocks);
    for (sig, (slot, index, wire)) in &expected.txs {
        let found = store.transaction(sig).unwrap().expect("signature found");
        assert_eq!(
            (found.transaction.slot, found.transaction.index),
            (*slot, *index)
        );
        assert_eq!(&found.transaction.wire, wire);
        assert_eq!(found.block_time, Some(by_slot[slot].block_time));
    }

    // Absent signatures are not found, even one that the sig-to-cid index answers (a false
    // positive of its 24-bit hashes).
    let car = dir.path().join("epoch-4.car");
    let bytes = std::fs::read(&car).unwrap();
    let paths = IndexPaths::for_car(&car, &car::parse_header(&bytes).unwrap().root);
    let sig_to_cid = CompactIndex::open(LocalFile::open(&paths.sig_to_cid).unwrap()).unwrap();
    let mut rng = testkit::synth::Rng::new(99);
    let mut false_positive = None;
    for _ in 0..200_000 {
        let sig: [u8; 64] = rng.array();
        if sig_to_cid.lookup(&sig).unwrap().is_some() {
            false_positive = Some(sig);
            break;
        }
    }
    let false_positive = false_positive.expect("a 24-bit false positive within 200k tries");
    assert!(!expected.txs.contains_key(&false_positive));
    assert_eq!(store.transaction(&false_positive).unwrap(), None);
    assert_eq!(store.transaction(&[0u8; 64]).unwrap(), None);

    // Every address of the pool: the full history newest first, then paged with before/until.
    for address in &pool {
        let want = expected
            .by_address
            .get(address)
            .cloned()
            .unwrap_or_default();
        let all = store
            .signatures_for_address(
                address,
                &SignatureQuery {
                    before: None,
                    until: None,
                    limit: 1000,
                },
            )
            .unwrap();
        let got: Vec<_> = all
            .iter()
            .map(|r| {
                (
                    r.slot,
                    r.index,
                    r.signature,
                    r.err.clone(),
                    r.memo.clone(),
                    r.block_time,
                )
            })
            .collect();
        assert_eq!(got, want);
        // Pages of 7 following `before` reproduce the list.
        let mut paged = Vec::new();
        let mut before = None;
        loop {
            let page = store
                .signatures_for_address(
                    address,
                    &SignatureQuery {
                        before,
                        until: None,
                        limit: 7,
                    },
                )
                .unwrap();
            if page.is_empty() {
                break;
            }
            before = Some(page.last().unwrap().signature);
            paged.extend(page.into_iter().map(|r| r.signature));
        }
        assert_eq!(paged, want.iter().map(|w| w.2).collect::<Vec<_>>());
        // `until` is exclusive: strictly newer rows only.
        if want.len() > 4 {
            let until = want[4].2;
            let rows = store
                .signatures_for_address(
                    address,
                    &SignatureQuery {
                        before: None,
                        until: Some(until),
                        limit: 1000,
                    },
                )
                .unwrap();
            assert_eq!(
                rows.iter().map(|r| r.signature).collect::<Vec<_>>(),
                want[..4].iter().map(|w| w.2).collect::<Vec<_>>()
            );
            // before and until together.
            let rows = store
                .signatures_for_address(
                    address,
                    &SignatureQuery {
                        before: Some(want[0].2),
                        until: Some(until),
                        limit: 1000,
                    },
                )
                .unwrap();
            assert_eq!(rows.len(), 3);
        }
    }
    // Sysvars are not indexed; unknown addresses and unknown `before` give nothing.
    let q = SignatureQuery {
        before: None,
        until: None,
        limit: 1000,
    };
    assert!(
        store
            .signatures_for_address(&key(CLOCK), &q)
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .signatures_for_address(&[3u8; 32], &q)
            .unwrap()
            .is_empty()
    );
    let q = SignatureQuery {
        before: Some([5u8; 64]),
        until: None,
        limit: 1000,
    };
    assert!(
        store
            .signatures_for_address(&pool[0], &q)
            .unwrap()
            .is_empty()
    );
    // Memos and errors do occur in the data checked above.
    let rows: Vec<_> = expected.by_address.values().flatten().collect();
    assert!(rows.iter().any(|r| r.3.is_some()) && rows.iter().any(|r| r.4.is_some()));
    assert!(
        rows.iter()
            .any(|r| r.4.as_deref().is_some_and(|m| m.contains("(unparseable)")))
    );
}

#[test]
fn interrupted_build_redoes_only_missing_indexes() {
    let (blocks, _) = blocks();
    let dir = tempfile::tempdir().unwrap();
    let car = dir.path().join("epoch-3.car");
    let epoch3: Vec<&BlockInput> = blocks
        .iter()
        .filter(|b| b.slot < EPOCH3_START + 432_000)
        .collect();
    write_car(&car, RootKind::Epoch(3), &epoch3);
    let options = BuildOptions {
        progress: false,
        partitions: None,
    };
    build_indexes(&car, &options).unwrap();
    let bytes = std::fs::read(&car).unwrap();
    let paths = IndexPaths::for_car(&car, &car::parse_header(&bytes).unwrap().root);
    // Simulate an interruption: two indexes never finished (one left as a temporary file).
    let sig_to_cid = std::fs::read(&paths.sig_to_cid).unwrap();
    std::fs::remove_file(&paths.sig_to_cid).unwrap();
    std::fs::write(paths.sig_to_cid.with_extension("index.tmp"), b"partial").unwrap();
    std::fs::remove_file(&paths.address.postings).unwrap();
    let report = build_indexes(&car, &options).unwrap();
    assert_eq!(report.built, vec!["sig-to-cid", "address-signatures"]);
    assert_eq!(
        std::fs::read(&paths.sig_to_cid).unwrap(),
        sig_to_cid,
        "deterministic rebuild"
    );
    assert!(LocalArchive::open(dir.path()).is_ok());
}
