//! Differential test: the archive's `jsonParsed` instruction parsers against the validator's own
//! (`solana_transaction_status::parse_instruction::parse`), on hundreds of thousands of generated
//! instructions per program: well-formed ones of every kind, and truncated, padded or random
//! data with every account count from 0 to 11. Every case must agree exactly: the same parsed
//! JSON value, or both refusing (the RPC then prints the partially decoded form).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::{Value, json};
use solana_message::{AccountKeys, compiled_instruction::CompiledInstruction};
use solana_pubkey::Pubkey;
use solana_transaction_status::parse_instruction::parse;

/// Deterministic xorshift generator (the corpus is the same on every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}

/// Data pieces that make the layouts the parsers read likely: option tags, small enums,
/// little-endian lengths followed by that much text, keys (random and all-zero), integers.
fn chunk(rng: &mut Rng, out: &mut Vec<u8>) {
    match rng.below(10) {
        0 => out.push(0),
        1 => out.push(1),
        2 => out.push(rng.below(4) as u8),
        3 => out.push(rng.byte()),
        4 => {
            let len = rng.below(6) as u8;
            out.extend_from_slice(&u32::from(len).to_le_bytes());
            out.extend((0..len).map(|i| b'a' + i));
        }
        5 => out.extend((0..32).map(|_| rng.byte())),
        6 => out.extend([0u8; 32]),
        7 => out.extend((0..8).map(|_| rng.byte())),
        8 => out.extend((0..2).map(|_| rng.byte())),
        _ => {
            let len = rng.below(6) as usize;
            out.extend_from_slice(&(len as u64).to_le_bytes());
            out.extend((0..len).map(|i| b'a' + i as u8));
        }
    }
}

/// Instruction data starting with `prefix`, followed by random chunks or exact-size filler,
/// sometimes truncated.
fn data(rng: &mut Rng, prefix: &[u8]) -> Vec<u8> {
    let mut out = prefix.to_vec();
    if rng.below(6) == 0 {
        // Exactly the prefix: the well-formed instructions among the prefixes.
        return out;
    }
    if rng.below(3) == 0 {
        // Exact sizes of the fixed layouts (1 + 8 + 1, 1 + 32, 64, 40, ...) after the prefix.
        let sizes = [
            0usize, 1, 2, 8, 9, 16, 17, 32, 33, 34, 40, 64, 65, 66, 67, 74, 75,
        ];
        let len = sizes[rng.below(sizes.len() as u64) as usize];
        for _ in 0..len {
            out.push(if rng.below(4) == 0 {
                rng.below(3) as u8
            } else {
                rng.byte()
            });
        }
    } else {
        for _ in 0..rng.below(7) {
            chunk(rng, &mut out);
        }
    }
    if rng.below(8) == 0 && !out.is_empty() {
        let keep = rng.below(out.len() as u64) as usize;
        out.truncate(keep);
    }
    out
}

const CLOCK: &str = "SysvarC1ock11111111111111111111111111111111";
const RENT: &str = "SysvarRent111111111111111111111111111111111";

/// Distinct keys, with the clock and rent sysvars sometimes in a slot (the stake parser tells
/// legacy account lists apart by those keys).
fn keys(rng: &mut Rng, count: usize) -> Vec<Pubkey> {
    (0..count)
        .map(|i| match rng.below(8) {
            0 => CLOCK.parse().unwrap(),
            1 => RENT.parse().unwrap(),
            _ => Pubkey::from([i as u8 + 7; 32]),
        })
        .collect()
}

/// The validator's answer: `{"parsed","program"}` or `None` (refused, or its parser panicked,
/// which the RPC would never print).
fn oracle(program: &Pubkey, data: &[u8], keys: &[Pubkey]) -> Option<Value> {
    let account_keys = AccountKeys::new(keys, None);
    let instruction = CompiledInstruction {
        program_id_index: 0,
        accounts: (0..keys.len() as u8).collect(),
        data: data.to_vec(),
    };
    catch_unwind(AssertUnwindSafe(|| {
        parse(program, &instruction, &account_keys, None)
    }))
    .ok()?
    .ok()
    .map(|parsed| json!({"parsed": parsed.parsed, "program": parsed.program}))
}

