//! Why a transaction was rejected: one variant per reason, each with a stable metric label.
//!
//! Rule numbers refer to the list in the `transaction` module doc.

use thiserror::Error;

use crate::cursor::CursorError;

/// Why a transaction was rejected. Each variant is one reason and has a stable [`label`].
///
/// [`label`]: TransactionError::label
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TransactionError {
    /// The bytes end early or a `short_vec` length is malformed.
    #[error("malformed transaction: {0}")]
    Malformed(#[from] CursorError),
    /// The version prefix names a version other than 0.
    #[error("unsupported message version {version}; only legacy and v0 are accepted")]
    UnsupportedVersion { version: u8 },
    /// Rule 1: signers plus read-only unsigned accounts need more static keys than there are.
    #[error(
        "header needs {needed} static keys (signers + read-only unsigned), message has \
         {static_account_count}"
    )]
    HeaderExceedsStaticKeys {
        needed: usize,
        static_account_count: usize,
    },
    /// Rule 2: every signer is read-only, so nobody can pay the fee.
    #[error(
        "no writable fee payer: {num_readonly_signed_accounts} read-only signers of \
         {num_required_signatures} signers"
    )]
    NoWritableFeePayer {
        num_readonly_signed_accounts: u8,
        num_required_signatures: u8,
    },
    /// Rule 3: an address-table lookup loads no address.
    #[error("address table lookup {lookup_index} loads no address")]
    EmptyAddressTableLookup { lookup_index: usize },
    /// Rule 4: a v0 message references more than [`ACCOUNT_KEYS_V0_MAX`](super::ACCOUNT_KEYS_V0_MAX) keys.
    #[error("message references {account_count} keys, at most {max} allowed")]
    TooManyAccountKeys { account_count: usize, max: usize },
    /// Rule 5: a program id index is past the static keys.
    #[error(
        "instruction {instruction_index}: program id index {program_id_index} is not one of the \
         {static_account_count} static keys"
    )]
    ProgramIdIndexOutOfRange {
        instruction_index: usize,
        program_id_index: u8,
        static_account_count: usize,
    },
    /// Rule 5: a program id index is 0, the fee payer.
    #[error("instruction {instruction_index}: program id is the fee payer")]
    ProgramIdIsFeePayer { instruction_index: usize },
    /// Rule 6: an instruction account index is past every key the message references.
    #[error(
        "instruction {instruction_index}: account index {account_index} is not below the \
         {account_count} keys"
    )]
    AccountIndexOutOfRange {
        instruction_index: usize,
        account_index: u8,
        account_count: usize,
    },
    /// Rule 7: the signature count differs from the header's `num_required_signatures`.
    #[error("{signature_count} signatures, header requires {num_required_signatures}")]
    SignatureCountMismatch {
        num_required_signatures: u8,
        signature_count: usize,
    },
    /// [`parse_transaction_exact`](super::parse_transaction_exact) only: bytes follow the transaction.
    #[error("{count} bytes follow the transaction")]
    TrailingBytes { count: usize },
}

impl TransactionError {
    /// Stable metric label, one per variant (two for the wire errors).
    pub fn label(&self) -> &'static str {
        match self {
            Self::Malformed(CursorError::Truncated { .. }) => "truncated",
            Self::Malformed(CursorError::BadCompactU16 { .. }) => "bad_compact_u16",
            Self::UnsupportedVersion { .. } => "unsupported_version",
            Self::HeaderExceedsStaticKeys { .. } => "header_exceeds_static_keys",
            Self::NoWritableFeePayer { .. } => "no_writable_fee_payer",
            Self::EmptyAddressTableLookup { .. } => "empty_address_table_lookup",
            Self::TooManyAccountKeys { .. } => "too_many_account_keys",
            Self::ProgramIdIndexOutOfRange { .. } => "program_id_index_out_of_range",
            Self::ProgramIdIsFeePayer { .. } => "program_id_is_fee_payer",
            Self::AccountIndexOutOfRange { .. } => "account_index_out_of_range",
            Self::SignatureCountMismatch { .. } => "signature_count_mismatch",
            Self::TrailingBytes { .. } => "trailing_bytes",
        }
    }
}
