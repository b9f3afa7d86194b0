//! Shared helpers of the decoder's integration tests: fixture loading and a decode loop that
//! records everything the decoder produced.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use decoder::decoder::ShredOutcome;
use decoder::fec::Completion;
use decoder::{DecoderConfig, LeaderSchedule, ShredDecoder, framing};

pub fn fixture_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(relative)
}

pub fn read_fixture(relative: &str) -> Vec<u8> {
    std::fs::read(fixture_path(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

pub fn b58(bytes: &[u8]) -> String {
    bs58::encode(bytes).into_string()
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of a lowercase hex string.
pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// One decoded entry, in a comparable form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedEntry {
    pub num_hashes: u64,
    pub hash: String,
    pub signatures: Vec<String>,
}

/// One emitted batch.
#[derive(Debug, Clone)]
pub struct DecodedBatch {
    pub slot: u64,
    pub start_index: u32,
    pub end_index: u32,
    pub start_certain: bool,
    pub bytes: Vec<u8>,
    pub entries: Vec<DecodedEntry>,
    pub transaction_count: u64,
}

/// Everything a run over a capture produced.
#[derive(Debug, Default)]
pub struct Run {
    pub batches: Vec<DecodedBatch>,
    pub rejected: BTreeMap<&'static str, u64>,
    pub stored: u64,
    pub redundant: u64,
    pub sets_completed: u64,
    pub data_recovered: u64,
}

pub fn leader(base58: &str) -> LeaderSchedule {
    LeaderSchedule::Fixed(LeaderSchedule::key_from_base58(base58).unwrap())
}

/// Drains every batch the decoder has ready.
pub fn drain(decoder: &mut ShredDecoder, run: &mut Run) {
    while let Some(batch) = decoder.next_batch() {
        let entries = batch
            .entries
            .entries()
            .map(|entry| DecodedEntry {
                num_hashes: entry.num_hashes,
                hash: b58(entry.hash),
                signatures: entry
                    .transactions()
                    .map(|tx| b58(tx.first_signature()))
                    .collect(),
            })
            .collect();
        run.batches.push(DecodedBatch {
            slot: batch.span.slot,
            start_index: batch.span.start_index,
            end_index: batch.span.end_index,
            start_certain: batch.span.start_certain,
            bytes: batch.bytes.to_vec(),
            entries,
            transaction_count: batch.entries.transaction_count(),
        });
    }
}

pub fn note(run: &mut Run, outcome: ShredOutcome) {
    match outcome {
        ShredOutcome::Stored { completion, .. } => {
            run.stored += 1;
            if let Some(Completion::Complete { recovered_data }) = completion {
                run.sets_completed += 1;
                run.data_recovered += u64::from(recovered_data.count_ones());
            }
        }
        ShredOutcome::Redundant { .. } => run.redundant += 1,
        ShredOutcome::Rejected { reason, .. } => {
            *run.rejected.entry(reason.label()).or_default() += 1
        }
    }
}

/// Decodes every record of a capture (any framing) with a fresh decoder.
pub fn decode_capture(bytes: &[u8], config: DecoderConfig, leaders: LeaderSchedule) -> Run {
    let mut decoder = ShredDecoder::new(config, leaders);
    let mut run = Run::default();
    for record in framing::records(bytes) {
        let record = record.expect("framing");
        let outcome = decoder.ingest(record.payload, record.timestamp_ns.unwrap_or(0));
        note(&mut run, outcome);
        drain(&mut decoder, &mut run);
    }
    run
}
