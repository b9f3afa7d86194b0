//! The one entry point from a transaction to its decoded form: every top-level instruction of a
//! supported DEX program and every aggregator route that wraps one, with the route's legs located
//! (product decisions in docs/decisions.md, "Universe"). Callers never run the DEX and route
//! decoders piecemeal; outcomes that produce nothing are counted in [`DecodeStats`].

use crate::delta::{Leg, LegLocation, RouteCall, route_calls};
use crate::dex::{
    DecodedInstruction, DexError, InstructionOutcome, ProgramRegistry, dex_instructions,
};
use crate::transaction::TransactionView;

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
    fn record_route(&mut self, call: &RouteCall<'_>) {
        self.routes_decoded += 1;
        self.route_errors += u64::from(call.route.error.is_some());
    }

    fn record_leg(&mut self, leg: &Leg<'_>) {
        let location = match leg.location {
            LegLocation::Located => 0,
            LegLocation::NamedAccountsMissing => 1,
            LegLocation::ProgramIdNotFound => 2,
        };
        self.legs_by_location[location] += 1;
        let uncertain = leg.location == LegLocation::Located && !leg.end_certain;
        self.legs_end_uncertain += u64::from(uncertain);
    }

    fn record_instruction(&mut self, outcome: &InstructionOutcome<'_>) {
        match outcome {
            InstructionOutcome::Decoded(instruction) => {
                self.instructions_decoded[instruction.program.proto_number() as usize - 1] += 1;
            }
            InstructionOutcome::Failed { program, error, .. } => {
                self.instruction_failures[program.proto_number() as usize - 1][error.index()] += 1;
            }
        }
    }
}

/// An aggregator route call that wraps at least one supported program, with its legs.
#[derive(Debug, Clone)]
pub struct DecodedRoute<'a> {
    pub call: RouteCall<'a>,
    /// Every leg of the route that wraps a supported program, in plan order.
    pub legs: Vec<Leg<'a>>,
}

/// A transaction's decoded form; borrows the transaction's bytes.
#[derive(Debug, Clone, Default)]
pub struct DecodedTransaction<'a> {
    /// Decoded top-level instructions of supported programs, in instruction order.
    pub instructions: Vec<DecodedInstruction<'a>>,
    /// Aggregator routes wrapping a supported program, in instruction order.
    pub routes: Vec<DecodedRoute<'a>>,
}

impl DecodedTransaction<'_> {
    /// Outside the stream's universe: nothing supported was found.
    pub fn is_empty(&self) -> bool {
        self.instructions.is_empty() && self.routes.is_empty()
    }
}

/// Decodes `transaction`'s supported instructions and routes, counting outcomes in `stats`.
/// Allocates nothing for a transaction outside the universe.
pub fn decode_transaction<'a>(
    transaction: &TransactionView<'a>,
    registry: &ProgramRegistry,
    stats: &mut DecodeStats,
) -> DecodedTransaction<'a> {
    let mut decoded = DecodedTransaction::default();
    for outcome in dex_instructions(transaction, registry) {
        stats.record_instruction(&outcome);
        if let InstructionOutcome::Decoded(instruction) = outcome {
            decoded.instructions.push(instruction);
        }
    }
    for call in route_calls(transaction, registry).filter(RouteCall::wraps_supported_program) {
        stats.record_route(&call);
        let legs: Vec<Leg<'a>> = call.legs(transaction, registry).collect();
        legs.iter().for_each(|leg| stats.record_leg(leg));
        decoded.routes.push(DecodedRoute { call, legs });
    }
    decoded
}
