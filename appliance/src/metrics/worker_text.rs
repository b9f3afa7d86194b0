//! The Prometheus text of one worker's counters (summed over the pool): shreds by outcome, FEC
//! sets, batches, block markers, DEX decoding and the stage latency histograms.

use ::stream::encode::DecodeStats;
use decoder::decoder::Rejection;
use decoder::dex::{DexError, DexProgram};
use front::exposition::{Kind, by_label, counter, family, sample};

use super::{Histogram, STAGES, WorkerCounters};

/// Shreds by outcome (rejections by reason, only reasons seen), FEC sets and chain links.
pub(super) fn render_shreds(worker: &WorkerCounters, out: &mut String) {
    counter(
        out,
        "appliance_shreds_stored_total",
        "Shreds authenticated and stored.",
        worker.stored,
    );
    counter(
        out,
        "appliance_shreds_redundant_total",
        "Shreds of already complete FEC sets.",
        worker.redundant,
    );
    let rejected = Rejection::LABELS
        .into_iter()
        .zip(worker.rejected)
        .filter(|(_, count)| *count > 0);
    by_label(
        out,
        "appliance_shreds_rejected_total",
        "Shreds dropped, by reason.",
        "reason",
        rejected,
    );
    let fec = &worker.fec;
    let sets = [
        ("completed", fec.sets_completed),
        ("recovered", fec.sets_recovered),
        ("failed", fec.sets_failed),
        ("evicted", fec.sets_evicted),
    ];
    by_label(
        out,
        "appliance_fec_sets_total",
        "FEC sets by outcome.",
        "outcome",
        sets,
    );
    counter(
        out,
        "appliance_data_shreds_recovered_total",
        "Data shreds rebuilt by Reed-Solomon.",
        fec.data_shreds_recovered,
    );
    let links = [
        ("verified", fec.chain_links_verified),
        ("broken", fec.chain_links_broken),
    ];
    by_label(
        out,
        "appliance_chain_links_total",
        "Chained Merkle root links checked.",
        "result",
        links,
    );
}

/// Entry batches by outcome, entries, transactions and what was published.
pub(super) fn render_batches(worker: &WorkerCounters, out: &mut String) {
    let batches = &worker.batches;
    let outcomes = [
        ("emitted", batches.batches_emitted),
        ("invalid", batches.batches_invalid),
        ("uncertain_rejected", batches.batches_uncertain_rejected),
        ("incomplete", batches.batches_incomplete),
        ("too_large", batches.batches_too_large),
        ("dropped_queue_full", batches.batches_dropped_queue_full),
    ];
    by_label(
        out,
        "appliance_entry_batches_total",
        "Entry batches by outcome.",
        "outcome",
        outcomes,
    );
    for (name, help, value) in [
        (
            "appliance_entries_total",
            "Entries deshredded.",
            worker.entries,
        ),
        (
            "appliance_transactions_total",
            "Transactions deshredded.",
            worker.transactions,
        ),
        (
            "appliance_updates_published_total",
            "Updates published to subscribers.",
            worker.updates_published,
        ),
        (
            "appliance_slot_notifications_total",
            "Slot notifications published.",
            worker.slot_notifications,
        ),
    ] {
        counter(out, name, help, value);
    }
    render_markers(worker, out);
}

/// Block markers by kind, footer notifications and the incremental deshredder's events.
fn render_markers(worker: &WorkerCounters, out: &mut String) {
    let batches = &worker.batches;
    by_label(
        out,
        "appliance_block_markers_total",
        "Block markers in the entry stream, by kind (not errors).",
        "kind",
        batches.markers.by_label(),
    );
    let events = [
        (
            "malformed_after_transactions",
            batches.batches_malformed_after_transactions,
        ),
        (
            "conflicting_shred_refused",
            batches.conflicting_shreds_refused,
        ),
        ("stream_unavailable", batches.streams_unavailable),
        ("stream_evicted", batches.streams_evicted),
        ("shred_after_slot_done", batches.shreds_after_slot_done),
    ];
    by_label(
        out,
        "appliance_incremental_events_total",
        "Incremental deshredding events: batches malformed after some of their transactions were \
         published, conflicting shreds refused, batches served whole for want of a stream, streams \
         evicted, shreds of a slot already handed out.",
        "event",
        events,
    );
    for (name, help, value) in [
        (
            "appliance_footer_notifications_total",
            "Footer notifications published (a slot's block footer).",
            worker.footer_notifications,
        ),
        (
            "appliance_transactions_before_malformed_batch_total",
            "Transactions published from entry batches that later turned out malformed (they stand).",
            worker.transactions_before_malformed_end,
        ),
    ] {
        counter(out, name, help, value);
    }
}

/// Supported-program instructions (decoded, and failures by reason: only reasons seen) and
/// aggregator routes.
pub(super) fn render_decode(decode: &DecodeStats, out: &mut String) {
    let name = "appliance_dex_instructions_decoded_total";
    let help = "Supported-program instructions decoded.";
    family(out, name, Kind::Counter, Some(help));
    for program in DexProgram::ALL {
        let count = decode.instructions_decoded[program.proto_number() as usize - 1];
        sample(out, name, &[("program", program.name())], count);
    }
    let name = "appliance_dex_instruction_failures_total";
    let help = "Supported-program instructions skipped or malformed.";
    family(out, name, Kind::Counter, Some(help));
    for program in DexProgram::ALL {
        let failures = &decode.instruction_failures[program.proto_number() as usize - 1];
        for (reason, count) in DexError::LABELS.iter().zip(failures) {
            if *count > 0 {
                let labels = [("program", program.name()), ("reason", *reason)];
                sample(out, name, &labels, count);
            }
        }
    }
    counter(
        out,
        "appliance_routes_decoded_total",
        "Aggregator routes wrapping a supported program.",
        decode.routes_decoded,
    );
    let legs = [
        ("located", decode.legs_by_location[0]),
        ("named_accounts_missing", decode.legs_by_location[1]),
        ("program_id_not_found", decode.legs_by_location[2]),
    ];
    by_label(
        out,
        "appliance_route_legs_total",
        "Route legs by how their accounts were found.",
        "location",
        legs,
    );
}

/// The stage latency histograms.
pub(super) fn render_latency(stage_latency: &[Histogram; STAGES.len()], out: &mut String) {
    let name = "appliance_stage_latency_seconds";
    let help = "Latency between ServerTiming stamps of published updates.";
    family(out, name, Kind::Histogram, Some(help));
    for (stage, histogram) in STAGES.iter().zip(stage_latency) {
        histogram.render(out, name, stage);
    }
}
