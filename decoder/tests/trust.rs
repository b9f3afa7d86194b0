//! Trust only the slot's leader (docs/decisions.md, "Trust"): forged, altered, far-ahead and junk
//! shreds interleaved with the genuine fixture slots, with the cluster's leader schedule (every
//! genuine transaction decoded exactly once, no forged one) and on a trusted feed (decoding
//! survives, or recovers within `window_reset_after_ns`); duplicate blocks refused and reported.
//!
//! Forged sets are genuine slots' content re-signed by another key (`reslot`): valid Merkle
//! trees, chained roots and parity, a wrong signer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use capture::framing;
use capture::reslot::Reslotter;
use common::{Run, drain, note, read_fixture};
use decoder::fec::FecConfig;
use decoder::shred::{ParseOptions, parse_shred};
use decoder::{
    DecoderConfig, EpochLeaders, EpochSchedule, LeaderEpochs, LeaderSchedule, SetEvent, SetStage,
    ShredDecoder, SlotStage, SlotStageConfig,
};
use ed25519_dalek::SigningKey;
use serde_json::Value;
use testkit::shred_attacks::{Rng, junk, with_slot};

const SHRED_VERSION: u16 = 50093;
const FIRST_SLOT: u64 = 361_200_000;
/// Every transaction of the six fixture slots (250 + 3,928 + 335 + 0 + 87 + 85).
const ALL_TRANSACTIONS: usize = 4_685;

fn manifest() -> Value {
    serde_json::from_slice(&read_fixture("shreds/manifest.json")).unwrap()
}

fn slots(manifest: &Value) -> &Vec<Value> {
    manifest["slots"].as_array().unwrap()
}

fn config() -> DecoderConfig {
    DecoderConfig {
        shred_version: Some(SHRED_VERSION),
        ..DecoderConfig::default()
    }
}

/// The genuine shreds of a slot, every one, in the order the leader emitted them.
fn genuine(slot: u64) -> Vec<Vec<u8>> {
    let bytes = read_fixture(&format!("shreds/slot-{slot}.full.bin"));
    framing::records(&bytes)
        .map(|record| record.unwrap().payload.to_vec())
        .collect()
}

fn all_genuine(manifest: &Value) -> Vec<Vec<u8>> {
    slots(manifest)
        .iter()
        .flat_map(|slot| genuine(slot["slot"].as_u64().unwrap()))
        .collect()
}

/// The cluster's schedule as `getLeaderSchedule` gives it for mainnet epoch 836 (432,000 slots
/// from 361,152,000): each fixture leader with its slot offsets.
fn epoch_schedule(manifest: &Value) -> LeaderSchedule {
    let cluster = EpochSchedule {
        slots_per_epoch: 432_000,
        warmup: false,
        first_normal_epoch: 0,
        first_normal_slot: 0,
    };
    let epoch = cluster.epoch_of(FIRST_SLOT);
    let first_slot = cluster.first_slot(epoch);
    let mut offsets: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for slot in slots(manifest) {
        let leader = slot["leader"].as_str().unwrap().to_owned();
        let offset = slot["slot"].as_u64().unwrap() - first_slot;
        offsets.entry(leader).or_default().push(offset);
    }
    let leaders =
        EpochLeaders::from_offsets(epoch, first_slot, cluster.slots_in_epoch(epoch), offsets)
            .unwrap();
    assert_eq!(leaders.distinct_leaders(), 2);
    LeaderSchedule::Epochs(LeaderEpochs::new([Arc::new(leaders)]))
}

/// The first signature of every transaction the manifest expects, per slot.
fn expected(manifest: &Value) -> BTreeMap<u64, Vec<String>> {
    slots(manifest)
        .iter()
        .map(|slot| {
            let signatures = slot["entries"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|entry| entry["transactions"].as_array().unwrap())
                .map(|tx| tx["signature"].as_str().unwrap().to_owned())
                .collect();
            (slot["slot"].as_u64().unwrap(), signatures)
        })
        .filter(|(_, signatures): &(u64, Vec<String>)| !signatures.is_empty())
        .collect()
}

