//! Aggregator-routed transactions (DELTA): the route instruction, its signed route plan, and the
//! legs of that plan that wrap a supported program (docs/dex-mapping.md, "Aggregator routes").
//!
//! ```text
//! TransactionView ─ route_calls(registry) ─► RouteCall { index, accounts, raw_data,
//!                                                        route: RouteData (args, plan, error) }
//! RouteCall::legs(transaction, registry) ─► Leg { step, wrapped program, logical name,
//!                                                 account block, how it was located }
//! ```
//! Pre-replay a leg carries no instruction data of the wrapped program (the aggregator builds that
//! call when it executes); what is known is the step's `Swap` variant and payload, its split and
//! slots, its block of remaining accounts, and for single-step routes the route's amounts.
//!
//! **Locating legs.** The number of accounts per leg is encoded nowhere. After the route's named
//! accounts, each leg's block starts with the wrapped program's id, so a supported leg starts at the
//! next account (in order) equal to its program's id, and ends where the next supported leg starts,
//! or at the last account. `end_certain` is false when that end may be wrong: an unsupported leg
//! lies in between (its accounts cannot be told apart and stay in the block), the next leg is of
//! the same program (a leg's own `program` account may be taken for the next leg's start), the
//! next leg's id is not found, or steps after this leg could not be parsed. When the program id is
//! not among the static keys (a lookup-table account, unresolved pre-replay), the leg is still
//! reported from its variant, with no accounts.

mod idl;
mod route;
mod swap;
mod tables;

pub use route::{
    NamedAccount, RouteArg, RouteArgType, RouteData, RouteError, RouteInstruction, RouteMode,
    RouteStep, Split, parse_route,
};
pub use swap::{Field, FieldType, FieldValue, SwapVariant};

use crate::dex::{DexProgram, ProgramRegistry};
use crate::transaction::TransactionView;

/// The number of `Swap` variants this build knows (the IDL's enum).
pub const SWAP_VARIANT_COUNT: usize = tables::SWAP_VARIANTS.len();

/// The `Swap` variant at a Borsh index.
pub fn swap_variant(index: u8) -> Option<&'static SwapVariant> {
    tables::SWAP_VARIANTS.get(usize::from(index))
}

/// The supported program a `Swap` variant wraps, and the logical instruction of that program the
/// leg performs on a route of this mode (docs/dex-mapping.md, dex §10; exact-out routes take the
/// exact-out form where the program has one).
pub fn wrapped_program(variant_index: u8, mode: RouteMode) -> Option<(DexProgram, &'static str)> {
    let exact_out = mode == RouteMode::ExactOut;
    Some(match variant_index {
        49 | 90 | 97 | 112 | 149 | 152 => (DexProgram::AlphaFun, "buy"),
        50 | 91 | 98 | 113 | 150 | 153 => (DexProgram::AlphaFun, "sell"),
        72 | 92 | 99 | 147 => (DexProgram::AlphaAmm, "buy"),
        73 | 93 | 100 | 148 => (DexProgram::AlphaAmm, "sell"),
        46 if exact_out => (DexProgram::BetaCpmm, "swap_base_output"),
        46 => (DexProgram::BetaCpmm, "swap_base_input"),
        81 if exact_out => (DexProgram::BetaLaunchLab, "buy_exact_out"),
        81 => (DexProgram::BetaLaunchLab, "buy_exact_in"),
        82 if exact_out => (DexProgram::BetaLaunchLab, "sell_exact_out"),
        82 => (DexProgram::BetaLaunchLab, "sell_exact_in"),
        78 | 88 => (DexProgram::GammaDbc, "swap"),
        77 | 108 => (DexProgram::GammaDammV2, "swap"),
        _ => return None,
    })
}

/// A top-level route instruction of the aggregator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteCall<'a> {
    pub instruction_index: u32,
    pub account_indices: &'a [u8],
    pub raw_data: &'a [u8],
    pub route: RouteData<'a>,
}

/// How a leg's account block was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegLocation {
    /// Its program id was found among the remaining accounts.
    Located,
    /// The instruction has fewer accounts than the route's named accounts.
    NamedAccountsMissing,
    /// No remaining account at or after the previous leg is a static key equal to the program id
    /// (typically a lookup-table account, unresolved pre-replay).
    ProgramIdNotFound,
}

impl LegLocation {
    pub const fn label(self) -> &'static str {
        match self {
            Self::Located => "located",
            Self::NamedAccountsMissing => "named_accounts_missing",
            Self::ProgramIdNotFound => "program_id_not_found",
        }
    }
}

