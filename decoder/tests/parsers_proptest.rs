//! Property tests of the decoder's untrusted-input entry points: arbitrary bytes and mutated real
//! shreds into `parse_shred`, `framing::records` and `ShredDecoder::ingest`.
//!
//! Nothing may panic. An accepted shred reads its header fields back from the wire and its views
//! have the lengths its header implies. Capture framing ends within a bound set by the input
//! length and never points outside it. Every datagram fed to a decoder ends in exactly one outcome
//! that agrees with an independent parse, the decoder stays within its configured bounds, and
//! every batch it emits iterates to the counts it reports. The mutated shreds come from
//! `tests/fixtures/shreds/slot-361200000.bin` (u16-LE length-prefixed records), so most runs are
//! real FEC sets with a few damaged shreds and reach Merkle checks, recovery and deshredding.

use std::collections::HashMap;
use std::sync::OnceLock;

use capture::framing::{self, Framing};
use decoder::decoder::ShredOutcome;
use decoder::deshred::DeshredConfig;
use decoder::fec::FecConfig;
use decoder::incremental::IncrementalConfig;
use decoder::shred::{
    DATA_HEADERS_LEN, FEC_SET_PROOF_SIZE, KindHeader, MERKLE_PROOF_ENTRY_LEN, ParseOptions,
    ShredRef, parse_shred, peek_slot_and_fec_set,
};
use decoder::{DecoderConfig, LeaderSchedule, ReadyItem, Rejection, ShredDecoder};
use proptest::collection::vec;
use proptest::prelude::*;

/// The fixtures' shred version.
const SHRED_VERSION: u16 = 50093;

