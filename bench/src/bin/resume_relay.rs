//! Issue 22's two latency measurements, on release binaries and real gRPC:
//!
//! - `storm`: an appliance on the embedded replay with live match-all subscribers measuring
//!   publish → receive; once the recent-slot buffer is full, `--resumers` streams resume at once
//!   from the oldest complete slot and read as fast as they can. Prints the live subscribers'
//!   p50 / p99 / max in the `--window-secs` before the storm and during it (until every resumed
//!   stream caught up), and how long the replays took.
//! - `hop`: an origin appliance and a relay (`run --relay`), a match-all subscriber on each.
//!   Prints origin publish → receive on the origin's subscriber and on the relay's (the relay
//!   hop), and the relay's own parts: origin publish → relay receive, relay receive → publish.
//!
//! Both clocks are this host's (the stamps are the servers' wall clock on the same host).
//! `cargo build --release -p appliance -p bench && target/release/resume_relay storm`

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use bench::appliance_process::{Appliance, metric, quantiles, start};
use clap::{Parser, Subcommand};
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::subscribe_update::Update;
use stream_proto::stream::{ServerTiming, SubscribeRequest, SubscribeUpdate};
use tokio_stream::StreamExt;

#[derive(Parser, Debug)]
#[command(about = "Resume storm and relay hop latency (issue 22)")]
struct Args {
    /// The release binary.
    #[arg(long, default_value = "target/release/appliance")]
    appliance: String,
    /// Shreds per second of the embedded replay.
    #[arg(long, default_value_t = 5_000)]
    replay_rate: u32,
    #[command(subcommand)]
    measure: Measure,
}

