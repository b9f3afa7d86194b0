//! The receive paths end to end across a veth pair: a sender namespace replays the bundled
//! captures to `appliance run` in the receiver namespace, over batched UDP, over AF_XDP with the
//! program in generic (skb) mode, and over AF_XDP in native (driver) mode with busy polling. In
//! each case the appliance's `/metrics` totals of entry batches, entries and transactions must
//! equal what `appliance decode` computes from the same files (the file path of the decoder, no network),
//! every datagram must be counted once on the right path, and SIGTERM must exit 0. For AF_XDP,
//! other traffic must still reach the kernel stack while the program is attached (a UDP datagram
//! to another port and back), and the program must be gone from the interface after SIGTERM and
//! after SIGKILL (the BPF link dies with the process).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod netns_common;

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use netns_common::{
    Appliance, VethPair, capture, decode_totals, in_netns, is_root, metric, records, send_paced,
    served_totals, wait_for_metrics,
};

const PORT: u16 = 8001;
const CAPTURES: [&str; 2] = ["slot-361200000.full.bin", "slot-361200002.full.bin"];
/// Datagrams per second: a pace the appliance sustains on a loaded 2-core machine, so loss
/// cannot explain a mismatch.
const RATE: u64 = 5_000;

fn target() -> SocketAddr {
    SocketAddr::from((netns_common::RECEIVER_IP, PORT))
}

/// Replays both captures, waits until every datagram is counted, and compares the decoded
/// totals with `appliance decode` of the same files.
fn replay_and_compare(pair: &VethPair, appliance: &Appliance, source: &str) -> String {
    let mut expected = [0u64; 3];
    let mut sent = 0u64;
    for name in CAPTURES {
        let path = capture(name);
        for (total, value) in expected.iter_mut().zip(decode_totals(&path)) {
            *total += value;
        }
        let datagrams = records(&path);
        sent += datagrams.len() as u64;
        send_paced(&pair.sender.name, target(), datagrams, RATE);
    }
    assert!(expected.iter().all(|&total| total > 0), "{expected:?}");
    let received = format!("appliance_datagrams_received_total{{source=\"{source}\"}}");
    let text = wait_for_metrics(appliance, |text| {
        metric(text, &received) == Some(sent) && served_totals(text) == expected
    });
    assert_eq!(metric(&text, &received), Some(sent), "{text}");
    assert_eq!(
        served_totals(&text),
        expected,
        "batches, entries, transactions"
    );
    text
}

#[test]
fn batched_udp_decodes_like_appliance_decode() {
    if !is_root() {
        return;
    }
    let pair = VethPair::create("ru");
    let listen = format!("0.0.0.0:{PORT}");
    let mut appliance = Appliance::start(&pair.receiver.name, &["--udp", &listen]);
    let text = replay_and_compare(&pair, &appliance, "udp");
    assert!(text.contains("mode=\"recvmmsg\""));
    assert_eq!(
        metric(&text, "appliance_datagrams_received_total{source=\"xdp\"}"),
        None
    );
    assert!(appliance.terminate().success());
}

/// The AF_XDP run shared by both attach modes.
fn xdp_case(tag: &str, attach: &str, mode_label: &str, extra: &[&str]) {
    if !is_root() {
        return;
    }
    let pair = VethPair::create(tag);
    let xdp = format!("{}:{PORT}", pair.receiver_iface);
    let mut args = vec!["--xdp", &xdp, "--xdp-attach", attach, "--xdp-bind", "auto"];
    args.extend_from_slice(extra);
    let mut appliance = Appliance::start(&pair.receiver.name, &args);
    let link = pair.receiver_link();
    assert!(
        link.contains("prog/xdp") && link.contains("shred_redirect"),
        "{link}"
    );
    let expected_flag = if attach == "skb" {
        "xdpgeneric"
    } else {
        "xdp "
    };
    assert!(link.contains(expected_flag), "{link}");

    let text = replay_and_compare(&pair, &appliance, "xdp");
    assert!(text.contains(&format!("mode=\"{mode_label}\"")), "{text}");
    assert_eq!(
        metric(&text, "appliance_datagrams_received_total{source=\"udp\"}"),
        None
    );

    // Everything else passes: a datagram to another port reaches a kernel socket and back.
    let echo_ns = pair.receiver.name.clone();
    let echo = std::thread::spawn(move || {
        in_netns(&echo_ns, || {
            let socket = UdpSocket::bind(("198.18.0.2", PORT + 1)).unwrap();
            socket
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut buffer = [0u8; 64];
            let (len, from) = socket.recv_from(&mut buffer).unwrap();
            socket.send_to(&buffer[..len], from).unwrap();
        })
    });
    std::thread::sleep(Duration::from_millis(300));
    let reply = in_netns(&pair.sender.name, || {
        let socket = UdpSocket::bind("198.18.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        socket
            .send_to(b"not a shred port", ("198.18.0.2", PORT + 1))
            .unwrap();
        let mut buffer = [0u8; 64];
        let len = socket.recv(&mut buffer).unwrap();
        buffer[..len].to_vec()
    });
    echo.join().unwrap();
    assert_eq!(reply, b"not a shred port");

    assert!(appliance.terminate().success());
    let link = pair.receiver_link();
    assert!(
        !link.contains("xdp"),
        "still attached after SIGTERM: {link}"
    );
}

#[test]
fn af_xdp_generic_mode_decodes_like_appliance_decode() {
    xdp_case("xg", "skb", "copy-skb", &[]);
}

/// Native mode, with the busy-polling receive loop (spinning instead of poll(2)).
#[test]
fn af_xdp_native_mode_busy_polling_decodes_like_appliance_decode() {
    xdp_case("xn", "native", "copy-native", &["--busy-poll"]);
}

#[test]
fn the_program_is_detached_when_the_process_is_killed() {
    if !is_root() {
        return;
    }
    let pair = VethPair::create("xk");
    let xdp = format!("{}:{PORT}", pair.receiver_iface);
    let mut appliance = Appliance::start(&pair.receiver.name, &["--xdp", &xdp]);
    assert!(pair.receiver_link().contains("prog/xdp"));
    appliance.child.kill().unwrap();
    appliance.child.wait().unwrap();
    // The link's last fd closed with the process, which detaches the program.
    let mut link = pair.receiver_link();
    for _ in 0..20 {
        if !link.contains("xdp") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        link = pair.receiver_link();
    }
    assert!(
        !link.contains("xdp"),
        "still attached after SIGKILL: {link}"
    );
}
