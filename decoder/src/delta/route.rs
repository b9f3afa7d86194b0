//! The aggregator's ten route instructions (docs/dex-mapping.md, routes §1–2, §5): their
//! arguments read in IDL order, the route plan walked step by step with each `Swap` payload's exact
//! length, and the amounts classified as exact or quoted by the route's mode.
//!
//! v1 routes put the plan first and the amounts after it, so an unknown `Swap` variant makes the
//! amounts unreadable; v2 routes put the scalars first. Parsing stops at the first unknown variant
//! or malformed payload: the steps before it are kept and the error is reported.

use crate::dex::DexError;
use crate::dex::reader::{Arguments, split_discriminator};

pub use super::idl::{NamedAccount, RouteArg, RouteArgType, RouteInstruction};
use super::swap::SwapVariant;
use super::tables::{ROUTE_INSTRUCTIONS, SWAP_VARIANTS};

/// Exact-in, exact-out, or exact-in with the amount taken from a token ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteMode {
    ExactIn,
    ExactOut,
    TokenLedger,
}

impl RouteMode {
    /// The `DeltaRouteSummary.variant` text.
    pub const fn label(self) -> &'static str {
        match self {
            Self::ExactIn => "exact_in",
            Self::ExactOut => "exact_out",
            Self::TokenLedger => "exact_in_token_ledger",
        }
    }
}

impl RouteInstruction {
    pub fn mode(&self) -> RouteMode {
        if self.name.contains("exact_out") {
            RouteMode::ExactOut
        } else if self.name.contains("token_ledger") {
            RouteMode::TokenLedger
        } else {
            RouteMode::ExactIn
        }
    }

    /// v2 routes (`*_v2`): scalars first, plan last, bps splits.
    pub fn is_v2(&self) -> bool {
        self.name.ends_with("_v2")
    }

    pub fn is_shared_accounts(&self) -> bool {
        self.name.starts_with("shared_accounts")
    }
}

/// The route instruction with this discriminator.
pub fn route_instruction(discriminator: u64) -> Option<&'static RouteInstruction> {
    ROUTE_INSTRUCTIONS
        .iter()
        .find(|route| route.discriminator == discriminator)
}

/// The split of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    Percent(u8),
    Bps(u16),
}

/// One parsed step of a route plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteStep<'a> {
    pub step_index: u32,
    pub variant_index: u8,
    pub variant: &'static SwapVariant,
    /// The variant's payload (after its 1-byte tag).
    pub payload: &'a [u8],
    /// The whole step as encoded: tag, payload, split and slot indexes.
    pub bytes: &'a [u8],
    pub split: Split,
    pub input_index: u8,
    pub output_index: u8,
}

/// Why a route could not be read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("route argument unreadable: {0}")]
    Argument(DexError),
    #[error("step {step_index}: unknown Swap variant {variant_index}")]
    UnknownSwapVariant { step_index: u32, variant_index: u8 },
    #[error("step {step_index} ({variant}): {error}")]
    StepPayload {
        step_index: u32,
        variant: &'static str,
        error: DexError,
    },
}

impl RouteError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Argument(_) => "route_argument",
            Self::UnknownSwapVariant { .. } => "unknown_swap_variant",
            Self::StepPayload { .. } => "swap_payload",
        }
    }
}

/// Everything read from a route instruction's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteData<'a> {
    pub instruction: &'static RouteInstruction,
    pub id: Option<u8>,
    pub in_amount: Option<u64>,
    pub out_amount: Option<u64>,
    pub quoted_in_amount: Option<u64>,
    pub quoted_out_amount: Option<u64>,
    pub slippage_bps: Option<u16>,
    pub platform_fee_bps: Option<u16>,
    pub positive_slippage_bps: Option<u16>,
    /// The route plan as encoded (its `u32` count and every step), up to where parsing stopped.
    pub plan_bytes: &'a [u8],
    /// Steps the plan declares.
    pub declared_step_count: u32,
    /// Steps parsed before the end or the first error.
    pub parsed_step_count: u32,
    /// The steps region after the count, for `steps()`.
    steps_bytes: &'a [u8],
    steps_v2: bool,
    pub error: Option<RouteError>,
}

/// Reads a route instruction's data; `None` when the discriminator is not a route instruction.
pub fn parse_route(data: &[u8]) -> Option<RouteData<'_>> {
    let (discriminator, bytes) = split_discriminator(data).ok()?;
    let instruction = route_instruction(discriminator)?;
    let mut route = RouteData {
        instruction,
        id: None,
        in_amount: None,
        out_amount: None,
        quoted_in_amount: None,
        quoted_out_amount: None,
        slippage_bps: None,
        platform_fee_bps: None,
        positive_slippage_bps: None,
        // Empty views at the end of the data until the plan is read, so every view of a route
        // points into the instruction data.
        plan_bytes: &bytes[bytes.len()..],
        declared_step_count: 0,
        parsed_step_count: 0,
        steps_bytes: &bytes[bytes.len()..],
        steps_v2: instruction.is_v2(),
        error: None,
    };
    let mut arguments = Arguments::new(bytes);
    for arg in instruction.args {
        if let Err(error) = read_argument(&mut route, &mut arguments, bytes, arg) {
            route.error = Some(error);
            break;
        }
    }
    Some(route)
}

