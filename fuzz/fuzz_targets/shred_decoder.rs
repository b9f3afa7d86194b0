//! The whole `ShredDecoder` on a stream of arbitrary datagrams, with small bounds so that
//! eviction, window moves, full queues and oversized batches all happen within one input.
//!
//! Input: byte 0 picks the configuration (bits below); then records of a u16 little-endian word
//! and that many bytes. The word's low 11 bits are the datagram length (so real shreds, up to 1232
//! bytes, and oversized ones fit), its high 5 bits `e` advance the receive clock by `1 µs << e`
//! (up to ~36 min, past the window reset) after the datagram. A last record cut short is fed as
//! it is. The length-prefixed fixtures (`slot-*.bin`) are therefore valid input after one byte.
//!
//! Invariants: each outcome agrees with an independent `parse_shred` of the datagram and with
//! the policy; a stored data shred is held byte for byte; the FEC pool and the batch queue stay
//! within their bounds; every batch is strictly valid (`decoder_fuzz::check_entry_batch`), fits
//! `max_batch_bytes` and is counted as emitted.
#![no_main]

use decoder::deshred::DeshredConfig;
use decoder::fec::FecConfig;
use decoder::shred::{MAX_SHREDS_PER_SLOT, ParseOptions, parse_shred, peek_slot_and_fec_set};
use decoder::{DecoderConfig, LeaderSchedule, Rejection, ShredDecoder, ShredOutcome};
use libfuzzer_sys::fuzz_target;

/// The shred version of the fixtures, so version filtering passes or fails on real shreds.
const FIXTURE_SHRED_VERSION: u16 = 50093;
const LENGTH_MASK: u16 = 0x07FF;
const CLOCK_SHIFT: u32 = 11;
const CLOCK_STEP_NS: u64 = 1_000;

fuzz_target!(|input: &[u8]| {
    let Some((&knobs, mut rest)) = input.split_first() else {
        return;
    };
    let config = config(knobs);
    let drain_each = knobs & 0x80 != 0;
    let mut decoder = ShredDecoder::new(config, LeaderSchedule::Unchecked);
    let mut rx_ns = 0u64;
    let mut emitted = 0u64;
    while let [low, high, tail @ ..] = rest {
        let word = u16::from_le_bytes([*low, *high]);
        let (datagram, after) = tail.split_at(usize::from(word & LENGTH_MASK).min(tail.len()));
        rest = after;
        let outcome = decoder.ingest(datagram, rx_ns);
        check_outcome(&decoder, datagram, outcome);
        assert!(decoder.sets_in_flight() <= config.fec.max_sets_in_flight);
        assert!(decoder.pending_batches() <= config.max_pending_batches);
        if drain_each {
            emitted += drain(&mut decoder, rx_ns);
        }
        rx_ns += CLOCK_STEP_NS << (word >> CLOCK_SHIFT);
    }
    emitted += drain(&mut decoder, rx_ns);
    assert_eq!(decoder.pending_batches(), 0);
    assert_eq!(decoder.batch_counters().batches_emitted, emitted);
});

/// Bit 0: allow unchained variants. Bit 1: require the fixtures' shred version. Bits 2–3: 1, 2, 4
/// or 8 FEC sets in flight. Bit 4: one pending batch (else 4). Bit 5: one deshred slot (else 2).
/// Bit 6: 4 KiB batches at most (else 64 KiB). Bit 7: drain after every datagram. Bits 4 and 5
/// both set: trusted-feed mode (no authentication).
fn config(knobs: u8) -> DecoderConfig {
    let bit = |n: u32| knobs >> n & 1 == 1;
    DecoderConfig {
        shred_version: bit(1).then_some(FIXTURE_SHRED_VERSION),
        parse: ParseOptions {
            allow_unchained: bit(0),
        },
        fec: FecConfig {
            max_sets_in_flight: 1 << (knobs >> 2 & 3),
            completed_sets_remembered: 4,
            authenticate: !(bit(4) && bit(5)),
            ..FecConfig::default()
        },
        deshred: DeshredConfig {
            max_slots_in_flight: if bit(5) { 1 } else { 2 },
        },
        slot_lookback: 8,
        max_slots_ahead: 64,
        window_reset_after_ns: 1_000_000_000,
        max_batch_bytes: if bit(6) { 4 << 10 } else { 64 << 10 },
        max_pending_batches: if bit(4) { 1 } else { 4 },
        incremental: Default::default(),
    }
}

/// The outcome agrees with what the datagram is: unparseable datagrams are rejected with the
/// parser's error; parseable ones report their own slot and kind, obey the version policy, and
/// when stored are held: the set has a root and a data shred reads back byte for byte.
fn check_outcome(decoder: &ShredDecoder, datagram: &[u8], outcome: ShredOutcome) {
    let config = decoder.config();
    let shred = match parse_shred(datagram, config.parse) {
        Ok(shred) => shred,
        Err(error) => {
            let slot = peek_slot_and_fec_set(datagram).map(|(slot, _)| slot);
            let expected = ShredOutcome::Rejected {
                slot,
                kind: None,
                reason: error.into(),
            };
            assert_eq!(outcome, expected);
            return;
        }
    };
    decoder_fuzz::check_shred(datagram, &shred);
    let header = (shred.slot(), shred.kind());
    let wrong_version = config
        .shred_version
        .is_some_and(|v| v != shred.shred_version());
    match outcome {
        ShredOutcome::Stored {
            slot,
            fec_set_index,
            kind,
            ..
        } => {
            assert!(!wrong_version);
            assert_eq!(
                (slot, kind, fec_set_index),
                (header.0, header.1, shred.fec_set_index())
            );
            assert!(decoder.fec_set_root(slot, fec_set_index).is_some());
            if shred.is_data() {
                assert_eq!(
                    decoder.data_shred(slot, shred.index()),
                    Some(shred.payload())
                );
            }
        }
        ShredOutcome::Redundant { slot, kind } => {
            assert!(!wrong_version);
            assert_eq!((slot, kind), header);
        }
        ShredOutcome::Rejected { slot, kind, reason } => {
            assert_eq!((slot, kind), (Some(header.0), Some(header.1)));
            assert!(
                !matches!(reason, Rejection::Shred(_)),
                "parsed, yet rejected as {reason}"
            );
            assert_eq!(
                wrong_version,
                matches!(reason, Rejection::WrongShredVersion { .. })
            );
        }
    }
}

/// Drains every ready batch, checking each; returns how many there were.
fn drain(decoder: &mut ShredDecoder, now_ns: u64) -> u64 {
    let max_batch_bytes = decoder.config().max_batch_bytes;
    let mut count = 0;
    while let Some(batch) = decoder.next_batch() {
        count += 1;
        assert!(batch.bytes.len() <= max_batch_bytes);
        assert!(batch.span.start_index <= batch.span.end_index);
        assert!(batch.span.end_index < MAX_SHREDS_PER_SLOT);
        assert!(batch.first_rx_ns <= batch.completed_rx_ns);
        assert!(batch.completed_rx_ns <= now_ns);
        decoder_fuzz::check_entry_batch(batch.bytes, &batch.entries);
    }
    count
}
