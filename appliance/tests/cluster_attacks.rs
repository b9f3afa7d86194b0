//! The attacks of issue 19, each against the real process over UDP and gRPC, in verified mode
//! (leader schedule from the stand-in cluster) and in trusted mode (`--trust-feed`): one forged
//! shred far ahead, a forged first datagram at slot 10^12, altered shreds of a set sent before the
//! real ones, a junk flood with the real slots interleaved. Every genuine transaction is
//! published exactly once and nothing else. On a trusted feed a forged set that confirms far
//! ahead costs at most the window reset time (2 s) of decoding; a leader's second version of a
//! set is never published, and every subscriber is told once per set with both roots.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;
mod trust_feed;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use capture::reslot::Reslotter;
use ed25519_dalek::SigningKey;
use stream_proto::stream::subscribe_update::Update;
use testkit::cluster_rpc::ClusterStandin;
use testkit::shred_attacks::{Rng, junk, with_slot};
use tokio_stream::StreamExt;

use trust_feed::*;

const FIRST_SLOT: u64 = 361_200_000;

/// How the appliance learns who may sign.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// `--rpc` to the stand-in cluster with the fixtures' leaders.
    Verified,
    /// `--trust-feed`: Merkle proofs only.
    Trusted,
}

/// The appliance in `mode`, ready (schedule installed when verified). The stand-in lives as long
/// as the returned guard.
fn start_in(mode: Mode) -> (Running, Option<ClusterStandin>, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    match mode {
        Mode::Verified => {
            let standin = ClusterStandin::start(cluster(&manifest())).unwrap();
            let running = start(&["--rpc", &standin.url()], data.path());
            wait_for_health(running.http, |body| body.contains("leader_schedule"));
            (running, Some(standin), data)
        }
        Mode::Trusted => {
            let running = start(&["--trust-feed"], data.path());
            let health = wait_for_health(running.http, |_| true);
            assert!(health.contains("\"trust_mode\":\"trusted\""), "{health}");
            (running, None, data)
        }
    }
}

/// Sends `datagrams` to a fresh appliance in `mode` and returns what a pump subscriber received,
/// with the running process for its metrics.
async fn attack(mode: Mode, datagrams: Vec<Vec<u8>>) -> (Running, Vec<(Vec<u8>, u64)>) {
    let (running, _standin, _data) = start_in(mode);
    let mut updates = subscribe_pump(running.grpc).await;
    let received = send_and_receive(running.udp, &mut updates, datagrams).await;
    (running, received)
}

