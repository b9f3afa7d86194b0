//! The runtime's `TransactionError` and `InstructionError` enums in their bincode layout (u32 LE
//! variant index, then fields; docs/archive-rpc.md §7.4). Needed to step over the status of legacy
//! bincode metadata and to produce the bincode error bytes the CAR writer stores.

use serde::{Deserialize, Serialize};

/// `TransactionError`, variants in declaration (= bincode index) order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TransactionError {
    AccountInUse,
    AccountLoadedTwice,
    AccountNotFound,
    ProgramAccountNotFound,
    InsufficientFundsForFee,
    InvalidAccountForFee,
    AlreadyProcessed,
    BlockhashNotFound,
    InstructionError(u8, InstructionError),
    CallChainTooDeep,
    MissingSignatureForFee,
    InvalidAccountIndex,
    SignatureFailure,
    InvalidProgramForExecution,
    SanitizeFailure,
    ClusterMaintenance,
    AccountBorrowOutstanding,
    WouldExceedMaxBlockCostLimit,
    UnsupportedVersion,
    InvalidWritableAccount,
    WouldExceedMaxAccountCostLimit,
    WouldExceedAccountDataBlockLimit,
    TooManyAccountLocks,
    AddressLookupTableNotFound,
    InvalidAddressLookupTableOwner,
    InvalidAddressLookupTableData,
    InvalidAddressLookupTableIndex,
    InvalidRentPayingAccount,
    WouldExceedMaxVoteCostLimit,
    WouldExceedAccountDataTotalLimit,
    DuplicateInstruction(u8),
    InsufficientFundsForRent { account_index: u8 },
    MaxLoadedAccountsDataSizeExceeded,
    InvalidLoadedAccountsDataSizeLimit,
    ResanitizationNeeded,
    ProgramExecutionTemporarilyRestricted { account_index: u8 },
    UnbalancedTransaction,
    ProgramCacheHitMaxLimit,
    CommitCancelled,
}

/// `InstructionError`, variants in bincode index order. `BorshIoError` carries the string that
/// SDK 2.x (and therefore stored data) serialised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum InstructionError {
    GenericError,
    InvalidArgument,
    InvalidInstructionData,
    InvalidAccountData,
    AccountDataTooSmall,
    InsufficientFunds,
    IncorrectProgramId,
    MissingRequiredSignature,
    AccountAlreadyInitialized,
    UninitializedAccount,
    UnbalancedInstruction,
    ModifiedProgramId,
    ExternalAccountLamportSpend,
    ExternalAccountDataModified,
    ReadonlyLamportChange,
    ReadonlyDataModified,
    DuplicateAccountIndex,
    ExecutableModified,
    RentEpochModified,
    NotEnoughAccountKeys,
    AccountDataSizeChanged,
    AccountNotExecutable,
    AccountBorrowFailed,
    AccountBorrowOutstanding,
    DuplicateAccountOutOfSync,
    Custom(u32),
    InvalidError,
    ExecutableDataModified,
    ExecutableLamportChange,
    ExecutableAccountNotRentExempt,
    UnsupportedProgramId,
    CallDepth,
    MissingAccount,
    ReentrancyNotAllowed,
    MaxSeedLengthExceeded,
    InvalidSeeds,
    InvalidRealloc,
    ComputationalBudgetExceeded,
    PrivilegeEscalation,
    ProgramEnvironmentSetupFailure,
    ProgramFailedToComplete,
    ProgramFailedToCompile,
    Immutable,
    IncorrectAuthority,
    BorshIoError(String),
    AccountNotRentExempt,
    InvalidAccountOwner,
    ArithmeticOverflow,
    UnsupportedSysvar,
    IllegalOwner,
    MaxAccountsDataAllocationsExceeded,
    MaxAccountsExceeded,
    MaxInstructionTraceLengthExceeded,
    BuiltinProgramsMustConsumeComputeUnits,
    BailOut,
}

impl TransactionError {
    /// The bincode bytes (what protobuf metadata stores in `err.err`).
    pub fn to_bincode(&self) -> Vec<u8> {
        bincode::serialize(self).unwrap_or_default()
    }

    /// Parses bincode bytes (trailing bytes allowed).
    pub fn from_bincode(bytes: &[u8]) -> Option<Self> {
        bincode::deserialize(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bincode_layout_matches_the_spec() {
        // InstructionError(2, Custom(6001)): u32 8, u8 2, u32 25, u32 6001
        // (docs/archive-rpc.md §7.4).
        let err = TransactionError::InstructionError(2, InstructionError::Custom(6001));
        let mut expected = vec![8, 0, 0, 0, 2, 25, 0, 0, 0];
        expected.extend_from_slice(&6001u32.to_le_bytes());
        assert_eq!(err.to_bincode(), expected);
        assert_eq!(
            TransactionError::InsufficientFundsForRent { account_index: 3 }.to_bincode(),
            vec![31, 0, 0, 0, 3]
        );
        assert_eq!(
            TransactionError::CommitCancelled.to_bincode(),
            vec![38, 0, 0, 0]
        );
        assert_eq!(TransactionError::from_bincode(&expected), Some(err));
    }
}