/// The first signature of every decoded transaction, per slot, in decoded order per batch.
fn decoded(run: &Run) -> BTreeMap<u64, Vec<String>> {
    let mut per_slot: BTreeMap<u64, Vec<(u32, String)>> = BTreeMap::new();
    for batch in &run.batches {
        for signature in batch.entries.iter().flat_map(|e| &e.signatures) {
            per_slot
                .entry(batch.slot)
                .or_default()
                .push((batch.start_index, signature.clone()));
        }
    }
    per_slot
        .into_iter()
        .map(|(slot, mut signatures)| {
            // Batches of a slot may complete out of order; within a batch the order is kept.
            signatures.sort_by_key(|(start, _)| *start);
            (slot, signatures.into_iter().map(|(_, s)| s).collect())
        })
        .filter(|(_, signatures): &(u64, Vec<String>)| !signatures.is_empty())
        .collect()
}

fn transaction_count(per_slot: &BTreeMap<u64, Vec<String>>) -> usize {
    per_slot.values().map(Vec::len).sum()
}

/// Decodes `datagrams` (each with its receive time) with one decoder.
fn run(decoder: &mut ShredDecoder, datagrams: impl IntoIterator<Item = (Vec<u8>, u64)>) -> Run {
    let mut out = Run::default();
    for (datagram, rx_ns) in datagrams {
        note(&mut out, decoder.ingest(&datagram, rx_ns));
        drain(decoder, &mut out);
    }
    out
}

fn untimed(datagrams: Vec<Vec<u8>>) -> impl Iterator<Item = (Vec<u8>, u64)> {
    datagrams.into_iter().map(|datagram| (datagram, 0))
}

/// The attacker's key, and a forged version of `slot` carrying `content_slot`'s entries.
fn forged(slot: u64, content_slot: u64) -> Vec<Vec<u8>> {
    let content = genuine(content_slot);
    let records: Vec<&[u8]> = content.iter().map(Vec::as_slice).collect();
    Reslotter::new(SigningKey::from_bytes(&[66; 32]))
        .reslot(&records, slot, slot - 1, &[5; 32])
        .unwrap()
        .shreds
}

