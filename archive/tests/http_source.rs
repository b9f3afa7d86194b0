//! The HTTP source: an epoch laid out like the public file host (`<N>/epoch-<N>.car` and the
//! index names next to it) served by the range-capable HTTP/1.1 server of `testkit::file_host`,
//! read through `EpochArchive::open_http`, and checked
//! against the writer's inputs and the local store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use archive::build::{BuildOptions, build_indexes};
use archive::writer::{CarWriter, RootKind, WriterOptions};
use archive::{ArchiveStore, EpochArchive, LocalArchive, SignatureQuery, SlotLookup};
use testkit::file_host::{Fault, serve, serve_with_faults};
use testkit::synth::{Synth, SynthOptions};

#[test]
fn epoch_behind_http_matches_the_inputs_and_the_local_store() {
    let host = tempfile::tempdir().unwrap();
    let epoch_dir = host.path().join("4");
    let options = SynthOptions {
        first_slot: 4 * 432_000,
        slots: 60,
        seed: 3,
        ..SynthOptions::default()
    };
    let mut synth = Synth::new(options);
    let pool = synth.pool().to_vec();
    let blocks: Vec<_> = synth.by_ref().collect();
    write_epoch(host.path(), 4, &blocks);

    let ranges = Arc::new(AtomicUsize::new(0));
    let connections = Arc::new(AtomicUsize::new(0));
    let base = serve(
        host.path().to_path_buf(),
        ranges.clone(),
        connections.clone(),
    );
    let remote = EpochArchive::open_http(&base, &[4]).unwrap();
    let local = LocalArchive::open(&epoch_dir).unwrap();
    assert_eq!(remote.epochs(), vec![4]);
    assert_eq!(remote.newest_slot(), Some(blocks.last().unwrap().slot));

    for block in &blocks {
        let SlotLookup::Found(got) = remote.block(block.slot).unwrap() else {
            panic!("slot {}", block.slot);
        };
        assert_eq!(got.blockhash, block.entries.last().unwrap().hash);
        let wires: Vec<&Vec<u8>> = block
            .entries
            .iter()
            .flat_map(|e| &e.transactions)
            .map(|t| &t.wire)
            .collect();
        assert_eq!(
            got.transactions.iter().map(|t| &t.wire).collect::<Vec<_>>(),
            wires
        );
        assert_eq!(
            remote.block(block.slot).unwrap(),
            local.block(block.slot).unwrap()
        );
        for wire in wires {
            let sig: [u8; 64] = wire[1..65].try_into().unwrap();
            let found = remote
                .transaction(&sig)
                .unwrap()
                .expect("transaction over HTTP");
            assert_eq!(&found.transaction.wire, wire);
            assert_eq!(found.block_time, Some(block.block_time));
        }
    }
    let skipped = (blocks[0].slot..blocks.last().unwrap().slot)
        .find(|s| blocks.iter().all(|b| b.slot != *s))
        .unwrap();
    assert_eq!(remote.block(skipped).unwrap(), SlotLookup::Skipped);
    assert_eq!(remote.transaction(&[1u8; 64]).unwrap(), None);
    let query = SignatureQuery {
        before: None,
        until: None,
        limit: 1000,
    };
    for address in &pool {
        assert_eq!(
            remote.signatures_for_address(address, &query).unwrap(),
            local.signatures_for_address(address, &query).unwrap()
        );
    }
    assert!(
        ranges.load(Ordering::Relaxed) > 0,
        "reads went through range requests"
    );
    // Warm index buckets come from the range cache: a repeated getTransaction costs one range
    // request (the transaction's section); the first lookup of a signature in a cold bucket
    // costs more.
    let wire = &blocks.last().unwrap().entries[0].transactions[0].wire;
    let sig: [u8; 64] = wire[1..65].try_into().unwrap();
    let hits = archive::rangecache::shared().counts().hits;
    let before = ranges.load(Ordering::Relaxed);
    remote
        .transaction(&sig)
        .unwrap()
        .expect("transaction over HTTP");
    assert_eq!(
        ranges.load(Ordering::Relaxed) - before,
        1,
        "only the section is fetched"
    );
    assert!(archive::rangecache::shared().counts().hits >= hits + 4);
    // One caller, one kept-alive connection (a body read short of its end would close it).
    let (ranges, connections) = (
        ranges.load(Ordering::Relaxed),
        connections.load(Ordering::Relaxed),
    );
    assert!(
        ranges > 100 && connections <= 2,
        "{ranges} range requests over {connections} connections"
    );
    // A base without the epoch's files: a clear missing-file error.
    assert!(matches!(
        EpochArchive::open_http(&base, &[9]),
        Err(archive::ArchiveError::MissingIndex { .. })
    ));
}

