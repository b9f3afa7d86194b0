//! The harness of `decoder_ab.sh`: the decoder of a git revision (`decoder_old`) and the working
//! tree's (`decoder`) in one process, pass after pass alternately, so that the host's noise (which
//! moves whole runs of `decode_pass` by ±20 % on this VM) hits both alike. A pass is
//! `decode_pass`'s: a fresh decoder over the six lossy (or full) fixture files, every batch
//! drained and every transaction's first signature read; decoders are built and prefaulted
//! outside the timing, as with the bench allocator.
//!
//! `decoder_ab <fixture dir> <lossy|full> <unauthenticated|unchecked> <passes>`: prints each
//! side's p10 and p50 in shreds/s and the median of the per-pair ratios new/old.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::time::Instant;

const PAGE_BYTES: usize = 4096;
const PREFAULT_MIN_BYTES: usize = 64 << 10;

/// `bench::PrefaultAlloc`: blocks of 64 KiB or more written once per page when handed out, so
/// that a fresh decoder's page faults fall outside the timing.
struct PrefaultAlloc;

fn prefault(block: *mut u8, len: usize) {
    if block.is_null() || len < PREFAULT_MIN_BYTES {
        return;
    }
    for offset in (0..len).step_by(PAGE_BYTES) {
        // SAFETY: inside the fresh block, which carries no value yet (or zeros).
        unsafe { block.add(offset).write_volatile(0) };
    }
}

// SAFETY: forwards to `System`; only writes zeros into fresh blocks.
unsafe impl GlobalAlloc for PrefaultAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let block = unsafe { System.alloc(layout) };
        prefault(block, layout.size());
        block
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let block = unsafe { System.alloc_zeroed(layout) };
        prefault(block, layout.size());
        block
    }
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        unsafe { System.dealloc(block, layout) }
    }
}

#[global_allocator]
static ALLOC: PrefaultAlloc = PrefaultAlloc;

/// One side: builds a fresh decoder (untimed), then times one pass; returns (seconds, transactions).
macro_rules! side {
    ($name:ident, $krate:ident) => {
        fn $name(records: &[Vec<u8>], authenticate: bool) -> (f64, u64) {
            use $krate::{DecoderConfig, LeaderSchedule, ShredDecoder};
            let mut config = DecoderConfig {
                shred_version: Some(50093),
                max_batch_bytes: 4 << 20,
                ..DecoderConfig::default()
            };
            config.fec.max_sets_in_flight = 128;
            config.fec.authenticate = authenticate;
            let mut decoder = ShredDecoder::new(config, LeaderSchedule::Unchecked);
            let started = Instant::now();
            let mut transactions = 0;
            for (rx_ns, record) in (1_u64..).zip(records) {
                black_box(decoder.ingest(record, rx_ns));
                while let Some(batch) = decoder.next_batch() {
                    for transaction in batch.entries.transactions() {
                        black_box(transaction.first_signature());
                        transactions += 1;
                    }
                }
            }
            let seconds = started.elapsed().as_secs_f64();
            drop(decoder);
            (seconds, transactions)
        }
    };
}
side!(pass_old, decoder_old);
side!(pass_new, decoder);

/// Records of the length-prefixed fixture files (u16 little-endian length, then the bytes).
fn read_records(dir: &str, suffix: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("fixture dir")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("slot-") && name.ends_with(suffix) && !(suffix == ".bin" && name.ends_with(".full.bin"))
        })
        .collect();
    files.sort();
    let mut records = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).expect("fixture");
        let mut rest = &bytes[..];
        while let [low, high, tail @ ..] = rest {
            let len = usize::from(u16::from_le_bytes([*low, *high]));
            records.push(tail[..len].to_vec());
            rest = &tail[len..];
        }
    }
    records
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, order, mode, passes] = &args[..] else {
        eprintln!("usage: decoder_ab <fixture dir> <lossy|full> <unauthenticated|unchecked> <passes>");
        std::process::exit(2);
    };
    let suffix = if order == "full" { ".full.bin" } else { ".bin" };
    let authenticate = mode == "unchecked";
    let passes: usize = passes.parse().expect("passes");
    let records = read_records(dir, suffix);
    let (_, old_transactions) = pass_old(&records, authenticate);
    let (_, new_transactions) = pass_new(&records, authenticate);
    assert_eq!(old_transactions, new_transactions, "the two decoders disagree");
    let (mut old, mut new, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for pass in 0..passes {
        let (a, b) = if pass % 2 == 0 {
            let a = pass_old(&records, authenticate).0;
            (a, pass_new(&records, authenticate).0)
        } else {
            let b = pass_new(&records, authenticate).0;
            (pass_old(&records, authenticate).0, b)
        };
        old.push(a);
        new.push(b);
        ratios.push(a / b);
    }
    let rate = |seconds: f64| records.len() as f64 / seconds / 1e3;
    for (name, side) in [("old", &mut old), ("new", &mut new)] {
        side.sort_by(f64::total_cmp);
        println!(
            "{name}: {order} {mode}, {} records, {} transactions: p10 {:.0} k, p50 {:.0} k shreds/s",
            records.len(),
            new_transactions,
            rate(side[side.len() / 10]),
            rate(side[side.len() / 2])
        );
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q) as usize];
    println!("new/old speed, per pair: median {:.3} (quartiles {:.3}-{:.3})", at(0.5), at(0.25), at(0.75));
}
