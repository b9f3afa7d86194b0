//! Load and freshness harness of the insights API (release build), and a stand-in upstream for
//! scripts:
//!
//! * `insights_load load [--rate 5000] [--seconds 10] [--connections 8]`: starts the stand-in
//!   upstream (fixture chain), the insights service and its HTTP server in-process, waits for the
//!   window, then sends `GET /v1/block50` at a fixed open-loop rate over keep-alive connections on
//!   loopback; latency is measured from each request's scheduled send time (no coordinated
//!   omission) into an HDR histogram. Prints p50/p90/p99/p99.9/max.
//! * `insights_load freshness [--blocks 100] [--slot-ms 100]`: the stand-in's tip advances one
//!   slot every `slot-ms`; a poller requests `/v1/block50` back to back and records, for every
//!   new `slot_range.end`, the time from the moment the stand-in finished writing that block's
//!   getBlock answer to the first response showing it.
//! * `insights_load standin --port P [--slot-ms N]`: serves the STAND-IN upstream (fixture chain)
//!   until killed (used by `scripts/insights-fuzz.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A harness: failing loudly is the point.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use front::http::{HttpOptions, serve};
use hdrhistogram::Histogram;
use insights::{Insights, InsightsConfig};
use testkit::insights_standin::{Pace, StandinChain, StandinServer};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../insights/tests/fixtures/insights")
}

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("numeric argument"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts stand-in + insights + HTTP; returns the HTTP address and the running parts.
fn start(pace: Pace, poll: Duration) -> (SocketAddr, Insights, StandinServer) {
    let standin = StandinServer::start(StandinChain::load(&fixtures(), pace).unwrap(), 0).unwrap();
    let dir = std::env::temp_dir().join(format!("insights-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = InsightsConfig::new(standin.url(), dir.join("insights.redb"));
    config.poll_interval = poll;
    config.start_lookback_slots = 200;
    let insights = Insights::start(config).unwrap();
    let address = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let options = HttpOptions {
        mounts: vec![insights.mount()],
        workers: 2,
        ..HttpOptions::default()
    };
    serve(
        address,
        Arc::new(String::new),
        options,
        std::future::pending(),
    )
    .unwrap();
    (address, insights, standin)
}

/// A keep-alive HTTP/1.1 GET client on one connection.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    request: Vec<u8>,
}

impl Client {
    fn new(address: SocketAddr, path: &str) -> Self {
        let stream = TcpStream::connect(address).unwrap();
        stream.set_nodelay(true).unwrap();
        Self {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
            request: format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n").into_bytes(),
        }
    }

    /// Sends one request; returns status and body.
    fn get(&mut self) -> (u16, Vec<u8>) {
        self.writer.write_all(&self.request).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut length = 0usize;
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        self.reader.read_exact(&mut body).unwrap();
        (status, body)
    }
}

fn wait_for_window(address: SocketAddr) {
    let mut client = Client::new(address, "/v1/block50");
    let start = Instant::now();
    while client.get().0 != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "window never filled"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn print(name: &str, histogram: &Histogram<u64>, unit: &str, scale: f64) {
    println!(
        "{name}: n={} p50={:.3}{unit} p90={:.3}{unit} p99={:.3}{unit} p99.9={:.3}{unit} max={:.3}{unit}",
        histogram.len(),
        histogram.value_at_quantile(0.50) as f64 / scale,
        histogram.value_at_quantile(0.90) as f64 / scale,
        histogram.value_at_quantile(0.99) as f64 / scale,
        histogram.value_at_quantile(0.999) as f64 / scale,
        histogram.max() as f64 / scale,
    );
}

fn load(args: &[String]) {
    let rate = arg(args, "--rate", 5_000);
    let seconds = arg(args, "--seconds", 10);
    let connections = arg(args, "--connections", 8).max(1);
    let (address, _insights, _standin) = start(Pace::AllAtOnce, Duration::from_millis(200));
    wait_for_window(address);
    let per_connection = Duration::from_nanos(1_000_000_000 * connections / rate);
    let count = rate * seconds / connections;
    let threads: Vec<_> = (0..connections)
        .map(|index| {
            std::thread::spawn(move || {
                let mut client = Client::new(address, "/v1/block50");
                let mut histogram =
                    Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).unwrap();
                let mut service = histogram.clone();
                // Stagger the connections across one interval.
                let start = Instant::now() + per_connection * index as u32 / connections as u32;
                for n in 0..count {
                    let scheduled = start + per_connection * n as u32;
                    if let Some(wait) = scheduled.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                    let sent = Instant::now();
                    let (status, _) = client.get();
                    assert_eq!(status, 200);
                    histogram
                        .record(scheduled.elapsed().as_nanos() as u64)
                        .unwrap();
                    service.record(sent.elapsed().as_nanos() as u64).unwrap();
                }
                (histogram, service)
            })
        })
        .collect();
    let mut total = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).unwrap();
    let mut service = total.clone();
    for thread in threads {
        let (scheduled, sent) = thread.join().unwrap();
        total.add(scheduled).unwrap();
        service.add(sent).unwrap();
    }
    println!(
        "GET /v1/block50 at {rate} requests/s for {seconds} s over {connections} keep-alive connections (loopback)"
    );
    print(
        "latency from scheduled send (includes client lateness)",
        &total,
        "ms",
        1e6,
    );
    print("latency from actual send", &service, "ms", 1e6);
}

fn freshness(args: &[String]) {
    let blocks = arg(args, "--blocks", 100);
    let slot_ms = arg(args, "--slot-ms", 100);
    let (address, _insights, standin) = start(
        Pace::Paced {
            initial: 60,
            per_slot: Duration::from_millis(slot_ms),
        },
        Duration::from_millis(5),
    );
    wait_for_window(address);
    let mut client = Client::new(address, "/v1/block50");
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    let mut last_end = 0u64;
    while histogram.len() < blocks {
        let (status, body) = client.get();
        let seen = Instant::now();
        assert_eq!(status, 200);
        let snapshot: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let end = snapshot["slot_range"]["end"].as_u64().unwrap();
        if end > last_end {
            // The first observation after start is the catch-up: not a fresh block.
            if last_end != 0
                && let Some(served) = standin.chain.served_at(end)
            {
                histogram
                    .record(seen.saturating_duration_since(served).as_nanos().max(1) as u64)
                    .unwrap();
            }
            last_end = end;
        }
    }
    println!(
        "freshness: getBlock answer written -> first /v1/block50 showing the block ({blocks} blocks, {slot_ms} ms slots)"
    );
    print("freshness", &histogram, "ms", 1e6);
}

fn standin(args: &[String]) {
    let port = arg(args, "--port", 0) as u16;
    let slot_ms = arg(args, "--slot-ms", 0);
    let pace = if slot_ms == 0 {
        Pace::AllAtOnce
    } else {
        Pace::Paced {
            initial: 60,
            per_slot: Duration::from_millis(slot_ms),
        }
    };
    let server =
        StandinServer::start(StandinChain::load(&fixtures(), pace).unwrap(), port).unwrap();
    println!("{}", server.url());
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("load") => load(&args),
        Some("freshness") => freshness(&args),
        Some("standin") => standin(&args),
        _ => {
            eprintln!("usage: insights_load load|freshness|standin [options] (see the module doc)")
        }
    }
}
