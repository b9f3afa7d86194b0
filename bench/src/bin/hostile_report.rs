//! Memory and descriptors of a release `appliance run` under hostile clients (issue "Hostile
//! clients and damaged data"): for each scenario, the process's resident memory (`VmRSS`) and
//! open descriptors (`/proc/PID/fd`) before, at their peak during (sampled every 50 ms) and after
//! it, with the `/metrics` counters that show how the appliance handled it.
//!
//! Scenarios, one after another against one process (embedded replay at `--replay-rate`):
//! - `never_reading`: `--subscribers` gRPC streams (match-all, one connection each) whose client
//!   never reads, held `--hold-secs`: cut for lag by the queue bounds, whatever HTTP/2's flow
//!   control does;
//! - `idle_grpc`: `--connections` TCP connections to the gRPC port that never send a byte, from
//!   five loopback addresses: held until `first_bytes_timeout_secs`, the rest closed at accept;
//! - `stalled_bodies`: `--connections` HTTP POSTs announcing 1 MB and sending 100 bytes, from five
//!   addresses: ended by `body_timeout_secs` and the per-address cap;
//! - `one_address_flood`: `--connections` silent connections to the HTTP port from one address:
//!   `max_connections_per_ip` held (until the header deadline), the rest closed at connect.
//!
//! `cargo build --release -p appliance -p bench && target/release/hostile_report`

use bench::appliance_process::{Appliance, metric};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use stream_proto::stream::SubscribeRequest;
use stream_proto::stream::stream_client::StreamClient;

#[derive(Parser, Debug)]
#[command(about = "RSS and descriptors of the appliance under hostile clients")]
struct Args {
    /// The release binary.
    #[arg(long, default_value = "target/release/appliance")]
    appliance: String,
    /// Shreds per second of the embedded replay.
    #[arg(long, default_value_t = 20_000)]
    replay_rate: u32,
    /// Never-reading subscribers.
    #[arg(long, default_value_t = 15)]
    subscribers: usize,
    /// How long the never-reading subscribers are held, seconds.
    #[arg(long, default_value_t = 20)]
    hold_secs: u64,
    /// Connections of each connection scenario.
    #[arg(long, default_value_t = 1_000)]
    connections: usize,
}

/// RSS (KiB) and open descriptors of a process.
#[derive(Debug, Clone, Copy, Default)]
struct Footprint {
    rss_kib: u64,
    fds: u64,
}

impl Footprint {
    fn of(pid: u32) -> anyhow::Result<Self> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        let rss_kib = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse().ok())
            .context("VmRSS")?;
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))?.count() as u64;
        Ok(Self { rss_kib, fds })
    }

    fn max(self, other: Self) -> Self {
        Self {
            rss_kib: self.rss_kib.max(other.rss_kib),
            fds: self.fds.max(other.fds),
        }
    }
}

/// The peak footprint while `during` runs, sampled every 50 ms.
fn peak_during<T>(pid: u32, during: impl FnOnce() -> T) -> (T, Footprint) {
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut peak = Footprint::default();
            while !stop.load(Ordering::Acquire) {
                peak = peak.max(Footprint::of(pid).unwrap_or_default());
                std::thread::sleep(Duration::from_millis(50));
            }
            peak
        })
    };
    let value = during();
    stop.store(true, Ordering::Release);
    let peak = sampler.join().unwrap_or_default();
    (value, peak)
}

/// A TCP connection to `to` from loopback address `127.0.0.<from>`.
fn connect_from(from: u8, to: SocketAddr) -> Option<TcpStream> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).ok()?;
    socket
        .bind(&SocketAddr::from(([127, 0, 0, from], 0)).into())
        .ok()?;
    socket
        .connect_timeout(&to.into(), Duration::from_millis(500))
        .ok()?;
    Some(socket.into())
}

/// `count` connections spread over addresses 127.0.0.10..15, each given `opening` bytes.
fn open_spread(count: usize, to: SocketAddr, opening: &[u8]) -> Vec<TcpStream> {
    (0..count)
        .filter_map(|n| {
            let mut stream = connect_from(10 + (n % 5) as u8, to)?;
            stream.write_all(opening).ok()?;
            Some(stream)
        })
        .collect()
}

/// One scenario's row.
struct Row {
    name: &'static str,
    before: Footprint,
    peak: Footprint,
    after: Footprint,
    outcome: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let appliance = bench::appliance_process::start(
        &args.appliance,
        &["--replay-rate", &args.replay_rate.to_string()],
    )?;
    std::thread::sleep(Duration::from_secs(3));
    let runtime = tokio::runtime::Runtime::new()?;
    let rows = vec![
        never_reading(&args, &appliance, &runtime)?,
        idle_grpc(&args, &appliance)?,
        stalled_bodies(&args, &appliance)?,
        one_address_flood(&args, &appliance)?,
    ];
    println!("| scenario | before RSS / fds | peak RSS / fds | after RSS / fds | outcome |");
    println!("| --- | --- | --- | --- | --- |");
    for row in rows {
        let show = |f: Footprint| format!("{:.1} MiB / {}", f.rss_kib as f64 / 1024.0, f.fds);
        println!(
            "| {} | {} | {} | {} | {} |",
            row.name,
            show(row.before),
            show(row.peak),
            show(row.after),
            row.outcome
        );
    }
    Ok(())
}

