//! Aggregator route decoding against independent references: the public dex-vectors' aggregator
//! transactions (Anchor's coder + web3.js), real mainnet routes, and the vectors that
//! `scripts/delta-vectors` generates with Anchor's coder over the IDL (every route instruction and
//! every `Swap` variant).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

use base64::Engine;
use common::{b58, hex, read_fixture, unhex};
use decoder::delta::{LegLocation, RouteMode, Split, parse_route, route_calls};
use decoder::dex::ProgramRegistry;
use decoder::transaction::parse_transaction_exact;
use serde_json::{Value, json};

fn amount(value: Option<u64>) -> Value {
    value.map_or(Value::Null, |v| Value::String(v.to_string()))
}

#[test]
fn public_aggregator_vectors_conformance() {
    let registry = ProgramRegistry::default();
    let text = String::from_utf8(read_fixture("dex/public-vectors.jsonl")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let vector: Value = serde_json::from_str(line).unwrap();
        if vector["kind"] != "aggregator" {
            continue;
        }
        let id = vector["id"].as_str().unwrap();
        let expected = &vector["expected"]["aggregator"];
        let wire = base64::engine::general_purpose::STANDARD
            .decode(vector["wire_base64"].as_str().unwrap())
            .unwrap();
        let transaction = parse_transaction_exact(&wire).unwrap();
        let calls: Vec<_> = route_calls(&transaction, &registry).collect();
        assert_eq!(calls.len(), 1, "{id}");
        let call = &calls[0];
        let route = &call.route;
        assert_eq!(route.instruction.name, expected["real_ix_name"], "{id}");
        assert_eq!(
            u64::from(call.instruction_index),
            expected["instruction_index"],
            "{id}"
        );
        assert_eq!(hex(call.raw_data), expected["raw_data_hex"], "{id}");
        assert_eq!(
            route.instruction.is_v2(),
            expected["family"] == "v2",
            "{id}"
        );
        let mode = match route.mode() {
            RouteMode::ExactOut => "exact_out",
            _ => "exact_in",
        };
        assert_eq!(mode, expected["mode"], "{id}");
        assert_eq!(
            route.mode() == RouteMode::TokenLedger,
            expected["uses_token_ledger"],
            "{id}"
        );
        assert_eq!(
            json!(route.id),
            expected["shared_accounts_route_id"],
            "{id}"
        );
        assert_eq!(
            u64::from(route.declared_step_count),
            expected["route_plan_step_count"]
        );
        assert!(route.error.is_none(), "{id}: {:?}", route.error);
        let amounts = &expected["amounts"];
        let exact_in = if route.mode() == RouteMode::ExactIn {
            route.in_amount
        } else {
            None
        };
        for (name, ours) in [
            ("exact_in_amount", exact_in),
            ("exact_out_amount", route.out_amount),
            ("quoted_in_amount", route.quoted_in_amount),
            ("quoted_out_amount", route.quoted_out_amount),
        ] {
            let wanted = amounts.get(name).cloned().unwrap_or(Value::Null);
            assert_eq!(amount(ours), wanted, "{id}: {name}");
        }
        assert_eq!(json!(route.slippage_bps), expected["slippage_bps"], "{id}");
        assert_eq!(
            json!(route.platform_fee_bps),
            expected["platform_fee_bps"],
            "{id}"
        );
        assert_eq!(
            json!(route.positive_slippage_bps),
            expected["positive_slippage_bps"],
            "{id}"
        );
        assert_eq!(
            call.named_account_indices().len() as u64,
            expected["named_account_count"].as_u64().unwrap(),
            "{id}"
        );
        for (step, wanted) in route
            .steps()
            .zip(expected["route_steps"].as_array().unwrap())
        {
            assert_eq!(step.variant.name, wanted["swap_variant"], "{id}");
            assert_eq!(
                u64::from(step.variant_index),
                wanted["variant_index"],
                "{id}"
            );
            match step.split {
                Split::Percent(percent) => assert_eq!(json!(percent), wanted["percent"]),
                Split::Bps(bps) => assert_eq!(json!(bps), wanted["bps"]),
            }
            assert_eq!(json!(step.input_index), wanted["input_index"], "{id}");
            assert_eq!(json!(step.output_index), wanted["output_index"], "{id}");
        }
        let legs: Vec<_> = call.legs(&transaction, &registry).collect();
        let wanted_legs = expected["legs_wrapping_supported"].as_array().unwrap();
        assert_eq!(legs.len(), wanted_legs.len(), "{id}");
        for (leg, wanted) in legs.iter().zip(wanted_legs) {
            assert_eq!(
                u64::from(leg.step.step_index),
                wanted["route_step_index"],
                "{id}"
            );
            assert_eq!(
                leg.wrapped_program.name(),
                wanted["wrapped_program"],
                "{id}"
            );
            assert_eq!(leg.step.variant.name, wanted["swap_variant"], "{id}");
            let accepted = wanted["logical_instruction_name_accept"]
                .as_array()
                .unwrap();
            assert!(
                accepted.contains(&json!(leg.logical_name)),
                "{id}: {}",
                leg.logical_name
            );
            assert_eq!(leg.location, LegLocation::Located, "{id}");
            let indices: Vec<u64> = leg.account_indices.iter().map(|&i| u64::from(i)).collect();
            assert_eq!(json!(indices), wanted["leg_account_indices"], "{id}");
            let program_id = transaction.static_account_key(usize::from(leg.account_indices[0]));
            assert_eq!(b58(program_id.unwrap()), wanted["leg_program_id"], "{id}");
            let (input, output) = route.single_hop_amounts();
            assert_eq!(
                amount(input),
                wanted
                    .get("route_input_amount")
                    .cloned()
                    .unwrap_or(Value::Null)
            );
            assert_eq!(
                amount(output),
                wanted
                    .get("route_output_amount")
                    .cloned()
                    .unwrap_or(Value::Null)
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// The real circular route of `json/delta.route.5DJFLgNi.txupdate.json` (docs/dex-mapping.md,
/// routes §2, describes it): `RaydiumClmm` 100 % slot 0 → 1, then `GoonFi` 100 % slot 1 → 0; in
/// 291290000, quoted out 291300727, slippage 0, platform fee 0. Neither leg wraps a supported
/// program.
#[test]
fn mainnet_route_conformance() {
    let update: Value = serde_json::from_slice(&read_fixture(
        "mainnet-tx/json/delta.route.5DJFLgNi.txupdate.json",
    ))
    .unwrap();
    let instruction = &update["transaction"]["transaction"]["message"]["instructions"][4];
    let data: Vec<u8> = instruction["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect();
    let route = parse_route(&data).unwrap();
    assert_eq!(route.instruction.name, "route");
    assert!(route.error.is_none());
    let steps: Vec<_> = route
        .steps()
        .map(|s| (s.variant.name, s.split, s.input_index, s.output_index))
        .collect();
    assert_eq!(
        steps,
        [
            ("RaydiumClmm", Split::Percent(100), 0, 1),
            ("GoonFi", Split::Percent(100), 1, 0)
        ]
    );
    assert_eq!(route.in_amount, Some(291_290_000));
    assert_eq!(route.quoted_out_amount, Some(291_300_727));
    assert_eq!(
        (route.slippage_bps, route.platform_fee_bps),
        (Some(0), Some(0))
    );
    let goonfi = route.steps().nth(1).unwrap();
    let fields: Vec<(&str, String)> = goonfi
        .variant
        .fields(goonfi.payload)
        .map(|(n, v)| (n, v.to_string()))
        .collect();
    assert_eq!(fields[0].0, "is_bid");
    assert_eq!(fields[1].0, "blacklist_bump");
}

/// The real shared-accounts route of `json/delta.shared_accounts_route.inner.dP4Tfbyp...`, whose
/// single leg is `AlphaQ` (docs/dex-mapping.md, routes §4).
#[test]
fn mainnet_shared_accounts_route_conformance() {
    let tree: Value = serde_json::from_slice(&read_fixture(
        "mainnet-tx/json/delta.shared_accounts_route.inner.dP4Tfbyp.instructions.json",
    ))
    .unwrap();
    let aggregator = bs58::decode(decoder::dex::DELTA_MAINNET_ID)
        .into_vec()
        .unwrap();
    let node = tree["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|node| {
            let program: Vec<u8> = node["program"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap() as u8)
                .collect();
            program == aggregator
        })
        .unwrap();
    let data: Vec<u8> = node["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect();
    let route = parse_route(&data).unwrap();
    assert_eq!(route.instruction.name, "shared_accounts_route");
    assert!(route.error.is_none());
    let variants: Vec<&str> = route.steps().map(|step| step.variant.name).collect();
    assert_eq!(variants, ["AlphaQ"]);
    assert!(route.in_amount.is_some() && route.quoted_out_amount.is_some());
}

#[test]
fn unknown_variant_keeps_earlier_steps() {
    // route: plan of 2 steps, the first PumpWrappedBuy (49), the second an unknown index 250.
    let mut data = unhex("e517cb977ae3ad2a");
    data.extend_from_slice(&2u32.to_le_bytes());
    data.extend_from_slice(&[49, 100, 0, 1, 250, 100, 1, 2]);
    let route = parse_route(&data).unwrap();
    assert_eq!(route.parsed_step_count, 1);
    assert_eq!(route.declared_step_count, 2);
    assert_eq!(route.error.unwrap().label(), "unknown_swap_variant");
    assert_eq!(route.in_amount, None, "v1 amounts follow the plan");
    assert_eq!(route.steps().next().unwrap().variant.name, "PumpWrappedBuy");
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

/// A v0 transaction carrying one aggregator instruction over the vector's accounts: the vector's
/// static keys, then one lookup table covering any index beyond them.
fn transaction_of(vector: &Value) -> Vec<u8> {
    let keys: Vec<Vec<u8>> = vector["static_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|key| bs58::decode(key.as_str().unwrap()).into_vec().unwrap())
        .collect();
    let accounts: Vec<u8> = vector["account_indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_u64().unwrap() as u8)
        .collect();
    let program_index = keys
        .iter()
        .position(|key| bs58::encode(key).into_string() == decoder::dex::DELTA_MAINNET_ID)
        .unwrap();
    let data = unhex(vector["data_hex"].as_str().unwrap());
    let loaded = accounts
        .iter()
        .map(|&i| usize::from(i) + 1)
        .max()
        .unwrap_or(0)
        .saturating_sub(keys.len());
    let mut wire = vec![1];
    wire.extend_from_slice(&[7u8; 64]);
    wire.extend_from_slice(&[0x80, 1, 0, 0]);
    compact_u16(&mut wire, keys.len());
    keys.iter().for_each(|key| wire.extend_from_slice(key));
    wire.extend_from_slice(&[3u8; 32]);
    compact_u16(&mut wire, 1);
    wire.push(program_index as u8);
    compact_u16(&mut wire, accounts.len());
    wire.extend_from_slice(&accounts);
    compact_u16(&mut wire, data.len());
    wire.extend_from_slice(&data);
    if loaded == 0 {
        compact_u16(&mut wire, 0);
    } else {
        compact_u16(&mut wire, 1);
        wire.extend_from_slice(&[9u8; 32]);
        compact_u16(&mut wire, loaded);
        wire.extend((0..loaded).map(|i| i as u8));
        compact_u16(&mut wire, 0);
    }
    wire
}

#[test]
fn generated_route_vectors_conformance() {
    let registry = ProgramRegistry::default();
    let text = String::from_utf8(read_fixture("delta/route-vectors.jsonl")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let vector: Value = serde_json::from_str(line).unwrap();
        let id = vector["id"].as_str().unwrap();
        let expected = &vector["expected"];
        let wire = transaction_of(&vector);
        let transaction = parse_transaction_exact(&wire).unwrap_or_else(|e| panic!("{id}: {e}"));
        let calls: Vec<_> = route_calls(&transaction, &registry).collect();
        assert_eq!(calls.len(), 1, "{id}");
        let call = &calls[0];
        let route = &call.route;
        assert_eq!(route.instruction.name, expected["instruction_name"], "{id}");
        assert_eq!(route.mode().label(), expected["mode"], "{id}");
        assert_eq!(route.instruction.is_v2(), expected["is_v2"], "{id}");
        assert_eq!(json!(route.id), expected["id"], "{id}");
        for (name, ours) in [
            ("in_amount", route.in_amount),
            ("out_amount", route.out_amount),
            ("quoted_in_amount", route.quoted_in_amount),
            ("quoted_out_amount", route.quoted_out_amount),
            ("slippage_bps", route.slippage_bps.map(u64::from)),
            ("platform_fee_bps", route.platform_fee_bps.map(u64::from)),
            (
                "positive_slippage_bps",
                route.positive_slippage_bps.map(u64::from),
            ),
        ] {
            assert_eq!(amount(ours), expected[name], "{id}: {name}");
        }
        assert_eq!(
            json!(route.declared_step_count),
            expected["declared_step_count"],
            "{id}"
        );
        assert_eq!(
            json!(route.parsed_step_count),
            expected["parsed_step_count"],
            "{id}"
        );
        assert_eq!(
            json!(route.plan_bytes.len()),
            expected["plan_bytes_len"],
            "{id}"
        );
        assert_eq!(
            json!(route.error.map(|e| e.label())),
            expected["error"],
            "{id}"
        );
        let steps = expected["steps"].as_array().unwrap();
        assert_eq!(route.steps().count(), steps.len(), "{id}");
        for (step, wanted) in route.steps().zip(steps) {
            assert_eq!(step.variant.name, wanted["variant"], "{id}");
            match step.split {
                Split::Percent(percent) => {
                    assert_eq!(json!(percent), wanted["split_percent"], "{id}")
                }
                Split::Bps(bps) => assert_eq!(json!(bps), wanted["split_bps"], "{id}"),
            }
            assert_eq!(json!(step.input_index), wanted["input_index"], "{id}");
            assert_eq!(json!(step.output_index), wanted["output_index"], "{id}");
            let fields: serde_json::Map<String, Value> = step
                .variant
                .fields(step.payload)
                .map(|(name, value)| (name.to_owned(), Value::String(value.to_string())))
                .collect();
            assert_eq!(
                Value::Object(fields),
                wanted["swap_fields"],
                "{id}: {}",
                step.variant.name
            );
        }
        let (input, output) = route.single_hop_amounts();
        assert_eq!(amount(input), expected["single_hop"]["input"], "{id}");
        assert_eq!(amount(output), expected["single_hop"]["output"], "{id}");
        let legs: Vec<_> = call.legs(&transaction, &registry).collect();
        let wanted_legs = expected["legs"].as_array().unwrap();
        assert_eq!(legs.len(), wanted_legs.len(), "{id}");
        for (leg, wanted) in legs.iter().zip(wanted_legs) {
            assert_eq!(json!(leg.step.step_index), wanted["step_index"], "{id}");
            assert_eq!(
                leg.wrapped_program.name(),
                wanted["wrapped_program"],
                "{id}"
            );
            assert_eq!(leg.logical_name, wanted["logical_name"], "{id}");
            assert_eq!(leg.location.label(), wanted["location"], "{id}");
            let indices: Vec<u64> = leg.account_indices.iter().map(|&i| u64::from(i)).collect();
            assert_eq!(json!(indices), wanted["account_indices"], "{id}");
            assert_eq!(
                json!(leg.end_certain),
                wanted["end_certain"],
                "{id}: end_certain"
            );
        }
        checked += 1;
    }
    assert!(checked >= 500, "checked {checked}");
}
