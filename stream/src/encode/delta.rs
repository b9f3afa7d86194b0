//! Building `DeltaUpdate` messages (`DeltaUpdate` of proto/stream.proto) from a decoded aggregator
//! route.
//!
//! Choices the specification leaves open (also in `docs/decisions.md`):
//! - `resolved_accounts`, `named_accounts[].pubkey`, `remaining_accounts`: base58 of static keys
//!   and of addresses loaded through resolved lookups; an index into a lookup that did not
//!   resolve is the literal `unresolved` (never guessed).
//! - `decoded_args`: every route argument in decimal, and `route_plan` as compact JSON of the steps
//!   (`[{"swap":"PumpWrappedBuy","percent":100,"input_index":0,"output_index":1}]`).
//! - `DeltaRouteSummary.variant`: the route's mode, `exact_in`, `exact_out` or
//!   `exact_in_token_ledger`; `route_plan_step_count` the declared count;
//!   `opaque_route_plan_bytes_len` the plan's encoded length (count and steps) as far as parsed.
//! - `DeltaRouteStep.normalized_dex_label`: the supported program a step wraps (`ALPHA_FUN` …),
//!   absent for other DEXes.
//! - A leg's `instruction`: program = the `DELTA_*` value (the enum filters select legs by),
//!   logical name, the route's instruction index, the leg's account block, `raw_data` = the step's
//!   encoded bytes (variant, payload, split, slots), and no `decoded` member (the wrapped program's
//!   own instruction data exists only at execution).
//! - `source`: `CURRENT_TRANSACTION` when the transaction also calls that program directly (a
//!   decoded top-level instruction), else `INFERRED_ROUTE`.

use std::collections::HashMap;
use std::fmt::Write;

use decoder::DecodedRoute;
use decoder::delta::{Leg, RouteCall, RouteMode, Split, wrapped_program};
use decoder::dex::DexProgram;
use decoder::lookup::LoadedAddresses;
use decoder::transaction::TransactionView;
use stream_proto::stream;

/// The literal reported for an account index that points into a lookup table.
pub const UNRESOLVED: &str = "unresolved";

/// The `DeltaUpdate` of one decoded route; `envelope` is the transaction's `DecodedTransaction`.
pub fn delta_update(
    transaction: &TransactionView<'_>,
    route: &DecodedRoute<'_>,
    envelope: stream::DecodedTransaction,
    loaded: Option<&LoadedAddresses>,
) -> stream::DeltaUpdate {
    let direct_programs: Vec<i32> = envelope
        .decoded_instructions
        .iter()
        .map(|instruction| instruction.program)
        .collect();
    let dex_legs: Vec<stream::DeltaDexLeg> = route
        .legs
        .iter()
        .map(|leg| dex_leg(&route.call, leg, &direct_programs))
        .collect();
    let matched_leg_indices = (0..dex_legs.len() as u32).collect();
    stream::DeltaUpdate {
        envelope: Some(envelope),
        top_level_instruction: Some(top_level_instruction(transaction, loaded, &route.call)),
        dex_legs,
        matched_leg_indices,
    }
}

fn resolve(
    transaction: &TransactionView<'_>,
    loaded: Option<&LoadedAddresses>,
    index: u8,
) -> String {
    match super::lookups::account_address(transaction, loaded, index) {
        Some(key) => bs58::encode(key).into_string(),
        None => UNRESOLVED.to_owned(),
    }
}

fn top_level_instruction(
    transaction: &TransactionView<'_>,
    loaded: Option<&LoadedAddresses>,
    call: &RouteCall<'_>,
) -> stream::DeltaTopLevelInstruction {
    let route = &call.route;
    let named_accounts = route
        .instruction
        .accounts
        .iter()
        .zip(call.named_account_indices())
        .map(|(named, &index)| stream::DeltaNamedAccount {
            name: named.name.to_owned(),
            pubkey: resolve(transaction, loaded, index),
            writable: named.writable,
            signer: named.signer,
            optional: named.optional,
            expected_address: named.address.map(str::to_owned),
        })
        .collect();
    stream::DeltaTopLevelInstruction {
        instruction_name: route.instruction.name.to_owned(),
        instruction_index: call.instruction_index,
        raw_data: call.raw_data.to_vec(),
        account_indices: call
            .account_indices
            .iter()
            .map(|&index| u32::from(index))
            .collect(),
        resolved_accounts: call
            .account_indices
            .iter()
            .map(|&i| resolve(transaction, loaded, i))
            .collect(),
        named_accounts,
        remaining_accounts: call
            .remaining_account_indices()
            .iter()
            .map(|&index| resolve(transaction, loaded, index))
            .collect(),
        decoded_args: decoded_args(call),
        route: Some(route_summary(call)),
        decode_error: route.error.map(|error| error.to_string()),
    }
}