#[derive(Subcommand, Debug)]
enum Measure {
    /// Live subscribers' fan-out latency before and during a burst of resumes.
    Storm {
        /// Streams resuming at once.
        #[arg(long, default_value_t = 100)]
        resumers: usize,
        /// Live subscribers.
        #[arg(long, default_value_t = 2)]
        live: usize,
        /// Slots the buffer keeps (the default of `[grpc] recent_slots`).
        #[arg(long, default_value_t = 150)]
        recent_slots: u32,
        /// `[grpc] resume_rate` of the appliance (updates/s of all replays; 0 = no limit).
        #[arg(long, default_value_t = 200_000)]
        resume_rate: u64,
        /// Seconds of live latency before the storm that are compared.
        #[arg(long, default_value_t = 10)]
        window_secs: u64,
    },
    /// Origin publish → subscriber receive through a relay, next to the origin's own.
    Hop {
        /// Seconds measured.
        #[arg(long, default_value_t = 30)]
        seconds: u64,
    },
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

fn timing(update: &SubscribeUpdate) -> Option<&ServerTiming> {
    match update.update.as_ref()? {
        Update::Transaction(transaction) => transaction.server_timing.as_ref(),
        Update::Delta(delta) => delta.envelope.as_ref()?.server_timing.as_ref(),
        _ => None,
    }
}

async fn subscribe(
    grpc: SocketAddr,
    from_slot: Option<u64>,
) -> anyhow::Result<tonic::Streaming<SubscribeUpdate>> {
    let mut client = StreamClient::connect(format!("http://{grpc}")).await?;
    let request = SubscribeRequest {
        from_slot,
        ..Default::default()
    };
    let outbound = tokio_stream::iter([request]).chain(tokio_stream::pending());
    Ok(client.subscribe_decoded(outbound).await?.into_inner())
}

/// Per timed update: (receive instant, µs from publish to this client, µs from publish to the
/// server's session taking it off its queue), and the newest sequence seen.
#[derive(Default)]
struct Samples {
    latencies: Vec<(Instant, u64, u64)>,
    newest_sequence: u64,
}

/// Reads a live match-all stream into `samples` until it ends.
async fn live(grpc: SocketAddr, samples: Arc<Mutex<Samples>>) -> anyhow::Result<()> {
    let mut updates = subscribe(grpc, None).await?;
    while let Some(update) = updates.next().await {
        let update = update?;
        let now = unix_nanos();
        let mut samples = samples.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
        samples.newest_sequence = samples.newest_sequence.max(update.sequence);
        if let Some(timing) = timing(&update) {
            let micros = |later: u64| later.saturating_sub(timing.publish_unix_nanos) / 1_000;
            let server = micros(timing.subscriber_recv_unix_nanos);
            samples
                .latencies
                .push((Instant::now(), micros(now), server));
        }
    }
    Ok(())
}

/// One resumed stream: reads from `from_slot` until it receives sequence `target` or later;
/// returns (updates read, seconds it took).
async fn resume(grpc: SocketAddr, from_slot: u64, target: u64) -> anyhow::Result<(u64, f64)> {
    let started = Instant::now();
    let mut updates = subscribe(grpc, Some(from_slot)).await?;
    let mut read = 0;
    while let Some(update) = updates.next().await {
        let update = update?;
        read += 1;
        if update.sequence >= target {
            break;
        }
    }
    Ok((read, started.elapsed().as_secs_f64()))
}

async fn storm(
    args: &Args,
    (resumers, live_count, recent_slots, window_secs): (usize, usize, u32, u64),
    resume_rate: u64,
) -> anyhow::Result<()> {
    // Every client comes from 127.0.0.1: lift the per-address cap (100) above them all.
    let config = tempfile::NamedTempFile::new()?;
    std::fs::write(
        config.path(),
        format!(
            "[grpc]\nmax_subscribers_per_ip = {}\nresume_rate = {resume_rate}\n",
            resumers + live_count + 8
        ),
    )?;
    let appliance = start(
        &args.appliance,
        &[
            "--config",
            &config.path().display().to_string(),
            "--replay-rate",
            &args.replay_rate.to_string(),
            "--recent-slots",
            &recent_slots.to_string(),
            "--samples",
            "off",
        ],
    )?;
    let samples = Arc::new(Mutex::new(Samples::default()));
    for _ in 0..live_count {
        let samples = Arc::clone(&samples);
        let grpc = appliance.grpc;
        tokio::spawn(async move { live(grpc, samples).await });
    }
    // Fill the buffer to its slot bound, then measure the calm window.
    while metric(appliance.http, "appliance_resume_evicted_updates_total") == 0 {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(window_secs)).await;
    // A second of margin: the buffer keeps evicting (~14 slots/s at 5,000 shreds/s) while the
    // resumers connect.
    let oldest = metric(appliance.http, "appliance_resume_buffer_oldest_slot") + 15;
    let kept = metric(appliance.http, "appliance_resume_buffer_updates");
    let (storm_start, target) = {
        let samples = samples.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
        (Instant::now(), samples.newest_sequence)
    };
    let tasks: Vec<_> = (0..resumers)
        .map(|_| tokio::spawn(resume(appliance.grpc, oldest, target)))
        .collect();
    let mut took = Vec::new();
    let mut read = 0;
    for task in tasks {
        let (updates, seconds) = task.await??;
        read += updates;
        took.push(seconds);
    }
    let storm_end = Instant::now();
    report_storm(&appliance, &samples, (storm_start, storm_end), window_secs)?;
    took.sort_by(f64::total_cmp);
    println!("resume_rate {resume_rate} updates/s");
    println!(
        "{resumers} resumes from slot {oldest} ({kept} updates kept): {read} updates read, \
         each took {:.2}–{:.2} s, all done in {:.2} s",
        took.first().copied().unwrap_or(0.0),
        took.last().copied().unwrap_or(0.0),
        (storm_end - storm_start).as_secs_f64()
    );
    Ok(())
}

fn report_storm(
    appliance: &Appliance,
    samples: &Mutex<Samples>,
    (start, end): (Instant, Instant),
    window_secs: u64,
) -> anyhow::Result<()> {
    let samples = samples.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
    let calm_from = start - Duration::from_secs(window_secs);
    let calm = |at: &Instant| *at >= calm_from && *at < start;
    let during = |at: &Instant| *at >= start && *at <= end;
    for (phase, in_phase) in [
        ("before", &calm as &dyn Fn(&Instant) -> bool),
        ("during", &during),
    ] {
        let client = samples.latencies.iter().filter(|s| in_phase(&s.0));
        println!(
            "live publish → client receive, {phase}: {}",
            quantiles(client.clone().map(|s| s.1))?
        );
        println!(
            "live publish → session dequeue (server), {phase}: {}",
            quantiles(client.map(|s| s.2))?
        );
    }
    println!(
        "live subscribers cut for lag: {}",
        metric(
            appliance.http,
            "appliance_stream_disconnects_total{reason=\"lagged\"}"
        )
    );
    Ok(())
}

/// Per subscriber: origin publish → receive; on the relay's also the relay's parts.
#[derive(Default)]
struct HopSamples {
    direct: Vec<u64>,
    relayed: Vec<u64>,
    link: Vec<u64>,
    inside_relay: Vec<u64>,
}

async fn hop(args: &Args, seconds: u64) -> anyhow::Result<()> {
    let rate = args.replay_rate.to_string();
    let origin = start(
        &args.appliance,
        &["--replay-rate", &rate, "--samples", "off"],
    )?;
    let relay = start(
        &args.appliance,
        &["--relay", &format!("http://{}", origin.grpc)],
    )?;
    let mut direct = subscribe(origin.grpc, None).await?;
    let mut relayed = subscribe(relay.grpc, None).await?;
    let samples = Arc::new(Mutex::new(HopSamples::default()));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    let direct_task = {
        let samples = Arc::clone(&samples);
        tokio::spawn(async move {
            while let Ok(Some(Ok(update))) = tokio::time::timeout_at(deadline, direct.next()).await
            {
                if let (Some(timing), Ok(mut samples)) = (timing(&update), samples.lock()) {
                    let now = unix_nanos();
                    samples
                        .direct
                        .push(now.saturating_sub(timing.publish_unix_nanos) / 1_000);
                }
            }
        })
    };
    while let Ok(Some(update)) = tokio::time::timeout_at(deadline, relayed.next()).await {
        let update = update?;
        let now = unix_nanos();
        if let Some(timing) = timing(&update) {
            let mut samples = samples.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
            let micros = |later: u64, earlier: u64| later.saturating_sub(earlier) / 1_000;
            samples.relayed.push(micros(now, timing.publish_unix_nanos));
            samples.link.push(micros(
                timing.relay_receive_unix_nanos,
                timing.publish_unix_nanos,
            ));
            samples.inside_relay.push(micros(
                timing.relay_publish_unix_nanos,
                timing.relay_receive_unix_nanos,
            ));
        }
    }
    direct_task.await.context("the origin's subscriber")?;
    let samples = samples.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
    for (what, values) in [
        ("origin publish → origin's subscriber", &samples.direct),
        ("origin publish → relay's subscriber", &samples.relayed),
        ("  origin publish → relay receive", &samples.link),
        ("  relay receive → relay publish", &samples.inside_relay),
    ] {
        println!("{what:<40} {}", quantiles(values.iter().copied())?);
    }
    drop(relay);
    drop(origin);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match args.measure {
            Measure::Storm {
                resumers,
                live,
                recent_slots,
                resume_rate,
                window_secs,
            } => {
                storm(
                    &args,
                    (resumers, live, recent_slots, window_secs),
                    resume_rate,
                )
                .await
            }
            Measure::Hop { seconds } => hop(&args, seconds).await,
        }
    })
}
