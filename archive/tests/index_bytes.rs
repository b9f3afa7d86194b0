//! The index builder's output, byte for byte: a synthetic epoch (archive::synth, a stand-in for a
//! validator's blocks, with multi-frame metadata) is written with the CAR writer and indexed with
//! one and with four spill partitions; the SHA-256 of every output file must equal the digests
//! recorded from the builder before its speed-ups (sealing on two threads, the per-domain XXH64
//! state, the open-addressing collision set). Any change of layout, hash domain choice, order or
//! metadata shows up here. If a format change is intended, record the new digests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use archive::build::{BuildOptions, build_indexes};
use archive::writer::{CarWriter, RootKind, WriterOptions};
use sha2::{Digest, Sha256};
use testkit::synth::{Synth, SynthOptions};

fn write_epoch(path: &Path) {
    let options = SynthOptions {
        first_slot: 9 * 432_000,
        slots: 1_500,
        skip_every: 7,
        entries_per_block: 4,
        txs_per_entry: 6,
        address_pool: 500,
        big_log_every: 97,
        big_log_bytes: 3_000,
        base_time: 1_650_000_000,
        seed: 21,
    };
    let writer_options = WriterOptions {
        first_frame_max: 1_000,
        rewards_first_frame_max: 1_000,
        later_frame_max: 800,
        blocks_per_subset: 64,
    };
    let file = BufWriter::new(File::create(path).unwrap());
    let mut writer = CarWriter::new(file, RootKind::Epoch(9), writer_options).unwrap();
    for block in Synth::new(options) {
        writer.write_block(&block).unwrap();
    }
    writer.finish().unwrap();
}

/// `name-suffix sha256` of every file the builder wrote (the root CID cut out of the names).
fn digests(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_none_or(|x| x != "car"))
        .map(|path| {
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let kind = name.rsplit("-mainnet-").next().unwrap().to_string();
            let digest = Sha256::digest(std::fs::read(&path).unwrap());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            format!("{kind} {hex}")
        })
        .collect();
    out.sort();
    out
}

/// Recorded with one spill partition.
const EXPECTED_1: &[&str] = &[
    "asig-address-to-postings.index 017288fc37cfe02b067922a40f2eccb2d9c6044050e6ff45281c34c668d7fa9b",
    "asig-postings.index cf66b3814a8f6e52e639dc946f877d3996ed18a840d08d7bb82926bbcbce355d",
    "asig-sig-to-ordinal.index 87717a60e6320b9777ecee64f857e4568e6c996f0fa92fa75aec4d90c21f5dda",
    "asig-txs.index 77d2ad15bd7e6039a8f10fcdadfd99553d3e078977259814fa0f2568a7231d6e",
    "cid-to-offset-and-size.index 47e63175fb74fef9a0d31954e30eeb3dac9e6873448fd75bdf6f0b709cdeb44f",
    "epoch-9-slot-ranges.raw 8b6eff456a602a2c6991791104305457ba2c8e021cfcbd2c40126ebcd7562ecb",
    "sig-exists.index c47fe86bfdb227824a9204401863bc06e6f15f40ef3ffc0c8f2a074770810bea",
    "sig-to-cid.index 5d7bfadda7805a21ce8378e4c124373616ac1f6a3819b5179b406b082bbbfd6a",
    "slot-to-blockhash.index 3c9713b06d57c08c2712eb551b76b1bbacd700a3c98995e87449addb4d9ac4d5",
    "slot-to-blocktime.index a1b218b7177eca99312f225a66cf3fb641f493d6368998ea5a4bd6b2b8340345",
    "slot-to-cid.index e17f59f460fba405d2b9072c2443a0b6ea87343560366b454d51965a036198c1",
];

/// Recorded with four spill partitions (four buckets per compact index).
const EXPECTED_4: &[&str] = &[
    "asig-address-to-postings.index 2746020eacb1b6e11ef3c0db2d83b3d24ed509bd668733a8c8c7f11b911af7aa",
    "asig-postings.index 4924739b7004a0ad9150a1c63481fd5b6d0e1ab03bfbd1bd2f6552384c9bda89",
    "asig-sig-to-ordinal.index c07ed36e42ab0108e8f6e9aca9d56b6cf73904a0564b6010883edd54fee18d5b",
    "asig-txs.index 77d2ad15bd7e6039a8f10fcdadfd99553d3e078977259814fa0f2568a7231d6e",
    "cid-to-offset-and-size.index 47e63175fb74fef9a0d31954e30eeb3dac9e6873448fd75bdf6f0b709cdeb44f",
    "epoch-9-slot-ranges.raw 8b6eff456a602a2c6991791104305457ba2c8e021cfcbd2c40126ebcd7562ecb",
    "sig-exists.index c47fe86bfdb227824a9204401863bc06e6f15f40ef3ffc0c8f2a074770810bea",
    "sig-to-cid.index 5e382976af7023d8cb240bd42e944585cf35ae49022ab9f0aaf1bfff13567f90",
    "slot-to-blockhash.index 3c9713b06d57c08c2712eb551b76b1bbacd700a3c98995e87449addb4d9ac4d5",
    "slot-to-blocktime.index a1b218b7177eca99312f225a66cf3fb641f493d6368998ea5a4bd6b2b8340345",
    "slot-to-cid.index 6b2de71a384649da83f0fa84841086330ce2f0ad62d60b80205c6a4d1452c271",
];

#[test]
fn index_files_are_byte_identical_to_the_recorded_build() {
    let mut got_all = Vec::new();
    for partitions in [1, 4] {
        let dir = tempfile::tempdir().unwrap();
        let car = dir.path().join("epoch-9.car");
        write_epoch(&car);
        let options = BuildOptions {
            progress: false,
            partitions: Some(partitions),
        };
        let report = build_indexes(&car, &options).unwrap();
        assert!(report.transactions > 7_000, "{report:?}");
        got_all.push(digests(dir.path()));
    }
    let listing = got_all
        .iter()
        .map(|digests| digests.join("\n"))
        .collect::<Vec<_>>()
        .join("\n--\n");
    assert_eq!(got_all[0], EXPECTED_1, "digests:\n{listing}");
    assert_eq!(got_all[1], EXPECTED_4, "digests:\n{listing}");
}
