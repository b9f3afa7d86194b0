//! `appliance decode FILE`: decodes a shred capture (length-prefixed, pcap or `ar`, detected from
//! its first bytes) and prints one JSON line per entry, then one summary line per slot.
//!
//! ```text
//! {"slot":N,"batch_start":N,"entry_in_batch":N,"num_hashes":N,"hash":"<b58>","signatures":[..]}
//! {"slot":N,"summary":{"data_shreds":N,"code_shreds":N,"recovered":N,"fec_sets":N,
//!   "batches":N,"entries":N,"transactions":N,"rejected":{"<reason>":N}}}
//! ```
//! Entries are printed as their batch completes, so batches of one slot may interleave with
//! another's when the capture does. `data_shreds` / `code_shreds` count the well-formed,
//! non-duplicate shreds of each kind read for the slot (including ones not needed because their
//! set was already complete); `rejected` counts every other record by reason, so the three add up
//! to the records attributed to the slot. Records whose slot cannot be read at all (shorter than
//! a common header) are reported on a last `{"unattributed":{...}}` line, which is printed only
//! when there are such records. Exit status is 0 whenever the file could be read.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::Context;
use capture::framing;
use decoder::decoder::ShredOutcome;
use decoder::fec::Completion;
use decoder::shred::ShredKind;
use decoder::{Batch, DecoderConfig, LeaderSchedule, ShredDecoder};
use serde::Serialize;

/// Options of the decode command.
pub struct DecodeOptions<'a> {
    pub path: &'a Path,
    pub leader: Option<&'a str>,
    pub shred_version: Option<u16>,
    pub allow_unchained: bool,
}

#[derive(Debug, Default, Serialize)]
struct SlotSummary {
    data_shreds: u64,
    code_shreds: u64,
    recovered: u64,
    fec_sets: u64,
    batches: u64,
    entries: u64,
    transactions: u64,
    rejected: BTreeMap<&'static str, u64>,
}

#[derive(Serialize)]
struct EntryLine<'a> {
    slot: u64,
    batch_start: u32,
    entry_in_batch: u64,
    num_hashes: u64,
    hash: String,
    signatures: &'a [String],
}

#[derive(Serialize)]
struct SummaryLine<'a> {
    slot: u64,
    summary: &'a SlotSummary,
}

#[derive(Serialize)]
struct UnattributedLine<'a> {
    unattributed: &'a SlotSummary,
}

/// Runs the command, writing JSON lines to `out`.
pub fn run(options: &DecodeOptions<'_>, out: &mut impl Write) -> anyhow::Result<()> {
    let bytes = std::fs::read(options.path)
        .with_context(|| format!("reading {}", options.path.display()))?;
    let leaders = match options.leader {
        Some(text) => LeaderSchedule::Fixed(
            LeaderSchedule::key_from_base58(text).context("--leader is not a usable public key")?,
        ),
        None => LeaderSchedule::Unchecked,
    };
    let mut config = DecoderConfig {
        shred_version: options.shred_version,
        ..Default::default()
    };
    config.parse.allow_unchained = options.allow_unchained;
    let mut decoder = ShredDecoder::new(config, leaders);
    let mut summaries: BTreeMap<u64, SlotSummary> = BTreeMap::new();
    let mut unattributed = SlotSummary::default();
    let mut signatures = Vec::new();
    for record in framing::records(&bytes) {
        let record = match record {
            Ok(record) => record,
            Err(error) => {
                *unattributed.rejected.entry(error.label()).or_default() += 1;
                break;
            }
        };
        let outcome = decoder.ingest(record.payload, record.timestamp_ns.unwrap_or(0));
        count_outcome(outcome, &mut summaries, &mut unattributed);
        while let Some(batch) = decoder.next_batch() {
            let summary = summaries.entry(batch.span.slot).or_default();
            write_batch(&batch, summary, &mut signatures, out)?;
        }
    }
    for (slot, summary) in &summaries {
        serde_json::to_writer(
            &mut *out,
            &SummaryLine {
                slot: *slot,
                summary,
            },
        )?;
        out.write_all(b"\n")?;
    }
    if !unattributed.rejected.is_empty() {
        serde_json::to_writer(
            &mut *out,
            &UnattributedLine {
                unattributed: &unattributed,
            },
        )?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

fn count_outcome(
    outcome: ShredOutcome,
    summaries: &mut BTreeMap<u64, SlotSummary>,
    unattributed: &mut SlotSummary,
) {
    match outcome {
        ShredOutcome::Stored {
            slot,
            kind,
            completion,
            ..
        } => {
            let summary = summaries.entry(slot).or_default();
            count_kind(summary, kind);
            match completion {
                Some(Completion::Complete { recovered_data }) => {
                    summary.fec_sets += 1;
                    summary.recovered += u64::from(recovered_data.count_ones());
                }
                Some(Completion::Failed(error)) => {
                    *summary.rejected.entry(error.label()).or_default() += 1;
                }
                None => {}
            }
        }
        ShredOutcome::Redundant { slot, kind } => {
            count_kind(summaries.entry(slot).or_default(), kind)
        }
        ShredOutcome::Rejected { slot, reason, .. } => {
            let summary = match slot {
                Some(slot) => summaries.entry(slot).or_default(),
                None => unattributed,
            };
            *summary.rejected.entry(reason.label()).or_default() += 1;
        }
    }
}

fn count_kind(summary: &mut SlotSummary, kind: ShredKind) {
    match kind {
        ShredKind::Data => summary.data_shreds += 1,
        ShredKind::Code => summary.code_shreds += 1,
    }
}

fn write_batch(
    batch: &Batch<'_>,
    summary: &mut SlotSummary,
    signatures: &mut Vec<String>,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    summary.batches += 1;
    for (entry_in_batch, entry) in batch.entries.entries().enumerate() {
        signatures.clear();
        signatures.extend(
            entry
                .transactions()
                .map(|tx| bs58::encode(tx.first_signature()).into_string()),
        );
        summary.entries += 1;
        summary.transactions += entry.transaction_count;
        let line = EntryLine {
            slot: batch.span.slot,
            batch_start: batch.span.start_index,
            entry_in_batch: entry_in_batch as u64,
            num_hashes: entry.num_hashes,
            hash: bs58::encode(entry.hash).into_string(),
            signatures,
        };
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
