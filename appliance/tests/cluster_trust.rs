//! Trust only the slot's leader, end to end through the real process (issue 19): genuine fixture
//! shreds over UDP with the leader schedule from a stand-in cluster JSON-RPC are published once
//! over gRPC; forged sets (valid Merkle trees signed by another key) interleaved with them never
//! reach the subscriber and are counted; with the RPC down at start nothing is published until
//! it comes up; `--leader` accepts a fixed key and refuses the slots of other leaders; a restart
//! verifies from its first shred with the saved schedule while the RPC is down; a held schedule
//! survives the RPC going down mid-run; garbage and oversized answers are refused and retried;
//! the next epoch's schedule is held before its boundary; a schedule entry whose key is off the
//! curve costs only that leader's slots, from the RPC and from the saved file; the looping replay verifies its own
//! key unless `--trust-feed` is given.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;
mod trust_feed;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use testkit::cluster_rpc::{Behavior, ClusterStandin};

use trust_feed::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn genuine_slots_with_the_cluster_schedule_are_published_once() {
    let manifest = manifest();
    let standin = ClusterStandin::start(cluster(&manifest)).unwrap();
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    let health = wait_for_health(running.http, |body| body.contains("leader_schedule"));
    assert!(health.contains("\"trust_mode\":\"verified\""), "{health}");
    assert!(health.contains("\"epochs\":[836,837]"), "{health}");
    all_genuine_published_once(&running).await;
    assert_eq!(
        metric(running.http, "appliance_trust_mode{mode=\"verified\"} "),
        1
    );
    assert_eq!(
        metric(
            running.http,
            "appliance_leader_schedule_fetch_errors_total "
        ),
        0
    );
    assert!(standin.calls("getLeaderSchedule") >= 2);
    // The schedule survives a restart: the file is in the data directory.
    let stored = std::fs::read_to_string(data.path().join("leader-schedule.json")).unwrap();
    assert!(stored.contains("7EPbph2S7MU9vxdiTd8HwseuYN3pDnsy4xZiRBHBQFWF"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_sets_interleaved_never_reach_a_subscriber() {
    let manifest = manifest();
    let standin = ClusterStandin::start(cluster(&manifest)).unwrap();
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    wait_for_health(running.http, |body| body.contains("leader_schedule"));
    let mut updates = subscribe_pump(running.grpc).await;
    let all = slots(&manifest);
    // Each slot forged with the next slot's transactions, the forged shreds first.
    let mut datagrams = Vec::new();
    for (index, (slot, _)) in all.iter().enumerate() {
        let content = all[(index + 1) % all.len()].0;
        datagrams.extend(interleave(forged(*slot, content), genuine(*slot)));
    }
    let received = send_and_receive(running.udp, &mut updates, datagrams).await;
    assert_exactly(&received, &pump_signatures(&manifest, |_| true));
    std::thread::sleep(Duration::from_millis(300));
    let refused = metric(
        running.http,
        "appliance_shreds_rejected_total{reason=\"bad_signature\"} ",
    );
    assert!(refused > 0, "forged shreds counted as bad_signature");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_rpc_down_at_start_nothing_is_published_until_it_returns() {
    let manifest = manifest();
    let mut state = cluster(&manifest);
    state.behavior = Behavior::Down;
    let standin = ClusterStandin::start(state).unwrap();
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    let health = wait_for_health(running.http, |_| true);
    assert!(
        health.contains("verified") && !health.contains("leader_schedule"),
        "{health}"
    );
    let mut updates = subscribe_pump(running.grpc).await;
    let all = slots(&manifest);
    send(running.udp, &genuine(all[0].0));
    assert!(
        receive(&mut updates, Duration::from_secs(1))
            .await
            .is_empty()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        metric(
            running.http,
            "appliance_shreds_rejected_total{reason=\"unknown_leader\"} "
        ) > 0
    );
    assert!(
        metric(
            running.http,
            "appliance_leader_schedule_fetch_errors_total "
        ) > 0
    );
    assert_eq!(
        metric(running.http, "appliance_leader_schedule_age_seconds "),
        -1
    );

    standin.update(|state| state.behavior = Behavior::Up);
    wait_for_health(running.http, |body| body.contains("leader_schedule"));
    let rest: Vec<Vec<u8>> = all[1..]
        .iter()
        .flat_map(|(slot, _)| genuine(*slot))
        .collect();
    let received = send_and_receive(running.udp, &mut updates, rest).await;
    assert_exactly(
        &received,
        &pump_signatures(&manifest, |slot| slot != all[0].0),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_leader_key_verifies_its_slots_and_refuses_the_others() {
    let manifest = manifest();
    let all = slots(&manifest);
    let (first_leader, data) = (all[0].1.clone(), tempfile::tempdir().unwrap());
    let running = start(&["--leader", &first_leader], data.path());
    let health = wait_for_health(running.http, |_| true);
    assert_eq!(health, "{\"status\":\"ok\",\"trust_mode\":\"verified\"}");
    let mut updates = subscribe_pump(running.grpc).await;
    let datagrams = all_genuine();
    let received = send_and_receive(running.udp, &mut updates, datagrams).await;
    let leader_of: HashMap<u64, String> = all.iter().cloned().collect();
    let expected = pump_signatures(&manifest, |slot| leader_of[&slot] == first_leader);
    assert!(expected.len() < pump_signatures(&manifest, |_| true).len());
    assert_exactly(&received, &expected);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        metric(
            running.http,
            "appliance_shreds_rejected_total{reason=\"bad_signature\"} "
        ) > 0
    );
}

/// Sends every genuine fixture slot and checks each pump transaction arrives once.
async fn all_genuine_published_once(running: &Running) {
    let mut updates = subscribe_pump(running.grpc).await;
    let manifest = manifest();
    let datagrams = all_genuine();
    let received = send_and_receive(running.udp, &mut updates, datagrams).await;
    assert_exactly(&received, &pump_signatures(&manifest, |_| true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_the_rpc_down_verifies_from_its_first_shred_with_the_saved_schedule() {
    let manifest = manifest();
    let standin = ClusterStandin::start(cluster(&manifest)).unwrap();
    let data = tempfile::tempdir().unwrap();
    {
        let first = start(&["--rpc", &standin.url()], data.path());
        wait_for_health(first.http, |body| body.contains("leader_schedule"));
    }
    // The cluster's RPC is unreachable when the appliance comes back.
    standin.update(|state| state.behavior = Behavior::Down);
    let running = start(&["--rpc", &standin.url()], data.path());
    let health = wait_for_health(running.http, |body| body.contains("leader_schedule"));
    assert!(health.contains("\"epochs\":[836,837]"), "{health}");
    all_genuine_published_once(&running).await;
    assert_eq!(
        metric(
            running.http,
            "appliance_shreds_rejected_total{reason=\"unknown_leader\"} "
        ),
        0
    );
}

/// 32 bytes that are no point of the curve (y = 2), in base58: a schedule entry no key can be.
const OFF_CURVE_KEY: &str = "8opHzTAnfzRpPEx21XtnrVTX28YQuCpAjcn1PczScKh";

/// The genuine shreds of every fixture slot but `skipped`, sent and received once each; the
/// refused leader and its one slot counted.
async fn all_but_one_slot_published_once(running: &Running, skipped: u64) {
    let manifest = manifest();
    let mut updates = subscribe_pump(running.grpc).await;
    let datagrams = all_genuine();
    let received = send_and_receive(running.udp, &mut updates, datagrams).await;
    assert_exactly(
        &received,
        &pump_signatures(&manifest, |slot| slot != skipped),
    );
    assert_eq!(
        metric(running.http, "appliance_leader_schedule_refused_leaders "),
        1
    );
    assert_eq!(
        metric(running.http, "appliance_leader_schedule_refused_slots "),
        1
    );
    let unknown = "appliance_shreds_rejected_total{reason=\"unknown_leader\"} ";
    assert!(
        metric(running.http, unknown) > 0,
        "the leaderless slot's shreds are refused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_entry_off_the_curve_costs_only_its_own_slots() {
    let manifest = manifest();
    let skipped = slots(&manifest)[0].0;
    let state = cluster(&manifest).with_leader(skipped..=skipped, OFF_CURVE_KEY);
    let standin = ClusterStandin::start(state).unwrap();
    let data = tempfile::tempdir().unwrap();
    {
        let running = start(&["--rpc", &standin.url()], data.path());
        wait_for_health(running.http, |body| body.contains("leader_schedule"));
        all_but_one_slot_published_once(&running, skipped).await;
    }
    // The persisted file holds the same answer: read back with the RPC down, likewise.
    let stored = std::fs::read_to_string(data.path().join("leader-schedule.json")).unwrap();
    assert!(stored.contains(OFF_CURVE_KEY));
    standin.update(|state| state.behavior = Behavior::Down);
    let running = start(&["--rpc", &standin.url()], data.path());
    wait_for_health(running.http, |body| body.contains("leader_schedule"));
    all_but_one_slot_published_once(&running, skipped).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_rpc_down_mid_run_the_held_schedule_keeps_verifying() {
    let manifest = manifest();
    let standin = ClusterStandin::start(cluster(&manifest)).unwrap();
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    wait_for_health(running.http, |body| body.contains("leader_schedule"));
    standin.update(|state| state.behavior = Behavior::Down);
    // The fetcher's next pass (every 5 s) fails and is counted; the schedule it holds stays.
    let deadline = Instant::now() + Duration::from_secs(20);
    while metric(
        running.http,
        "appliance_leader_schedule_fetch_errors_total ",
    ) == 0
    {
        assert!(
            Instant::now() < deadline,
            "the failed fetch was not counted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    all_genuine_published_once(&running).await;
    // Back up: the errors stop growing.
    standin.update(|state| state.behavior = Behavior::Up);
    let calls = standin.calls("getEpochInfo");
    while standin.calls("getEpochInfo") == calls {
        assert!(Instant::now() < deadline + Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(100));
    }
    let errors = metric(
        running.http,
        "appliance_leader_schedule_fetch_errors_total ",
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        metric(
            running.http,
            "appliance_leader_schedule_fetch_errors_total "
        ),
        errors
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_oversized_answers_are_refused_and_the_rpc_is_asked_again() {
    let manifest = manifest();
    let mut state = cluster(&manifest);
    state.behavior = Behavior::Garbage;
    let standin = ClusterStandin::start(state).unwrap();
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    wait_for_health(running.http, |_| true);
    let errors = |http| metric(http, "appliance_leader_schedule_fetch_errors_total ");
    let deadline = Instant::now() + Duration::from_secs(20);
    while errors(running.http) == 0 {
        assert!(Instant::now() < deadline, "garbage not counted");
        std::thread::sleep(Duration::from_millis(50));
    }
    // An answer announcing more than `[cluster] max_response_mb` (64 MiB): refused unread.
    standin.update(|state| state.behavior = Behavior::Oversized(65 << 20));
    let before = errors(running.http);
    while errors(running.http) == before {
        assert!(Instant::now() < deadline, "oversized answer not counted");
        std::thread::sleep(Duration::from_millis(50));
    }
    let health = wait_for_health(running.http, |_| true);
    assert!(!health.contains("leader_schedule"), "{health}");
    standin.update(|state| state.behavior = Behavior::Up);
    wait_for_health(running.http, |body| body.contains("leader_schedule"));
    all_genuine_published_once(&running).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_an_epoch_boundary_the_next_schedule_is_there_before_it_is_needed() {
    // Epochs of four slots: fixture slots 0..=3 are epoch E, 6 and 7 are E + 1.
    let manifest = manifest();
    let first = slots(&manifest)[0].0;
    let epoch = first / 4;
    let mut state = cluster(&manifest).with_leader(first + 8..=first + 11, &slots(&manifest)[0].1);
    state.slots_per_epoch = 4;
    state.slot = first + 1;
    let standin = ClusterStandin::start(state).unwrap();
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    let health = wait_for_health(running.http, |body| body.contains("leader_schedule"));
    assert!(
        health.contains(&format!("\"epochs\":[{epoch},{}]", epoch + 1)),
        "{health}"
    );
    // Both epochs' slots verify: the next epoch was fetched with the current one.
    all_genuine_published_once(&running).await;
    // The cluster moves into E + 1: E + 2 is fetched (E kept for late shreds).
    standin.update(|state| state.slot = first + 5);
    wait_for_health(running.http, |body| {
        body.contains(&format!("\"epochs\":[{epoch},{}]", epoch + 2))
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_majority_shred_version_of_the_cluster_filters_shreds() {
    // Two of three nodes on shred version 7: the fixtures' shreds are of another cluster.
    let manifest = manifest();
    let mut state = cluster(&manifest);
    let fixture_version = state.node_shred_versions[0];
    state.node_shred_versions = vec![7, fixture_version, 7];
    let standin = ClusterStandin::start(state).unwrap();
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    wait_for_health(running.http, |body| body.contains("leader_schedule"));
    let mut updates = subscribe_pump(running.grpc).await;
    send(running.udp, &genuine(slots(&manifest)[0].0));
    assert!(
        receive(&mut updates, Duration::from_secs(1))
            .await
            .is_empty()
    );
    std::thread::sleep(Duration::from_millis(300));
    let refused = "appliance_shreds_rejected_total{reason=\"wrong_shred_version\"} ";
    assert!(metric(running.http, refused) > 0);
}

/// The looping replay (no source given) verifies its own key; `--trust-feed` turns that off, so the
/// latency harness can compare both modes on the same replay (docs/decisions.md, trust modes).
#[test]
fn the_replay_verifies_its_own_key_unless_the_feed_is_trusted() {
    for (extra, mode) in [(&[][..], "verified"), (&["--trust-feed"][..], "trusted")] {
        let data = tempfile::tempdir().unwrap();
        let flags = [&["--replay-rate", "2000"], extra].concat();
        let (_appliance, _grpc, http) = process::start_replay(&flags, data.path());
        let health = wait_for_health(http, |_| true);
        let expected = format!("\"trust_mode\":\"{mode}\"");
        assert!(health.contains(&expected), "{extra:?}: {health}");
        // Either way the replay's own shreds are published, none refused.
        let deadline = Instant::now() + Duration::from_secs(20);
        while metric(http, "appliance_updates_published_total ") == 0 {
            assert!(Instant::now() < deadline, "{extra:?}: nothing published");
            std::thread::sleep(Duration::from_millis(100));
        }
        let refused = metric(
            http,
            "appliance_shreds_rejected_total{reason=\"bad_signature\"} ",
        );
        assert_eq!(refused, 0, "{extra:?}");
    }
}
