//! Damaged archive data is never served (issue 25): a flipped byte inside a transaction node is
//! an error that names the CAR and the offset (every node read is checked against its CID), a
//! truncated CAR is an error for what it no longer holds (not "not found"), and an epoch whose
//! index fails its checks at start is skipped while the other epochs serve.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use archive::build::{BuildOptions, build_indexes};
use archive::catalog::Catalog;
use archive::index::IndexPaths;
use archive::writer::{CarWriter, RootKind, WriterOptions};
use archive::{ArchiveError, ArchiveStore, LocalArchive, SlotLookup, car};
use testkit::synth::{Synth, SynthOptions};

const OPTIONS: BuildOptions = BuildOptions {
    progress: false,
    partitions: None,
};

/// The first real epoch-0 piece with its indexes, in a fresh directory.
fn real_piece() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let car = dir.path().join("epoch-0-1.car");
    let source = format!(
        "{}/tests/fixtures/epoch-0-1.car",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::copy(source, &car).unwrap();
    build_indexes(&car, &OPTIONS).unwrap();
    (dir, car)
}

/// A transaction of the piece: (slot, signature, its wire bytes).
fn some_transaction(store: &dyn ArchiveStore) -> (u64, [u8; 64], Vec<u8>) {
    for slot in 0..100 {
        if let SlotLookup::Found(block) = store.block(slot).unwrap()
            && let Some(tx) = block.transactions.first()
        {
            let signature = tx.wire[1..65].try_into().unwrap();
            return (slot, signature, tx.wire.clone());
        }
    }
    panic!("no transaction in the piece");
}

fn position(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
        .unwrap()
}

fn assert_corrupt_in(result: Result<impl std::fmt::Debug, ArchiveError>, file: &str) {
    match result {
        Err(ArchiveError::Corrupt { what, reason }) => {
            assert!(what.contains(file), "{what}: {reason}");
        }
        other => panic!("expected a corrupt-data error naming {file}, got {other:?}"),
    }
}

#[test]
fn a_flipped_byte_in_a_transaction_node_is_an_error_naming_the_car_and_offset() {
    let (_dir, car) = real_piece();
    let store = LocalArchive::open(car.parent().unwrap()).unwrap();
    let (slot, signature, wire) = some_transaction(&store);
    assert!(store.transaction(&signature).unwrap().is_some());
    // One account-key byte of the transaction's message, inside its node.
    let mut bytes = std::fs::read(&car).unwrap();
    let at = position(&bytes, &wire) + 64 + 10;
    bytes[at] ^= 0x01;
    std::fs::write(&car, &bytes).unwrap();

    let store = LocalArchive::open(car.parent().unwrap()).unwrap();
    assert_corrupt_in(store.transaction(&signature), "epoch-0-1.car at offset");
    assert_corrupt_in(store.block(slot), "epoch-0-1.car at offset");
}

#[test]
fn a_truncated_car_is_an_error_for_what_it_no_longer_holds() {
    let (_dir, car) = real_piece();
    let store = LocalArchive::open(car.parent().unwrap()).unwrap();
    let (_, signature, wire) = some_transaction(&store);
    let bytes = std::fs::read(&car).unwrap();
    // Cut inside the transaction's node.
    let cut = position(&bytes, &wire) + 32;
    std::fs::write(&car, &bytes[..cut]).unwrap();
    let store = LocalArchive::open(car.parent().unwrap()).unwrap();
    assert_corrupt_in(store.transaction(&signature), "epoch-0-1.car at offset");
}

/// Writes synthetic epoch `epoch` as `dir/epoch-<epoch>.car` with its indexes.
fn synthetic_epoch(dir: &Path, epoch: u64) -> PathBuf {
    let car = dir.join(format!("epoch-{epoch}.car"));
    let synth = Synth::new(SynthOptions {
        first_slot: epoch * 432_000,
        slots: 10,
        seed: epoch,
        ..SynthOptions::default()
    });
    let mut writer = CarWriter::new(
        BufWriter::new(File::create(&car).unwrap()),
        RootKind::Epoch(epoch),
        WriterOptions::default(),
    )
    .unwrap();
    for block in synth {
        writer.write_block(&block).unwrap();
    }
    writer.finish().unwrap();
    build_indexes(&car, &OPTIONS).unwrap();
    car
}

#[test]
fn an_epoch_whose_index_fails_its_checks_at_start_is_skipped_and_the_others_serve() {
    let dir = tempfile::tempdir().unwrap();
    synthetic_epoch(dir.path(), 1);
    let damaged = synthetic_epoch(dir.path(), 2);
    let root = car::parse_header(&std::fs::read(&damaged).unwrap())
        .unwrap()
        .root;
    let index = IndexPaths::for_car(&damaged, &root).sig_exists;
    let bytes = std::fs::read(&index).unwrap();
    std::fs::write(&index, &bytes[..bytes.len() / 3]).unwrap();

    let catalog = Catalog::open(&[dir.path().display().to_string()]).unwrap();
    let store = catalog.store().current();
    assert_eq!(store.epochs(), vec![1]);
    assert!(matches!(
        store.block(432_000).unwrap(),
        SlotLookup::Found(_)
    ));
    assert_eq!(store.block(2 * 432_000).unwrap(), SlotLookup::NotHeld);
    let failures: u64 = ["corrupt", "index_mismatch", "io"]
        .iter()
        .map(|reason| catalog.metrics().failures(reason))
        .sum();
    assert_eq!(failures, 1);
}