/// One genuine, one forged, and so on; the longer list's tail at the end.
fn interleave(first: Vec<Vec<u8>>, second: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(first.len() + second.len());
    let (mut a, mut b) = (first.into_iter(), second.into_iter());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

/// Forged versions of the small slots, each carrying another slot's transactions.
fn forged_slots() -> Vec<Vec<u8>> {
    [
        (FIRST_SLOT, FIRST_SLOT + 2),
        (FIRST_SLOT + 2, FIRST_SLOT),
        (FIRST_SLOT + 6, FIRST_SLOT + 7),
        (FIRST_SLOT + 7, FIRST_SLOT + 6),
    ]
    .into_iter()
    .flat_map(|(slot, content)| forged(slot, content))
    .collect()
}

#[test]
fn with_the_schedule_every_genuine_transaction_is_decoded_once_and_no_forged_one() {
    let manifest = manifest();
    let expected = expected(&manifest);
    assert_eq!(transaction_count(&expected), ALL_TRANSACTIONS);
    let forged = forged_slots();
    let forged_count = forged.len() as u64;
    // Forged first, then genuine, shred by shred: the forged version of a set is always first.
    let datagrams = interleave(forged, all_genuine(&manifest));
    let mut decoder = ShredDecoder::new(config(), epoch_schedule(&manifest));
    let out = run(&mut decoder, untimed(datagrams));
    assert_eq!(decoded(&out), expected);
    assert_eq!(out.rejected.get("bad_signature"), Some(&forged_count));
    assert_eq!(out.rejected.len(), 1, "{:?}", out.rejected);
    assert_eq!(decoder.fec_counters().duplicate_sets, 0);
    assert_eq!(decoder.highest_slot(), Some(FIRST_SLOT + 7));
}

#[test]
fn without_the_schedule_the_same_stream_publishes_forged_transactions() {
    // The control of the test above: the forged sets do reach the output of a trusted feed, so
    // the schedule is what keeps them out.
    let manifest = manifest();
    let datagrams = interleave(forged_slots(), all_genuine(&manifest));
    let mut decoder = ShredDecoder::new(config(), LeaderSchedule::Unchecked);
    let out = run(&mut decoder, untimed(datagrams));
    assert_ne!(decoded(&out), expected(&manifest));
}

#[test]
fn several_fixed_leaders_accept_either_and_nothing_else() {
    let manifest = manifest();
    let key = |text: &str| LeaderSchedule::key_from_base58(text).unwrap();
    let stranger = SigningKey::from_bytes(&[66; 32]).verifying_key();
    let both = LeaderSchedule::any_of([
        stranger,
        key("7EPbph2S7MU9vxdiTd8HwseuYN3pDnsy4xZiRBHBQFWF"),
        key(slots(&manifest)[4]["leader"].as_str().unwrap()),
    ]);
    let mut decoder = ShredDecoder::new(config(), both);
    let out = run(&mut decoder, untimed(all_genuine(&manifest)));
    assert_eq!(decoded(&out), expected(&manifest));
    let only_first = LeaderSchedule::any_of([
        stranger,
        key("7EPbph2S7MU9vxdiTd8HwseuYN3pDnsy4xZiRBHBQFWF"),
    ]);
    let mut decoder = ShredDecoder::new(config(), only_first);
    let out = run(&mut decoder, untimed(all_genuine(&manifest)));
    let decoded = decoded(&out);
    assert!(!decoded.contains_key(&(FIRST_SLOT + 6)));
    assert_eq!(decoded[&FIRST_SLOT].len(), 250);
    // Slots 6 and 7: 96 + 128 data and as many coding shreds, all refused.
    assert_eq!(out.rejected.get("bad_signature"), Some(&(2 * (96 + 128))));
}

#[test]
fn one_far_ahead_forged_shred_moves_nothing() {
    let manifest = manifest();
    let genuine = all_genuine(&manifest);
    for leaders in [epoch_schedule(&manifest), LeaderSchedule::Unchecked] {
        let checked = leaders.is_checked();
        let mut datagrams = genuine.clone();
        // After the first genuine set opened the window: a real shred moved 2,048 slots ahead.
        let far = with_slot(&genuine[70], FIRST_SLOT + 2_048);
        datagrams.insert(64, far);
        let mut decoder = ShredDecoder::new(config(), leaders);
        let out = run(&mut decoder, untimed(datagrams));
        assert_eq!(decoded(&out), expected(&manifest), "checked {checked}");
        assert_eq!(decoder.highest_slot(), Some(FIRST_SLOT + 7));
        if checked {
            // No leader is scheduled there.
            assert_eq!(out.rejected.get("unknown_leader"), Some(&1));
        }
        assert!(
            !out.rejected.contains_key("stale_slot"),
            "{:?}",
            out.rejected
        );
    }
}

#[test]
fn a_forged_first_datagram_at_slot_ten_to_the_twelve_locks_nothing_out() {
    let manifest = manifest();
    let genuine = all_genuine(&manifest);
    for leaders in [epoch_schedule(&manifest), LeaderSchedule::Unchecked] {
        let checked = leaders.is_checked();
        let mut datagrams = vec![with_slot(&genuine[3], 1_000_000_000_000)];
        datagrams.extend(genuine.iter().cloned());
        let mut decoder = ShredDecoder::new(config(), leaders);
        let out = run(&mut decoder, untimed(datagrams));
        assert_eq!(decoded(&out), expected(&manifest), "checked {checked}");
        assert_eq!(decoder.highest_slot(), Some(FIRST_SLOT + 7));
        let refused = out.rejected.values().sum::<u64>();
        assert_eq!(refused, u64::from(checked), "{:?}", out.rejected);
    }
}

#[test]
fn altered_shreds_sent_before_the_real_ones_do_not_claim_their_set() {
    let manifest = manifest();
    let slot = FIRST_SLOT + 2;
    let real = genuine(slot);
    let mut rng = Rng(0x5eed);
    // Six shreds of the slot's first set, each with one entry byte flipped: six other roots.
    let altered: Vec<Vec<u8>> = (0..6)
        .map(|i| {
            let mut shred = real[i * 5].clone();
            let at = 88 + rng.below(800);
            shred[at] ^= 0x10;
            shred
        })
        .collect();
    for leaders in [epoch_schedule(&manifest), LeaderSchedule::Unchecked] {
        let checked = leaders.is_checked();
        let datagrams = altered.iter().chain(&real).cloned().collect();
        let mut decoder = ShredDecoder::new(config(), leaders);
        let out = run(&mut decoder, untimed(datagrams));
        let decoded = decoded(&out);
        assert_eq!(decoded.get(&slot), expected(&manifest).get(&slot));
        assert_eq!(decoded[&slot].len(), 335);
        if checked {
            assert_eq!(out.rejected.get("bad_signature"), Some(&6));
        } else {
            // Each altered shred replaced the unconfirmed one before it; the first genuine shred
            // replaced the last of them.
            assert_eq!(decoder.fec_counters().unconfirmed_replaced, 6);
        }
    }
}

#[test]
fn a_junk_flood_with_real_slots_interleaved_changes_nothing() {
    let manifest = manifest();
    let genuine = all_genuine(&manifest);
    let mut rng = Rng(0xfeed_f00d);
    let flood = junk(&genuine, &mut rng, genuine.len());
    for leaders in [epoch_schedule(&manifest), LeaderSchedule::Unchecked] {
        let checked = leaders.is_checked();
        // Junk first, so it reaches sets before their genuine shreds do.
        let datagrams = interleave(flood.clone(), genuine.clone());
        let mut decoder = ShredDecoder::new(config(), leaders);
        let out = run(&mut decoder, untimed(datagrams));
        assert_eq!(decoded(&out), expected(&manifest), "checked {checked}");
        assert_eq!(
            decoder.highest_slot(),
            Some(FIRST_SLOT + 7),
            "checked {checked}"
        );
    }
}

#[test]
fn a_trusted_feed_recovers_from_a_poisoned_anchor_within_the_reset_time() {
    let manifest = manifest();
    const RESET_NS: u64 = 50_000_000;
    const STEP_NS: u64 = 1_000_000;
    let config = DecoderConfig {
        window_reset_after_ns: RESET_NS,
        ..config()
    };
    // A forged, self-consistent set far ahead: two of its shreds confirm it on a trusted feed.
    let poison = forged(1_000_000_000_000, FIRST_SLOT);
    let mut decoder = ShredDecoder::new(config, LeaderSchedule::Unchecked);
    let mut out = run(&mut decoder, untimed(poison[..2].to_vec()));
    assert_eq!(decoder.highest_slot(), Some(1_000_000_000_000));
    // Then the genuine feed, one datagram per millisecond.
    let timed = all_genuine(&manifest)
        .into_iter()
        .enumerate()
        .map(|(i, datagram)| (datagram, (i as u64 + 1) * STEP_NS));
    let after = run(&mut decoder, timed);
    out.batches.extend(after.batches);
    assert_eq!(decoder.highest_slot(), Some(FIRST_SLOT + 7));
    // Refused until the window had confirmed nothing for RESET_NS: the first 49 datagrams.
    let stale = after.rejected.get("stale_slot").copied().unwrap_or(0);
    assert_eq!(stale, RESET_NS / STEP_NS - 1, "{:?}", after.rejected);
    let decoded = decoded(&out);
    let expected = expected(&manifest);
    // Slot 0 lost its first set's data (49 of its 64 shreds): its first batch (indices 0..=63)
    // is gone, the rest is decoded; every later slot is whole.
    for (slot, signatures) in &expected {
        if *slot != FIRST_SLOT {
            assert_eq!(
                decoded.get(slot).unwrap_or(&Vec::new()),
                signatures,
                "{slot}"
            );
        }
    }
    let first = &decoded[&FIRST_SLOT];
    assert!(!first.is_empty() && first.len() < 250, "{}", first.len());
    assert!(expected[&FIRST_SLOT].ends_with(first));
}

#[test]
fn without_receive_times_a_poisoned_anchor_is_not_recovered() {
    // The control of the test above: the recovery is what brings decoding back.
    let manifest = manifest();
    let poison = forged(1_000_000_000_000, FIRST_SLOT);
    let mut decoder = ShredDecoder::new(config(), LeaderSchedule::Unchecked);
    run(&mut decoder, untimed(poison[..2].to_vec()));
    let out = run(&mut decoder, untimed(all_genuine(&manifest)));
    assert!(decoded(&out).is_empty());
    assert_eq!(decoder.highest_slot(), Some(1_000_000_000_000));
}

/// Two versions of one slot signed by the same (scheduled) leader: A carries slot 0's entries
/// (5 sets), B slot 2's (6 sets); their first five sets collide.
fn two_versions(slot: u64) -> (Reslotter, Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let leader = Reslotter::new(SigningKey::from_bytes(&[3; 32]));
    let version = |content: u64| {
        let records = genuine(content);
        let records: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        leader
            .reslot(&records, slot, slot - 1, &[1; 32])
            .unwrap()
            .shreds
    };
    let (a, b) = (version(FIRST_SLOT), version(FIRST_SLOT + 2));
    (leader, a, b)
}

/// The root of each set of a version, by fec_set_index.
fn roots(shreds: &[Vec<u8>], leaders: &LeaderSchedule) -> BTreeMap<u32, [u8; 32]> {
    let mut decoder = ShredDecoder::new(config(), leaders.clone());
    let mut out = BTreeMap::new();
    for shred in shreds {
        decoder.ingest(shred, 0);
        let parsed = parse_shred(shred, ParseOptions::default()).unwrap();
        let root = decoder.fec_set_root(parsed.slot(), parsed.fec_set_index());
        out.insert(parsed.fec_set_index(), root.unwrap());
    }
    out
}

#[test]
fn a_duplicate_block_is_refused_counted_and_reported_once_with_both_roots() {
    let slot = 400_000_000;
    let (leader, a, b) = two_versions(slot);
    let key = LeaderSchedule::key_from_bytes(&leader.leader()).unwrap();
    let epoch = EpochLeaders::from_key_offsets(926, slot - 64, 128, [(key, [64u64])]).unwrap();
    let leaders = LeaderSchedule::Epochs(LeaderEpochs::new([Arc::new(epoch)]));
    let (roots_a, roots_b) = (roots(&a, &leaders), roots(&b, &leaders));
    assert_eq!((roots_a.len(), roots_b.len()), (5, 6));
    let reference = {
        let mut decoder = ShredDecoder::new(config(), leaders.clone());
        decoded(&run(&mut decoder, untimed(a.clone())))
    };
    assert_eq!(reference[&slot].len(), 250);
    // A whole then B (completed sets), and A and B shred by shred (sets in flight).
    for order in [
        a.iter().chain(&b).cloned().collect::<Vec<_>>(),
        interleave(a.clone(), b.clone()),
    ] {
        let mut decoder = ShredDecoder::new(config(), leaders.clone());
        let out = run(&mut decoder, untimed(order));
        assert_eq!(decoded(&out), reference, "only the first version is used");
        assert_eq!(decoder.fec_counters().duplicate_sets, 5);
        // Every shred of B's five colliding sets is refused as such.
        assert_eq!(
            out.rejected.get("duplicate_block"),
            Some(&(5 * 64)),
            "{:?} {} {}",
            out.rejected,
            out.stored,
            out.redundant
        );
        let reported: Vec<_> = decoder
            .duplicates()
            .iter()
            .map(|d| (d.key.slot, d.key.fec_set_index, d.first_root, d.second_root))
            .collect();
        let wanted: Vec<_> = roots_a
            .iter()
            .map(|(&index, &root)| (slot, index, root, roots_b[&index]))
            .collect();
        let mut sorted = reported.clone();
        sorted.sort();
        assert_eq!(sorted, wanted);
        // B's sixth set does not collide with a set of A, but its 32 data shreds lie beyond A's
        // last shred: refused by the slot side.
        assert_eq!(decoder.batch_counters().duplicate_last_shreds, 32);
    }
}

#[test]
fn duplicate_events_reach_the_set_stage_sink() {
    let slot = 400_000_000;
    let (leader, a, b) = two_versions(slot);
    let key = LeaderSchedule::key_from_bytes(&leader.leader()).unwrap();
    let mut stage = SetStage::new(config(), LeaderSchedule::Fixed(key));
    let mut slots = SlotStage::new(SlotStageConfig::from(&config()));
    let mut events = 0;
    for shred in a.iter().chain(&b) {
        stage.ingest(shred, 0, &mut |event| {
            if let SetEvent::Duplicate(duplicate) = event {
                assert_eq!(duplicate.key.slot, slot);
                assert_ne!(duplicate.first_root, duplicate.second_root);
                events += 1;
            }
            slots.apply(&event);
        });
    }
    assert_eq!(events, 5);
}

#[test]
fn the_schedule_is_replaced_at_run_time() {
    let manifest = manifest();
    let genuine = genuine(FIRST_SLOT);
    // An epoch that does not cover the fixture slots: nothing verifies.
    let stranger = SigningKey::from_bytes(&[9; 32]).verifying_key();
    let elsewhere = EpochLeaders::from_key_offsets(1, 432_000, 432_000, [(stranger, [0u64])]);
    let elsewhere = LeaderSchedule::Epochs(LeaderEpochs::new([Arc::new(elsewhere.unwrap())]));
    let mut decoder = ShredDecoder::new(config(), elsewhere);
    let out = run(&mut decoder, untimed(genuine[..64].to_vec()));
    assert_eq!(out.rejected.get("unknown_leader"), Some(&64));
    assert_eq!(decoder.highest_slot(), None, "refused shreds move nothing");
    decoder.set_leaders(epoch_schedule(&manifest));
    let out = run(&mut decoder, untimed(genuine));
    assert_eq!(decoded(&out)[&FIRST_SLOT].len(), 250);
}

#[test]
fn a_trusted_feed_confirms_a_set_only_with_its_second_shred() {
    let genuine = genuine(FIRST_SLOT);
    let mut stage = SetStage::new(config(), LeaderSchedule::Unchecked);
    let mut seen = Vec::new();
    let mut sink = |event: SetEvent<'_>| match event {
        SetEvent::DataShredReady(ready) => seen.push(format!("data {}", ready.index)),
        SetEvent::HighestSlot(slot) => seen.push(format!("highest {slot}")),
        _ => {}
    };
    stage.ingest(&genuine[0], 1, &mut sink);
    assert_eq!(stage.highest_slot(), None);
    stage.ingest(&genuine[1], 2, &mut sink);
    assert_eq!(seen, ["highest 361200000", "data 0", "data 1"]);
    // One shred is enough when so configured (the former behaviour).
    let one = DecoderConfig {
        fec: FecConfig {
            unsigned_confirm_shreds: 1,
            ..FecConfig::default()
        },
        ..config()
    };
    let mut stage = SetStage::new(one, LeaderSchedule::Unchecked);
    stage.ingest(&genuine[0], 1, &mut |_| {});
    assert_eq!(stage.highest_slot(), Some(FIRST_SLOT));
}

