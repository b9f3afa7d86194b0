//! Archive benchmark (a timing binary, `harness = false`): writes a realistic epoch of at least
//! 200 MB with the CAR writer to `$ARCHIVE_BENCH_DIR` (default `/tmp/archive-bench`), then
//!
//! 1. builds all its indexes and reports MB/s of CAR and the build's peak RSS (VmHWM, reset
//!    before the build through `/proc/self/clear_refs`);
//! 2. opens it as a `LocalArchive` and reports getBlock and getTransaction lookups per second
//!    (random present slots / known signatures, warm page cache, one thread).
//!
//! Run: `cargo bench -p bench --bench archive_index`. `ARCHIVE_BENCH_MB` changes the CAR size.

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

use archive::build::{BuildOptions, build_indexes};
use archive::writer::{CarWriter, RootKind, WriterOptions};
use archive::{ArchiveStore, LocalArchive, SlotLookup};
use testkit::synth::{Rng, Synth, SynthOptions};

const EPOCH: u64 = 5;

fn peak_rss_mb() -> f64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// User + system CPU seconds of this process so far (`/proc/self/stat`, 100 ticks per second).
fn cpu_seconds() -> f64 {
    let stat = fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // After the command name: state is field 0, utime 11, stime 12.
    (tick(11) + tick(12)) / 100.0
}

fn reset_peak_rss() {
    let _ = fs::write("/proc/self/clear_refs", "5");
}

/// Writes the epoch; returns the CAR path, the present slots and every 50th signature.
fn generate(dir: &Path, target_bytes: u64) -> (PathBuf, Vec<u64>, Vec<[u8; 64]>) {
    fs::create_dir_all(dir).expect("bench dir");
    for entry in fs::read_dir(dir).expect("bench dir").flatten() {
        let _ = fs::remove_file(entry.path());
    }
    let car = dir.join(format!("epoch-{EPOCH}.car"));
    let options = SynthOptions {
        first_slot: EPOCH * 432_000,
        slots: 431_000,
        skip_every: 12,
        entries_per_block: 16,
        txs_per_entry: 8,
        address_pool: 50_000,
        big_log_every: 997,
        big_log_bytes: 40_000,
        base_time: 1_590_000_000,
        seed: 5,
    };
    let file = BufWriter::with_capacity(1 << 20, File::create(&car).expect("create CAR"));
    let mut writer =
        CarWriter::new(file, RootKind::Epoch(EPOCH), WriterOptions::default()).expect("writer");
    let mut slots = Vec::new();
    let mut signatures = Vec::new();
    let mut n = 0u64;
    for block in Synth::new(options) {
        for tx in block.entries.iter().flat_map(|e| &e.transactions) {
            n += 1;
            if n.is_multiple_of(50) {
                signatures.push(archive::txwire::first_signature(&tx.wire).expect("signature"));
            }
        }
        writer.write_block(&block).expect("write block");
        slots.push(block.slot);
        if writer.position() >= target_bytes {
            break;
        }
    }
    writer.finish().expect("finish CAR");
    (car, slots, signatures)
}

/// With `ARCHIVE_BENCH_REUSE` set: reuses the CAR of an earlier run (its indexes are removed).
fn rescan(dir: &Path) -> (PathBuf, Vec<u64>, Vec<[u8; 64]>) {
    let car = dir.join(format!("epoch-{EPOCH}.car"));
    for entry in fs::read_dir(dir).expect("bench dir").flatten() {
        if entry.path() != car {
            let _ = fs::remove_file(entry.path());
        }
    }
    let file = std::io::BufReader::new(File::open(&car).expect("CAR"));
    let mut stream = archive::car::CarStream::new(file, 32 << 20).expect("CAR header");
    let (mut slots, mut signatures, mut n) = (Vec::new(), Vec::new(), 0u64);
    while let Some(section) = stream.next_section().expect("section") {
        match archive::node::decode(section.node).expect("node") {
            archive::node::Node::Block(block) => slots.push(block.slot),
            archive::node::Node::Transaction(tx) => {
                n += 1;
                if n.is_multiple_of(50) {
                    signatures
                        .push(archive::txwire::first_signature(tx.data.data).expect("signature"));
                }
            }
            _ => {}
        }
    }
    (car, slots, signatures)
}

fn main() {
    // criterion-style arguments (`--bench`) are ignored.
    let dir = std::env::var_os("ARCHIVE_BENCH_DIR")
        .map_or_else(|| PathBuf::from("/tmp/archive-bench"), PathBuf::from);
    let target_mb: u64 = std::env::var("ARCHIVE_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(220);
    let started = Instant::now();
    let reuse = std::env::var_os("ARCHIVE_BENCH_REUSE").is_some()
        && dir.join(format!("epoch-{EPOCH}.car")).is_file();
    let (car, slots, signatures) = if reuse {
        rescan(&dir)
    } else {
        generate(&dir, target_mb << 20)
    };
    let size = fs::metadata(&car).expect("CAR size").len();
    println!(
        "generated {} ({:.1} MB, {} blocks) in {:.1} s",
        car.display(),
        size as f64 / 1e6,
        slots.len(),
        started.elapsed().as_secs_f64()
    );

    reset_peak_rss();
    let cpu_before = cpu_seconds();
    let options = BuildOptions {
        progress: false,
        partitions: None,
    };
    let report = build_indexes(&car, &options).expect("index build");
    let secs = report.elapsed.as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    let rss = peak_rss_mb();
    println!(
        "index build: {} transactions, {:.2} s wall, {:.2} CPU-s, {:.1} MB/s of CAR (wall), {:.1} MB per CPU-second, peak RSS {:.0} MB ({:.0} MB per GB of CAR)",
        report.transactions,
        secs,
        cpu,
        size as f64 / 1e6 / secs,
        size as f64 / 1e6 / cpu.max(1e-9),
        rss,
        rss / (size as f64 / 1e9)
    );

    let store = LocalArchive::open(&dir).expect("open archive");
    let mut rng = Rng::new(1);
    let n = 20_000;
    let t = Instant::now();
    let mut txs = 0usize;
    for _ in 0..n {
        let slot = slots[rng.below(slots.len() as u64) as usize];
        match store.block(slot).expect("block") {
            SlotLookup::Found(block) => txs += block.transactions.len(),
            other => panic!("slot {slot}: {other:?}"),
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "getBlock: {:.0} blocks/s ({:.1} µs each, {:.0} transactions per block)",
        n as f64 / secs,
        secs * 1e6 / n as f64,
        txs as f64 / n as f64
    );
    let n = 50_000;
    let t = Instant::now();
    for _ in 0..n {
        let sig = signatures[rng.below(signatures.len() as u64) as usize];
        assert!(store.transaction(&sig).expect("transaction").is_some());
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "getTransaction: {:.0} lookups/s ({:.1} µs each)",
        n as f64 / secs,
        secs * 1e6 / n as f64
    );
}
