//! `transaction_updates` over the public dex-vectors: the update kind, the envelope, the delta
//! update's route summary and legs, and the decoding counters.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use ::stream::encode::{DecodeStats, Placement, transaction_updates};
use base64::Engine;
use decoder::dex::{DexError, ProgramRegistry};
use decoder::transaction::parse_transaction_exact;
use serde_json::Value;
use stream_proto::stream::subscribe_update::Update;

fn vectors() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../decoder/tests/fixtures/dex/public-vectors.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn update_kinds_envelopes_and_legs_conformance() {
    let registry = ProgramRegistry::default();
    let mut stats = DecodeStats::default();
    let placement = Placement {
        slot: 42,
        tx_index: 7,
    };
    for vector in vectors() {
        let id = vector["id"].as_str().unwrap();
        let wire = base64::engine::general_purpose::STANDARD
            .decode(vector["wire_base64"].as_str().unwrap())
            .unwrap();
        let transaction = parse_transaction_exact(&wire).unwrap();
        let updates = transaction_updates(&transaction, &registry, placement, &mut stats);
        assert_eq!(updates.len(), 1, "{id}");
        let expected = &vector["expected"];
        let direct = expected["instructions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["optional"] != true)
            .count();
        match updates[0].update.as_ref().unwrap() {
            Update::Transaction(envelope) => {
                assert_eq!(vector["kind"], "dex", "{id}");
                assert_eq!((envelope.slot, envelope.tx_index), (42, 7));
                assert_eq!(envelope.signature, transaction.first_signature().to_vec());
                assert_eq!(envelope.decoded_instructions.len(), direct, "{id}");
            }
            Update::Delta(delta) => {
                assert_eq!(vector["kind"], "aggregator", "{id}");
                let aggregator = &expected["aggregator"];
                let envelope = delta.envelope.as_ref().unwrap();
                assert_eq!(envelope.decoded_instructions.len(), direct, "{id}");
                let top = delta.top_level_instruction.as_ref().unwrap();
                assert_eq!(
                    top.instruction_name,
                    aggregator["real_ix_name"].as_str().unwrap()
                );
                assert!(top.decode_error.is_none());
                let named = aggregator["named_account_count"].as_u64().unwrap() as usize;
                assert_eq!(top.named_accounts.len(), named, "{id}");
                assert_eq!(
                    top.remaining_accounts.len() + named,
                    top.account_indices.len()
                );
                let route = top.route.as_ref().unwrap();
                assert_eq!(
                    u64::from(route.route_plan_step_count),
                    aggregator["route_plan_step_count"].as_u64().unwrap()
                );
                let legs = aggregator["legs_wrapping_supported"].as_array().unwrap();
                assert_eq!(delta.dex_legs.len(), legs.len(), "{id}");
                assert_eq!(
                    delta.matched_leg_indices,
                    (0..legs.len() as u32).collect::<Vec<_>>()
                );
                for (leg, wanted) in delta.dex_legs.iter().zip(legs) {
                    let instruction = leg.instruction.as_ref().unwrap();
                    let indices: Vec<u64> = instruction
                        .account_indices
                        .iter()
                        .map(|&i| u64::from(i))
                        .collect();
                    assert_eq!(Value::from(indices), wanted["leg_account_indices"], "{id}");
                    // The leg's program in filters is the DELTA_* value (wrapped + 6).
                    assert_eq!(instruction.program, leg.wrapped_program + 6);
                }
            }
            other => panic!("{id}: {other:?}"),
        }
    }
    assert_eq!(stats.routes_decoded, 3);
    assert_eq!(stats.legs_by_location, [3, 0, 0]);
    assert_eq!(stats.instructions_decoded.iter().sum::<u64>(), 20);
}

#[test]
fn failures_are_counted_per_program_and_reason() {
    // A CPMM swap with its second amount cut short: one truncated-argument failure for BETA_CPMM.
    let vector = vectors()
        .into_iter()
        .find(|v| v["id"] == "sample.beta_cpmm.swap_base_input")
        .unwrap();
    let mut wire = base64::engine::general_purpose::STANDARD
        .decode(vector["wire_base64"].as_str().unwrap())
        .unwrap();
    let raw = hex(vector["expected"]["instructions"][0]["raw_data_hex"]
        .as_str()
        .unwrap());
    let at = wire.windows(raw.len()).position(|w| w == raw).unwrap();
    // Shorten the data's compact length by one and drop its last byte.
    assert_eq!(usize::from(wire[at - 1]), raw.len());
    wire[at - 1] -= 1;
    wire.remove(at + raw.len() - 1);
    let transaction = parse_transaction_exact(&wire).unwrap();
    let mut stats = DecodeStats::default();
    let updates = transaction_updates(
        &transaction,
        &ProgramRegistry::default(),
        Placement::default(),
        &mut stats,
    );
    assert!(updates.is_empty());
    let truncated = DexError::TruncatedArgument { argument: "" }.index();
    assert_eq!(
        stats.instruction_failures[2][truncated], 1,
        "BETA_CPMM is program 3"
    );
    assert_eq!(stats.instructions_decoded, [0; 6]);
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}
