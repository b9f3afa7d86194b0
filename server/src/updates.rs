//! Building the stream's `SubscribeUpdate` messages from decoded values (specification §2.5–2.9,
//! universe and update kinds per `shared/spec/product-decisions.md` §A).
//!
//! A transaction is in the stream's universe when at least one of its top-level instructions of a
//! supported program decodes, or one of its aggregator route instructions wraps a supported
//! program. Each such route gives one `delta` update (in instruction order) whose envelope lists
//! the direct calls too; a transaction with direct calls only gives one `transaction` update.
//! `account_keys` are the static keys only; lookup-table addresses are not resolved before replay.

use decoder::delta::{Leg, LegLocation, RouteCall, route_calls};

use crate::delta_updates::delta_update;
use crate::stream_service::Feed;
use decoder::Batch;
use decoder::dex::{
    DecodedArgs, DecodedInstruction, DexError, InstructionOutcome, ProgramRegistry,
    dex_instructions,
};
use decoder::transaction::TransactionView;
use stream_proto::stream::{self, decoded_instruction::Decoded, subscribe_update::Update};

/// Counters of decoding outcomes that produce no update or an incomplete one, for the caller to
/// export as metrics (plain data, as quinn's connection stats).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Decoded top-level instructions, per program (`DexProgram` number − 1).
    pub instructions_decoded: [u64; 6],
    /// Skipped or failed top-level instructions, per program and `DexError::index`.
    pub instruction_failures: [[u64; DexError::LABELS.len()]; 6],
    /// Aggregator routes that wrap a supported program.
    pub routes_decoded: u64,
    /// Routes whose plan could not be read to its end.
    pub route_errors: u64,
    /// Legs by how their accounts were found (`LegLocation`): located, named accounts missing,
    /// program id not found.
    pub legs_by_location: [u64; 3],
    /// Located legs whose block end is uncertain.
    pub legs_end_uncertain: u64,
}

impl DecodeStats {
    /// Counts a route and, as its legs are built, each leg's location.
    pub(crate) fn record_route(&mut self, call: &RouteCall<'_>) {
        self.routes_decoded += 1;
        self.route_errors += u64::from(call.route.error.is_some());
    }

    pub(crate) fn record_leg(&mut self, leg: &Leg<'_>) {
        let location = match leg.location {
            LegLocation::Located => 0,
            LegLocation::NamedAccountsMissing => 1,
            LegLocation::ProgramIdNotFound => 2,
        };
        self.legs_by_location[location] += 1;
        let uncertain = leg.location == LegLocation::Located && !leg.end_certain;
        self.legs_end_uncertain += u64::from(uncertain);
    }

    fn record_failure(&mut self, outcome: &InstructionOutcome<'_>) {
        if let InstructionOutcome::Failed { program, error, .. } = outcome {
            self.instruction_failures[program.proto_number() as usize - 1][error.index()] += 1;
        }
    }
}

/// Where a transaction was found: slot and index within its entry batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placement {
    pub slot: u64,
    pub tx_index: u32,
}

/// The updates an empty-map subscriber receives for this transaction (none when it is outside
/// the universe). Decode failures and leg-location outcomes are counted in `stats`.
pub fn transaction_updates(
    transaction: &TransactionView<'_>,
    registry: &ProgramRegistry,
    placement: Placement,
    stats: &mut DecodeStats,
) -> Vec<stream::SubscribeUpdate> {
    let mut decoded = Vec::new();
    for outcome in dex_instructions(transaction, registry) {
        match outcome {
            InstructionOutcome::Decoded(instruction) => {
                stats.instructions_decoded[instruction.program.proto_number() as usize - 1] += 1;
                decoded.push(decoded_instruction(&instruction))
            }
            InstructionOutcome::Failed { .. } => stats.record_failure(&outcome),
        }
    }
    let mut routes = route_calls(transaction, registry)
        .filter(|call| call.wraps_supported_program())
        .peekable();
    if routes.peek().is_none() {
        if decoded.is_empty() {
            return Vec::new();
        }
        let envelope = decoded_transaction(transaction, placement, decoded);
        return vec![stream::SubscribeUpdate {
            update: Some(Update::Transaction(envelope)),
        }];
    }
    let envelope = decoded_transaction(transaction, placement, decoded);
    routes
        .map(|call| {
            let delta = delta_update(transaction, registry, &call, envelope.clone(), stats);
            stream::SubscribeUpdate {
                update: Some(Update::Delta(delta)),
            }
        })
        .collect()
}

/// The `ServerTiming` clock: wall clock, nanoseconds since the Unix epoch (`CLOCK_REALTIME`, the
/// clock of the kernel's receive timestamps).
pub fn unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}

