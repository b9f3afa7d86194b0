//! Overload across a veth pair: two threads flood the appliance with junk datagrams (random
//! bytes of shred size) as fast as they can while a third replays the real captures three times
//! at a modest pace. Afterwards: the resident memory of the appliance has stayed flat (the
//! receive path has fixed pools; junk allocates nothing), every datagram is accounted for
//! (received by the appliance or counted as a drop with its reason), real transactions were
//! decoded during the flood, and one clean pass after it brings the totals of batches, entries
//! and transactions to exactly those of `appliance decode` of the files.
//! Numbers are printed (run with `--nocapture` to see them).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod netns_common;

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use netns_common::{
    Appliance, VethPair, capture, decode_totals, in_netns, is_root, metric, metric_sum, records,
    send_paced, served_totals, wait_for_metrics,
};

const PORT: u16 = 8001;
const CAPTURES: [&str; 2] = ["slot-361200000.full.bin", "slot-361200002.full.bin"];
const FLOOD: Duration = Duration::from_secs(3);
const REAL_PASSES: usize = 3;
/// Resident memory may grow this much under the flood (allocator noise, lazily touched pages).
const RSS_GROWTH_MAX_KIB: u64 = 16 * 1024;

/// Sends junk from the sender namespace until `stop`; returns datagrams sent.
fn flood(ns: String, target: SocketAddr, stop: Arc<AtomicBool>, seed: u64) -> u64 {
    in_netns(&ns, move || {
        let socket = UdpSocket::bind("198.18.0.1:0").unwrap();
        socket.connect(target).unwrap();
        let mut state = seed | 1;
        let junk: Vec<Vec<u8>> = (0..16)
            .map(|_| {
                (0..1228)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state as u8
                    })
                    .collect()
            })
            .collect();
        let mut sent = 0u64;
        while !stop.load(Ordering::Relaxed) {
            // ENOBUFS from a full veth queue is part of overload: try again.
            if socket.send(&junk[sent as usize % junk.len()]).is_ok() {
                sent += 1;
            }
        }
        sent
    })
}

fn overload_case(tag: &str, args_for: impl Fn(&VethPair) -> Vec<String>, path: &str) {
    if !is_root() {
        return;
    }
    let pair = VethPair::create(tag);
    let args = args_for(&pair);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let appliance = Appliance::start(&pair.receiver.name, &args);
    let target = SocketAddr::from((netns_common::RECEIVER_IP, PORT));
    let mut expected = [0u64; 3];
    let mut real = Vec::new();
    for name in CAPTURES {
        let path = capture(name);
        for (total, value) in expected.iter_mut().zip(decode_totals(&path)) {
            *total += value;
        }
        real.extend(records(&path));
    }
    // Warm up: a short flood, so pools, caches and the allocator's arenas exist before the
    // baseline is taken.
    let stop = Arc::new(AtomicBool::new(false));
    let warm = {
        let (ns, stop) = (pair.sender.name.clone(), Arc::clone(&stop));
        std::thread::spawn(move || flood(ns, target, stop, 7))
    };
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let mut junk_sent = warm.join().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let rss_before = appliance.rss_kib();

    let stop = Arc::new(AtomicBool::new(false));
    let flooders: Vec<_> = (0..2)
        .map(|seed| {
            let (ns, stop) = (pair.sender.name.clone(), Arc::clone(&stop));
            std::thread::spawn(move || flood(ns, target, stop, 11 + seed))
        })
        .collect();
    let started = Instant::now();
    let real_rate = (real.len() * REAL_PASSES) as u64 * 1000 / FLOOD.as_millis() as u64;
    let mut passes = Vec::new();
    for _ in 0..REAL_PASSES {
        passes.extend(real.iter().cloned());
    }
    let real_sent = passes.len() as u64;
    send_paced(&pair.sender.name, target, passes, real_rate);
    if let Some(rest) = FLOOD.checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
    stop.store(true, Ordering::Relaxed);
    for flooder in flooders {
        junk_sent += flooder.join().unwrap();
    }
    let flood_seconds = started.elapsed().as_secs_f64();
    let sent = junk_sent + real_sent;

    let received = format!("appliance_datagrams_received_total{{source=\"{path}\"}}");
    let drops = |text: &str| metric_sum(text, "appliance_receive_drops_total{");
    let text = wait_for_metrics(&appliance, |text| {
        metric(text, &received).unwrap_or(0) + drops(text) >= sent
    });
    let rss_after = appliance.rss_kib();
    let received_count = metric(&text, &received).unwrap_or(0);
    let dropped = drops(&text);
    let during = served_totals(&text);
    let by_reason: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("appliance_receive_drops_total{") && !line.ends_with(" 0"))
        .collect();
    println!(
        "{path} overload: sent {sent} ({junk_sent} junk, {real_sent} real) in {flood_seconds:.1} s \
         ({:.0}/s); received {received_count}; dropped {dropped} {by_reason:?}; decoded during \
         the flood {during:?} of {expected:?} (batches, entries, transactions); rss {rss_before} \
         KiB -> {rss_after} KiB",
        sent as f64 / flood_seconds
    );
    assert!(
        rss_after <= rss_before + RSS_GROWTH_MAX_KIB,
        "RSS grew from {rss_before} KiB to {rss_after} KiB"
    );
    assert!(
        received_count <= sent,
        "received {received_count} of {sent} sent"
    );
    assert_eq!(
        received_count + dropped,
        sent,
        "every datagram received or counted as dropped"
    );
    assert!(
        during[2] > 0,
        "no real transaction decoded during the flood"
    );

    // After the flood, one clean pass completes whatever the drops left open: the decoder is
    // healthy and the totals are exactly those of `appliance decode`.
    send_paced(&pair.sender.name, target, real, 5_000);
    let text = wait_for_metrics(&appliance, |text| served_totals(text) == expected);
    assert_eq!(
        served_totals(&text),
        expected,
        "batches, entries, transactions"
    );
}

#[test]
fn af_xdp_under_a_junk_flood() {
    overload_case(
        "ox",
        |pair| {
            [
                "--xdp",
                &format!("{}:{PORT}", pair.receiver_iface),
                "--xdp-attach",
                "skb",
            ]
            .map(String::from)
            .to_vec()
        },
        "xdp",
    );
}

#[test]
fn batched_udp_under_a_junk_flood() {
    // A small socket buffer, so the flood overruns it and the drops show up by reason.
    overload_case(
        "ou",
        |_| {
            ["--udp", &format!("0.0.0.0:{PORT}"), "--rx-buffer", "262144"]
                .map(String::from)
                .to_vec()
        },
        "udp",
    );
}