/// The files the public host publishes for an epoch (format §5): the CAR, its `.cid` and the five
/// published indexes. Not our `slot-ranges.raw`, `slot-to-blockhash` or `asig-*`.
fn is_published(name: &str) -> bool {
    name.ends_with(".car")
        || name.ends_with(".cid")
        || [
            "-mainnet-slot-to-cid.index",
            "-mainnet-sig-to-cid.index",
            "-mainnet-cid-to-offset-and-size.index",
            "-mainnet-sig-exists.index",
            "-mainnet-slot-to-blocktime.index",
        ]
        .iter()
        .any(|kind| name.ends_with(kind))
}

/// Writes `blocks` as the whole-epoch CAR `<dir>/<epoch>/epoch-<epoch>.car` with its `.cid`, and
/// builds every index next to it.
fn write_epoch(dir: &Path, epoch: u64, blocks: &[archive::writer::BlockInput]) {
    let epoch_dir = dir.join(epoch.to_string());
    std::fs::create_dir_all(&epoch_dir).unwrap();
    let car = epoch_dir.join(format!("epoch-{epoch}.car"));
    let mut writer = CarWriter::new(
        BufWriter::new(File::create(&car).unwrap()),
        RootKind::Epoch(epoch),
        WriterOptions::default(),
    )
    .unwrap();
    for block in blocks {
        writer.write_block(block).unwrap();
    }
    let (root, _) = writer.finish().unwrap();
    std::fs::write(
        epoch_dir.join(format!("epoch-{epoch}.cid")),
        root.to_string(),
    )
    .unwrap();
    build_indexes(
        &car,
        &BuildOptions {
            progress: false,
            partitions: None,
        },
    )
    .unwrap();
}

/// Copies the published files of every epoch directory under `from` into `to`.
fn copy_published(from: &Path, to: &Path) -> usize {
    let mut copied = 0;
    for epoch in std::fs::read_dir(from).unwrap() {
        let epoch = epoch.unwrap();
        let target = to.join(epoch.file_name());
        std::fs::create_dir_all(&target).unwrap();
        for file in std::fs::read_dir(epoch.path()).unwrap() {
            let file = file.unwrap();
            let name = file.file_name().into_string().unwrap();
            if is_published(&name) {
                std::fs::copy(file.path(), target.join(&name)).unwrap();
                copied += 1;
            }
        }
    }
    copied
}