/// A decode worker's step for one complete entry batch, taken off the slot stage just now: every
/// transaction through the DEX decoders, each update stamped with the six-stage `ServerTiming`
/// (`first_read` from the batch, the caller's `capture_done`, `deshred_done` read here,
/// `decode_done` per transaction, `publish` per update) and published into `feed`. The clock is
/// read only for transactions that produce updates. `published` sees each update's timing.
pub fn publish_batch(
    batch: &Batch<'_>,
    capture_done: u64,
    registry: &ProgramRegistry,
    feed: &Feed,
    stats: &mut DecodeStats,
    mut published: impl FnMut(&stream::ServerTiming),
) {
    let deshred_done = unix_nanos();
    for (tx_index, transaction) in batch.entries.transactions().enumerate() {
        let placement = Placement {
            slot: batch.span.slot,
            tx_index: tx_index as u32,
        };
        let updates = transaction_updates(&transaction, registry, placement, stats);
        if updates.is_empty() {
            continue;
        }
        let decode_done = unix_nanos();
        for mut update in updates {
            let timing = stream::ServerTiming {
                first_read_unix_nanos: batch.first_rx_ns.min(capture_done),
                capture_done_unix_nanos: capture_done,
                deshred_done_unix_nanos: deshred_done,
                decode_done_unix_nanos: decode_done,
                publish_unix_nanos: unix_nanos(),
                subscriber_recv_unix_nanos: 0,
            };
            published(&timing);
            stamp_timing(&mut update, timing);
            feed.publish(update);
        }
    }
}

/// Sets the `ServerTiming` of a transaction or delta update (slot notifications and pongs carry
/// none).
fn stamp_timing(update: &mut stream::SubscribeUpdate, timing: stream::ServerTiming) {
    match update.update.as_mut() {
        Some(Update::Transaction(transaction)) => transaction.server_timing = Some(timing),
        Some(Update::Delta(delta)) => {
            if let Some(envelope) = delta.envelope.as_mut() {
                envelope.server_timing = Some(timing);
            }
        }
        _ => {}
    }
}

/// The `DecodedTransaction` envelope of a transaction with its decoded instructions.
pub fn decoded_transaction(
    transaction: &TransactionView<'_>,
    placement: Placement,
    decoded_instructions: Vec<stream::DecodedInstruction>,
) -> stream::DecodedTransaction {
    stream::DecodedTransaction {
        slot: placement.slot,
        signature: transaction.first_signature().to_vec(),
        tx_index: placement.tx_index,
        signer: transaction.fee_payer().to_vec(),
        account_keys: transaction
            .static_account_keys()
            .iter()
            .map(|key| key.to_vec())
            .collect(),
        decoded_instructions,
        uses_lookup_tables: transaction.uses_lookup_tables(),
        matched_filters: Vec::new(),
        server_timing: None,
    }
}

/// One `DecodedInstruction` message.
pub fn decoded_instruction(instruction: &DecodedInstruction<'_>) -> stream::DecodedInstruction {
    stream::DecodedInstruction {
        program: instruction.program.proto_number(),
        instruction_name: instruction.call.instruction_name.to_owned(),
        instruction_index: instruction.instruction_index,
        account_indices: instruction
            .account_indices
            .iter()
            .map(|&index| u32::from(index))
            .collect(),
        raw_data: instruction.raw_data.to_vec(),
        decoded: Some(decoded_member(&instruction.call.args)),
    }
}