fn decoded_args(call: &RouteCall<'_>) -> HashMap<String, String> {
    let route = &call.route;
    let mut args = HashMap::new();
    let numbers = [
        ("id", route.id.map(u64::from)),
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
    ];
    for (name, value) in numbers {
        if let Some(value) = value {
            args.insert(name.to_owned(), value.to_string());
        }
    }
    let mut plan = String::from("[");
    for (position, step) in route.steps().enumerate() {
        let separator = if position == 0 { "" } else { "," };
        let split = match step.split {
            Split::Percent(percent) => format!("\"percent\":{percent}"),
            Split::Bps(bps) => format!("\"bps\":{bps}"),
        };
        // Writing into a String cannot fail.
        let _ = write!(
            plan,
            "{separator}{{\"swap\":\"{}\",{split},\"input_index\":{},\"output_index\":{}}}",
            step.variant.name, step.input_index, step.output_index
        );
    }
    plan.push(']');
    args.insert("route_plan".to_owned(), plan);
    args
}

fn route_summary(call: &RouteCall<'_>) -> stream::DeltaRouteSummary {
    let route = &call.route;
    let mode = route.mode();
    let route_steps = route
        .steps()
        .map(|step| {
            let (split_percent, split_bps) = split_fields(step.split);
            stream::DeltaRouteStep {
                swap_variant: step.variant.name.to_owned(),
                normalized_dex_label: wrapped_program(step.variant_index, mode)
                    .map(|(program, _)| program.name().to_owned()),
                split_percent,
                split_bps,
                input_index: u32::from(step.input_index),
                output_index: u32::from(step.output_index),
                swap_fields: step
                    .variant
                    .fields(step.payload)
                    .map(|(name, value)| (name.to_owned(), value.to_string()))
                    .collect(),
            }
        })
        .collect();
    stream::DeltaRouteSummary {
        variant: mode.label().to_owned(),
        route_plan_step_count: route.declared_step_count,
        opaque_route_plan_bytes_len: route.plan_bytes.len() as u32,
        exact_in_amount: if mode == RouteMode::ExactIn {
            route.in_amount
        } else {
            None
        },
        exact_out_amount: route.out_amount,
        quoted_in_amount: route.quoted_in_amount,
        quoted_out_amount: route.quoted_out_amount,
        slippage_bps: route.slippage_bps.map_or(0, u32::from),
        platform_fee_bps: route.platform_fee_bps.map_or(0, u32::from),
        positive_slippage_bps: route.positive_slippage_bps.map(u32::from),
        shared_accounts_route_id: route.id.map(u32::from),
        uses_token_ledger: mode == RouteMode::TokenLedger,
        route_steps,
    }
}

fn split_fields(split: Split) -> (Option<u32>, Option<u32>) {
    match split {
        Split::Percent(percent) => (Some(u32::from(percent)), None),
        Split::Bps(bps) => (None, Some(u32::from(bps))),
    }
}

fn dex_leg(call: &RouteCall<'_>, leg: &Leg<'_>, direct_programs: &[i32]) -> stream::DeltaDexLeg {
    let program: DexProgram = leg.wrapped_program;
    let source = if direct_programs.contains(&program.proto_number()) {
        stream::DeltaLegSource::CurrentTransaction
    } else {
        stream::DeltaLegSource::InferredRoute
    };
    let (split_percent, split_bps) = split_fields(leg.step.split);
    let (route_input_amount, route_output_amount) = call.route.single_hop_amounts();
    stream::DeltaDexLeg {
        wrapped_program: program.proto_number(),
        instruction: Some(stream::DecodedInstruction {
            program: program.delta_proto_number(),
            instruction_name: leg.logical_name.to_owned(),
            instruction_index: call.instruction_index,
            account_indices: leg
                .account_indices
                .iter()
                .map(|&index| u32::from(index))
                .collect(),
            raw_data: leg.step.bytes.to_vec(),
            decoded: None,
        }),
        source: source as i32,
        top_level_instruction_index: call.instruction_index,
        route_step_index: leg.step.step_index,
        swap_variant: leg.step.variant.name.to_owned(),
        logical_instruction_name: leg.logical_name.to_owned(),
        split_percent,
        split_bps,
        route_input_amount,
        route_output_amount,
    }
}