#[test]
fn public_files_only_epochs_answer_like_the_full_index_set() {
    // Blocks across the boundary of epochs 4 and 5 (every 5th slot skipped, the parent chain
    // crosses the boundary), written as two whole-epoch CARs.
    let boundary = 5 * 432_000;
    let mut synth = Synth::new(SynthOptions {
        first_slot: boundary - 40,
        slots: 80,
        seed: 11,
        ..SynthOptions::default()
    });
    let pool = synth.pool().to_vec();
    let blocks: Vec<_> = synth.by_ref().collect();
    let host = tempfile::tempdir().unwrap();
    let full = host.path().join("full");
    let (four, five): (Vec<_>, Vec<_>) = blocks.iter().cloned().partition(|b| b.slot < boundary);
    write_epoch(&full, 4, &four);
    write_epoch(&full, 5, &five);
    let public = host.path().join("public");
    assert_eq!(copy_published(&full, &public), 2 * 7);

    let ranges = Arc::new(AtomicUsize::new(0));
    let base = serve(
        host.path().to_path_buf(),
        ranges.clone(),
        Arc::new(AtomicUsize::new(0)),
    );
    let reference = EpochArchive::open_http(&format!("{base}/full"), &[4, 5]).unwrap();
    let remote = EpochArchive::open_http(&format!("{base}/public"), &[4, 5]).unwrap();
    assert_eq!(remote.epochs(), vec![4, 5]);
    assert_eq!(remote.pieces(), {
        // Same spans (from the root's Subsets here, from slot-ranges there); names differ.
        let mut pieces = reference.pieces();
        for p in &mut pieces {
            p.name = p.name.replace("/full/", "/public/");
        }
        pieces
    });
    assert_eq!(remote.newest_slot(), Some(blocks.last().unwrap().slot));

    let hash_of: std::collections::HashMap<u64, [u8; 32]> = blocks
        .iter()
        .map(|b| (b.slot, b.entries.last().unwrap().hash))
        .collect();
    // Twice: derived (cold memo) and memoized answers must both be exact.
    for round in 0..2 {
        for slot in blocks[0].slot - 2..=blocks.last().unwrap().slot + 2 {
            let got = remote.block(slot).unwrap();
            assert_eq!(got, reference.block(slot).unwrap(), "slot {slot}");
            assert_eq!(
                remote.block_time(slot).unwrap(),
                reference.block_time(slot).unwrap(),
                "slot {slot}"
            );
            let Some(input) = blocks.iter().find(|b| b.slot == slot) else {
                // Skipped inside the span of its epoch's present slots, else not held.
                let same_epoch = blocks.iter().filter(|b| b.slot / 432_000 == slot / 432_000);
                let span = same_epoch.map(|b| b.slot);
                let (lo, hi) = (span.clone().min(), span.max());
                let want = match (lo, hi) {
                    (Some(lo), Some(hi)) if (lo..=hi).contains(&slot) => SlotLookup::Skipped,
                    _ => SlotLookup::NotHeld,
                };
                assert_eq!(got, want, "slot {slot}");
                continue;
            };
            let SlotLookup::Found(block) = got else {
                panic!("slot {slot}: {got:?}");
            };
            // Against the writer's inputs.
            assert_eq!(block.blockhash, hash_of[&slot], "slot {slot}");
            assert_eq!(block.parent_slot, input.parent_slot);
            assert_eq!(
                block.previous_blockhash,
                hash_of.get(&input.parent_slot).copied(),
                "slot {slot} (round {round})"
            );
            assert_eq!(block.block_time, Some(input.block_time));
            assert_eq!(block.block_height, input.block_height);
            let rewards = input.rewards.as_ref().map_or(0, |r| r.rewards.len());
            assert_eq!(block.rewards.len(), rewards, "slot {slot}");
            let wires: Vec<&Vec<u8>> = input
                .entries
                .iter()
                .flat_map(|e| &e.transactions)
                .map(|t| &t.wire)
                .collect();
            assert_eq!(
                block
                    .transactions
                    .iter()
                    .map(|t| &t.wire)
                    .collect::<Vec<_>>(),
                wires
            );
            if round == 0 {
                for wire in wires {
                    let sig: [u8; 64] = wire[1..65].try_into().unwrap();
                    let found = remote.transaction(&sig).unwrap().expect("transaction");
                    assert_eq!(&found.transaction.wire, wire);
                    assert_eq!(found.block_time, Some(input.block_time));
                    assert_eq!(Some(found), reference.transaction(&sig).unwrap());
                }
            }
        }
    }
    // The first block of epoch 5 takes its previousBlockhash from epoch 4's last block.
    let first_five = five[0].slot;
    assert!(four.iter().any(|b| b.slot == five[0].parent_slot));
    let SlotLookup::Found(block) = remote.block(first_five).unwrap() else {
        panic!("first block of epoch 5");
    };
    assert_eq!(
        block.previous_blockhash,
        Some(four.last().unwrap().entries.last().unwrap().hash)
    );
    let memo = archive::slotmemo::shared().counts();
    assert!(memo.hits > 0 && memo.entries > 0, "{memo:?}");
    // With the memo warm a getBlock costs one range request (the slot's bytes), as with
    // slot-ranges.raw; a freshly opened epoch (cold memo and range cache) costs a few more.
    let before = ranges.load(Ordering::Relaxed);
    remote.block(first_five).unwrap();
    assert_eq!(ranges.load(Ordering::Relaxed) - before, 1);
    let fresh = EpochArchive::open_http(&format!("{base}/public"), &[4, 5]).unwrap();
    let before = ranges.load(Ordering::Relaxed);
    fresh.block(five[3].slot).unwrap();
    let cold = ranges.load(Ordering::Relaxed) - before;
    eprintln!("cold getBlock over public files only: {cold} range requests");
    assert!(cold > 1);

    // getSignaturesForAddress: no address index here. The walk names the newest such epoch.
    let query = SignatureQuery {
        before: None,
        until: None,
        limit: 1000,
    };
    assert!(matches!(
        remote.signatures_for_address(&pool[0], &query),
        Err(archive::ArchiveError::NoAddressIndex { epoch: 5 })
    ));
    let page = remote.signatures_page(&pool[0], &query).unwrap();
    assert_eq!((page.rows.len(), page.unindexed_epoch), (0, Some(5)));
    // Epoch 5 with its address index, epoch 4 without: the rows of epoch 5, then a stop at 4.
    let full5 = EpochArchive::open_http(&format!("{base}/full"), &[5]).unwrap();
    let public4 = EpochArchive::open_http(&format!("{base}/public"), &[4]).unwrap();
    let (mixed, dropped) = EpochArchive::merge([&full5, &public4], "mixed");
    assert!(dropped.is_empty());
    for address in &pool {
        let all = reference.signatures_for_address(address, &query).unwrap();
        let newer: Vec<_> = all.iter().filter(|r| r.slot >= boundary).cloned().collect();
        let page = mixed.signatures_page(address, &query).unwrap();
        assert_eq!(page.rows, newer);
        assert_eq!(page.unindexed_epoch, Some(4));
        // A page filled within epoch 5 never reaches epoch 4.
        if newer.len() > 2 {
            let short = SignatureQuery { limit: 2, ..query };
            let page = mixed.signatures_page(address, &short).unwrap();
            assert_eq!(
                (page.rows, page.unindexed_epoch),
                (newer[..2].to_vec(), None)
            );
        }
    }
}

