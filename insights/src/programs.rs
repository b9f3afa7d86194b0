//! The built-in program registry of the insights figures: which program ids are the vote and
//! compute-budget programs, which count as builtins for the runtime's default compute-unit limit,
//! and the display names `top_programs` shows.

use decoder::dex::{DELTA_MAINNET_ID, DexProgram};
use decoder::program_ids as id;

/// The vote program: a simple vote transaction has exactly one instruction, to it.
pub const VOTE_PROGRAM: &str = id::VOTE;
/// The compute-budget program (SetComputeUnitLimit, SetComputeUnitPrice); excluded from
/// `top_programs`.
pub const COMPUTE_BUDGET_PROGRAM: &str = id::COMPUTE_BUDGET;

/// Programs the runtime's default compute-unit rule charges 3,000 CU per instruction (every
/// other program: 200,000). The builtins that have not been migrated to on-chain BPF programs.
pub const BUILTIN_PROGRAMS: [&str; 9] = [
    id::SYSTEM,
    id::VOTE,
    id::COMPUTE_BUDGET,
    id::BPF_LOADER_V1,
    id::BPF_LOADER_V2,
    id::BPF_LOADER_UPGRADEABLE,
    id::LOADER_V4,
    id::ZK_ELGAMAL_PROOF,
    id::STAKE,
];

/// Names of well-known programs besides the supported DEX programs.
const NAMED_PROGRAMS: [(&str, &str); 14] = [
    (id::SYSTEM, "System Program"),
    (id::VOTE, "Vote Program"),
    (id::COMPUTE_BUDGET, "Compute Budget Program"),
    (id::STAKE, "Stake Program"),
    (id::ADDRESS_LOOKUP_TABLE, "Address Lookup Table Program"),
    (id::BPF_LOADER_UPGRADEABLE, "BPF Upgradeable Loader"),
    (id::TOKEN, "Token Program"),
    (id::TOKEN_2022, "Token-2022 Program"),
    (id::ASSOCIATED_TOKEN, "Associated Token Account Program"),
    (id::MEMO_V3, "Memo Program"),
    (id::MEMO_V1, "Memo Program v1"),
    (id::SECP256K1, "Secp256k1 Program"),
    (id::ED25519_SIG_VERIFY, "Ed25519 Program"),
    (id::SYSVAR_INSTRUCTIONS, "Instructions Sysvar"),
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
