//! Why a subscription request was refused: one variant per reason, each naming the filter and the
//! offending value; the gRPC service turns every one into `INVALID_ARGUMENT` with this text.

use thiserror::Error;

/// A refused subscription request. Nothing of a refused request is applied.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FilterError {
    #[error("{count} filters in one request, at most {max} allowed")]
    TooManyFilters { count: usize, max: usize },
    #[error("{count} account keys across the request's filters, at most {max} allowed")]
    TooManyKeys { count: usize, max: usize },
    #[error("filter {filter:?}…: id of {bytes} bytes, at most {max} allowed")]
    IdTooLong {
        filter: String,
        bytes: usize,
        max: usize,
    },
    #[error(
        "{count} instruction_types entries across the request's filters, at most {max} allowed"
    )]
    TooManyInstructionTypes { count: usize, max: usize },
    #[error("filter {filter:?}: {field} value {value:?} is not a base58 public key of 32 bytes")]
    BadKey {
        filter: String,
        field: &'static str,
        value: String,
    },
    #[error("filter {filter:?}: programs contains DEX_PROGRAM_UNSPECIFIED")]
    UnspecifiedProgram { filter: String },
    #[error("filter {filter:?}: programs contains unknown DexProgram value {value}")]
    UnknownProgram { filter: String, value: i32 },
    #[error(
        "filter {filter:?}: instruction_types value {value:?} is not an instruction of the selected programs"
    )]
    UnknownInstruction { filter: String, value: String },
}

impl FilterError {
    /// Stable metric label.
    pub const fn label(&self) -> &'static str {
        match self {
            Self::TooManyFilters { .. } => "too_many_filters",
            Self::TooManyKeys { .. } => "too_many_keys",
            Self::IdTooLong { .. } => "id_too_long",
            Self::TooManyInstructionTypes { .. } => "too_many_instruction_types",
            Self::BadKey { .. } => "bad_key",
            Self::UnspecifiedProgram { .. } => "unspecified_program",
            Self::UnknownProgram { .. } => "unknown_program",
            Self::UnknownInstruction { .. } => "unknown_instruction",
        }
    }
}