/// The `decoded` oneof member of decoded arguments.
pub fn decoded_member(args: &DecodedArgs<'_>) -> Decoded {
    match *args {
        DecodedArgs::AlphaFunCreate { name, symbol, uri } => {
            Decoded::AlphaFunCreate(stream::AlphaFunCreate {
                name: name.to_owned(),
                symbol: symbol.to_owned(),
                uri: uri.to_owned(),
            })
        }
        DecodedArgs::AlphaFunBuy {
            amount,
            max_sol_cost,
        } => Decoded::AlphaFunBuy(stream::AlphaFunBuy {
            amount,
            max_sol_cost,
        }),
        DecodedArgs::AlphaFunSell {
            amount,
            min_sol_output,
        } => Decoded::AlphaFunSell(stream::AlphaFunSell {
            amount,
            min_sol_output,
        }),
        DecodedArgs::AlphaAmmBuy {
            base_amount_out,
            max_quote_amount_in,
        } => Decoded::AlphaAmmBuy(stream::AlphaAmmBuy {
            base_amount_out,
            max_quote_amount_in,
        }),
        DecodedArgs::AlphaAmmSell {
            base_amount_in,
            min_quote_amount_out,
        } => Decoded::AlphaAmmSell(stream::AlphaAmmSell {
            base_amount_in,
            min_quote_amount_out,
        }),
        DecodedArgs::AlphaAmmCreatePool {
            index,
            base_amount,
            quote_amount,
        } => Decoded::AlphaAmmCreatePool(stream::AlphaAmmCreatePool {
            index,
            base_amount,
            quote_amount,
        }),
        DecodedArgs::AlphaAmmDeposit {
            lp_token_amount_out,
            max_base_amount_in,
            max_quote_amount_in,
        } => Decoded::AlphaAmmDeposit(stream::AlphaAmmDeposit {
            lp_token_amount_out,
            max_base_amount_in,
            max_quote_amount_in,
        }),
        DecodedArgs::AlphaAmmWithdraw {
            lp_token_amount_in,
            min_base_amount_out,
            min_quote_amount_out,
        } => Decoded::AlphaAmmWithdraw(stream::AlphaAmmWithdraw {
            lp_token_amount_in,
            min_base_amount_out,
            min_quote_amount_out,
        }),
        DecodedArgs::CpmmSwapBaseInput {
            amount_in,
            minimum_amount_out,
        } => Decoded::CpmmSwapBaseInput(stream::CpmmSwapBaseInput {
            amount_in,
            minimum_amount_out,
        }),
        DecodedArgs::CpmmSwapBaseOutput {
            max_amount_in,
            amount_out,
        } => Decoded::CpmmSwapBaseOutput(stream::CpmmSwapBaseOutput {
            max_amount_in,
            amount_out,
        }),
        DecodedArgs::CpmmCreatePool {
            init_amount_0,
            init_amount_1,
            open_time,
        } => Decoded::CpmmCreatePool(stream::CpmmCreatePool {
            init_amount_0,
            init_amount_1,
            open_time,
        }),
        DecodedArgs::LaunchLabCreate {
            name,
            symbol,
            uri,
            decimals,
            total_supply,
        } => Decoded::LaunchLabCreate(stream::LaunchLabCreatePool {
            name: name.to_owned(),
            symbol: symbol.to_owned(),
            uri: uri.to_owned(),
            decimals,
            total_supply,
        }),
        DecodedArgs::LaunchLabBuyExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        } => Decoded::LaunchLabBuyExactIn(stream::LaunchLabBuyExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        }),
        DecodedArgs::LaunchLabBuyExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        } => Decoded::LaunchLabBuyExactOut(stream::LaunchLabBuyExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        }),
        DecodedArgs::LaunchLabSellExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        } => Decoded::LaunchLabSellExactIn(stream::LaunchLabSellExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        }),
        DecodedArgs::LaunchLabSellExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        } => Decoded::LaunchLabSellExactOut(stream::LaunchLabSellExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        }),
        DecodedArgs::LaunchLabMigrate => Decoded::LaunchLabMigrate(stream::LaunchLabMigrate {}),
        DecodedArgs::DbcSwap {
            amount_in,
            minimum_amount_out,
        } => Decoded::DbcSwap(stream::DbcSwap {
            amount_in,
            minimum_amount_out,
        }),
        DecodedArgs::DbcInitialize { pool_config } => {
            Decoded::DbcInitialize(stream::DbcInitializeVirtualPool {
                pool_config: pool_config.to_vec(),
            })
        }
        DecodedArgs::DbcMigrate => Decoded::DbcMigrate(stream::DbcMigrateToDammV2 {}),
        DecodedArgs::DammV2Swap {
            amount_in,
            minimum_amount_out,
        } => Decoded::DammV2Swap(stream::DammV2Swap {
            amount_in,
            minimum_amount_out,
        }),
        DecodedArgs::DammV2CreatePool { config } => {
            Decoded::DammV2CreatePool(stream::DammV2CreatePool {
                config: config.to_vec(),
            })
        }
        DecodedArgs::DammV2AddLiquidity {
            max_token_a_amount,
            max_token_b_amount,
            min_lp_amount,
        } => Decoded::DammV2AddLiquidity(stream::DammV2AddLiquidity {
            max_token_a_amount,
            max_token_b_amount,
            min_lp_amount,
        }),
        DecodedArgs::DammV2RemoveLiquidity {
            lp_amount,
            min_token_a_amount,
            min_token_b_amount,
        } => Decoded::DammV2RemoveLiquidity(stream::DammV2RemoveLiquidity {
            lp_amount,
            min_token_a_amount,
            min_token_b_amount,
        }),
    }
}
