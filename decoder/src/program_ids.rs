//! Well-known program and sysvar ids of the Solana runtime, in base58: the one list the crates
//! share (the supported DEX programs and the aggregator are in [`crate::dex`]).

/// The system program (all-zero key).
pub const SYSTEM: &str = "11111111111111111111111111111111";
pub const VOTE: &str = "Vote111111111111111111111111111111111111111";
pub const STAKE: &str = "Stake11111111111111111111111111111111111111";
pub const STAKE_CONFIG: &str = "StakeConfig11111111111111111111111111111111";
pub const CONFIG: &str = "Config1111111111111111111111111111111111111";
pub const COMPUTE_BUDGET: &str = "ComputeBudget111111111111111111111111111111";
pub const ADDRESS_LOOKUP_TABLE: &str = "AddressLookupTab1e1111111111111111111111111";
pub const FEATURE: &str = "Feature111111111111111111111111111111111111";
pub const NATIVE_LOADER: &str = "NativeLoader1111111111111111111111111111111";
pub const BPF_LOADER_V1: &str = "BPFLoader1111111111111111111111111111111111";
pub const BPF_LOADER_V2: &str = "BPFLoader2111111111111111111111111111111111";
pub const BPF_LOADER_UPGRADEABLE: &str = "BPFLoaderUpgradeab1e11111111111111111111111";
pub const LOADER_V4: &str = "LoaderV411111111111111111111111111111111111";
pub const ED25519_SIG_VERIFY: &str = "Ed25519SigVerify111111111111111111111111111";
pub const SECP256K1: &str = "KeccakSecp256k11111111111111111111111111111";
pub const SECP256R1: &str = "Secp256r1SigVerify1111111111111111111111111";
pub const ZK_ELGAMAL_PROOF: &str = "ZkE1Gama1Proof11111111111111111111111111111";
pub const ZK_TOKEN_PROOF: &str = "ZkTokenProof1111111111111111111111111111111";

/// SPL Token.
pub const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
pub const TOKEN_2022: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
pub const ASSOCIATED_TOKEN: &str = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
/// SPL Memo v1.
pub const MEMO_V1: &str = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo";
/// SPL Memo v2/v3 (the one in use).
pub const MEMO_V3: &str = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";

/// The owner of the sysvar accounts.
pub const SYSVAR_OWNER: &str = "Sysvar1111111111111111111111111111111111111";
pub const SYSVAR_CLOCK: &str = "SysvarC1ock11111111111111111111111111111111";
pub const SYSVAR_EPOCH_SCHEDULE: &str = "SysvarEpochSchedu1e111111111111111111111111";
pub const SYSVAR_FEES: &str = "SysvarFees111111111111111111111111111111111";
pub const SYSVAR_RECENT_BLOCKHASHES: &str = "SysvarRecentB1ockHashes11111111111111111111";
pub const SYSVAR_RENT: &str = "SysvarRent111111111111111111111111111111111";
pub const SYSVAR_REWARDS: &str = "SysvarRewards111111111111111111111111111111";
pub const SYSVAR_SLOT_HASHES: &str = "SysvarS1otHashes111111111111111111111111111";
pub const SYSVAR_SLOT_HISTORY: &str = "SysvarS1otHistory11111111111111111111111111";
pub const SYSVAR_STAKE_HISTORY: &str = "SysvarStakeHistory1111111111111111111111111";
pub const SYSVAR_INSTRUCTIONS: &str = "Sysvar1nstructions1111111111111111111111111";
pub const SYSVAR_EPOCH_REWARDS: &str = "SysvarEpochRewards1111111111111111111111111";
pub const SYSVAR_LAST_RESTART_SLOT: &str = "SysvarLastRestartS1ot1111111111111111111111";

/// Every sysvar account (the runtime's `sysvar::ALL_IDS`, in its order).
pub const SYSVARS: [&str; 12] = [
    SYSVAR_CLOCK,
    SYSVAR_EPOCH_SCHEDULE,
    SYSVAR_FEES,
    SYSVAR_RECENT_BLOCKHASHES,
    SYSVAR_RENT,
    SYSVAR_REWARDS,
    SYSVAR_SLOT_HASHES,
    SYSVAR_SLOT_HISTORY,
    SYSVAR_STAKE_HISTORY,
    SYSVAR_INSTRUCTIONS,
    SYSVAR_EPOCH_REWARDS,
    SYSVAR_LAST_RESTART_SLOT,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every id is a 32-byte key in base58, and no two constants name the same key.
    #[test]
    fn ids_are_distinct_32_byte_keys() {
        let ids = [
            SYSTEM,
            VOTE,
            STAKE,
            STAKE_CONFIG,
            CONFIG,
            COMPUTE_BUDGET,
            ADDRESS_LOOKUP_TABLE,
            FEATURE,
            NATIVE_LOADER,
            BPF_LOADER_V1,
            BPF_LOADER_V2,
            BPF_LOADER_UPGRADEABLE,
            LOADER_V4,
            ED25519_SIG_VERIFY,
            SECP256K1,
            SECP256R1,
            ZK_ELGAMAL_PROOF,
            ZK_TOKEN_PROOF,
            TOKEN,
            TOKEN_2022,
            ASSOCIATED_TOKEN,
            MEMO_V1,
            MEMO_V3,
            SYSVAR_OWNER,
        ]
        .into_iter()
        .chain(SYSVARS);
        let mut keys = Vec::new();
        for id in ids {
            let key = bs58::decode(id).into_vec().unwrap();
            assert_eq!(key.len(), 32, "{id}");
            assert!(!keys.contains(&key), "{id} twice");
            keys.push(key);
        }
    }
}
