//! The program ids the parsers know, decoded once: the validator's reserved keys (never
//! writable) and the ids that select a parser.

use std::sync::LazyLock;

use decoder::program_ids as id;

/// The reserved account keys of the current validator (all features active): builtin programs
/// and sysvars, never writable.
pub(super) const RESERVED: [&str; 31] = [
    id::ADDRESS_LOOKUP_TABLE,
    id::BPF_LOADER_V2,
    id::BPF_LOADER_V1,
    id::BPF_LOADER_UPGRADEABLE,
    id::COMPUTE_BUDGET,
    id::CONFIG,
    id::ED25519_SIG_VERIFY,
    id::FEATURE,
    id::LOADER_V4,
    id::NATIVE_LOADER,
    id::SECP256K1,
    id::SECP256R1,
    id::STAKE,
    id::STAKE_CONFIG,
    id::SYSTEM,
    id::VOTE,
    id::ZK_ELGAMAL_PROOF,
    id::ZK_TOKEN_PROOF,
    id::SYSVAR_CLOCK,
    id::SYSVAR_EPOCH_REWARDS,
    id::SYSVAR_EPOCH_SCHEDULE,
    id::SYSVAR_FEES,
    id::SYSVAR_INSTRUCTIONS,
    id::SYSVAR_LAST_RESTART_SLOT,
    id::SYSVAR_RECENT_BLOCKHASHES,
    id::SYSVAR_RENT,
    id::SYSVAR_REWARDS,
    id::SYSVAR_SLOT_HASHES,
    id::SYSVAR_SLOT_HISTORY,
    id::SYSVAR_STAKE_HISTORY,
    id::SYSVAR_OWNER,
];

pub(super) const SYSTEM_PROGRAM: [u8; 32] = [0; 32];
/// The memo program ids parsed as `spl-memo`.
pub(super) const MEMO_PROGRAMS: [&str; 3] = [
    id::MEMO_V1,
    id::MEMO_V3,
    "Memo4c2pN8afCj432Lb7RMVKi9PbQnnW7ewFFaV3oAH",
];
/// SPL Token and Token-2022: one parser (`program` prints `spl-token` for both).
pub(super) const TOKEN_PROGRAMS: [&str; 2] = [id::TOKEN, id::TOKEN_2022];

fn decode_keys<const N: usize>(texts: [&str; N]) -> Vec<[u8; 32]> {
    let mut keys: Vec<[u8; 32]> = texts
        .iter()
        .filter_map(|text| bs58::decode(text).into_vec().ok()?.try_into().ok())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

pub(super) static RESERVED_KEYS: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys(RESERVED));
pub(super) static UPGRADEABLE_LOADER_KEY: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys([id::BPF_LOADER_UPGRADEABLE]));
pub(super) static MEMO_KEYS: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys(MEMO_PROGRAMS));
pub(super) static TOKEN_KEYS: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys(TOKEN_PROGRAMS));
pub(super) static ASSOCIATED_TOKEN_KEY: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys([id::ASSOCIATED_TOKEN]));
pub(super) static ADDRESS_LOOKUP_TABLE_KEY: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys([id::ADDRESS_LOOKUP_TABLE]));
pub(super) static BPF_LOADER_V2_KEY: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys([id::BPF_LOADER_V2]));
pub(super) static VOTE_KEY: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys([id::VOTE]));
pub(super) static STAKE_KEY: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys([id::STAKE]));

/// Whether `key` is one of the SPL Memo programs.
pub fn is_memo_program(key: &[u8]) -> bool {
    MEMO_KEYS.iter().any(|memo| memo.as_slice() == key)
}
