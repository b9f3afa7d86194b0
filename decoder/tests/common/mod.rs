//! Shared helpers of the decoder's integration tests: fixture loading and a decode loop that
//! records everything the decoder produced.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use capture::framing;
use decoder::decoder::ShredOutcome;
use decoder::fec::Completion;
use decoder::{DecoderConfig, LeaderSchedule, ShredDecoder};

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

/// A data shred made by a test from range bytes, without signature or proof: what a set stage
/// hands a slot stage (`DataShredReady`) once a shred is authenticated.
#[derive(Debug, Clone)]
pub struct TestDataShred {
    pub slot: u64,
    pub index: u32,
    pub flags: u8,
    pub payload: Vec<u8>,
}

impl TestDataShred {
    pub fn ready(&self, first_rx_ns: u64, rx_ns: u64) -> decoder::DataShredReady<'_> {
        decoder::DataShredReady {
            slot: self.slot,
            index: self.index,
            flags: self.flags,
            first_rx_ns,
            rx_ns,
            payload: &self.payload,
        }
    }
}

/// Cuts each data-complete range into data shreds of at most `chunk` entry bytes, indexes from
/// `first_index` on; the last shred of each range carries DATA_COMPLETE, the slot's last also
/// LAST_SHRED_IN_SLOT. The size field (bytes 86..88) covers headers and data (docs/decoder.md, format §4).
pub fn shred_ranges(
    slot: u64,
    first_index: u32,
    ranges: &[Vec<u8>],
    chunk: usize,
) -> Vec<TestDataShred> {
    use decoder::shred::{DATA_HEADERS_LEN, FLAG_DATA_COMPLETE, FLAG_LAST_SHRED_IN_SLOT};
    let mut shreds = Vec::new();
    let mut index = first_index;
    for (range_number, range) in ranges.iter().enumerate() {
        let pieces: Vec<&[u8]> = range.chunks(chunk.max(1)).collect();
        for (piece_number, piece) in pieces.iter().enumerate() {
            let mut payload = vec![0u8; DATA_HEADERS_LEN];
            payload[65..73].copy_from_slice(&slot.to_le_bytes());
            payload[73..77].copy_from_slice(&index.to_le_bytes());
            let mut flags = 0;
            if piece_number + 1 == pieces.len() {
                flags = FLAG_DATA_COMPLETE;
                if range_number + 1 == ranges.len() {
                    flags = FLAG_LAST_SHRED_IN_SLOT;
                }
            }
            payload[85] = flags;
            payload[86..88]
                .copy_from_slice(&((DATA_HEADERS_LEN + piece.len()) as u16).to_le_bytes());
            payload.extend_from_slice(piece);
            shreds.push(TestDataShred {
                slot,
                index,
                flags,
                payload,
            });
            index += 1;
        }
    }
    shreds
}

/// A block-marker component built from docs/decoder.md, format §9a: zero entry count, version 1, variant,
/// u16 length, data.
pub fn marker_component(variant: u8, data: &[u8]) -> Vec<u8> {
    let mut out = 0u64.to_le_bytes().to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.push(variant);
    out.extend_from_slice(&(data.len() as u16).to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// Footer data in the validator's current layout: version 1, bank hash, producer time, user
/// agent, three absent certificates.
pub fn footer_data(producer_time_ns: u64, user_agent: &[u8]) -> Vec<u8> {
    let mut data = vec![1u8];
    data.extend_from_slice(&[0x5A; 32]);
    data.extend_from_slice(&producer_time_ns.to_le_bytes());
    data.push(user_agent.len() as u8);
    data.extend_from_slice(user_agent);
    data.extend_from_slice(&[0, 0, 0]);
    data
}

/// Header or update-parent data: version 1, parent slot, parent block id.
pub fn parent_data(parent_slot: u64, block_id: [u8; 32]) -> Vec<u8> {
    let mut data = vec![1u8];
    data.extend_from_slice(&parent_slot.to_le_bytes());
    data.extend_from_slice(&block_id);
    data
}