// Case counts: the whole file runs in about half a second in a debug build (dependencies are
// optimised, see the root Cargo.toml), far inside the 20 s budget. `with_cases` overrides the
// PROPTEST_CASES variable, so raise the counts here when hunting.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn parse_shred_on_arbitrary_bytes(bytes in datagram()) {
        check_parse(&bytes);
    }

    #[test]
    fn parse_shred_on_mutated_real_shreds(
        record in any::<prop::sample::Index>(),
        mutations in vec(mutation(), 1..6),
    ) {
        let records = fixture_records();
        let shred = mutate(&records[record.index(records.len())], &mutations);
        check_parse(&shred);
    }

    #[test]
    fn framing_records_end_and_stay_inside(bytes in capture()) {
        check_records(&bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decoder_ingests_arbitrary_datagrams(
        datagrams in vec(datagram(), 0..24),
        knobs in any::<u8>(),
    ) {
        let mut run = DecoderRun::new(knobs);
        for datagram in &datagrams {
            run.ingest(datagram);
        }
        run.finish();
    }

    #[test]
    fn decoder_ingests_mutated_real_shreds(
        damage in vec((any::<prop::sample::Index>(), vec(mutation(), 1..4)), 0..12),
        dropped in vec(any::<prop::sample::Index>(), 0..8),
        knobs in any::<u8>(),
    ) {
        // The whole lossy slot (5 FEC sets, each recoverable), a few shreds damaged or lost.
        let mut datagrams = fixture_records().to_vec();
        for (which, mutations) in &damage {
            let at = which.index(datagrams.len());
            datagrams[at] = mutate(&datagrams[at], mutations);
        }
        for which in &dropped {
            datagrams.remove(which.index(datagrams.len()));
        }
        let mut run = DecoderRun::new(knobs);
        for datagram in &datagrams {
            run.ingest(datagram);
        }
        run.finish();
    }
}

/// Parses under both options: never a panic, an accepted shred round-trips its header, and the
/// lenient option only adds unchained variants.
fn check_parse(bytes: &[u8]) {
    let strict = parse_shred(
        bytes,
        ParseOptions {
            allow_unchained: false,
        },
    );
    let lenient = parse_shred(
        bytes,
        ParseOptions {
            allow_unchained: true,
        },
    );
    for shred in strict.iter().chain(lenient.iter()) {
        check_header_round_trip(bytes, shred);
    }
    if let (Ok(_), Err(error)) = (&strict, &lenient) {
        panic!("allowing unchained variants rejected a shred: {error}");
    }
    if let (Err(_), Ok(shred)) = (&strict, &lenient) {
        assert!(!shred.variant().chained);
    }
}

/// Every header field of an accepted shred equals the wire bytes, and each view has the length
/// and position the layout gives it (format §§2–6).
fn check_header_round_trip(bytes: &[u8], shred: &ShredRef<'_>) {
    let le = |start: usize, end: usize| {
        bytes[start..end]
            .iter()
            .rev()
            .fold(0u64, |value, &byte| value << 8 | u64::from(byte))
    };
    let variant = shred.variant();
    assert_eq!(variant.to_byte(), bytes[64]);
    assert_eq!(variant.proof_size, FEC_SET_PROOF_SIZE);
    assert_eq!(shred.payload(), &bytes[..variant.payload_len()]);
    assert_eq!(shred.signature(), &bytes[..64]);
    assert_eq!(shred.slot(), le(65, 73));
    assert_eq!(u64::from(shred.index()), le(73, 77));
    assert_eq!(u64::from(shred.shred_version()), le(77, 79));
    assert_eq!(u64::from(shred.fec_set_index()), le(79, 83));
    assert_eq!(
        peek_slot_and_fec_set(bytes),
        Some((shred.slot(), shred.fec_set_index()))
    );
    assert_eq!(Some(shred.erasure_shard().len()), variant.shard_len());
    assert_eq!(
        shred.merkle_proof().len(),
        usize::from(variant.proof_size) * MERKLE_PROOF_ENTRY_LEN
    );
    assert_eq!(
        shred.chained_root().map(<[u8]>::len),
        variant.chained.then_some(32)
    );
    assert_eq!(
        shred.retransmitter_signature().map(<[u8]>::len),
        variant.resigned.then_some(64)
    );
    match shred.kind_header() {
        KindHeader::Data {
            parent_offset,
            flags,
            size,
        } => {
            assert_eq!(u64::from(parent_offset), le(83, 85));
            assert_eq!(flags, bytes[85]);
            assert_eq!(u64::from(size), le(86, 88));
            assert_eq!(shred.data().len(), usize::from(size) - DATA_HEADERS_LEN);
            assert_eq!(shred.data(), &bytes[DATA_HEADERS_LEN..usize::from(size)]);
            assert_eq!(
                shred.parent_slot(),
                Some(shred.slot() - u64::from(parent_offset))
            );
        }
        KindHeader::Code {
            num_data,
            num_coding,
            position,
        } => {
            assert_eq!(u64::from(num_data), le(83, 85));
            assert_eq!(u64::from(num_coding), le(85, 87));
            assert_eq!(u64::from(position), le(87, 89));
            assert!(shred.data().is_empty());
            assert_eq!(shred.parent_slot(), None);
        }
    }
}

/// Records end within `len / 2 + 1` steps (each consumes at least two bytes), lie inside the
/// input in order, and nothing follows an error.
fn check_records(bytes: &[u8]) {
    let input = bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len();
    let mut records = framing::records(bytes);
    let is_pcap = matches!(records.framing(), Framing::Pcap { .. });
    let mut previous_end = input.start;
    for _ in 0..bytes.len() / 2 + 1 {
        match records.next() {
            Some(Ok(record)) => {
                let start = record.payload.as_ptr() as usize;
                let end = start + record.payload.len();
                assert!(
                    previous_end <= start && end <= input.end,
                    "record outside the input"
                );
                previous_end = end;
                assert_eq!(record.timestamp_ns.is_some(), is_pcap);
            }
            Some(Err(_)) => break,
            None => return,
        }
    }
    assert_eq!(
        records.next(),
        None,
        "records went on past the bound, or past an error"
    );
}

/// A decoder with small bounds, fed one datagram at a time, checking every outcome.
struct DecoderRun {
    decoder: ShredDecoder,
    rx_ns: u64,
    emitted: u64,
    drain_each: bool,
    /// Incremental mode: transactions handed out per batch (slot, first index) not yet ended.
    handed_out: HashMap<(u64, u32), u64>,
}

/// Data shreds the slot stage refused after the set stage stored them: a second end of the slot,
/// a different copy of an index it holds, a slot already handed out whole.
fn slot_stage_refusals(decoder: &ShredDecoder) -> u64 {
    let counters = decoder.batch_counters();
    counters.duplicate_last_shreds
        + counters.conflicting_shreds_refused
        + counters.shreds_after_slot_done
}

impl DecoderRun {
    /// Bit 0: allow unchained variants; bit 1: require the fixtures' shred version; bit 2: two
    /// FEC sets in flight, so the fixture's five interleaved sets evict each other (else eight);
    /// bit 3: drain after every datagram; bit 4: trusted-feed mode (no authentication); bit 5:
    /// incremental deshredding (transactions as their bytes arrive) instead of whole batches.
    fn new(knobs: u8) -> Self {
        let bit = |n: u32| knobs >> n & 1 == 1;
        let config = DecoderConfig {
            shred_version: bit(1).then_some(SHRED_VERSION),
            parse: ParseOptions {
                allow_unchained: bit(0),
            },
            fec: FecConfig {
                max_sets_in_flight: if bit(2) { 2 } else { 8 },
                completed_sets_remembered: 4,
                authenticate: !bit(4),
                ..FecConfig::default()
            },
            deshred: DeshredConfig {
                max_slots_in_flight: 2,
            },
            slot_lookback: 8,
            max_slots_ahead: 64,
            window_reset_after_ns: 1_000_000,
            max_batch_bytes: 64 << 10,
            max_pending_batches: 2,
            incremental: IncrementalConfig {
                enabled: bit(5),
                max_open_streams: 4,
            },
        };
        let decoder = ShredDecoder::new(config, LeaderSchedule::Unchecked);
        Self {
            decoder,
            rx_ns: 1,
            emitted: 0,
            drain_each: bit(3),
            handed_out: HashMap::new(),
        }
    }

    fn ingest(&mut self, datagram: &[u8]) {
        let refusals_before = slot_stage_refusals(&self.decoder);
        let outcome = self.decoder.ingest(datagram, self.rx_ns);
        self.rx_ns += 1_000;
        let refused = slot_stage_refusals(&self.decoder) > refusals_before;
        self.check_outcome(datagram, outcome, refused);
        let config = *self.decoder.config();
        assert!(self.decoder.sets_in_flight() <= config.fec.max_sets_in_flight);
        assert!(self.decoder.pending_batches() <= config.max_pending_batches);
        if self.drain_each {
            self.drain();
        }
    }

    /// Unparseable datagrams are rejected with the parser's error; parseable ones report their
    /// own header and round-trip it; none is rejected for a reason the policy does not give. A
    /// stored data shred is held as sent unless the slot stage `refused` it (and counted that).
    fn check_outcome(&self, datagram: &[u8], outcome: ShredOutcome, refused: bool) {
        let config = self.decoder.config();
        let shred = match parse_shred(datagram, config.parse) {
            Ok(shred) => shred,
            Err(error) => {
                let slot = peek_slot_and_fec_set(datagram).map(|(slot, _)| slot);
                let reason = Rejection::Shred(error);
                assert_eq!(
                    outcome,
                    ShredOutcome::Rejected {
                        slot,
                        kind: None,
                        reason
                    }
                );
                return;
            }
        };
        check_header_round_trip(datagram, &shred);
        let wrong_version = config
            .shred_version
            .is_some_and(|v| v != shred.shred_version());
        match outcome {
            ShredOutcome::Stored {
                slot,
                fec_set_index,
                kind,
                completion: _,
            } => {
                assert!(!wrong_version);
                assert_eq!(
                    (slot, fec_set_index, kind),
                    (shred.slot(), shred.fec_set_index(), shred.kind())
                );
                if shred.is_data() && !refused {
                    let held = self.decoder.data_shred(slot, shred.index());
                    assert_eq!(
                        held,
                        Some(shred.payload()),
                        "a stored data shred is held as sent"
                    );
                }
            }
            ShredOutcome::Redundant { slot, kind } => {
                assert!(!wrong_version);
                assert_eq!((slot, kind), (shred.slot(), shred.kind()));
            }
            ShredOutcome::Rejected { slot, kind, reason } => {
                assert_eq!((slot, kind), (Some(shred.slot()), Some(shred.kind())));
                assert!(!reason.label().is_empty());
                assert!(
                    !matches!(reason, Rejection::Shred(_)),
                    "parsed, yet rejected: {reason}"
                );
                assert_eq!(
                    wrong_version,
                    matches!(reason, Rejection::WrongShredVersion { .. })
                );
            }
        }
    }

    fn drain(&mut self) {
        if self.decoder.config().incremental.enabled {
            self.drain_ready();
            return;
        }
        let max_batch_bytes = self.decoder.config().max_batch_bytes;
        while let Some(batch) = self.decoder.next_batch() {
            self.emitted += 1;
            assert!(batch.bytes.len() <= max_batch_bytes);
            assert!(batch.span.start_index <= batch.span.end_index);
            assert!(batch.first_rx_ns <= batch.completed_rx_ns);
            let entries = batch.entries;
            assert_eq!(entries.entries().count() as u64, entries.entry_count());
            let per_entry: u64 = entries
                .entries()
                .map(|e| e.transactions().count() as u64)
                .sum();
            assert_eq!(per_entry, entries.transaction_count());
            assert_eq!(
                entries.transactions().count() as u64,
                entries.transaction_count()
            );
        }
    }

    /// Incremental mode: every batch end reports the transactions handed out for its batch.
    fn drain_ready(&mut self) {
        while let Some(item) = self.decoder.next_ready() {
            match item {
                ReadyItem::Transaction(ready) => {
                    assert!(ready.first_rx_ns <= ready.completed_rx_ns);
                    assert!(ready.batch_start_index <= ready.completed_index);
                    *self
                        .handed_out
                        .entry((ready.slot, ready.batch_start_index))
                        .or_default() += 1;
                }
                ReadyItem::Marker(_) => {}
                ReadyItem::BatchEnd(end) => {
                    let span = end.span;
                    assert!(span.start_index <= span.end_index);
                    let key = (span.slot, span.start_index);
                    let transactions = self.handed_out.remove(&key).unwrap_or(0);
                    assert_eq!(transactions, end.transactions, "batch {key:?}");
                    self.emitted += u64::from(end.outcome.is_ok());
                }
            }
        }
    }

    fn finish(mut self) {
        self.drain();
        assert_eq!(self.decoder.pending_batches(), 0);
        assert_eq!(self.decoder.batch_counters().batches_emitted, self.emitted);
    }
}

/// One edit of a real shred.
#[derive(Debug, Clone)]
enum Mutation {
    /// XOR a byte anywhere (the index is scaled to the shred's length).
    Flip(prop::sample::Index, u8),
    /// Overwrite a header byte (signature excluded: it is not checked without a schedule).
    SetHeaderByte(usize, u8),
    Truncate(prop::sample::Index),
    Extend(Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<prop::sample::Index>(), 1u8..=255).prop_map(|(at, mask)| Mutation::Flip(at, mask)),
        3 => (64usize..89, any::<u8>()).prop_map(|(at, byte)| Mutation::SetHeaderByte(at, byte)),
        1 => any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        1 => vec(any::<u8>(), 1..64).prop_map(Mutation::Extend),
    ]
}

