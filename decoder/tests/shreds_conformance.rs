//! The decoder against shreds made by the reference implementation (Agave's `Shredder`, see
//! `tests/fixtures/shreds/README.md`) and a live-cluster capture (Firedancer fixtures): every lossy
//! slot decodes to exactly the manifest's batches, entries and signatures; recovered shreds equal
//! the reference's byte for byte; every negative case is rejected with the matching reason.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

use std::collections::BTreeMap;

use capture::framing;
use common::{DecodedEntry, Run, b58, decode_capture, drain, leader, note, read_fixture};
use decoder::decoder::ShredOutcome;
use decoder::fec::Completion;
use decoder::{DecoderConfig, LeaderSchedule, ShredDecoder};
use serde_json::Value;

const SHRED_VERSION: u16 = 50093;

fn manifest() -> Value {
    serde_json::from_slice(&read_fixture("shreds/manifest.json")).unwrap()
}

fn config() -> DecoderConfig {
    DecoderConfig {
        shred_version: Some(SHRED_VERSION),
        ..DecoderConfig::default()
    }
}

fn schedule(manifest: &Value) -> LeaderSchedule {
    let map = manifest["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|slot| {
            let key = LeaderSchedule::key_from_base58(slot["leader"].as_str().unwrap()).unwrap();
            (slot["slot"].as_u64().unwrap(), key)
        })
        .collect();
    LeaderSchedule::PerSlot(map)
}

