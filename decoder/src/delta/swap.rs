//! The aggregator's `Swap` enum: each variant's payload layout (generated from the IDL into
//! `tables.rs`), a walker that steps over a payload with its exact length so later route steps
//! stay aligned, and the payload's fields as displayable values for `DeltaRouteStep.swap_fields`.
//!
//! Field values render as: integers in decimal, `bool` as `true`/`false`, unit enums by variant
//! name (`Bid`), `bytes` in lowercase hex, `Option<u8>` as the number or `null`, and the composite
//! fields (`RemainingAccountsInfo`, candidate lists) as compact JSON.

use std::fmt;

use crate::dex::DexError;
use crate::dex::reader::Arguments;

/// How one payload field is encoded (every type the IDL's `Swap` variants use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Bool,
    U8,
    U16,
    U32,
    U64,
    U128,
    /// A fieldless enum (1-byte index) with its variant names.
    UnitEnum(&'static [&'static str]),
    OptionU8,
    Bytes,
    U64Array5,
    RemainingAccountsInfo,
    OptionRemainingAccountsInfo,
    VecCandidateSwap,
    VecCandidateSwapWithBps,
}

/// One named payload field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub ty: FieldType,
}

/// One `Swap` variant: its IDL name and payload fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapVariant {
    pub name: &'static str,
    pub fields: &'static [Field],
}

/// `CandidateSwap` variants (IDL): name and payload fields, by index.
const CANDIDATE_SWAPS: &[(&str, &[(&str, FieldType)])] = &[
    (
        "HumidiFi",
        &[
            ("swap_id", FieldType::U64),
            ("is_base_to_quote", FieldType::Bool),
        ],
    ),
    (
        "TesseraV",
        &[("side", FieldType::UnitEnum(&["Bid", "Ask"]))],
    ),
    (
        "HumidiFiV2",
        &[
            ("swap_id", FieldType::U64),
            ("is_base_to_quote", FieldType::Bool),
        ],
    ),
    ("RaydiumV2", &[]),
    ("RaydiumClmm", &[]),
    ("Whirlpool", &[("a_to_b", FieldType::Bool)]),
    ("ZeroFi", &[]),
    ("BisonFiV2", &[("a_to_b", FieldType::Bool)]),
    ("GoonFiV2", &[("is_bid", FieldType::Bool)]),
    ("GoonFiV3", &[("is_bid", FieldType::Bool)]),
    (
        "WhirlpoolV2",
        &[
            ("a_to_b", FieldType::Bool),
            (
                "remaining_accounts_info",
                FieldType::OptionRemainingAccountsInfo,
            ),
        ],
    ),
    ("ZeroFiSwapV2", &[]),
];

/// Steps over one field, checking tags and lengths.
fn skip_field(
    arguments: &mut Arguments<'_>,
    field: &'static str,
    ty: FieldType,
) -> Result<(), DexError> {
    match ty {
        FieldType::Bool => arguments.bool(field).map(drop),
        FieldType::U8 => arguments.u8(field).map(drop),
        FieldType::U16 => arguments.u16(field).map(drop),
        FieldType::U32 => arguments.u32(field).map(drop),
        FieldType::U64 => arguments.u64(field).map(drop),
        FieldType::U128 => arguments.u128(field).map(drop),
        FieldType::UnitEnum(names) => arguments.variant(field, names.len() as u8).map(drop),
        FieldType::OptionU8 => {
            if arguments.option_tag(field)? {
                arguments.u8(field)?;
            }
            Ok(())
        }
        FieldType::Bytes => {
            let len = arguments.u32(field)? as usize;
            arguments.skip(len, field)
        }
        FieldType::U64Array5 => arguments.skip(5 * 8, field),
        FieldType::RemainingAccountsInfo => {
            // Vec<RemainingAccountsSlice { accounts_type: u8, length: u8 }>.
            let count = arguments.u32(field)? as usize;
            arguments.skip(count.saturating_mul(2), field)
        }
        FieldType::OptionRemainingAccountsInfo => {
            if arguments.option_tag(field)? {
                skip_field(arguments, field, FieldType::RemainingAccountsInfo)?;
            }
            Ok(())
        }
        FieldType::VecCandidateSwap | FieldType::VecCandidateSwapWithBps => {
            let count = arguments.u32(field)?;
            // Each candidate takes at least one byte, so the count is bounded by the input.
            for _ in 0..count {
                let index = arguments.variant(field, CANDIDATE_SWAPS.len() as u8)?;
                for (_, candidate_type) in CANDIDATE_SWAPS[usize::from(index)].1 {
                    skip_field(arguments, field, *candidate_type)?;
                }
                if ty == FieldType::VecCandidateSwapWithBps {
                    arguments.u32(field)?;
                }
            }
            Ok(())
        }
    }
}

impl SwapVariant {
    /// Steps over this variant's payload.
    pub(crate) fn skip_payload(&self, arguments: &mut Arguments<'_>) -> Result<(), DexError> {
        for field in self.fields {
            skip_field(arguments, field.name, field.ty)?;
        }
        Ok(())
    }

