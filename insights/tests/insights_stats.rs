//! Per-block statistics and backfill against the deterministic fixtures: every figure is compared
//! with the values `fixtures/insights/generate.py` computed from its own transaction model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod insights_support;

use std::sync::Arc;

use insights::Limits;
use insights::backfill::{Progress, ProgressBar, backfill};
use insights::block_stats::BlockStats;
use insights::figures::window_figures;
use insights::from_archive::stats_from_archive_block;
use insights::from_rpc::stats_from_block_json;
use insights::store::Store;
use insights_support::{
    MemoryArchive, archive_block, assert_close, assert_matches, block_json, expected,
};
use serde_json::Value;

fn produced_slots(expected: &Value) -> Vec<u64> {
    expected["produced_slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect()
}

#[test]
fn per_block_statistics_match_the_generator() {
    let expected = expected();
    for block in expected["blocks"].as_array().unwrap() {
        let slot = block["slot"].as_u64().unwrap();
        let stats = stats_from_block_json(slot, &block_json(slot)).unwrap();
        assert_eq!(
            stats.txs.len() as u64,
            block["non_vote"].as_u64().unwrap(),
            "non-vote count of {slot}"
        );
        assert_eq!(
            u64::from(stats.vote_count),
            block["votes"].as_u64().unwrap(),
            "votes of {slot}"
        );
        assert_eq!(
            stats.block_cost,
            block["block_cost"].as_u64().unwrap(),
            "block cost of {slot}"
        );
        assert_eq!(
            stats.busiest_account_cu,
            block["busiest_account_cu"].as_u64().unwrap(),
            "busiest of {slot}"
        );
        assert_eq!(
            stats.failed_count() as u64,
            block["failed"].as_u64().unwrap(),
            "failed of {slot}"
        );
    }
}

#[test]
fn votes_only_block_has_no_figures_but_counts_votes() {
    // Slot 1031 holds only simple votes (generator): nothing but the vote count.
    let stats = stats_from_block_json(1031, &block_json(1031)).unwrap();
    assert!(stats.txs.is_empty());
    assert!(stats.vote_count >= 3);
    assert_eq!(stats.block_cost, 0);
    assert_eq!(stats.busiest_account, None);
    assert!(stats.programs.is_empty());
}

#[test]
fn archive_blocks_give_the_same_statistics_as_getblock_json() {
    for slot in produced_slots(&expected()) {
        let from_json = stats_from_block_json(slot, &block_json(slot)).unwrap();
        let from_archive = stats_from_archive_block(&archive_block(slot).unwrap()).unwrap();
        assert_eq!(from_json, from_archive, "slot {slot}");
    }
}

#[test]
fn window_figures_match_every_expected_snapshot() {
    let expected = expected();
    let limits = Limits::default();
    let blocks: Vec<Arc<BlockStats>> = produced_slots(&expected)
        .into_iter()
        .map(|slot| Arc::new(stats_from_block_json(slot, &block_json(slot)).unwrap()))
        .collect();
    let history = expected["history"].as_array().unwrap();
    assert_eq!(history.len(), blocks.len() - 49);
    for (end, snapshot) in (49..blocks.len()).zip(history) {
        let figures = window_figures(&blocks[end - 49..=end], &limits).unwrap();
        let what = format!("window ending {}", blocks[end].slot);
        assert_eq!(
            figures.slot_range.start,
            snapshot["slot_range"]["start"].as_u64().unwrap(),
            "{what}"
        );
        assert_eq!(
            figures.slot_range.end,
            snapshot["slot_range"]["end"].as_u64().unwrap(),
            "{what}"
        );
        assert_eq!(
            figures.tx_count,
            snapshot["tx_count"].as_u64().unwrap(),
            "{what}"
        );
        assert_close(
            &figures.avg_compute_units.into(),
            &snapshot["avg_compute_units"],
            &what,
        );
        assert_close(
            &figures.avg_priority_fee.into(),
            &snapshot["avg_priority_fee"],
            &what,
        );
        assert_eq!(
            figures.median_priority_fee,
            snapshot["median_priority_fee"].as_u64().unwrap(),
            "{what}"
        );
        assert_eq!(
            figures.p75_priority_fee,
            snapshot["p75_priority_fee"].as_u64().unwrap(),
            "{what}"
        );
        assert_eq!(
            figures.p90_priority_fee,
            snapshot["p90_priority_fee"].as_u64().unwrap(),
            "{what}"
        );
        assert_eq!(
            figures.p99_priority_fee,
            snapshot["p99_priority_fee"].as_u64().unwrap(),
            "{what}"
        );
        assert_close(
            &figures.success_rate.into(),
            &snapshot["success_rate"],
            &what,
        );
        assert_close(
            &figures.congestion_score.into(),
            &snapshot["congestion_score"],
            &what,
        );
        assert_eq!(
            figures.congestion_level,
            snapshot["congestion"]["level"].as_str().unwrap(),
            "{what}"
        );
        let factors = serde_json::to_value(figures.factors).unwrap();
        assert_matches(&factors, &snapshot["congestion"]["factors"], &what);
        let top = serde_json::to_value(&figures.top_programs).unwrap();
        assert_matches(&top, &snapshot["top_programs"], &what);
    }
}

#[test]
fn backfill_from_the_archive_writes_every_snapshot_with_progress() {
    let expected = expected();
    let archive = MemoryArchive::from_fixtures();
    let dir = tempdir();
    let store = Store::open(&dir.join("insights.redb")).unwrap();
    let mut reports: Vec<Progress> = Vec::new();
    let mut bar_text = Vec::new();
    let mut bar = ProgressBar::new(&mut bar_text);
    // Backfill the second half only: the first windows are filled from the lead-in before `from`.
    let history = expected["history"].as_array().unwrap();
    let from = history[10]["slot_range"]["end"].as_u64().unwrap();
    let progress = backfill(
        &archive,
        &store,
        &Limits::default(),
        from,
        1089,
        &mut |progress| {
            reports.push(*progress);
            bar.update(progress);
        },
    )
    .unwrap();
    assert_eq!(progress.snapshots, 21);
    assert_eq!(progress.blocks + progress.skipped, 1089 - from + 1);
    assert!(reports.windows(2).all(|pair| pair[0].slot < pair[1].slot));
    assert_eq!(reports.last().unwrap().fraction(), 1.0);
    let text = String::from_utf8(bar_text).unwrap();
    assert!(text.contains("100.0%"), "{text}");
    let stored = store.snapshots(0, u64::MAX, 1_000).unwrap().unwrap();
    assert_eq!(stored.len(), 21);
    for (body, snapshot) in stored.iter().zip(&history[10..]) {
        let actual: Value = serde_json::from_slice(body).unwrap();
        let mut want = snapshot.clone();
        want.as_object_mut().unwrap().remove("congestion");
        assert_matches(&actual, &want, "backfilled snapshot");
    }
}

#[test]
fn backfill_rejects_a_reversed_range() {
    let archive = MemoryArchive::from_fixtures();
    let dir = tempdir();
    let store = Store::open(&dir.join("insights.redb")).unwrap();
    let error = backfill(&archive, &store, &Limits::default(), 10, 5, &mut |_| {}).unwrap_err();
    assert_eq!(error.label(), "backfill_range");
}

#[test]
fn malformed_block_json_is_an_error_not_a_panic() {
    for body in [
        &b"{"[..],
        b"[]",
        b"{\"parentSlot\":1,\"transactions\":[{\"transaction\":{}}]}",
    ] {
        assert!(stats_from_block_json(1, body).is_err());
    }
    // A program index outside the keys.
    let body = br#"{"parentSlot":1,"transactions":[{"meta":null,"transaction":{"signatures":["x"],"message":{"accountKeys":["11111111111111111111111111111111"],"header":{"numRequiredSignatures":1,"numReadonlySignedAccounts":0,"numReadonlyUnsignedAccounts":0},"instructions":[{"programIdIndex":7,"accounts":[],"data":""}],"recentBlockhash":"x"}}}]}"#;
    assert_eq!(
        stats_from_block_json(1, body).unwrap_err().label(),
        "malformed_transaction"
    );
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "insights-test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