/// The value of a `appliance_shreds_rejected_total` label, once the workers flushed it.
fn rejected(running: &Running, reason: &str) -> i64 {
    std::thread::sleep(Duration::from_millis(300));
    let prefix = format!("appliance_shreds_rejected_total{{reason=\"{reason}\"}} ");
    metric(running.http, &prefix)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_far_ahead_forged_shred_moves_nothing() {
    let genuine = all_genuine();
    for mode in [Mode::Verified, Mode::Trusted] {
        // After the first genuine set opened the window: a real shred moved 2,048 slots ahead.
        let mut datagrams = genuine.clone();
        datagrams.insert(64, with_slot(&genuine[70], FIRST_SLOT + 2_048));
        let (running, received) = attack(mode, datagrams).await;
        assert_exactly(&received, &pump_signatures(&manifest(), |_| true));
        assert_eq!(rejected(&running, "stale_slot"), 0, "{mode:?}");
        if mode == Mode::Verified {
            // No leader is scheduled there.
            assert_eq!(rejected(&running, "unknown_leader"), 1);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_first_datagram_at_slot_ten_to_the_twelve_locks_nothing_out() {
    let genuine = all_genuine();
    for mode in [Mode::Verified, Mode::Trusted] {
        let mut datagrams = vec![with_slot(&genuine[3], 1_000_000_000_000)];
        datagrams.extend(genuine.iter().cloned());
        let (running, received) = attack(mode, datagrams).await;
        assert_exactly(&received, &pump_signatures(&manifest(), |_| true));
        assert_eq!(rejected(&running, "stale_slot"), 0, "{mode:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altered_shreds_sent_before_the_real_ones_do_not_claim_their_set() {
    let slot = FIRST_SLOT + 2;
    let real = genuine(slot);
    let mut rng = Rng(0x5eed);
    // Six shreds of the slot's first set, each with one entry byte flipped: six other roots.
    let altered: Vec<Vec<u8>> = (0..6)
        .map(|i| {
            let mut shred = real[i * 5].clone();
            shred[88 + rng.below(800)] ^= 0x10;
            shred
        })
        .collect();
    for mode in [Mode::Verified, Mode::Trusted] {
        let datagrams = altered.iter().chain(&real).cloned().collect();
        let (running, received) = attack(mode, datagrams).await;
        assert_exactly(&received, &pump_signatures(&manifest(), |s| s == slot));
        if mode == Mode::Verified {
            assert_eq!(rejected(&running, "bad_signature"), 6);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junk_flood_with_real_slots_interleaved_changes_nothing() {
    let genuine = all_genuine();
    let flood = junk(&genuine, &mut Rng(0xfeed_f00d), genuine.len());
    for mode in [Mode::Verified, Mode::Trusted] {
        // Junk first, so it reaches sets before their genuine shreds do.
        let (_running, received) = attack(mode, interleave(flood.clone(), genuine.clone())).await;
        assert_exactly(&received, &pump_signatures(&manifest(), |_| true));
    }
}

/// Where the forged set anchors the window.
const POISON_SLOT: u64 = 1_000_000_000_000;

/// The window reset time of the decoder's default configuration (docs/trust.md).
const WINDOW_RESET: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_feed_recovers_from_a_forged_set_far_ahead_within_the_reset_time() {
    let (running, _standin, _data) = start_in(Mode::Trusted);
    let mut updates = subscribe_pump(running.grpc).await;
    // A forged, self-consistent set far ahead: its first two shreds confirm it on a trusted feed
    // and anchor the window there.
    let poisoned_at = Instant::now();
    send(running.udp, &forged(POISON_SLOT, FIRST_SLOT)[..2]);
    // The genuine feed right after it: refused as stale while the window is poisoned.
    send(running.udp, &genuine(FIRST_SLOT));
    // (On a trusted feed the forged set's own transactions may go out, per transaction: two
    // consistent shreds confirm it. None of the genuine slot's can.)
    let early = receive(&mut updates, Duration::from_millis(500)).await;
    assert!(
        early.iter().all(|(_, slot)| *slot == POISON_SLOT),
        "a genuine transaction published below a poisoned anchor"
    );
    assert!(rejected(&running, "stale_slot") > 0);
    // Once nothing was confirmed for the reset time, the genuine feed re-anchors the window.
    let resume = (poisoned_at + WINDOW_RESET + Duration::from_millis(200))
        .saturating_duration_since(Instant::now());
    tokio::time::sleep(resume).await;
    let datagrams = all_genuine();
    let received = send_and_receive(running.udp, &mut updates, datagrams).await;
    assert_exactly(&received, &pump_signatures(&manifest(), |_| true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_version_of_a_slot_by_its_leader_is_never_published() {
    // Slot X, scheduled for a key of the test's: version A carries slot 0's entries (5 sets),
    // version B slot 2's (6 sets); their first five sets collide.
    let slot = FIRST_SLOT + 10;
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
    let leader_key = bs58::encode(leader.leader()).into_string();
    let standin =
        ClusterStandin::start(cluster(&manifest()).with_leader(slot..=slot, &leader_key)).unwrap();
    let data = tempfile::tempdir().unwrap();
    let running = start(&["--rpc", &standin.url()], data.path());
    wait_for_health(running.http, |body| body.contains("leader_schedule"));
    let mut updates = subscribe_pump(running.grpc).await;
    let udp = running.udp;
    let datagrams: Vec<Vec<u8>> = a.iter().chain(&b).cloned().collect();
    let sender = std::thread::spawn(move || send(udp, &datagrams));
    let mut received = Vec::new();
    let mut duplicates = Vec::new();
    while let Ok(Some(update)) = tokio::time::timeout(Duration::from_secs(3), updates.next()).await
    {
        match update.unwrap().update {
            Some(Update::Transaction(tx)) => received.push((tx.signature, tx.slot)),
            Some(Update::DuplicateBlock(duplicate)) => duplicates.push(duplicate),
            _ => {}
        }
    }
    sender.join().unwrap();
    // Each of the five colliding sets is reported once, to every subscriber, with both roots.
    let mut reported: Vec<u32> = duplicates.iter().map(|d| d.fec_set_index).collect();
    reported.sort_unstable();
    reported.dedup();
    assert_eq!((duplicates.len(), reported.len()), (5, 5), "{duplicates:?}");
    assert!(duplicates.iter().all(|d| d.slot == slot
        && d.first_merkle_root.len() == 32
        && d.second_merkle_root.len() == 32
        && d.first_merkle_root != d.second_merkle_root));
    // Version A's transactions, in slot X; none of B's.
    let expected: HashMap<Vec<u8>, u64> = pump_signatures(&manifest(), |s| s == FIRST_SLOT)
        .into_keys()
        .map(|signature| (signature, slot))
        .collect();
    assert_exactly(&received, &expected);
    // Every shred of B's five colliding sets is refused as a duplicate block.
    assert_eq!(rejected(&running, "duplicate_block"), 5 * 64);
}
