//! `TransactionError` as stored (bincode, inside the metadata) and as the validator prints it in
//! JSON (docs/archive-rpc.md §7.4): unit variants as bare strings, tuple variants as an object
//! holding the value(s), struct variants with snake_case fields. Every variant of the current SDK
//! is known; the legacy `BorshIoError(String)` payload of old epochs is read and dropped (current
//! validators print the unit form). An unknown variant index (future data) does not fail the
//! block: it prints as `{"UnknownTransactionError":N}` / `{"UnknownInstructionError":N}`.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// TransactionError variants by bincode index.
const TRANSACTION_ERRORS: [&str; 40] = [
    "AccountInUse",
    "AccountLoadedTwice",
    "AccountNotFound",
    "ProgramAccountNotFound",
    "InsufficientFundsForFee",
    "InvalidAccountForFee",
    "AlreadyProcessed",
    "BlockhashNotFound",
    "InstructionError",
    "CallChainTooDeep",
    "MissingSignatureForFee",
    "InvalidAccountIndex",
    "SignatureFailure",
    "InvalidProgramForExecution",
    "SanitizeFailure",
    "ClusterMaintenance",
    "AccountBorrowOutstanding",
    "WouldExceedMaxBlockCostLimit",
    "UnsupportedVersion",
    "InvalidWritableAccount",
    "WouldExceedMaxAccountCostLimit",
    "WouldExceedAccountDataBlockLimit",
    "TooManyAccountLocks",
    "AddressLookupTableNotFound",
    "InvalidAddressLookupTableOwner",
    "InvalidAddressLookupTableData",
    "InvalidAddressLookupTableIndex",
    "InvalidRentPayingAccount",
    "WouldExceedMaxVoteCostLimit",
    "WouldExceedAccountDataTotalLimit",
    "DuplicateInstruction",
    "InsufficientFundsForRent",
    "MaxLoadedAccountsDataSizeExceeded",
    "InvalidLoadedAccountsDataSizeLimit",
    "ResanitizationNeeded",
    "ProgramExecutionTemporarilyRestricted",
    "UnbalancedTransaction",
    "ProgramCacheHitMaxLimit",
    "CommitCancelled",
    // Newest SDK (solana-transaction-error 4.1); not in the compat spec's list, found by the oracle.
    "BailOut",
];

const INSTRUCTION_ERROR: u32 = 8;
const DUPLICATE_INSTRUCTION: u32 = 30;
const INSUFFICIENT_FUNDS_FOR_RENT: u32 = 31;
const PROGRAM_EXECUTION_TEMPORARILY_RESTRICTED: u32 = 35;

/// InstructionError variants by bincode index.
const INSTRUCTION_ERRORS: [&str; 55] = [
    "GenericError",
    "InvalidArgument",
    "InvalidInstructionData",
    "InvalidAccountData",
    "AccountDataTooSmall",
    "InsufficientFunds",
    "IncorrectProgramId",
    "MissingRequiredSignature",
    "AccountAlreadyInitialized",
    "UninitializedAccount",
    "UnbalancedInstruction",
    "ModifiedProgramId",
    "ExternalAccountLamportSpend",
    "ExternalAccountDataModified",
    "ReadonlyLamportChange",
    "ReadonlyDataModified",
    "DuplicateAccountIndex",
    "ExecutableModified",
    "RentEpochModified",
    "NotEnoughAccountKeys",
    "AccountDataSizeChanged",
    "AccountNotExecutable",
    "AccountBorrowFailed",
    "AccountBorrowOutstanding",
    "DuplicateAccountOutOfSync",
    "Custom",
    "InvalidError",
    "ExecutableDataModified",
    "ExecutableLamportChange",
    "ExecutableAccountNotRentExempt",
    "UnsupportedProgramId",
    "CallDepth",
    "MissingAccount",
    "ReentrancyNotAllowed",
    "MaxSeedLengthExceeded",
    "InvalidSeeds",
    "InvalidRealloc",
    "ComputationalBudgetExceeded",
    "PrivilegeEscalation",
    "ProgramEnvironmentSetupFailure",
    "ProgramFailedToComplete",
    "ProgramFailedToCompile",
    "Immutable",
    "IncorrectAuthority",
    "BorshIoError",
    "AccountNotRentExempt",
    "InvalidAccountOwner",
    "ArithmeticOverflow",
    "UnsupportedSysvar",
    "IllegalOwner",
    "MaxAccountsDataAllocationsExceeded",
    "MaxAccountsExceeded",
    "MaxInstructionTraceLengthExceeded",
    "BuiltinProgramsMustConsumeComputeUnits",
    "BailOut",
];

const CUSTOM: u32 = 25;