/// The keep-alive range client of plain `http://` URLs (`archive::rangeclient`) against the
/// server above: exact bytes over one connection, a connection the server closed is retried once
/// on a new one, wrong answers are clear errors, a chunked answer is read by ureq instead.
#[test]
fn range_client_reuses_connections_and_refuses_wrong_answers() {
    use archive::http::HttpClient;
    use archive::readat::ReadAt;

    let host = tempfile::tempdir().unwrap();
    // Bytes from a generator unrelated to the client: every expectation slices this vector.
    let bytes: Vec<u8> = (0..200_000u64)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(host.path().join("data.bin"), &bytes).unwrap();
    let (ranges, connections) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let fault = Arc::new(AtomicU8::new(Fault::None as u8));
    let base = serve_with_faults(
        host.path().to_path_buf(),
        ranges.clone(),
        connections.clone(),
        fault.clone(),
    );
    let file = HttpClient::new().open(&format!("{base}/data.bin")).unwrap();
    assert_eq!(file.len(), bytes.len() as u64);
    let client = archive::rangeclient::shared();
    let read = |offset: usize, len: usize| {
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, offset as u64).map(|()| buf)
    };
    let spans = [
        (0usize, 1usize),
        (1, 100),
        (4_095, 10_000),
        (150_000, 49_999),
        (199_999, 1),
        (0, 200_000),
        (77, 8_192),
    ];

    // Plain answers: exact bytes, one range request each, one connection for all.
    let opened = connections.load(Ordering::Relaxed);
    let before = client.counts();
    for round in 0..10 {
        for &(offset, len) in &spans {
            let offset = offset.saturating_sub(round);
            assert_eq!(read(offset, len).unwrap(), bytes[offset..offset + len]);
        }
    }
    assert_eq!(ranges.load(Ordering::Relaxed), 10 * spans.len());
    assert_eq!(connections.load(Ordering::Relaxed) - opened, 1);
    assert!(client.counts().requests - before.requests >= 10 * spans.len() as u64);

    // The server closes every connection after its answer: each next read finds its pooled
    // connection closed and retries at once on a new one (no failed attempt, no back-off).
    fault.store(Fault::CloseAfterAnswer as u8, Ordering::Relaxed);
    let (ranges_before, opened) = (
        ranges.load(Ordering::Relaxed),
        connections.load(Ordering::Relaxed),
    );
    let stale_before = client.counts().stale_retries;
    for i in 0..10 {
        assert_eq!(
            read(i * 1000, 500).unwrap(),
            bytes[i * 1000..i * 1000 + 500]
        );
    }
    assert_eq!(ranges.load(Ordering::Relaxed) - ranges_before, 10);
    // The first read still had the connection kept from above.
    assert_eq!(connections.load(Ordering::Relaxed) - opened, 9);
    assert_eq!(client.counts().stale_retries - stale_before, 9);

    // Wrong answers: clear errors (after the source's 3 attempts), never wrong bytes.
    for (which, message) in [
        (Fault::ShortBody, "body ended after 499 of 500 bytes"),
        (Fault::WrongContentRange, "Content-Range"),
        (Fault::Unsatisfiable, "HTTP status 416"),
    ] {
        fault.store(which as u8, Ordering::Relaxed);
        let before = ranges.load(Ordering::Relaxed);
        let error = read(1000, 500).unwrap_err().to_string();
        assert!(error.contains(message), "{which:?}: {error}");
        assert!(error.contains("data.bin"), "{which:?}: {error}");
        assert_eq!(ranges.load(Ordering::Relaxed) - before, 3, "{which:?}");
    }

    // Chunked answers are not for the fast path: read again with ureq, exact bytes.
    fault.store(Fault::Chunked as u8, Ordering::Relaxed);
    let fallbacks = client.counts().fallbacks;
    for &(offset, len) in &spans {
        assert_eq!(read(offset, len).unwrap(), bytes[offset..offset + len]);
    }
    assert_eq!(client.counts().fallbacks - fallbacks, spans.len() as u64);

    // Back to plain answers; then the file disappears: 404.
    fault.store(Fault::None as u8, Ordering::Relaxed);
    assert_eq!(read(5, 5).unwrap(), bytes[5..10]);
    std::fs::remove_file(host.path().join("data.bin")).unwrap();
    let error = read(5, 5).unwrap_err().to_string();
    assert!(error.contains("HTTP status 404"), "{error}");
    // Reads past the end never reach the server.
    let before = ranges.load(Ordering::Relaxed);
    assert!(read(199_999, 2).is_err());
    assert_eq!(ranges.load(Ordering::Relaxed), before);
}
