//! The catalog over several directories: duplicates of an epoch resolved by source order (same
//! root CID or overlapping slots), pieces from different sources served as one store, and a
//! rescan that swaps the live store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use archive::build::{BuildOptions, build_indexes};
use archive::catalog::Catalog;
use archive::writer::{CarWriter, RootKind, WriterOptions};
use archive::{ArchiveStore, SlotLookup};
use testkit::synth::{Synth, SynthOptions};

/// Writes epoch `epoch` (seed `seed`) as `dir/epoch-<epoch>.car` with its indexes; returns the
/// blockhash of each slot.
fn epoch(dir: &Path, epoch: u64, seed: u64) -> Vec<(u64, [u8; 32])> {
    std::fs::create_dir_all(dir).unwrap();
    let car = dir.join(format!("epoch-{epoch}.car"));
    let mut synth = Synth::new(SynthOptions {
        first_slot: epoch * 432_000,
        slots: 10,
        seed,
        ..SynthOptions::default()
    });
    let blocks: Vec<_> = synth.by_ref().collect();
    let mut writer = CarWriter::new(
        BufWriter::new(File::create(&car).unwrap()),
        RootKind::Epoch(epoch),
        WriterOptions::default(),
    )
    .unwrap();
    for block in &blocks {
        writer.write_block(block).unwrap();
    }
    writer.finish().unwrap();
    build_indexes(
        &car,
        &BuildOptions {
            progress: false,
            partitions: None,
        },
    )
    .unwrap();
    blocks
        .iter()
        .map(|b| (b.slot, b.entries.last().unwrap().hash))
        .collect()
}

fn hash_at(store: &dyn ArchiveStore, slot: u64) -> [u8; 32] {
    match store.block(slot).unwrap() {
        SlotLookup::Found(block) => block.blockhash,
        other => panic!("slot {slot}: {other:?}"),
    }
}

#[test]
fn first_source_wins_and_rescans_swap_the_store() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let a4 = epoch(a.path(), 4, 1);
    let b4 = epoch(&b.path().join("4"), 4, 2); // same epoch, other content and root
    let b5 = epoch(&b.path().join("5"), 5, 3);
    assert_ne!(a4[0].1, b4[0].1);
    let sources = [a.path(), b.path()].map(|p| p.display().to_string());

    let catalog = Catalog::open(&sources).unwrap();
    let store = catalog.store();
    assert_eq!(store.epochs(), vec![4, 5]);
    assert_eq!(store.current().pieces().len(), 2, "b's epoch 4 is shadowed");
    assert_eq!(hash_at(store.as_ref(), a4[0].0), a4[0].1);
    assert_eq!(hash_at(store.as_ref(), b5[3].0), b5[3].1);

    // The other order: b's epoch 4 wins.
    let reversed = Catalog::open(&[sources[1].clone(), sources[0].clone()]).unwrap();
    assert_eq!(hash_at(reversed.store().as_ref(), b4[0].0), b4[0].1);

    // a loses its epoch 4: after a check, b's copy is served; the old snapshot still answers.
    let before = store.current();
    for entry in std::fs::read_dir(a.path()).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    catalog.check();
    assert_eq!(catalog.metrics().checks(), 2);
    assert_eq!(hash_at(store.as_ref(), b4[0].0), b4[0].1);
    assert_eq!(hash_at(before.as_ref(), a4[0].0), a4[0].1);
    let mut text = String::new();
    catalog.metrics().render(&mut text);
    assert!(text.contains("appliance_archive_epochs_served 2"), "{text}");
    assert!(text.contains("appliance_archive_pieces_served 2"), "{text}");

    // A CAR without indexes: skipped at start (the rest serves) and by a later check, counted.
    std::fs::copy(b.path().join("5/epoch-5.car"), a.path().join("epoch-9.car")).unwrap();
    let fresh = Catalog::open(&sources).unwrap();
    assert_eq!(fresh.metrics().failures("missing_index"), 1);
    assert_eq!(fresh.store().current().epochs(), vec![4, 5]);
    catalog.check();
    assert_eq!(catalog.metrics().failures("missing_index"), 1);
    assert_eq!(store.epochs(), vec![4, 5]);
}