    /// The payload's fields as `(name, value)`; `payload` must be a payload this variant's
    /// `skip_payload` accepted.
    pub fn fields<'a>(
        &self,
        payload: &'a [u8],
    ) -> impl Iterator<Item = (&'static str, FieldValue<'a>)> {
        let mut offset = 0;
        self.fields.iter().map(move |field| {
            let mut arguments = Arguments::new(&payload[offset.min(payload.len())..]);
            // Validated before, so this cannot fail; a failure renders as an empty value.
            let _ = skip_field(&mut arguments, field.name, field.ty);
            let bytes = arguments.consumed();
            offset += bytes.len();
            (
                field.name,
                FieldValue {
                    ty: field.ty,
                    bytes,
                },
            )
        })
    }
}

/// One field's encoded bytes and type; `Display` renders it (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldValue<'a> {
    ty: FieldType,
    bytes: &'a [u8],
}

fn le(bytes: &[u8]) -> u128 {
    bytes
        .iter()
        .rev()
        .fold(0u128, |value, &byte| value << 8 | u128::from(byte))
}

impl fmt::Display for FieldValue<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        render(formatter, self.ty, self.bytes)
    }
}

/// Renders an already validated encoding.
fn render(out: &mut fmt::Formatter<'_>, ty: FieldType, bytes: &[u8]) -> fmt::Result {
    match ty {
        FieldType::Bool => write!(out, "{}", bytes.first() == Some(&1)),
        FieldType::U8 | FieldType::U16 | FieldType::U32 | FieldType::U64 | FieldType::U128 => {
            write!(out, "{}", le(bytes))
        }
        FieldType::UnitEnum(names) => {
            let index = usize::from(bytes.first().copied().unwrap_or(0));
            write!(out, "{}", names.get(index).copied().unwrap_or("?"))
        }
        FieldType::OptionU8 => match bytes {
            [1, value] => write!(out, "{value}"),
            _ => write!(out, "null"),
        },
        FieldType::Bytes => bytes
            .get(4..)
            .unwrap_or_default()
            .iter()
            .try_for_each(|b| write!(out, "{b:02x}")),
        FieldType::U64Array5 => {
            write!(out, "[")?;
            for (index, word) in bytes.chunks_exact(8).enumerate() {
                write!(out, "{}{}", if index == 0 { "" } else { "," }, le(word))?;
            }
            write!(out, "]")
        }
        FieldType::RemainingAccountsInfo => {
            write!(out, "{{\"slices\":[")?;
            for (index, slice) in bytes
                .get(4..)
                .unwrap_or_default()
                .chunks_exact(2)
                .enumerate()
            {
                let separator = if index == 0 { "" } else { "," };
                write!(
                    out,
                    "{separator}{{\"accounts_type\":{},\"length\":{}}}",
                    slice[0], slice[1]
                )?;
            }
            write!(out, "]}}")
        }
        FieldType::OptionRemainingAccountsInfo => match bytes.split_first() {
            Some((1, rest)) => render(out, FieldType::RemainingAccountsInfo, rest),
            _ => write!(out, "null"),
        },
        FieldType::VecCandidateSwap | FieldType::VecCandidateSwapWithBps => {
            render_candidates(out, ty == FieldType::VecCandidateSwapWithBps, bytes)
        }
    }
}

/// `[{"HumidiFi":{"swap_id":"1","is_base_to_quote":false}}, …]` (with `"bps"` for the V2 form).
fn render_candidates(out: &mut fmt::Formatter<'_>, with_bps: bool, bytes: &[u8]) -> fmt::Result {
    let mut arguments = Arguments::new(bytes.get(4..).unwrap_or_default());
    write!(out, "[")?;
    let mut first = true;
    while let Ok(index) = arguments.u8("candidate") {
        let Some((name, fields)) = CANDIDATE_SWAPS.get(usize::from(index)) else {
            break;
        };
        write!(out, "{}{{\"{name}\":{{", if first { "" } else { "," })?;
        first = false;
        for (position, (field, ty)) in fields.iter().enumerate() {
            let start = arguments.consumed().len();
            if skip_field(&mut arguments, field, *ty).is_err() {
                break;
            }
            let value = &arguments.consumed()[start..];
            let separator = if position == 0 { "" } else { "," };
            let quoted = matches!(ty, FieldType::U64 | FieldType::UnitEnum(_));
            let value = FieldValue {
                ty: *ty,
                bytes: value,
            };
            if quoted {
                write!(out, "{separator}\"{field}\":\"{value}\"")?;
            } else {
                write!(out, "{separator}\"{field}\":{value}")?;
            }
        }
        write!(out, "}}")?;
        if with_bps {
            let bps = arguments.u32("bps").unwrap_or(0);
            write!(out, ",\"bps\":{bps}")?;
        }
        write!(out, "}}")?;
    }
    write!(out, "]")
}