fn read_argument<'a>(
    route: &mut RouteData<'a>,
    arguments: &mut Arguments<'a>,
    bytes: &'a [u8],
    arg: &RouteArg,
) -> Result<(), RouteError> {
    let value = match arg.ty {
        RouteArgType::U8 => u64::from(arguments.u8(arg.name).map_err(RouteError::Argument)?),
        RouteArgType::U16 => u64::from(arguments.u16(arg.name).map_err(RouteError::Argument)?),
        RouteArgType::U64 => arguments.u64(arg.name).map_err(RouteError::Argument)?,
        RouteArgType::PlanV1 | RouteArgType::PlanV2 => return read_plan(route, arguments, bytes),
    };
    let narrow = |value: u64| u16::try_from(value).unwrap_or(u16::MAX);
    match arg.name {
        "id" => route.id = Some(value as u8),
        "in_amount" => route.in_amount = Some(value),
        "out_amount" => route.out_amount = Some(value),
        "quoted_in_amount" => route.quoted_in_amount = Some(value),
        "quoted_out_amount" => route.quoted_out_amount = Some(value),
        "slippage_bps" => route.slippage_bps = Some(narrow(value)),
        "platform_fee_bps" => route.platform_fee_bps = Some(narrow(value)),
        "positive_slippage_bps" => route.positive_slippage_bps = Some(narrow(value)),
        _ => {}
    }
    Ok(())
}

/// Walks the plan: its `u32` count, then each step with its exact length.
fn read_plan<'a>(
    route: &mut RouteData<'a>,
    arguments: &mut Arguments<'a>,
    bytes: &'a [u8],
) -> Result<(), RouteError> {
    let plan_start = arguments.consumed().len();
    route.declared_step_count = arguments.u32("route_plan").map_err(RouteError::Argument)?;
    let steps_start = arguments.consumed().len();
    let result = (|| {
        for step_index in 0..route.declared_step_count {
            read_step(arguments, step_index, route.steps_v2)?;
            route.parsed_step_count += 1;
        }
        Ok(())
    })();
    let end = arguments.consumed().len();
    route.plan_bytes = &bytes[plan_start..end];
    route.steps_bytes = &bytes[steps_start..end];
    result
}

fn read_step<'a>(
    arguments: &mut Arguments<'a>,
    step_index: u32,
    v2: bool,
) -> Result<RouteStep<'a>, RouteError> {
    let start = arguments.consumed().len();
    let variant_index = arguments.u8("swap").map_err(RouteError::Argument)?;
    let variant =
        SWAP_VARIANTS
            .get(usize::from(variant_index))
            .ok_or(RouteError::UnknownSwapVariant {
                step_index,
                variant_index,
            })?;
    let payload_start = arguments.consumed().len();
    variant
        .skip_payload(arguments)
        .map_err(|error| RouteError::StepPayload {
            step_index,
            variant: variant.name,
            error,
        })?;
    let payload_end = arguments.consumed().len();
    let split = if v2 {
        Split::Bps(arguments.u16("bps").map_err(RouteError::Argument)?)
    } else {
        Split::Percent(arguments.u8("percent").map_err(RouteError::Argument)?)
    };
    let input_index = arguments.u8("input_index").map_err(RouteError::Argument)?;
    let output_index = arguments.u8("output_index").map_err(RouteError::Argument)?;
    let all = arguments.consumed();
    Ok(RouteStep {
        step_index,
        variant_index,
        variant,
        payload: &all[payload_start..payload_end],
        bytes: &all[start..],
        split,
        input_index,
        output_index,
    })
}

impl<'a> RouteData<'a> {
    /// The steps parsed without error, in plan order.
    pub fn steps(&self) -> impl Iterator<Item = RouteStep<'a>> + use<'a> {
        let mut arguments = Arguments::new(self.steps_bytes);
        let v2 = self.steps_v2;
        // Re-walks steps that parsed before, so `read_step` cannot fail here.
        (0..self.parsed_step_count)
            .map_while(move |step_index| read_step(&mut arguments, step_index, v2).ok())
    }

    pub fn mode(&self) -> RouteMode {
        self.instruction.mode()
    }

    /// The route-level `(input, output)` amounts of a single-step route (routes §5): exact-in
    /// routes give the exact input and the quoted output, exact-out routes the quoted input and
    /// the exact output, token-ledger routes only the quoted output.
    pub fn single_hop_amounts(&self) -> (Option<u64>, Option<u64>) {
        if self.declared_step_count != 1 || self.parsed_step_count != 1 {
            return (None, None);
        }
        match self.mode() {
            RouteMode::ExactIn => (self.in_amount, self.quoted_out_amount),
            RouteMode::ExactOut => (self.quoted_in_amount, self.out_amount),
            RouteMode::TokenLedger => (None, self.quoted_out_amount),
        }
    }
}
