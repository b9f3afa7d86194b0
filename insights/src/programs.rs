//! The built-in program registry of the insights figures: which program ids are the vote and
//! compute-budget programs, which count as builtins for the runtime's default compute-unit limit,
//! and the display names `top_programs` shows.

use decoder::dex::{DELTA_MAINNET_ID, DexProgram};

/// The vote program: a simple vote transaction has exactly one instruction, to it.
pub const VOTE_PROGRAM: &str = "Vote111111111111111111111111111111111111111";
/// The compute-budget program (SetComputeUnitLimit, SetComputeUnitPrice); excluded from
/// `top_programs`.
pub const COMPUTE_BUDGET_PROGRAM: &str = "ComputeBudget111111111111111111111111111111";

/// Programs the runtime's default compute-unit rule charges 3,000 CU per instruction (every
/// other program: 200,000). The builtins that have not been migrated to on-chain BPF programs.
pub const BUILTIN_PROGRAMS: [&str; 9] = [
    "11111111111111111111111111111111",
    VOTE_PROGRAM,
    COMPUTE_BUDGET_PROGRAM,
    "BPFLoader1111111111111111111111111111111111",
    "BPFLoader2111111111111111111111111111111111",
    "BPFLoaderUpgradeab1e11111111111111111111111",
    "LoaderV411111111111111111111111111111111111",
    "ZkE1Gama1Proof11111111111111111111111111111",
    "Stake11111111111111111111111111111111111111",
];

/// Names of well-known programs besides the supported DEX programs.
const NAMED_PROGRAMS: [(&str, &str); 14] = [
    ("11111111111111111111111111111111", "System Program"),
    (VOTE_PROGRAM, "Vote Program"),
    (COMPUTE_BUDGET_PROGRAM, "Compute Budget Program"),
    (
        "Stake11111111111111111111111111111111111111",
        "Stake Program",
    ),
    (
        "AddressLookupTab1e1111111111111111111111111",
        "Address Lookup Table Program",
    ),
    (
        "BPFLoaderUpgradeab1e11111111111111111111111",
        "BPF Upgradeable Loader",
    ),
    (
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "Token Program",
    ),
    (
        "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb",
        "Token-2022 Program",
    ),
    (
        "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
        "Associated Token Account Program",
    ),
    (
        "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
        "Memo Program",
    ),
    (
        "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
        "Memo Program v1",
    ),
    (
        "KeccakSecp256k11111111111111111111111111111",
        "Secp256k1 Program",
    ),
    (
        "Ed25519SigVerify111111111111111111111111111",
        "Ed25519 Program",
    ),
    (
        "Sysvar1nstructions1111111111111111111111111",
        "Instructions Sysvar",
    ),
];

/// Name shown for a program the registry does not know.
pub const UNKNOWN_PROGRAM_NAME: &str = "unknown";

/// True for the programs of [`BUILTIN_PROGRAMS`].
pub fn is_builtin(program_id: &str) -> bool {
    BUILTIN_PROGRAMS.contains(&program_id)
}

/// The display name of `program_id`: a well-known program, a supported DEX program under its
/// neutral name (`ALPHA_FUN` …), the aggregator (`DELTA`), else [`UNKNOWN_PROGRAM_NAME`].
pub fn program_name(program_id: &str) -> &'static str {
    if let Some((_, name)) = NAMED_PROGRAMS.iter().find(|(id, _)| *id == program_id) {
        return name;
    }
    if program_id == DELTA_MAINNET_ID {
        return "DELTA";
    }
    DexProgram::ALL
        .iter()
        .find(|program| program.mainnet_id() == program_id)
        .map_or(UNKNOWN_PROGRAM_NAME, |program| program.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_ids_are_32_byte_base58() {
        for id in BUILTIN_PROGRAMS
            .iter()
            .chain(NAMED_PROGRAMS.iter().map(|(id, _)| id))
        {
            let bytes = bs58::decode(id).into_vec().unwrap();
            assert_eq!(bytes.len(), 32, "{id}");
        }
    }

    #[test]
    fn names() {
        assert_eq!(
            program_name(COMPUTE_BUDGET_PROGRAM),
            "Compute Budget Program"
        );
        assert_eq!(program_name(DexProgram::AlphaFun.mainnet_id()), "ALPHA_FUN");
        assert_eq!(program_name(DELTA_MAINNET_ID), "DELTA");
        assert_eq!(
            program_name("So11111111111111111111111111111111111111112"),
            "unknown"
        );
    }
}
