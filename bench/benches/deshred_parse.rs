//! Entry-batch parsing: `parse_entry_batch` (strict walk of every entry and transaction) and then
//! a walk over all transactions reading each first signature, over the 27 real batches of the
//! fixture slots (2.1 MB, 907 entries, 4,685 transactions). The batches are assembled once, in the
//! setup, by decoding the complete files through `ShredDecoder`.
//!
//! `all_batches` reports bytes/s; time per batch is its time / 27. `largest_batch` is the biggest
//! single batch (194 KB, slot 361200001).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decoder::entry::parse_entry_batch;

fn parse_and_walk(bytes: &[u8]) -> u64 {
    match parse_entry_batch(black_box(bytes)) {
        Ok(entries) => bench::walk_transactions(&entries),
        Err(error) => panic!("fixture batch does not parse: {error}"),
    }
}

fn deshred_parse(c: &mut Criterion) {
    let batches = bench::full_file_batches();
    let total_bytes: usize = batches.iter().map(Vec::len).sum();
    let transactions: u64 = batches.iter().map(|batch| parse_and_walk(batch)).sum();
    let largest = batches
        .iter()
        .max_by_key(|batch| batch.len())
        .expect("batches");
    println!(
        "deshred_parse: {} batches, {total_bytes} bytes, {transactions} transactions; \
         largest batch {} bytes",
        batches.len(),
        largest.len()
    );

    let mut group = c.benchmark_group("deshred_parse");
    group.throughput(Throughput::Bytes(total_bytes as u64));
    group.bench_function("all_batches", |b| {
        b.iter(|| {
            for batch in &batches {
                black_box(parse_and_walk(batch));
            }
        });
    });
    group.throughput(Throughput::Bytes(largest.len() as u64));
    group.bench_function("largest_batch", |b| {
        b.iter(|| black_box(parse_and_walk(largest)))
    });
    group.finish();
}

criterion_group!(benches, deshred_parse);
criterion_main!(benches);
