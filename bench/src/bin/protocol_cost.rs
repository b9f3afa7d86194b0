//! Issue 26's measurement: what one subscriber of each protocol costs, on release binaries and
//! real gRPC. For each protocol — none, `SubscribeDecoded`, `SubscribeEntries`, Yellowstone
//! `SubscribeDeshred` — in alternating rounds, an appliance on the embedded replay at
//! `--replay-rate` shreds/s with one match-all subscriber of that protocol: the process's CPU
//! time (utime + stime from /proc) per transaction deshredded over the window, and the
//! subscriber's publish → receive latency (`ServerTiming.publish` for ours, `created_at` for
//! Yellowstone's, which is stamped when the batch is published; entry batches carry no stamp).
//! `cargo build --release -p appliance -p bench && target/release/protocol_cost`

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use bench::appliance_process::{metric, start};
use clap::Parser;
use hdrhistogram::Histogram;
use stream_proto::shredstream::SubscribeEntriesRequest;
use stream_proto::shredstream::shredstream_proxy_client::ShredstreamProxyClient;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::subscribe_update::Update;
use stream_proto::stream::{SubscribeRequest, SubscribeUpdate};
use tokio_stream::StreamExt;
use yellowstone_grpc_proto::geyser::geyser_client::GeyserClient;
use yellowstone_grpc_proto::geyser::subscribe_update_deshred::UpdateOneof;
use yellowstone_grpc_proto::geyser::{
    SubscribeDeshredRequest, SubscribeRequestFilterDeshredTransactions,
};

#[derive(Parser, Debug)]
#[command(about = "CPU per transaction and latency of one subscriber per protocol (issue 26)")]
struct Args {
    /// The release binary.
    #[arg(long, default_value = "target/release/appliance")]
    appliance: String,
    /// Shreds per second of the embedded replay.
    #[arg(long, default_value_t = 5_000)]
    replay_rate: u32,
    /// Seconds measured per round (after a 3 s warm-up).
    #[arg(long, default_value_t = 15)]
    seconds: u64,
    /// Rounds of the four protocols, alternating.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
}

#[derive(Debug, Clone, Copy)]
enum Protocol {
    None,
    Decoded,
    Entries,
    Deshred,
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

/// The process's CPU time so far (user + system), in µs.
fn cpu_micros(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = stat.rsplit_once(')').context("stat format")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    // SAFETY: sysconf only reads a system constant; it has no preconditions.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100);
    Ok(ticks * 1_000_000 / per_second.max(1))
}

fn publish_latency(update: &SubscribeUpdate, now: u64) -> Option<u64> {
    let timing = match update.update.as_ref()? {
        Update::Transaction(transaction) => transaction.server_timing.as_ref()?,
        _ => return None,
    };
    Some(now.saturating_sub(timing.publish_unix_nanos) / 1_000)
}

/// Reads `protocol`'s match-all stream until `deadline`; latencies in µs.
async fn read(
    protocol: Protocol,
    grpc: SocketAddr,
    deadline: tokio::time::Instant,
) -> anyhow::Result<Vec<u64>> {
    let url = format!("http://{grpc}");
    let mut latencies = Vec::new();
    match protocol {
        Protocol::None => tokio::time::sleep_until(deadline).await,
        Protocol::Decoded => {
            let request =
                tokio_stream::iter([SubscribeRequest::default()]).chain(tokio_stream::pending());
            let mut updates = StreamClient::connect(url)
                .await?
                .subscribe_decoded(request)
                .await?
                .into_inner();
            while let Ok(Some(update)) = tokio::time::timeout_at(deadline, updates.next()).await {
                latencies.extend(publish_latency(&update?, unix_nanos()));
            }
        }
        Protocol::Entries => {
            let mut batches = ShredstreamProxyClient::connect(url)
                .await?
                .subscribe_entries(SubscribeEntriesRequest {})
                .await?
                .into_inner();
            while let Ok(Some(batch)) = tokio::time::timeout_at(deadline, batches.next()).await {
                batch?;
            }
        }
        Protocol::Deshred => {
            let request = SubscribeDeshredRequest {
                deshred_transactions: [(
                    "all".to_owned(),
                    SubscribeRequestFilterDeshredTransactions::default(),
                )]
                .into_iter()
                .collect(),
                ..Default::default()
            };
            let requests = tokio_stream::iter([request]).chain(tokio_stream::pending());
            let mut updates = GeyserClient::connect(url)
                .await?
                .subscribe_deshred(requests)
                .await?
                .into_inner();
            while let Ok(Some(update)) = tokio::time::timeout_at(deadline, updates.next()).await {
                let update = update?;
                let now = unix_nanos();
                if let (Some(UpdateOneof::DeshredTransaction(_)), Some(created)) =
                    (&update.update_oneof, &update.created_at)
                {
                    let created = created.seconds as u64 * 1_000_000_000 + created.nanos as u64;
                    latencies.push(now.saturating_sub(created) / 1_000);
                }
            }
        }
    }
    Ok(latencies)
}

/// One round of `protocol`: (CPU µs, transactions deshredded, latencies).
async fn round(args: &Args, protocol: Protocol) -> anyhow::Result<(u64, u64, Vec<u64>)> {
    let rate = args.replay_rate.to_string();
    let appliance = start(
        &args.appliance,
        &["--replay-rate", &rate, "--samples", "off"],
    )?;
    let warm_up = tokio::time::Instant::now() + Duration::from_secs(3);
    let deadline = warm_up + Duration::from_secs(args.seconds);
    let reader = tokio::spawn(read(protocol, appliance.grpc, deadline));
    tokio::time::sleep_until(warm_up).await;
    let pid = appliance.child.id();
    let (cpu, transactions) = (
        cpu_micros(pid)?,
        metric(appliance.http, "appliance_transactions_total"),
    );
    tokio::time::sleep_until(deadline).await;
    let cpu = cpu_micros(pid)? - cpu;
    let transactions = metric(appliance.http, "appliance_transactions_total") - transactions;
    let latencies = reader.await??;
    Ok((cpu, transactions, latencies))
}

fn quantiles(values: &[u64]) -> anyhow::Result<String> {
    if values.is_empty() {
        return Ok("no stamp on the wire".to_owned());
    }
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3)?;
    for value in values {
        histogram.saturating_record((*value).max(1));
    }
    Ok(format!(
        "n {:>7}  p50 {:>6} µs  p99 {:>7} µs  max {:>8} µs",
        histogram.len(),
        histogram.value_at_quantile(0.5),
        histogram.value_at_quantile(0.99),
        histogram.max()
    ))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let protocols = [
        Protocol::None,
        Protocol::Decoded,
        Protocol::Entries,
        Protocol::Deshred,
    ];
    runtime.block_on(async {
        for number in 1..=args.rounds {
            for protocol in protocols {
                let (cpu, transactions, latencies) = round(&args, protocol).await?;
                let per_tx = cpu as f64 / transactions.max(1) as f64;
                println!(
                    "round {number} {:<8} cpu {:>6.2} µs/tx ({} tx, {:.1}% of a core)  publish → recv {}",
                    format!("{protocol:?}"),
                    per_tx,
                    transactions,
                    cpu as f64 / (args.seconds as f64 * 10_000.0),
                    quantiles(&latencies)?
                );
            }
        }
        Ok(())
    })
}
