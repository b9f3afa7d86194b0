//! `decode_pass`: the pass `decode_path` times (a fresh `ShredDecoder` per pass over the six fixture
//! files, every batch drained and its transactions walked) as a plain binary, for what criterion
//! does not serve: instruction counts under `valgrind --tool=callgrind`, which this VM's noise does
//! not move (`--passes 2`; the pass is `bench::decode_all`), and a quick wall-clock spread.
//!
//! ```text
//! decode_pass [--order lossy|full] [--mode unauthenticated|unchecked] [--passes 200]
//! ```
//! Prints one JSON line: records per pass, and shreds per second of the best pass, the median one
//! and the one faster than nine passes in ten (`p90`). The decoders are built outside the timing with the bench allocator's prefaulting, as
//! in `decode_path`.

use std::time::Instant;

use anyhow::bail;
use clap::Parser;
use decoder::{LeaderSchedule, ShredDecoder};

#[global_allocator]
static ALLOC: bench::PrefaultAlloc = bench::PrefaultAlloc;

#[derive(Parser, Debug)]
#[command(about = "decode_path's fresh-decoder pass, repeated, for callgrind and quick spreads")]
struct Args {
    /// `lossy` (shuffled files with drops) or `full` (complete files in emitted order).
    #[arg(long, default_value = "lossy")]
    order: String,
    /// `unauthenticated` (trusted feed) or `unchecked` (Merkle proofs, no leader schedule).
    #[arg(long, default_value = "unauthenticated")]
    mode: String,
    /// Timed passes, each on a fresh decoder (one more, untimed, checks the output first).
    #[arg(long, default_value_t = 200)]
    passes: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let records = match args.order.as_str() {
        "lossy" => bench::lossy_records(),
        "full" => bench::full_records(),
        other => bail!("--order {other}: expected lossy or full"),
    };
    let mut config = bench::decoder_config();
    config.fec.authenticate = match args.mode.as_str() {
        "unauthenticated" => false,
        "unchecked" => true,
        other => bail!("--mode {other}: expected unauthenticated or unchecked"),
    };
    if args.passes == 0 {
        bail!("--passes must be at least 1");
    }
    let fresh = || ShredDecoder::new(config, LeaderSchedule::Unchecked);
    let summary = bench::decode_all(&mut fresh(), &records);
    if summary.rejected != 0 {
        bail!("{} records rejected: {summary:?}", summary.rejected);
    }
    let mut seconds = Vec::with_capacity(args.passes);
    for _ in 0..args.passes {
        let mut decoder = fresh();
        let started = Instant::now();
        std::hint::black_box(bench::decode_all(&mut decoder, &records));
        seconds.push(started.elapsed().as_secs_f64());
    }
    seconds.sort_by(f64::total_cmp);
    let rate = |seconds: f64| (records.len() as f64 / seconds).round();
    println!(
        "{}",
        serde_json::json!({
            "order": args.order,
            "mode": args.mode,
            "records": records.len(),
            "transactions": summary.transactions,
            "passes": args.passes,
            "p90_shreds_per_s": rate(seconds[seconds.len() / 10]),
            "median_shreds_per_s": rate(seconds[seconds.len() / 2]),
            "best_shreds_per_s": rate(seconds[0]),
        })
    );
    Ok(())
}
