//! Issue 26's measurement: what one subscriber of each protocol costs, on release binaries and
//! real gRPC. For each protocol — none, `SubscribeDecoded`, `SubscribeEntries`, Yellowstone
//! `SubscribeDeshred` — in alternating rounds, an appliance on the embedded replay at
//! `--replay-rate` shreds/s with one match-all subscriber of that protocol: the process's CPU
//! time (utime + stime from /proc) per transaction deshredded over the window, and the
//! subscriber's publish → receive latency (`ServerTiming.publish` for ours, `created_at` for
//! Yellowstone's, stamped as each transaction is published; entry batches carry no stamp). A
//! data set's transactions are published together, so Yellowstone's figures are also given for
//! the first transaction of each data set (the ones after it queue behind it). CPU excludes the
//! embedded replay's sender thread (it re-signs what it sends).
//! `cargo build --release -p appliance -p bench && target/release/protocol_cost`

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use bench::appliance_process::{metric, quantiles, start};
use clap::Parser;
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
    /// Rounds of the protocols, alternating.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Yellowstone's filter: transactions naming this account (base58) instead of all.
    #[arg(long)]
    deshred_include: Option<String>,
    /// The protocols measured, in this order each round.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "none,decoded,entries,deshred"
    )]
    protocols: Vec<Protocol>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
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

/// The process's CPU time so far (user + system, every thread but the embedded replay's sender,
/// which re-signs the shreds it sends: not the appliance's receive-side work), in µs.
fn cpu_micros(pid: u32) -> anyhow::Result<u64> {
    let mut ticks = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let path = task?.path();
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        let (name, rest) = stat.rsplit_once(')').context("stat format")?;
        if name.ends_with("(replay") {
            continue;
        }
        // Fields after the command name start at field 3: utime is 14, stime 15.
        let fields: Vec<&str> = rest.split_whitespace().collect();
        ticks += fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    }
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
    deshred_include: Option<String>,
) -> anyhow::Result<(Vec<u64>, Vec<u64>)> {
    let url = format!("http://{grpc}");
    let (mut latencies, mut firsts) = (Vec::new(), Vec::new());
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
                    SubscribeRequestFilterDeshredTransactions {
                        account_include: deshred_include.into_iter().collect(),
                        ..Default::default()
                    },
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
            let mut last_set = None;
            while let Ok(Some(update)) = tokio::time::timeout_at(deadline, updates.next()).await {
                let update = update?;
                let now = unix_nanos();
                if let (Some(UpdateOneof::DeshredTransaction(tx)), Some(created)) =
                    (&update.update_oneof, &update.created_at)
                {
                    let created = created.seconds as u64 * 1_000_000_000 + created.nanos as u64;
                    let latency = now.saturating_sub(created) / 1_000;
                    latencies.push(latency);
                    let set = tx
                        .transaction
                        .as_ref()
                        .map(|info| (tx.slot, info.completed_data_set_starting_shred_index));
                    if set != last_set {
                        firsts.push(latency);
                        last_set = set;
                    }
                }
            }
        }
    }
    Ok((latencies, firsts))
}

/// One round of `protocol`: (CPU µs, transactions deshredded, latencies, latencies of each data
/// set's first transaction).
async fn round(args: &Args, protocol: Protocol) -> anyhow::Result<(u64, u64, Vec<u64>, Vec<u64>)> {
    let rate = args.replay_rate.to_string();
    let appliance = start(
        &args.appliance,
        &["--replay-rate", &rate, "--samples", "off"],
    )?;
    let warm_up = tokio::time::Instant::now() + Duration::from_secs(3);
    let deadline = warm_up + Duration::from_secs(args.seconds);
    let include = args.deshred_include.clone();
    let reader = tokio::spawn(read(protocol, appliance.grpc, deadline, include));
    tokio::time::sleep_until(warm_up).await;
    let pid = appliance.child.id();
    let (cpu, transactions) = (
        cpu_micros(pid)?,
        metric(appliance.http, "appliance_transactions_total"),
    );
    tokio::time::sleep_until(deadline).await;
    let cpu = cpu_micros(pid)? - cpu;
    let transactions = metric(appliance.http, "appliance_transactions_total") - transactions;
    let (latencies, firsts) = reader.await??;
    Ok((cpu, transactions, latencies, firsts))
}

/// The latencies' summary, or why there are none.
fn summary(values: &[u64]) -> anyhow::Result<String> {
    if values.is_empty() {
        return Ok("no stamp on the wire".to_owned());
    }
    quantiles(values.iter().copied())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        for number in 1..=args.rounds {
            for &protocol in &args.protocols {
                let (cpu, transactions, latencies, firsts) = round(&args, protocol).await?;
                let per_tx = cpu as f64 / transactions.max(1) as f64;
                println!(
                    "round {number} {:<8} cpu {:>6.2} µs/tx ({} tx, {:.1}% of a core)  publish → recv {}",
                    format!("{protocol:?}"),
                    per_tx,
                    transactions,
                    cpu as f64 / (args.seconds as f64 * 10_000.0),
                    summary(&latencies)?
                );
                if !firsts.is_empty() {
                    println!("{:>52} first of each data set: {}", "", summary(&firsts)?);
                }
            }
        }
        Ok(())
    })
}