#[test]
fn a_refused_far_ahead_shred_after_a_pause_does_not_reset_the_window() {
    let manifest = manifest();
    let first = genuine(FIRST_SLOT);
    let mut decoder = ShredDecoder::new(config(), epoch_schedule(&manifest));
    run(&mut decoder, first[..64].iter().map(|d| (d.clone(), 1)));
    assert_eq!(decoder.highest_slot(), Some(FIRST_SLOT));
    // Three seconds later (past the 2 s reset), a forged shred 5,000 slots ahead: verified, as
    // the window is idle, and refused; the window keeps its anchor.
    let far = with_slot(&first[70], FIRST_SLOT + 5_000);
    let out = run(&mut decoder, [(far, 3_000_000_001)]);
    assert_eq!(out.rejected.get("unknown_leader"), Some(&1));
    assert_eq!(decoder.highest_slot(), Some(FIRST_SLOT));
    // A stale one is refused without verification while the window is busy.
    let mut decoder = ShredDecoder::new(config(), epoch_schedule(&manifest));
    run(
        &mut decoder,
        genuine(FIRST_SLOT + 7).into_iter().map(|d| (d, 1)),
    );
    let stale = with_slot(&first[70], FIRST_SLOT - 1_000);
    let out = run(&mut decoder, [(stale, 2)]);
    assert_eq!(out.rejected.get("stale_slot"), Some(&1));
}

#[test]
fn on_a_trusted_feed_two_versions_are_not_reported_as_a_duplicate_block() {
    // Nothing says who signed either root: the first version stays, the other is a mismatch.
    let slot = 400_000_000;
    let (_, a, b) = two_versions(slot);
    let mut decoder = ShredDecoder::new(config(), LeaderSchedule::Unchecked);
    let out = run(&mut decoder, untimed(a.iter().chain(&b).cloned().collect()));
    assert_eq!(decoded(&out)[&slot].len(), 250);
    assert!(decoder.duplicates().is_empty());
    assert_eq!(decoder.fec_counters().duplicate_sets, 0);
    assert_eq!(out.rejected.get("merkle_root_mismatch"), Some(&(5 * 64)));
}
