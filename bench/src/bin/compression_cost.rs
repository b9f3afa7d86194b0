//! What gRPC compression would buy on the stream (issue 23): every update the fixtures' complete
//! shred files produce for a match-all subscriber (the embedded default's feed), encoded as on the
//! wire, compressed one message at a time as tonic does (gzip level 6, zstd level 3), with the
//! bytes saved and the CPU time per message. tonic compresses per stream, after our encode-once
//! fan-out: the cost is paid once per subscriber per update.
//!
//! `cargo run --release -p bench --bin compression_cost -- --passes 20`

use std::io::Read;
use std::time::Instant;

use clap::Parser;
use decoder::dex::ProgramRegistry;
use decoder::entry::parse_components;
use prost::Message;
use stream::encode::{DecodeStats, Placement, encode_transaction};

#[derive(Parser, Debug)]
#[command(about = "gzip and zstd per message on the stream's real updates")]
struct Args {
    /// Passes over the updates when timing.
    #[arg(long, default_value_t = 20)]
    passes: usize,
}

/// The encoded updates of every transaction of the complete fixture files.
fn updates() -> Vec<Vec<u8>> {
    let registry = ProgramRegistry::default();
    let mut stats = DecodeStats::default();
    let mut out = Vec::new();
    for batch in bench::full_file_batches() {
        let Ok(entries) = parse_components(&batch) else {
            continue;
        };
        for transaction in entries.transactions() {
            let decoded = decoder::decode_transaction(&transaction, &registry, &mut stats);
            for update in encode_transaction(&transaction, &decoded, Placement::default()) {
                out.push(update.encode_to_vec());
            }
        }
    }
    out
}

/// One message compressed into `out` by a codec.
type Compress = fn(&[u8], &mut Vec<u8>) -> std::io::Result<()>;

fn gzip(message: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    let mut encoder = flate2::read::GzEncoder::new(message, flate2::Compression::new(6));
    encoder.read_to_end(out).map(drop)
}

fn zstd(message: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    let compressed = zstd::bulk::compress(message, zstd::DEFAULT_COMPRESSION_LEVEL)?;
    out.extend_from_slice(&compressed);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let updates = updates();
    let plain: usize = updates.iter().map(Vec::len).sum();
    println!(
        "{} updates, {plain} bytes ({} bytes per update on average)",
        updates.len(),
        plain / updates.len().max(1)
    );
    let codecs: [(&str, Compress); 2] = [("gzip-6", gzip), ("zstd-3", zstd)];
    for (name, compress) in codecs {
        let mut out = Vec::with_capacity(4096);
        let mut compressed = 0usize;
        let mut larger = 0usize;
        for message in &updates {
            out.clear();
            compress(message, &mut out)?;
            compressed += out.len();
            larger += usize::from(out.len() >= message.len());
        }
        let started = Instant::now();
        for _ in 0..args.passes {
            for message in &updates {
                out.clear();
                compress(std::hint::black_box(message), &mut out)?;
            }
        }
        let per_message =
            started.elapsed().as_nanos() as f64 / (args.passes * updates.len()) as f64;
        println!(
            "  {name}: {compressed} bytes ({:+.1} % against plain), {larger} of {} messages not smaller, \
             {:.1} µs per message ({:.0} MB/s of plain input)",
            (compressed as f64 / plain as f64 - 1.0) * 100.0,
            updates.len(),
            per_message / 1_000.0,
            plain as f64 / updates.len() as f64 / per_message * 1_000.0,
        );
    }
    Ok(())
}