/// A route step that wraps a supported program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg<'a> {
    pub step: RouteStep<'a>,
    pub wrapped_program: DexProgram,
    pub logical_name: &'static str,
    /// The leg's block of compiled account indexes (its program id first); empty when not located.
    pub account_indices: &'a [u8],
    pub location: LegLocation,
    /// False when unsupported legs follow inside the block, so it may hold their accounts too.
    pub end_certain: bool,
}

/// The aggregator route instructions among a transaction's top-level instructions.
pub fn route_calls<'a>(
    transaction: &TransactionView<'a>,
    registry: &ProgramRegistry,
) -> impl Iterator<Item = RouteCall<'a>> {
    let transaction = *transaction;
    let aggregator = *registry.aggregator_id();
    transaction
        .instructions()
        .enumerate()
        .filter_map(move |(index, instruction)| {
            let program_id =
                transaction.static_account_key(usize::from(instruction.program_id_index))?;
            if *program_id != aggregator {
                return None;
            }
            Some(RouteCall {
                instruction_index: index as u32,
                account_indices: instruction.account_indices,
                raw_data: instruction.data,
                route: parse_route(instruction.data)?,
            })
        })
}

impl<'a> RouteCall<'a> {
    /// The named accounts' compiled indexes (as many as the instruction has).
    pub fn named_account_indices(&self) -> &'a [u8] {
        let named = self
            .route
            .instruction
            .accounts
            .len()
            .min(self.account_indices.len());
        &self.account_indices[..named]
    }

    /// The accounts after the named ones: the legs' blocks.
    pub fn remaining_account_indices(&self) -> &'a [u8] {
        let named = self
            .route
            .instruction
            .accounts
            .len()
            .min(self.account_indices.len());
        &self.account_indices[named..]
    }

    /// True when some parsed step wraps a supported program.
    pub fn wraps_supported_program(&self) -> bool {
        let mode = self.route.mode();
        self.route
            .steps()
            .any(|step| wrapped_program(step.variant_index, mode).is_some())
    }

    /// The legs wrapping supported programs, in plan order, with their account blocks.
    pub fn legs<'t>(
        &self,
        transaction: &'t TransactionView<'a>,
        registry: &'t ProgramRegistry,
    ) -> impl Iterator<Item = Leg<'a>> + use<'a, 't> {
        let mode = self.route.mode();
        let named_missing = self.account_indices.len() < self.route.instruction.accounts.len();
        let remaining = self.remaining_account_indices();
        let route = self.route;
        let steps = self.route.steps();
        let mut search_from = 0;
        steps.filter_map(move |step| {
            let (program, logical_name) = wrapped_program(step.variant_index, mode)?;
            let mut leg = Leg {
                step,
                wrapped_program: program,
                logical_name,
                account_indices: &[],
                location: LegLocation::NamedAccountsMissing,
                end_certain: false,
            };
            if named_missing {
                return Some(leg);
            }
            let program_id = registry.program_id(program);
            let Some(start) = find_program(transaction, remaining, search_from, program_id) else {
                leg.location = LegLocation::ProgramIdNotFound;
                return Some(leg);
            };
            search_from = start + 1;
            // The next supported leg bounds this block; unsupported legs before it blur the end,
            // and so does a next leg of the same program (this leg's own `program` account, which
            // most supported instructions list, may be the match). Unparsed steps blur it too.
            let mut end = remaining.len();
            let mut end_certain = true;
            let mut bounded = false;
            for later in route.steps().skip(step.step_index as usize + 1) {
                match wrapped_program(later.variant_index, mode) {
                    None => end_certain = false,
                    Some((next_program, _)) => {
                        bounded = true;
                        end_certain &= next_program != program;
                        match find_program(
                            transaction,
                            remaining,
                            start + 1,
                            registry.program_id(next_program),
                        ) {
                            Some(next) => end = next,
                            None => end_certain = false,
                        }
                        break;
                    }
                }
            }
            if !bounded && route.parsed_step_count < route.declared_step_count {
                end_certain = false;
            }
            leg.account_indices = &remaining[start..end];
            leg.location = LegLocation::Located;
            leg.end_certain = end_certain;
            Some(leg)
        })
    }
}

/// Position in `remaining`, at or after `from`, of the first static account equal to `program_id`.
fn find_program(
    transaction: &TransactionView<'_>,
    remaining: &[u8],
    from: usize,
    program_id: &[u8; 32],
) -> Option<usize> {
    remaining
        .get(from..)?
        .iter()
        .position(|&index| transaction.static_account_key(usize::from(index)) == Some(program_id))
        .map(|position| from + position)
}