fn ours(program: &Pubkey, data: &[u8], keys: &[Pubkey]) -> Option<Value> {
    let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
    rpc::parsed::parse_program(program.as_ref(), data, &keys)
        .map(|(name, parsed)| json!({"parsed": parsed, "program": name}))
}

/// Runs `cases` generated instructions for `program`, with data prefixes from `prefixes`;
/// returns the instruction types the oracle produced, with counts.
fn differential(
    program: &str,
    prefixes: &[Vec<u8>],
    cases: usize,
    seed: u64,
) -> BTreeMap<String, usize> {
    let program: Pubkey = program.parse().unwrap();
    let mut rng = Rng(seed);
    let mut seen = BTreeMap::new();
    let mut failures = Vec::new();
    for _ in 0..cases {
        let prefix = &prefixes[rng.below(prefixes.len() as u64) as usize];
        let data = data(&mut rng, prefix);
        let accounts = rng.below(12) as usize;
        let keys = keys(&mut rng, accounts);
        let expected = oracle(&program, &data, &keys);
        let actual = ours(&program, &data, &keys);
        let kind = expected
            .as_ref()
            .and_then(|value| value["parsed"]["type"].as_str().map(str::to_string));
        if let Some(kind) = &kind {
            *seen.entry(kind.clone()).or_insert(0) += 1;
        }
        let agree = match (&expected, &actual) {
            (Some(expected), Some(actual)) => expected == actual,
            (None, None) => true,
            (Some(_), None) => false,
            (None, Some(_)) => false,
        };
        if !agree && failures.len() < 10 {
            failures.push(format!(
                "data {data:?} accounts {keys:?}\n  validator {expected:?}\n  archive   {actual:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches, first:\n{}",
        failures.len(),
        failures.join("\n")
    );
    seen
}

fn assert_covers(seen: &BTreeMap<String, usize>, kinds: &[&str]) {
    let missing: BTreeSet<&str> = kinds
        .iter()
        .copied()
        .filter(|k| !seen.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty(),
        "generator never produced {missing:?}; saw {seen:?}"
    );
}

const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const TOKEN_2022: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";

fn token_prefixes() -> Vec<Vec<u8>> {
    let mut prefixes: Vec<Vec<u8>> = vec![vec![]];
    for tag in (0u8..=48).chain([255]) {
        prefixes.push(vec![tag]);
        for sub in 0u8..7 {
            prefixes.push(vec![tag, sub]);
        }
    }
    for discriminator in [
        [121, 113, 108, 39, 54, 51, 0, 4],
        [108, 37, 171, 143, 248, 30, 18, 110],
        [161, 105, 88, 1, 237, 221, 216, 203],
        [152, 32, 222, 176, 223, 237, 116, 134],
        [210, 225, 30, 162, 88, 184, 77, 141],
        [221, 233, 49, 45, 181, 202, 220, 200],
        [234, 18, 32, 56, 89, 141, 37, 181],
        [215, 228, 166, 228, 84, 100, 86, 123],
        [250, 166, 180, 250, 13, 12, 184, 70],
    ] {
        prefixes.push(discriminator.to_vec());
    }
    // Well-formed token-metadata instructions (Borsh bodies that must be consumed exactly).
    let text = |s: &str| {
        let mut out = (s.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(s.as_bytes());
        out
    };
    let initialize: [u8; 8] = [210, 225, 30, 162, 88, 184, 77, 141];
    let update_field: [u8; 8] = [221, 233, 49, 45, 181, 202, 220, 200];
    let remove_key: [u8; 8] = [234, 18, 32, 56, 89, 141, 37, 181];
    let emit: [u8; 8] = [250, 166, 180, 250, 13, 12, 184, 70];
    prefixes.push([&initialize[..], &text("Name"), &text("SYM"), &text("")].concat());
    prefixes.push([&update_field[..], &[3], &text("key"), &text("value")].concat());
    prefixes.push([&update_field[..], &[1], &text("SYM2")].concat());
    prefixes.push([&remove_key[..], &[1], &text("key")].concat());
    prefixes.push([&remove_key[..], &[0], &text("")].concat());
    prefixes.push([&emit[..], &[1], &5u64.to_le_bytes(), &[0]].concat());
    prefixes.push([&emit[..], &[0, 1], &9u64.to_le_bytes()].concat());
    // Confidential transfer fee withdrawals: offset, (account count,) 36-byte ciphertext.
    for offset in [0u8, 1] {
        prefixes.push([&[37, 1, offset][..], &[5; 36]].concat());
        for count in 0u8..3 {
            prefixes.push([&[37, 2, count, offset][..], &[6; 36]].concat());
        }
    }
    // Confidential transfer payloads (outer tag 27) of every fixed size, offsets 0 or not.
    for (sub, len) in [
        (0u8, 65usize),
        (1, 33),
        (2, 45),
        (4, 1),
        (5, 9),
        (6, 47),
        (7, 167),
        (8, 44),
        (13, 169),
    ] {
        for tail in [[0u8, 0, 0, 0, 0], [1, 0, 2, 0, 3], [0, 0, 0, 0, 0]] {
            let mut data = vec![27, sub];
            data.extend(std::iter::repeat_n(9u8, len - tail.len().min(len)));
            data.extend_from_slice(&tail[..tail.len().min(len)]);
            prefixes.push(data);
        }
    }
    for sub in 7u8..16 {
        prefixes.push(vec![27, sub]);
    }
    // Confidential mint/burn payloads: ciphertexts and three proof offsets (0 or not).
    for offsets in [[0u8, 0, 0], [1, 0, 2], [3, 4, 5], [0, 1, 0]] {
        for prefix in [[42u8, 3], [42, 4], [46, 3]] {
            prefixes.push([&prefix[..], &[7; 164], &offsets].concat());
        }
    }
    prefixes.push([&[42u8, 0][..], &[8; 68]].concat());
    prefixes.push([&[42u8, 1][..], &[8; 32], &[0]].concat());
    prefixes.push([&[42u8, 1][..], &[8; 32], &[2]].concat());
    prefixes.push([&[42u8, 2][..], &[8; 36]].concat());
    // Batches of two well-formed inner instructions (transfer, 3 accounts; syncNative, 1).
    let mut batch = vec![255, 3, 9, 3];
    batch.extend_from_slice(&5u64.to_le_bytes());
    batch.extend_from_slice(&[1, 1, 17]);
    prefixes.push(batch);
    prefixes
}

const TOKEN_KINDS: &[&str] = &[
    "initializeMint",
    "initializeMint2",
    "initializeAccount",
    "initializeAccount2",
    "initializeAccount3",
    "initializeMultisig",
    "initializeMultisig2",
    "transfer",
    "approve",
    "revoke",
    "setAuthority",
    "mintTo",
    "burn",
    "closeAccount",
    "freezeAccount",
    "thawAccount",
    "transferChecked",
    "approveChecked",
    "mintToChecked",
    "burnChecked",
    "syncNative",
    "getAccountDataSize",
    "initializeImmutableOwner",
    "amountToUiAmount",
    "uiAmountToAmount",
    "initializeMintCloseAuthority",
    "reallocate",
    "createNativeMint",
    "initializeNonTransferableMint",
    "initializePermanentDelegate",
    "withdrawExcessLamports",
    "unwrapLamports",
    "batch",
    "initializeTransferFeeConfig",
    "transferCheckedWithFee",
    "withdrawWithheldTokensFromMint",
    "withdrawWithheldTokensFromAccounts",
    "harvestWithheldTokensToMint",
    "setTransferFee",
    "initializeDefaultAccountState",
    "updateDefaultAccountState",
    "enableRequiredMemoTransfers",
    "disableRequiredMemoTransfers",
    "enableCpiGuard",
    "disableCpiGuard",
    "initializeInterestBearingConfig",
    "updateInterestBearingConfigRate",
    "initializeTransferHook",
    "updateTransferHook",
    "initializeMetadataPointer",
    "updateMetadataPointer",
    "initializeGroupPointer",
    "updateGroupPointer",
    "initializeGroupMemberPointer",
    "updateGroupMemberPointer",
    "initializeScaledUiAmountConfig",
    "updateMultiplier",
    "initializePausableConfig",
    "pause",
    "resume",
    "initializePermissionedBurnConfig",
    "permissionedBurn",
    "permissionedBurnChecked",
    "initializeConfidentialTransferFeeConfig",
    "withdrawWithheldConfidentialTransferTokensFromMint",
    "withdrawWithheldConfidentialTransferTokensFromAccounts",
    "harvestWithheldConfidentialTransferTokensToMint",
    "enableConfidentialTransferFeeHarvestToMint",
    "disableConfidentialTransferFeeHarvestToMint",
    "initializeConfidentialMintBurnMint",
    "rotateConfidentialMintBurnSupplyElGamalPubkey",
    "updateConfidentialMintBurnDecryptableSupply",
    "confidentialMint",
    "confidentialBurn",
    "applyPendingBurn",
    "permissionedConfidentialBurn",
    "initializeConfidentialTransferMint",
    "updateConfidentialTransferMint",
    "configureConfidentialTransferAccount",
    "approveConfidentialTransferAccount",
    "emptyConfidentialTransferAccount",
    "depositConfidentialTransfer",
    "withdrawConfidentialTransfer",
    "confidentialTransfer",
    "applyPendingConfidentialTransferBalance",
    "enableConfidentialTransferConfidentialCredits",
    "disableConfidentialTransferConfidentialCredits",
    "enableConfidentialTransferNonConfidentialCredits",
    "disableConfidentialTransferNonConfidentialCredits",
    "confidentialTransferWithFee",
    "configureConfidentialAccountWithRegistry",
    "initializeTokenGroup",
    "updateTokenGroupMaxSize",
    "updateTokenGroupAuthority",
    "initializeTokenGroupMember",
    "initializeTokenMetadata",
    "updateTokenMetadataField",
    "removeTokenMetadataKey",
    "updateTokenMetadataAuthority",
    "emitTokenMetadata",
];

#[test]
fn spl_token_matches_the_validator() {
    let seen = differential(TOKEN, &token_prefixes(), 300_000, 0x5eed_0001);
    assert_covers(&seen, TOKEN_KINDS);
}

#[test]
fn token_2022_matches_the_validator() {
    let seen = differential(TOKEN_2022, &token_prefixes(), 300_000, 0x5eed_0002);
    assert_covers(&seen, TOKEN_KINDS);
}

#[test]
fn associated_token_account_matches_the_validator() {
    let prefixes = vec![vec![], vec![0], vec![1], vec![2], vec![3]];
    let seen = differential(
        "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
        &prefixes,
        20_000,
        0x5eed_0003,
    );
    assert_covers(&seen, &["create", "createIdempotent", "recoverNested"]);
}

#[test]
fn memo_matches_the_validator() {
    for program in [
        "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
        "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
        "Memo4c2pN8afCj432Lb7RMVKi9PbQnnW7ewFFaV3oAH",
    ] {
        differential(
            program,
            &[vec![], b"hi".to_vec(), vec![0xf0, 0x9f]],
            2_000,
            0x5eed_0004,
        );
    }
}

/// Bincode `u32` variant tags `0..count` (and one past), as prefixes.
fn bincode_tags(count: u32) -> Vec<Vec<u8>> {
    (0..=count).map(|tag| tag.to_le_bytes().to_vec()).collect()
}

#[test]
fn address_lookup_table_matches_the_validator() {
    let mut prefixes = bincode_tags(5);
    for count in 0u64..3 {
        let mut extend = 2u32.to_le_bytes().to_vec();
        extend.extend_from_slice(&count.to_le_bytes());
        extend.extend(std::iter::repeat_n(9u8, 32 * count as usize));
        prefixes.push(extend);
    }
    let seen = differential(
        "AddressLookupTab1e1111111111111111111111111",
        &prefixes,
        40_000,
        0x5eed_0005,
    );
    assert_covers(
        &seen,
        &[
            "createLookupTable",
            "freezeLookupTable",
            "extendLookupTable",
            "deactivateLookupTable",
            "closeLookupTable",
        ],
    );
}

/// Bincode write instructions (`u32` tag, `u32` offset, `u64` length, bytes).
fn writes(tag: u32) -> Vec<Vec<u8>> {
    (0u64..4)
        .map(|len| {
            let mut write = tag.to_le_bytes().to_vec();
            write.extend_from_slice(&7u32.to_le_bytes());
            write.extend_from_slice(&len.to_le_bytes());
            write.extend((0..len).map(|i| i as u8 + 1));
            write
        })
        .collect()
}

#[test]
fn bpf_loaders_match_the_validator() {
    let mut prefixes = bincode_tags(2);
    prefixes.extend(writes(0));
    let seen = differential(
        "BPFLoader2111111111111111111111111111111111",
        &prefixes,
        20_000,
        0x5eed_0006,
    );
    assert_covers(&seen, &["write", "finalize"]);

    let mut prefixes = bincode_tags(9);
    prefixes.extend(writes(1));
    let seen = differential(
        "BPFLoaderUpgradeab1e11111111111111111111111",
        &prefixes,
        60_000,
        0x5eed_0007,
    );
    assert_covers(
        &seen,
        &[
            "initializeBuffer",
            "write",
            "deployWithMaxDataLen",
            "upgrade",
            "setAuthority",
            "close",
            "extendProgram",
            "setAuthorityChecked",
        ],
    );
    // The deprecated v1 loader is not parsed by the validator either.
    differential(
        "BPFLoader1111111111111111111111111111111111",
        &prefixes,
        2_000,
        0x5eed_0008,
    );
}

/// Compact vote-state updates / tower syncs: root, short-vec count, (varint offset, count)s.
fn compact_votes(tag: u32) -> Vec<Vec<u8>> {
    [u64::MAX, 0, 1000]
        .into_iter()
        .flat_map(|root| {
            (0u8..3).map(move |count| {
                let mut data = tag.to_le_bytes().to_vec();
                data.extend_from_slice(&root.to_le_bytes());
                data.push(count);
                for i in 0..count {
                    data.extend_from_slice(&[0x81, 0x01, i + 1]);
                }
                data.extend([3u8; 32]);
                data.push(u8::from(count == 1));
                if count == 1 {
                    data.extend_from_slice(&1_700_000_000i64.to_le_bytes());
                }
                data
            })
        })
        .collect()
}

#[test]
fn vote_matches_the_validator() {
    let mut prefixes = bincode_tags(20);
    for tag in [12u32, 13, 14, 15] {
        prefixes.extend(compact_votes(tag));
    }
    // Vote { slots: [5, 6], hash, timestamp: None }; VoteStateUpdate with one lockout.
    let mut vote = 2u32.to_le_bytes().to_vec();
    vote.extend_from_slice(&2u64.to_le_bytes());
    vote.extend_from_slice(&5u64.to_le_bytes());
    vote.extend_from_slice(&6u64.to_le_bytes());
    vote.extend([4u8; 32]);
    vote.push(0);
    prefixes.push(vote.clone());
    vote[0] = 6;
    prefixes.push(vote);
    let mut update = 8u32.to_le_bytes().to_vec();
    update.extend_from_slice(&1u64.to_le_bytes());
    update.extend_from_slice(&9u64.to_le_bytes());
    update.extend_from_slice(&2u32.to_le_bytes());
    prefixes.push(update.clone());
    update[0] = 9;
    prefixes.push(update);
    let seen = differential(
        "Vote111111111111111111111111111111111111111",
        &prefixes,
        200_000,
        0x5eed_0009,
    );
    assert_covers(
        &seen,
        &[
            "initialize",
            "authorize",
            "vote",
            "withdraw",
            "updateValidatorIdentity",
            "updateCommission",
            "voteSwitch",
            "authorizeChecked",
            "updatevotestate",
            "updatevotestateswitch",
            "authorizeWithSeed",
            "authorizeCheckedWithSeed",
            "compactupdatevotestate",
            "compactupdatevotestateswitch",
            "towersync",
            "towersyncswitch",
            "updateCommissionCollector",
            "updateCommissionBps",
            "depositDelegatorRewards",
        ],
    );
}

#[test]
fn stake_matches_the_validator() {
    let seen = differential(
        "Stake11111111111111111111111111111111111111",
        &bincode_tags(18),
        200_000,
        0x5eed_000a,
    );
    assert_covers(
        &seen,
        &[
            "initialize",
            "authorize",
            "delegate",
            "split",
            "withdraw",
            "deactivate",
            "setLockup",
            "merge",
            "authorizeWithSeed",
            "initializeChecked",
            "authorizeChecked",
            "authorizeCheckedWithSeed",
            "setLockupChecked",
            "getMinimumDelegation",
            "deactivateDelinquent",
            "redelegate",
            "moveStake",
            "moveLamports",
        ],
    );
}