fn expected_entries(slot: &Value, first: usize, count: usize) -> Vec<DecodedEntry> {
    slot["entries"].as_array().unwrap()[first..first + count]
        .iter()
        .map(|entry| DecodedEntry {
            num_hashes: entry["num_hashes"].as_u64().unwrap(),
            hash: entry["hash"].as_str().unwrap().to_owned(),
            signatures: entry["transactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tx| tx["signature"].as_str().unwrap().to_owned())
                .collect(),
        })
        .collect()
}

/// Checks a run over one slot against the manifest: batch spans, entries, signatures, counts.
fn check_slot(run: &Run, slot: &Value) {
    let slot_number = slot["slot"].as_u64().unwrap();
    let expected_batches = slot["batches"].as_array().unwrap();
    let mut batches: Vec<_> = run
        .batches
        .iter()
        .filter(|b| b.slot == slot_number)
        .collect();
    batches.sort_by_key(|batch| batch.start_index);
    assert_eq!(
        batches.len(),
        expected_batches.len(),
        "slot {slot_number}: batch count"
    );
    let mut entries = 0;
    let mut transactions = 0;
    for (batch, expected) in batches.iter().zip(expected_batches) {
        assert_eq!(
            u64::from(batch.start_index),
            expected["first_data_index"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(batch.end_index),
            expected["last_data_index"].as_u64().unwrap()
        );
        assert_eq!(
            batch.bytes.len() as u64,
            expected["serialized_len"].as_u64().unwrap()
        );
        let first = expected["first_entry"].as_u64().unwrap() as usize;
        let count = expected["num_entries"].as_u64().unwrap() as usize;
        assert_eq!(
            batch.entries,
            expected_entries(slot, first, count),
            "slot {slot_number}"
        );
        entries += batch.entries.len();
        transactions += batch.transaction_count;
    }
    assert_eq!(entries as u64, slot["num_entries"].as_u64().unwrap());
    assert_eq!(transactions, slot["num_transactions"].as_u64().unwrap());
}

#[test]
fn every_lossy_slot_decodes_to_the_manifest_conformance() {
    let manifest = manifest();
    for slot in manifest["slots"].as_array().unwrap() {
        let file = slot["files"]["lossy"].as_str().unwrap();
        let run = decode_capture(
            &read_fixture(&format!("shreds/{file}")),
            config(),
            schedule(&manifest),
        );
        assert!(
            run.rejected.is_empty(),
            "{file}: rejected {:?}",
            run.rejected
        );
        check_slot(&run, slot);
        assert_eq!(
            run.sets_completed,
            slot["num_fec_sets"].as_u64().unwrap(),
            "{file}"
        );
        // Recovery runs as soon as 32 of 64 shreds are present, so it also rebuilds data shreds
        // that arrive later in the shuffled file; it can never rebuild fewer than were dropped.
        let dropped = slot["lossy"]["dropped_data_indices"]
            .as_array()
            .unwrap()
            .len() as u64;
        assert!(
            run.data_recovered >= dropped,
            "{file}: every dropped data shred recovered"
        );
        // Some batches complete before their predecessor's last shred arrives; they are emitted
        // early on an exact parse (start uncertain) and check_slot has shown they are right.
    }
}

/// Trusted-feed mode (no Merkle proofs, signatures or links checked) decodes the same entries:
/// grouping, recovery and deshredding do not depend on authentication.
#[test]
fn every_lossy_slot_decodes_the_same_without_authentication_conformance() {
    let manifest = manifest();
    let mut unauthenticated = config();
    unauthenticated.fec.authenticate = false;
    for slot in manifest["slots"].as_array().unwrap() {
        let file = slot["files"]["lossy"].as_str().unwrap();
        // No leader schedule either: nothing is verified.
        let run = decode_capture(
            &read_fixture(&format!("shreds/{file}")),
            unauthenticated,
            LeaderSchedule::Unchecked,
        );
        assert!(
            run.rejected.is_empty(),
            "{file}: rejected {:?}",
            run.rejected
        );
        check_slot(&run, slot);
        assert_eq!(
            run.sets_completed,
            slot["num_fec_sets"].as_u64().unwrap(),
            "{file}"
        );
    }
}

/// Without authentication, a shred whose signature bytes differ from its set's first shred is
/// still refused (it cannot belong to the same signed set), while a shred with a corrupted proof
/// is accepted: that is exactly what authentication adds.
#[test]
fn unauthenticated_mode_checks_signatures_bytes_but_not_proofs_conformance() {
    let manifest = manifest();
    let slot = &manifest["slots"][0];
    let bytes = read_fixture(&format!(
        "shreds/{}",
        slot["files"]["full"].as_str().unwrap()
    ));
    let payloads: Vec<Vec<u8>> = framing::records(&bytes)
        .map(|record| record.unwrap().payload.to_vec())
        .collect();
    for authenticate in [true, false] {
        let mut config = config();
        config.fec.authenticate = authenticate;
        let mut decoder = ShredDecoder::new(config, schedule(&manifest));
        decoder.ingest(&payloads[0], 0);
        // Same set (first payload's set), last proof byte flipped.
        let mut bad_proof = payloads[1].clone();
        let last = bad_proof.len() - 1;
        bad_proof[last] ^= 1;
        let outcome = decoder.ingest(&bad_proof, 0);
        assert_eq!(
            matches!(outcome, decoder::decoder::ShredOutcome::Rejected { .. }),
            authenticate,
            "authenticate = {authenticate}: {outcome:?}"
        );
        let mut bad_signature = payloads[2].clone();
        bad_signature[0] ^= 1;
        assert!(matches!(
            decoder.ingest(&bad_signature, 0),
            decoder::decoder::ShredOutcome::Rejected { .. }
        ));
    }
}

#[test]
fn all_slots_through_one_decoder_conformance() {
    let manifest = manifest();
    let mut decoder = ShredDecoder::new(config(), schedule(&manifest));
    let mut run = Run::default();
    for slot in manifest["slots"].as_array().unwrap() {
        let bytes = read_fixture(&format!(
            "shreds/{}",
            slot["files"]["lossy"].as_str().unwrap()
        ));
        for record in framing::records(&bytes) {
            note(&mut run, decoder.ingest(record.unwrap().payload, 0));
            drain(&mut decoder, &mut run);
        }
    }
    assert!(run.rejected.is_empty(), "{:?}", run.rejected);
    for slot in manifest["slots"].as_array().unwrap() {
        check_slot(&run, slot);
    }
    let counters = decoder.fec_counters();
    assert_eq!(counters.chain_links_broken, 0);
    assert!(counters.chain_links_verified > 0);
    assert_eq!(
        decoder.sets_in_flight(),
        0,
        "every consumed set is released"
    );
}

#[test]
fn recovered_shreds_equal_the_reference_bytes_conformance() {
    let manifest = manifest();
    for slot in manifest["slots"].as_array().unwrap() {
        let slot_number = slot["slot"].as_u64().unwrap();
        let full = read_fixture(&format!(
            "shreds/{}",
            slot["files"]["full"].as_str().unwrap()
        ));
        let reference: BTreeMap<u32, Vec<u8>> = framing::records(&full)
            .map(|record| record.unwrap().payload)
            .filter(|payload| payload.len() == 1203)
            .map(|payload| {
                (
                    u32::from_le_bytes(payload[73..77].try_into().unwrap()),
                    payload.to_vec(),
                )
            })
            .collect();
        let lossy = read_fixture(&format!(
            "shreds/{}",
            slot["files"]["lossy"].as_str().unwrap()
        ));
        let mut decoder = ShredDecoder::new(config(), schedule(&manifest));
        let mut recovered = std::collections::BTreeSet::new();
        for record in framing::records(&lossy) {
            let outcome = decoder.ingest(record.unwrap().payload, 0);
            if let ShredOutcome::Stored {
                fec_set_index,
                completion: Some(Completion::Complete { recovered_data }),
                ..
            } = outcome
            {
                for position in (0..32).filter(|p| recovered_data >> p & 1 == 1) {
                    let index = fec_set_index + position;
                    let rebuilt = decoder.data_shred(slot_number, index).unwrap();
                    assert_eq!(
                        rebuilt,
                        &reference[&index][..],
                        "slot {slot_number} index {index}"
                    );
                    recovered.insert(index);
                }
            }
            while decoder.next_batch().is_some() {}
        }
        for dropped in slot["lossy"]["dropped_data_indices"].as_array().unwrap() {
            let index = dropped.as_u64().unwrap() as u32;
            assert!(
                recovered.contains(&index),
                "slot {slot_number}: dropped {index} not rebuilt"
            );
        }
        // The signed roots the decoder accepted are the reference's roots.
        for set in slot["fec_sets"].as_array().unwrap() {
            let fec_set_index = set["fec_set_index"].as_u64().unwrap() as u32;
            let root = decoder.fec_set_root(slot_number, fec_set_index).unwrap();
            assert_eq!(b58(&root), set["merkle_root"].as_str().unwrap());
        }
    }
}

/// Our reason for each negative case (`tests/fixtures/shreds/negative/cases.json`). Header edits
/// and payload edits that the parser cannot see change the Merkle leaf, so the root no longer
/// carries the leader's signature: `bad_signature`, exactly as the reference's
/// `leader_signature_ok: false`.
fn expected_reason(name: &str) -> Option<&'static str> {
    Some(match name {
        n if n.starts_with("valid_") || n.starts_with("oversized_data_12") => return None,
        "oversized_coding_1232" | "data_index_max_valid_32767" => return None,
        "oversized_data_1400" => "oversized",
        n if n.starts_with("truncated_") || n == "empty" => "truncated",
        "variant_data_as_code_0x66" => "truncated",
        "variant_legacy_data_0xa5" | "variant_legacy_code_0x5a" => "legacy_variant",
        "variant_unchained_merkle_data_0x86" | "variant_unchained_merkle_code_0x46" => {
            "unchained_variant"
        }
        "variant_zero" | "variant_0xff" => "unknown_variant",
        "variant_proof_size_5" | "variant_proof_size_7" | "variant_proof_size_15" => {
            "bad_proof_size"
        }
        "variant_resigned_bit_set" | "data_size_field_too_large" => "bad_size_field",
        "data_size_field_below_headers" => "bad_size_field",
        "flags_last_in_slot_without_data_complete" => "bad_flags",
        "parent_offset_zero_edited" | "parent_offset_zero_signed" => "bad_parent_offset",
        // The edit makes the index 0xFFFF_FFFF, beyond the slot's shred range.
        "data_index_below_fec_set_index" => "index_out_of_range",
        "coding_position_out_of_range" | "coding_num_coding_zero" | "coding_num_data_zero" => {
            "bad_coding_header"
        }
        "index_out_of_range_data" | "index_out_of_range_coding" => "index_out_of_range",
        "coding_fec_set_crosses_max_index" => "index_out_of_range",
        "fec_set_index_misaligned" => "misaligned_fec_set",
        "wrong_shred_version" | "shred_version_edited" => "wrong_shred_version",
        "slot_too_far_ahead" => "slot_too_far_ahead",
        _ => "bad_signature",
    })
}

#[test]
fn every_negative_case_is_rejected_with_its_reason_conformance() {
    let cases: Value = serde_json::from_slice(&read_fixture("shreds/negative/cases.json")).unwrap();
    let params = &cases["fetch_filter_params"];
    let root = params["root"].as_u64().unwrap();
    let max_slot = params["max_slot"].as_u64().unwrap();
    let mut checked = 0;
    for case in cases["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let bytes = read_fixture(&format!(
            "shreds/negative/{}",
            case["file"].as_str().unwrap()
        ));
        let config = DecoderConfig {
            shred_version: Some(params["shred_version"].as_u64().unwrap() as u16),
            max_slots_ahead: max_slot - root,
            ..DecoderConfig::default()
        };
        let mut decoder = ShredDecoder::new(config, leader(case["leader"].as_str().unwrap()));
        decoder.set_reference_slot(root);
        let outcome = decoder.ingest(&bytes, 0);
        let got = match outcome {
            ShredOutcome::Stored { .. } => None,
            ShredOutcome::Rejected { reason, .. } => Some(reason.label()),
            ShredOutcome::Redundant { .. } => panic!("{name}: redundant on an empty decoder"),
        };
        assert_eq!(
            got,
            expected_reason(name),
            "{name}: {}",
            case["description"]
        );
        // Our verdict agrees with the reference's overall verdict.
        assert_eq!(
            got.is_none(),
            case["expected_valid"].as_bool().unwrap(),
            "{name}"
        );
        checked += 1;
    }
    assert_eq!(checked, 62);
}

