//! `decode_cpu`: steady-state decode throughput per CPU-second of the decoding thread, for a
//! machine that other work shares. The `decode_steady` bench times wall clock, which a busy box
//! inflates; this tool pre-renumbers `--loops` loops of the fixture slots
//! ([`bench::steady::SteadyFeed`]), decodes them all with one long-lived `ShredDecoder`, and
//! divides the records by the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) spent decoding, which
//! excludes time the thread waited for a core. It repeats the measurement `--rounds` times (a
//! fresh feed and decoder each) and prints one JSON line per round and the best.
//!
//! ```text
//! decode_cpu [--order lossy|full] [--mode unauthenticated|unchecked|checked] [--loops 40] [--rounds 5]
//! ```
//! The first four loops of every round warm the decoder up and are not counted.

use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use decoder::{LeaderSchedule, ShredDecoder};

use bench::steady::{FeedOrder, SteadyFeed, steady_decoder_config};

/// Loops decoded before the clock starts.
const WARM_UP_LOOPS: usize = 4;

#[derive(Parser, Debug)]
#[command(about = "Steady-state decode throughput per CPU-second of the decoding thread")]
struct Args {
    /// `lossy` (shuffled files with drops) or `full` (complete files in emitted order).
    #[arg(long, default_value = "lossy")]
    order: String,
    /// `unauthenticated`, `unchecked` (Merkle proofs) or `checked` (also leader signatures).
    #[arg(long, default_value = "unauthenticated")]
    mode: String,
    /// Loops of the six fixture slots decoded per round (after the warm-up).
    #[arg(long, default_value_t = 40)]
    loops: usize,
    #[arg(long, default_value_t = 5)]
    rounds: usize,
}

fn thread_cpu_time() -> anyhow::Result<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the duration of the call.
    let result = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut now) };
    if result != 0 {
        bail!("clock_gettime: {}", std::io::Error::last_os_error());
    }
    Ok(Duration::new(
        u64::try_from(now.tv_sec)?,
        u32::try_from(now.tv_nsec)?,
    ))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let order = match args.order.as_str() {
        "lossy" => FeedOrder::Lossy,
        "full" => FeedOrder::Full,
        other => bail!("--order: unknown order {other:?} (lossy or full)"),
    };
    let authenticate = match args.mode.as_str() {
        "unauthenticated" => false,
        "unchecked" | "checked" => true,
        other => bail!("--mode: unknown mode {other:?}"),
    };
    let mut best: f64 = 0.0;
    for round in 0..args.rounds {
        let mut feed = SteadyFeed::new(order);
        let leaders = if args.mode == "checked" {
            feed.leaders()
        } else {
            LeaderSchedule::Unchecked
        };
        let mut decoder = ShredDecoder::new(steady_decoder_config(authenticate), leaders);
        let loops: Vec<Vec<Vec<u8>>> = (0..WARM_UP_LOOPS + args.loops)
            .map(|_| {
                let mut records = Vec::new();
                feed.next_loop(&mut records);
                records
            })
            .collect();
        let (warm_up, timed) = loops.split_at(WARM_UP_LOOPS);
        for records in warm_up {
            bench::decode_all(&mut decoder, records);
        }
        let start = thread_cpu_time()?;
        let mut records_total = 0u64;
        let mut transactions = 0u64;
        let mut rejected = 0u64;
        for records in timed {
            let summary = bench::decode_all(&mut decoder, records);
            records_total += records.len() as u64;
            transactions += summary.transactions;
            rejected += summary.rejected;
        }
        let cpu = thread_cpu_time()?.checked_sub(start).context("CPU clock")?;
        if rejected != 0 {
            bail!("{rejected} records rejected: the feed is broken");
        }
        let per_cpu_second = records_total as f64 / cpu.as_secs_f64();
        best = best.max(per_cpu_second);
        println!(
            "{{\"round\":{round},\"order\":\"{}\",\"mode\":\"{}\",\"records\":{records_total},\"transactions\":{transactions},\"cpu_s\":{:.4},\"shreds_per_cpu_s\":{:.0}}}",
            args.order,
            args.mode,
            cpu.as_secs_f64(),
            per_cpu_second
        );
    }
    println!("{{\"best_shreds_per_cpu_s\":{best:.0}}}");
    Ok(())
}