fn mutate(shred: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = shred.to_vec();
    for mutation in mutations {
        match mutation {
            Mutation::Flip(at, mask) if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes[at] ^= mask;
            }
            Mutation::SetHeaderByte(at, byte) if *at < bytes.len() => bytes[*at] = *byte,
            Mutation::Truncate(at) => bytes.truncate(at.index(bytes.len() + 1)),
            Mutation::Extend(tail) => bytes.extend_from_slice(tail),
            _ => {}
        }
    }
    bytes
}

/// Arbitrary datagrams, half of them shaped like shreds (a plausible variant byte and a shred's
/// length) so that the parser gets past its first checks.
fn datagram() -> impl Strategy<Value = Vec<u8>> {
    let variant = prop::sample::select(vec![0x96u8, 0xB6, 0x66, 0x76, 0x86, 0x46, 0xA5, 0x95]);
    let length = prop::sample::select(vec![1203usize, 1228, 1202, 1232, 1233]);
    let shaped = (variant, length, any::<u64>()).prop_flat_map(|(variant, length, seed)| {
        vec(any::<u8>(), length).prop_map(move |mut bytes| {
            bytes[64] = variant;
            // Small slot, index and fec_set_index values make more headers consistent.
            bytes[65..73].copy_from_slice(&(seed % 1000 + 1).to_le_bytes());
            bytes[73..77].copy_from_slice(&((seed >> 16) as u32 % 64).to_le_bytes());
            bytes[79..83].copy_from_slice(&0u32.to_le_bytes());
            bytes
        })
    });
    prop_oneof![vec(any::<u8>(), 0..1300), shaped]
}

