//! What DEX and aggregator decoding add to a transaction that is already parsed (the shred path
//! parses every transaction anyway): `dex_instructions` over a typical swap transaction with one
//! supported instruction (goal ≤ 100 ns), and a 4-step aggregator route decoded with its legs
//! located (goal ≤ 1 µs). Inputs are the public dex-vectors and the generated route vectors in
//! `decoder/tests/fixtures/`.

use std::hint::black_box;

use base64::Engine;
use criterion::{Criterion, criterion_group, criterion_main};
use decoder::delta::route_calls;
use decoder::dex::{InstructionOutcome, ProgramRegistry, dex_instructions};
use decoder::transaction::parse_transaction_exact;
use serde_json::Value;

/// A file of `decoder/tests/fixtures/`.
fn read_fixture(name: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../decoder/tests/fixtures/");
    std::fs::read(format!("{path}{name}")).expect("fixture")
}

/// The wire bytes of the public vector with this id.
fn public_vector(id: &str) -> Vec<u8> {
    let text = String::from_utf8(read_fixture("dex/public-vectors.jsonl")).expect("utf-8");
    let line = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("json"))
        .find(|vector| vector["id"] == id)
        .expect("vector");
    base64::engine::general_purpose::STANDARD
        .decode(line["wire_base64"].as_str().expect("wire"))
        .expect("base64")
}

fn dex_decode(c: &mut Criterion) {
    let registry = ProgramRegistry::default();
    let mut group = c.benchmark_group("dex_decode");
    for id in [
        "sample.beta_cpmm.swap_base_input",
        "sample.gamma_dbc.swap",
        "sample.alpha_fun.buy",
    ] {
        let wire = public_vector(id);
        let transaction = parse_transaction_exact(&wire).expect("transaction");
        let decoded = dex_instructions(&transaction, &registry)
            .filter(|outcome| matches!(outcome, InstructionOutcome::Decoded(_)))
            .count();
        assert_eq!(decoded, 1, "{id} has one supported instruction");
        group.bench_function(format!("one_instruction/{id}"), |b| {
            b.iter(|| {
                for outcome in dex_instructions(black_box(&transaction), &registry) {
                    black_box(outcome);
                }
            })
        });
        group.bench_function(format!("parse_and_decode/{id}"), |b| {
            b.iter(|| {
                let transaction = parse_transaction_exact(black_box(&wire)).expect("transaction");
                for outcome in dex_instructions(&transaction, &registry) {
                    black_box(outcome);
                }
            })
        });
    }
    group.finish();
}

fn route_decode(c: &mut Criterion) {
    let registry = ProgramRegistry::default();
    // The shared-accounts route of the public vectors has 3 steps; build a 4-step route from the
    // generated vectors: the first error-free line with 4 steps and located legs.
    let text = String::from_utf8(read_fixture("delta/route-vectors.jsonl")).expect("utf-8");
    let vector = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("json"))
        .find(|v| {
            v["expected"]["error"].is_null()
                && v["expected"]["declared_step_count"] == 4
                && v["expected"]["legs"]
                    .as_array()
                    .is_some_and(|legs| !legs.is_empty())
        })
        .expect("a 4-step route vector");
    let wire = route_transaction(&vector);
    let transaction = parse_transaction_exact(&wire).expect("transaction");
    assert_eq!(route_calls(&transaction, &registry).count(), 1);
    let mut group = c.benchmark_group("route_decode");
    group.bench_function("four_steps_with_legs", |b| {
        b.iter(|| {
            for call in route_calls(black_box(&transaction), &registry) {
                black_box(call.route.single_hop_amounts());
                for leg in call.legs(&transaction, &registry) {
                    black_box(leg);
                }
            }
        })
    });
    group.finish();
}

/// A v0 transaction with the vector's static keys, its one aggregator instruction, and one lookup
/// table covering the account indexes past the static keys.
fn route_transaction(vector: &Value) -> Vec<u8> {
    let keys: Vec<Vec<u8>> = vector["static_keys"]
        .as_array()
        .expect("keys")
        .iter()
        .map(|key| bs58_decode(key.as_str().expect("key")))
        .collect();
    let aggregator = bs58_decode(decoder::dex::DELTA_MAINNET_ID);
    let program_index = keys
        .iter()
        .position(|key| *key == aggregator)
        .expect("aggregator key");
    let accounts: Vec<u8> = vector["account_indices"]
        .as_array()
        .expect("accounts")
        .iter()
        .map(|index| index.as_u64().expect("index") as u8)
        .collect();
    let data = hex(vector["data_hex"].as_str().expect("data"));
    let loaded = accounts
        .iter()
        .map(|&i| usize::from(i) + 1)
        .max()
        .unwrap_or(0);
    let loaded = loaded.saturating_sub(keys.len());
    let mut wire = vec![1];
    wire.extend_from_slice(&[7; 64]);
    wire.extend_from_slice(&[0x80, 1, 0, 0]);
    compact_u16(&mut wire, keys.len());
    keys.iter().for_each(|key| wire.extend_from_slice(key));
    wire.extend_from_slice(&[3; 32]);
    compact_u16(&mut wire, 1);
    wire.push(program_index as u8);
    compact_u16(&mut wire, accounts.len());
    wire.extend_from_slice(&accounts);
    compact_u16(&mut wire, data.len());
    wire.extend_from_slice(&data);
    compact_u16(&mut wire, usize::from(loaded > 0));
    if loaded > 0 {
        wire.extend_from_slice(&[9; 32]);
        compact_u16(&mut wire, loaded);
        wire.extend((0..loaded).map(|index| index as u8));
        compact_u16(&mut wire, 0);
    }
    wire
}

fn compact_u16(out: &mut Vec<u8>, mut value: usize) {
    loop {
        let byte = (value & 0x7F) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn bs58_decode(text: &str) -> Vec<u8> {
    bs58::decode(text).into_vec().expect("base58")
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

criterion_group!(benches, dex_decode, route_decode);
criterion_main!(benches);
