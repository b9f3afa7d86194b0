//! Per-block statistics of a ~4 MB getBlock JSON (the insights ingest's per-block cost): the
//! fixture chain's transactions (votes included, mainnet-like 70% share of the count) repeated,
//! each non-vote transaction given 24 log lines as mainnet transactions carry, until the block's
//! JSON reaches 4 MiB.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark: failing loudly is the point.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use insights::from_rpc::stats_from_block_json;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../insights/tests/fixtures/insights/blocks")
}

/// A block JSON of at least `target` bytes.
pub fn big_block(target: usize) -> Vec<u8> {
    let mut votes = Vec::new();
    let mut others = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let block: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        for mut tx in block["transactions"].as_array().unwrap().clone() {
            let program_index = tx["transaction"]["message"]["instructions"][0]["programIdIndex"]
                .as_u64()
                .unwrap();
            let first_program =
                &tx["transaction"]["message"]["accountKeys"][program_index as usize];
            if first_program == "Vote111111111111111111111111111111111111111" {
                votes.push(tx);
            } else {
                let logs: Vec<String> = (0..24)
                    .map(|line| format!("Program log: instruction step {line} consumed units, balance updated for the swap route leg"))
                    .collect();
                tx["meta"]["logMessages"] = json!(logs);
                others.push(tx);
            }
        }
    }
    let mut transactions = Vec::new();
    let mut size = 0usize;
    let (mut v, mut o) = (0usize, 0usize);
    while size < target {
        // 7 votes for every 3 others.
        let tx = if transactions.len() % 10 < 7 {
            v += 1;
            votes[v % votes.len()].clone()
        } else {
            o += 1;
            others[o % others.len()].clone()
        };
        size += tx.to_string().len() + 1;
        transactions.push(tx);
    }
    let block = json!({"blockHeight": 1, "blockTime": 1, "blockhash": "11111111111111111111111111111111",
        "parentSlot": 1, "previousBlockhash": "11111111111111111111111111111111", "transactions": transactions});
    serde_json::to_vec(&block).unwrap()
}

fn bench(c: &mut Criterion) {
    let block = big_block(4 << 20);
    let stats = stats_from_block_json(2, &block).unwrap();
    eprintln!(
        "block JSON {} bytes, {} transactions ({} non-vote)",
        block.len(),
        stats.txs.len() + stats.vote_count as usize,
        stats.txs.len()
    );
    let mut group = c.benchmark_group("insights");
    group.throughput(Throughput::Bytes(block.len() as u64));
    group.bench_function("block_stats_4MiB_json", |b| {
        b.iter(|| stats_from_block_json(2, black_box(&block)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