/// Captures in all three framings: arbitrary bytes, and files whose framing is well formed around
/// arbitrary or UDP-shaped frames, then perhaps cut short.
fn capture() -> impl Strategy<Value = Vec<u8>> {
    let frame = prop_oneof![
        vec(any::<u8>(), 0..80),
        // IPv4 + UDP headers (UDP length from the byte after them), then a payload.
        vec(any::<u8>(), 0..80).prop_map(|payload| {
            let mut frame = vec![
                0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
            ];
            let udp_len = (8 + payload.len()) as u16;
            frame.extend_from_slice(&[0x1F, 0x90, 0x1F, 0x90]);
            frame.extend_from_slice(&udp_len.to_be_bytes());
            frame.extend_from_slice(&[0, 0]);
            frame.extend_from_slice(&payload);
            frame
        }),
    ];
    let link_type = prop::sample::select(vec![1u32, 101, 113, 228, 229, 0, 147]);
    let pcap = (link_type, vec(frame.clone(), 0..4)).prop_map(|(link_type, frames)| {
        let mut file = vec![0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0];
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&65_535u32.to_le_bytes());
        file.extend_from_slice(&link_type.to_le_bytes());
        for frame in frames {
            file.extend_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0]);
            file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            file.extend_from_slice(&frame);
        }
        file
    });
    let ar = vec(frame.clone(), 0..4).prop_map(|members| {
        let mut file = b"!<arch>\n".to_vec();
        for member in members {
            let header = format!(
                "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                "x",
                0,
                0,
                0,
                644,
                member.len()
            );
            file.extend_from_slice(header.as_bytes());
            file.extend_from_slice(&member);
            if file.len() % 2 == 1 {
                file.push(b'\n');
            }
        }
        file
    });
    let length_prefixed = vec(frame, 0..4).prop_map(|records| {
        let mut file = Vec::new();
        for record in records {
            file.extend_from_slice(&(record.len() as u16).to_le_bytes());
            file.extend_from_slice(&record);
        }
        file
    });
    let structured = (
        prop_oneof![length_prefixed, pcap, ar],
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(mut file, cut, do_cut)| {
            if do_cut {
                file.truncate(cut.index(file.len() + 1));
            }
            file
        });
    prop_oneof![vec(any::<u8>(), 0..600), structured]
}

/// The records of the lossy fixture of slot 361200000, loaded once.
fn fixture_records() -> &'static [Vec<u8>] {
    static RECORDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/shreds/slot-361200000.bin"
        );
        let bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{path}: {error}"));
        let records: Vec<Vec<u8>> = framing::records(&bytes)
            .map(|record| {
                record
                    .expect("the fixture's framing is valid")
                    .payload
                    .to_vec()
            })
            .collect();
        assert!(records.len() > 100, "fixture has {} records", records.len());
        records
    })
}
