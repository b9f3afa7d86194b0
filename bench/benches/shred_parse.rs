//! `parse_shred` over every record of the complete fixture files (5,440 shreds: data and coding,
//! ordinary and resigned variants). Goal: ≥ 5 M shreds/s per core.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decoder::shred::{ParseOptions, parse_shred};

fn shred_parse(c: &mut Criterion) {
    let records = bench::full_records();
    let options = ParseOptions::default();
    for record in &records {
        assert!(
            parse_shred(record, options).is_ok(),
            "every fixture shred parses"
        );
    }
    let mut group = c.benchmark_group("shred_parse");
    group.throughput(Throughput::Elements(records.len() as u64));
    group.bench_function("full_files", |b| {
        b.iter(|| {
            for record in &records {
                // Read two header fields so the view is really built, not just validated.
                if let Ok(shred) = parse_shred(black_box(record), options) {
                    black_box((shred.slot(), shred.erasure_index()));
                }
            }
        });
    });
    group.finish();
}

criterion_group!(benches, shred_parse);
criterion_main!(benches);
