//! Writes a synthetic epoch CAR (archive::synth, the stand-in for a validator's blocks) for the
//! archive benchmarks: `archive_synth --out FILE [--mb 600] [--epoch 5]`. The shape is the one of
//! `benches/archive_index.rs` (16 entries of 8 transactions per block, a 50,000-address pool, one
//! 40 KB log every 997 transactions). Index it with `appliance archive index FILE`, serve it with
//! `rpc_fixture_server --archive DIR`. Keep the output out of git (e.g. under /tmp).

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Instant;

use archive::writer::{CarWriter, RootKind, WriterOptions};
use testkit::synth::{Synth, SynthOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out = None;
    let mut megabytes: u64 = 600;
    let mut epoch: u64 = 5;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--out" => out = Some(PathBuf::from(value)),
            "--mb" => megabytes = value.parse()?,
            "--epoch" => epoch = value.parse()?,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let out = out.ok_or("--out FILE is required")?;
    let started = Instant::now();
    let options = SynthOptions {
        first_slot: epoch * 432_000,
        slots: 431_000,
        skip_every: 12,
        entries_per_block: 16,
        txs_per_entry: 8,
        address_pool: 50_000,
        big_log_every: 997,
        big_log_bytes: 40_000,
        base_time: 1_590_000_000,
        seed: epoch,
    };
    let file = BufWriter::with_capacity(1 << 20, File::create(&out)?);
    let mut writer = CarWriter::new(file, RootKind::Epoch(epoch), WriterOptions::default())?;
    let (mut blocks, mut transactions) = (0u64, 0u64);
    for block in Synth::new(options) {
        transactions += block
            .entries
            .iter()
            .map(|e| e.transactions.len() as u64)
            .sum::<u64>();
        writer.write_block(&block)?;
        blocks += 1;
        if writer.position() >= megabytes << 20 {
            break;
        }
    }
    let size = writer.position();
    writer.finish()?;
    println!(
        "wrote {} ({:.1} MB, {blocks} blocks, {transactions} transactions) in {:.1} s",
        out.display(),
        size as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