/// Runs `during` between a footprint before and one `settle` after it.
fn measure(
    name: &'static str,
    appliance: &Appliance,
    settle: Duration,
    during: impl FnOnce() -> anyhow::Result<()>,
    outcome: impl FnOnce() -> String,
) -> anyhow::Result<Row> {
    let pid = appliance.child.id();
    let before = Footprint::of(pid)?;
    let (result, peak) = peak_during(pid, during);
    result?;
    std::thread::sleep(settle);
    let after = Footprint::of(pid)?;
    Ok(Row {
        name,
        before,
        peak: peak.max(before),
        after,
        outcome: outcome(),
    })
}

fn never_reading(
    args: &Args,
    appliance: &Appliance,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<Row> {
    let grpc = appliance.grpc;
    let lagged = "appliance_stream_disconnects_total{reason=\"lagged\"}";
    let lagged_before = metric(appliance.http, lagged);
    measure(
        "never_reading",
        appliance,
        Duration::from_secs(2),
        || {
            let held = runtime.block_on(open_unread(grpc, args.subscribers))?;
            std::thread::sleep(Duration::from_secs(args.hold_secs));
            drop(held);
            Ok(())
        },
        || {
            let cut = metric(appliance.http, lagged) - lagged_before;
            format!("{} streams never read; {cut} cut for lag", args.subscribers)
        },
    )
}

/// `count` match-all streams on connections of their own whose responses are never polled.
async fn open_unread(grpc: SocketAddr, count: usize) -> anyhow::Result<Vec<impl Sized>> {
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{grpc}"))?
            .connect()
            .await?;
        let request = SubscribeRequest {
            subscriptions: Default::default(),
            ping_id: None,
            ..Default::default()
        };
        let requests = tokio_stream::iter([request]);
        let response = StreamClient::new(channel.clone())
            .subscribe_decoded(requests)
            .await?;
        held.push((channel, response));
    }
    Ok(held)
}

fn idle_grpc(args: &Args, appliance: &Appliance) -> anyhow::Result<Row> {
    let timeouts = "appliance_grpc_connections_refused_total{reason=\"first_bytes_timeout\"}";
    let per_ip = "appliance_grpc_connections_refused_total{reason=\"per_ip\"}";
    let before = (
        metric(appliance.http, timeouts),
        metric(appliance.http, per_ip),
    );
    measure(
        "idle_grpc",
        appliance,
        Duration::from_secs(1),
        || {
            let held = open_spread(args.connections, appliance.grpc, b"");
            std::thread::sleep(Duration::from_secs(7));
            drop(held);
            Ok(())
        },
        || {
            let timed_out = metric(appliance.http, timeouts) - before.0;
            let refused = metric(appliance.http, per_ip) - before.1;
            format!(
                "{} opened; {timed_out} closed at the first-bytes deadline, {refused} at accept (per address)",
                args.connections
            )
        },
    )
}

fn stalled_bodies(args: &Args, appliance: &Appliance) -> anyhow::Result<Row> {
    let refused = "appliance_http_connections_refused_total";
    let before = metric(appliance.http, refused);
    let opening = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{}",
        " ".repeat(100)
    );
    measure(
        "stalled_bodies",
        appliance,
        Duration::from_secs(1),
        || {
            let held = open_spread(args.connections, appliance.http, opening.as_bytes());
            std::thread::sleep(Duration::from_secs(12));
            drop(held);
            Ok(())
        },
        || {
            let closed = metric(appliance.http, refused) - before;
            format!(
                "{} opened; {closed} closed at connect (per address), the rest ended by the body deadline",
                args.connections
            )
        },
    )
}

fn one_address_flood(args: &Args, appliance: &Appliance) -> anyhow::Result<Row> {
    let refused = "appliance_http_connections_refused_total";
    let before = metric(appliance.http, refused);
    measure(
        "one_address_flood",
        appliance,
        Duration::from_secs(1),
        || {
            let held: Vec<TcpStream> = (0..args.connections)
                .filter_map(|_| connect_from(20, appliance.http))
                .collect();
            std::thread::sleep(Duration::from_secs(7));
            drop(held);
            Ok(())
        },
        || {
            let closed = metric(appliance.http, refused) - before;
            format!(
                "{} silent connections from one address; {closed} closed at connect, the rest by the header deadline",
                args.connections
            )
        },
    )
}