/// A corrupted shred arriving after honest shreds of its set fixed the set's root is isolated as
/// conflicting, and the set still completes from the honest shreds.
#[test]
fn conflicting_shred_in_a_set_is_isolated_conformance() {
    let cases: Value = serde_json::from_slice(&read_fixture("shreds/negative/cases.json")).unwrap();
    let manifest = manifest();
    for name in [
        "bad_merkle_proof_data",
        "data_payload_bitflip",
        "bad_merkle_proof_coding",
    ] {
        let case = cases["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        let source = &case["derived_from"];
        let slot = source["slot"].as_u64().unwrap();
        let fec_set_index = source["fec_set_index"].as_u64().unwrap() as u32;
        let slot_entry = manifest["slots"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["slot"].as_u64() == Some(slot))
            .unwrap();
        let full = read_fixture(&format!(
            "shreds/{}",
            slot_entry["files"]["full"].as_str().unwrap()
        ));
        let set_records: Vec<&[u8]> = framing::records(&full)
            .map(|record| record.unwrap().payload)
            .filter(|p| u32::from_le_bytes(p[79..83].try_into().unwrap()) == fec_set_index)
            .collect();
        let mut decoder = ShredDecoder::new(config(), schedule(&manifest));
        // Ten honest coding shreds open the set.
        for payload in set_records.iter().filter(|p| p.len() == 1228).skip(20) {
            assert!(matches!(
                decoder.ingest(payload, 0),
                ShredOutcome::Stored { .. }
            ));
        }
        let bad = read_fixture(&format!(
            "shreds/negative/{}",
            case["file"].as_str().unwrap()
        ));
        match decoder.ingest(&bad, 0) {
            // It proves another root, which could be a second version signed by the leader
            // (a duplicate block): its signature is checked over that root, and fails.
            ShredOutcome::Rejected { reason, .. } => {
                assert_eq!(reason.label(), "bad_signature", "{name}")
            }
            other => panic!("{name}: {other:?}"),
        }
        // The honest data shreds then complete the set (the bad one's slot is filled honestly).
        let mut completed = false;
        for payload in set_records.iter().filter(|p| p.len() == 1203) {
            if let ShredOutcome::Stored {
                completion: Some(Completion::Complete { .. }),
                ..
            } = decoder.ingest(payload, 0)
            {
                completed = true;
            }
        }
        assert!(completed, "{name}");
    }
}

#[test]
fn live_capture_recovers_every_set_conformance() {
    let leaders = leader("FT9QgTVo375TgDAQusTgpsfXqTosCJLfrBpoVdcbnhtS");
    let config = DecoderConfig {
        shred_version: Some(27350),
        ..DecoderConfig::default()
    };
    let bytes =
        read_fixture("firedancer/chained_resigned-FT9QgTVo375TgDAQusTgpsfXqTosCJLfrBpoVdcbnhtS.ar");
    let mut decoder = ShredDecoder::new(config, leaders);
    let mut run = Run::default();
    for record in framing::records(&bytes) {
        note(&mut run, decoder.ingest(record.unwrap().payload, 0));
        drain(&mut decoder, &mut run);
    }
    assert_eq!(
        run.stored + run.redundant + run.rejected.values().sum::<u64>(),
        307
    );
    // 16 exact duplicates: those arriving before their set completes are rejected as duplicates,
    // later ones are redundant (sets are not re-verified once complete).
    assert_eq!(
        run.rejected.keys().copied().collect::<Vec<_>>(),
        ["duplicate"]
    );
    assert!(run.rejected["duplicate"] <= 16);
    assert_eq!(run.stored + run.rejected["duplicate"] + run.redundant, 307);
    assert_eq!(run.sets_completed, 5);
    assert!(run.data_recovered >= 5, "every set misses 1–5 data shreds");
    let roots = [
        (
            320,
            "544894b97bfc6a29235c1cb94dfe0f12775af3020b126663caa93a8379109261",
        ),
        (
            352,
            "a910046bf7de95861a2ce8cfc0a66093ba160f17cf0fe3273ad9a0ef1b97eb79",
        ),
        (
            384,
            "c2082778594aa34f1b6be3a7a7579c88c87676a7cbb8fe3b6d4274b0137bd952",
        ),
        (
            416,
            "7665b28988471f12b8200d6e292ef95054e9af035b7f37fd398822ceb253fc87",
        ),
        (
            448,
            "012055b71d346ab581f698c2841a201c61d8bde7c5d62df13f3ddd6d59e1f89f",
        ),
    ];
    for (fec_set_index, hex) in roots {
        let root = decoder.fec_set_root(385970984, fec_set_index).unwrap();
        let root_hex: String = root.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(root_hex, hex);
    }
    assert_eq!(decoder.fec_counters().chain_links_verified, 4);
    assert_eq!(decoder.fec_counters().chain_links_broken, 0);
    let mut batches = run.batches.clone();
    batches.sort_by_key(|batch| batch.start_index);
    let shape: Vec<(u32, usize, u64, usize)> = batches
        .iter()
        .map(|b| {
            (
                b.start_index,
                b.entries.len(),
                b.transaction_count,
                b.bytes.len(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (320, 12, 19, 7272),
            (352, 14, 38, 14152),
            (384, 10, 1, 840),
            (416, 11, 5, 2296),
            (448, 2, 0, 104)
        ]
    );
    // The capture joins mid-slot: set 320's predecessor is absent, so its start is uncertain and
    // it was kept only because it parsed exactly.
    assert!(!batches[0].start_certain);
    assert!(batches[1..].iter().all(|batch| batch.start_certain));
}

#[test]
fn pcap_batch_equals_the_golden_bytes_conformance() {
    let leaders = leader("4rBaC4tZ4bd7fDGQpWpesBSmgqYmMzkASuZsZkbHCrBK");
    let config = DecoderConfig {
        shred_version: Some(6051),
        ..DecoderConfig::default()
    };
    let run = decode_capture(
        &read_fixture("firedancer/demo-shreds.pcap"),
        config,
        leaders,
    );
    assert!(run.rejected.is_empty(), "{:?}", run.rejected);
    assert_eq!(run.stored + run.redundant, 512);
    assert_eq!(run.batches.len(), 1);
    let batch = &run.batches[0];
    assert_eq!(
        (batch.slot, batch.start_index, batch.end_index),
        (0, 0, 255)
    );
    assert_eq!(batch.bytes, read_fixture("firedancer/demo-shreds.bin"));
    assert_eq!(batch.entries.len(), 64);
    assert_eq!(batch.transaction_count, 1280);
}

#[test]
fn wrong_leader_rejects_every_set_conformance() {
    let manifest = manifest();
    let slot = &manifest["slots"][0];
    let other_leader = manifest["slots"][4]["leader"].as_str().unwrap();
    let bytes = read_fixture(&format!(
        "shreds/{}",
        slot["files"]["lossy"].as_str().unwrap()
    ));
    let run = decode_capture(&bytes, config(), leader(other_leader));
    assert!(run.batches.is_empty());
    assert_eq!(run.stored, 0);
    assert_eq!(
        run.rejected.get("bad_signature").copied(),
        Some(bytes_records(&bytes))
    );
}

fn bytes_records(bytes: &[u8]) -> u64 {
    framing::records(bytes).count() as u64
}