/// A decoded TransactionError, ready to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxError {
    Unit(&'static str),
    Instruction(u8, InstructionError),
    DuplicateInstruction(u8),
    /// A struct variant with one `account_index` field.
    AccountIndex(&'static str, u8),
    Unknown(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstructionError {
    Unit(&'static str),
    Custom(u32),
    Unknown(u32),
}

/// Why stored error bytes could not be read at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TxErrorDecodeError {
    #[error("transaction error bytes end early")]
    Truncated,
}

/// Decodes the bincode bytes of a TransactionError.
pub fn decode(bytes: &[u8]) -> Result<TxError, TxErrorDecodeError> {
    let mut rest = bytes;
    let tag = take_u32(&mut rest)?;
    Ok(match tag {
        INSTRUCTION_ERROR => {
            let index = take_u8(&mut rest)?;
            let inner = take_u32(&mut rest)?;
            let error = match inner {
                CUSTOM => InstructionError::Custom(take_u32(&mut rest)?),
                // The legacy BorshIoError(String) payload, if present, is dropped.
                known if (known as usize) < INSTRUCTION_ERRORS.len() => {
                    InstructionError::Unit(INSTRUCTION_ERRORS[known as usize])
                }
                unknown => InstructionError::Unknown(unknown),
            };
            TxError::Instruction(index, error)
        }
        DUPLICATE_INSTRUCTION => TxError::DuplicateInstruction(take_u8(&mut rest)?),
        INSUFFICIENT_FUNDS_FOR_RENT | PROGRAM_EXECUTION_TEMPORARILY_RESTRICTED => {
            TxError::AccountIndex(TRANSACTION_ERRORS[tag as usize], take_u8(&mut rest)?)
        }
        known if (known as usize) < TRANSACTION_ERRORS.len() => {
            TxError::Unit(TRANSACTION_ERRORS[known as usize])
        }
        unknown => TxError::Unknown(unknown),
    })
}

fn take_u32(rest: &mut &[u8]) -> Result<u32, TxErrorDecodeError> {
    let (head, tail) = rest
        .split_first_chunk::<4>()
        .ok_or(TxErrorDecodeError::Truncated)?;
    *rest = tail;
    Ok(u32::from_le_bytes(*head))
}

fn take_u8(rest: &mut &[u8]) -> Result<u8, TxErrorDecodeError> {
    let (head, tail) = rest.split_first().ok_or(TxErrorDecodeError::Truncated)?;
    *rest = tail;
    Ok(*head)
}

impl Serialize for TxError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Self::Unit(name) => serializer.serialize_str(name),
            Self::Instruction(index, error) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("InstructionError", &(index, error))?;
                map.end()
            }
            Self::DuplicateInstruction(index) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("DuplicateInstruction", &index)?;
                map.end()
            }
            Self::AccountIndex(name, index) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(name, &AccountIndexField(index))?;
                map.end()
            }
            Self::Unknown(tag) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("UnknownTransactionError", &tag)?;
                map.end()
            }
        }
    }
}

struct AccountIndexField(u8);

impl Serialize for AccountIndexField {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("account_index", &self.0)?;
        map.end()
    }
}

impl Serialize for InstructionError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Self::Unit(name) => serializer.serialize_str(name),
            Self::Custom(code) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("Custom", &code)?;
                map.end()
            }
            Self::Unknown(tag) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("UnknownInstructionError", &tag)?;
                map.end()
            }
        }
    }
}

/// `{"Ok":null}` or `{"Err":<error>}`: the meta's legacy `status` member.
pub struct Status<'a>(pub Option<&'a TxError>);

impl Serialize for Status<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self.0 {
            None => map.serialize_entry("Ok", &())?,
            Some(error) => map.serialize_entry("Err", error)?,
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(bytes: &[u8]) -> String {
        serde_json::to_string(&decode(bytes).unwrap()).unwrap()
    }

    #[test]
    fn prints_each_variant_shape() {
        assert_eq!(json(&[0, 0, 0, 0]), r#""AccountInUse""#);
        assert_eq!(json(&[7, 0, 0, 0]), r#""BlockhashNotFound""#);
        // InstructionError(1, Custom(6001)): tag 8, index 1, inner tag 25, u32 6001.
        let mut bytes = vec![8, 0, 0, 0, 1, 25, 0, 0, 0];
        bytes.extend_from_slice(&6001u32.to_le_bytes());
        assert_eq!(json(&bytes), r#"{"InstructionError":[1,{"Custom":6001}]}"#);
        assert_eq!(
            json(&[8, 0, 0, 0, 2, 3, 0, 0, 0]),
            r#"{"InstructionError":[2,"InvalidAccountData"]}"#
        );
        assert_eq!(json(&[30, 0, 0, 0, 4]), r#"{"DuplicateInstruction":4}"#);
        assert_eq!(
            json(&[31, 0, 0, 0, 9]),
            r#"{"InsufficientFundsForRent":{"account_index":9}}"#
        );
        assert_eq!(
            json(&[35, 0, 0, 0, 2]),
            r#"{"ProgramExecutionTemporarilyRestricted":{"account_index":2}}"#
        );
        assert_eq!(json(&[38, 0, 0, 0]), r#""CommitCancelled""#);
        assert_eq!(json(&[39, 0, 0, 0]), r#""BailOut""#);
        assert_eq!(json(&[99, 0, 0, 0]), r#"{"UnknownTransactionError":99}"#);
    }

    #[test]
    fn legacy_borsh_io_error_payload_is_dropped() {
        // InstructionError(0, BorshIoError("Unknown")): tag 44 then a u64-length string.
        let mut bytes = vec![8, 0, 0, 0, 0, 44, 0, 0, 0];
        bytes.extend_from_slice(&7u64.to_le_bytes());
        bytes.extend_from_slice(b"Unknown");
        assert_eq!(json(&bytes), r#"{"InstructionError":[0,"BorshIoError"]}"#);
    }

    #[test]
    fn truncated_bytes_are_an_error_not_a_panic() {
        assert_eq!(decode(&[8, 0]), Err(TxErrorDecodeError::Truncated));
        assert_eq!(
            decode(&[8, 0, 0, 0, 1, 25, 0]),
            Err(TxErrorDecodeError::Truncated)
        );
    }

    #[test]
    fn status_wraps_the_error() {
        let error = decode(&[7, 0, 0, 0]).unwrap();
        assert_eq!(
            serde_json::to_string(&Status(Some(&error))).unwrap(),
            r#"{"Err":"BlockhashNotFound"}"#
        );
        assert_eq!(
            serde_json::to_string(&Status(None)).unwrap(),
            r#"{"Ok":null}"#
        );
    }
}
