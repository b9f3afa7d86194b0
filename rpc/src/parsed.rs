//! The `jsonParsed` and `accounts` views (docs/archive-rpc.md §4.3, §6.4): the full account-key
//! list (static keys, then lookup-table keys loaded writable, then read-only) with the validator's
//! signer/writable flags, and instructions parsed for the programs this server knows.
//!
//! Writable follows the validator: a key is writable when the header (or the lookup's writable
//! list) says so, it is not a reserved account (builtin programs and sysvars), and it is not
//! called as a program while the upgradeable BPF loader is absent from the static keys.
//!
//! Parsed programs: every program the validator's `parse_instruction` (solana-transaction-status
//! 4.4) parses: System, SPL Memo (v1, v3, v4), SPL Token and Token-2022 ([`token`],
//! [`token_extension`], [`token_interfaces`]), the associated token account program
//! ([`associated_token`]), the address lookup table program ([`address_lookup_table`]), the BPF
//! loaders ([`bpf_loader`]), vote ([`vote`]) and stake ([`stake`]). Instructions of other
//! programs, and instructions the validator's parser refuses (bad or short data, too few
//! accounts), print in the partially decoded form (`programId`, `accounts` as keys, base58
//! `data`), as the validator does. `parsed-oracle/` checks all of it against the validator's
//! crate.
//!
//! This file is the dispatcher; the pieces it stands on: [`account_keys`] (the key list and its
//! flags), [`program_keys`] (the known program ids), [`reader`] (what the parsers read),
//! [`token_info`] (the token parsers' shared `info` members) and the program parsers, System in
//! [`system`].

mod account_keys;
mod address_lookup_table;
mod associated_token;
mod bpf_loader;
mod program_keys;
mod reader;
mod stake;
mod system;
mod token;
mod token_extension;
mod token_info;
mod token_interfaces;
mod vote;

use serde_json::{Value, json};

use crate::base58::b58;
pub use crate::ui_instruction::{ParsedInstruction, PartiallyDecodedInstruction, UiInstruction};
pub use account_keys::{AccountKeys, ParsedAccount};
pub use program_keys::is_memo_program;
use program_keys::{
    ADDRESS_LOOKUP_TABLE_KEY, ASSOCIATED_TOKEN_KEY, BPF_LOADER_V2_KEY, STAKE_KEY, SYSTEM_PROGRAM,
    TOKEN_KEYS, UPGRADEABLE_LOADER_KEY, VOTE_KEY,
};
use reader::Accounts;
use system::parse_system;

/// One instruction in the `jsonParsed` view.
pub fn instruction(
    program_id_index: u8,
    accounts: &[u8],
    data: &[u8],
    keys: &AccountKeys<'_>,
    stack_height: Option<u32>,
) -> UiInstruction {
    let program = keys.get(usize::from(program_id_index)).unwrap_or_default();
    let account_keys: Vec<String> = accounts
        .iter()
        .map(|&index| keys.get(usize::from(index)).map(b58).unwrap_or_default())
        .collect();
    let parsed = if program == SYSTEM_PROGRAM {
        let account = |position: usize| account_keys.get(position).cloned();
        parse_system(data, &account, accounts.len()).map(|parsed| ("system", parsed))
    } else {
        parse_program(program, data, &account_keys)
    };
    match parsed {
        Some((name, parsed)) => UiInstruction::Parsed(ParsedInstruction {
            parsed,
            program: name,
            program_id: b58(program),
            stack_height,
        }),
        None => UiInstruction::PartiallyDecoded(PartiallyDecodedInstruction {
            accounts: account_keys,
            data: b58(data),
            program_id: b58(program),
            stack_height,
        }),
    }
}

/// The validator's parse of an instruction of `program` (other than System) with the given
/// account keys: `(program name, parsed)`, or `None` when the program is not parsed or its parser
/// refuses the instruction (then it prints partially decoded).
pub fn parse_program(
    program: &[u8],
    data: &[u8],
    accounts: &[String],
) -> Option<(&'static str, Value)> {
    let accounts = Accounts(accounts);
    if is_memo_program(program) {
        std::str::from_utf8(data)
            .ok()
            .map(|text| ("spl-memo", Value::String(text.to_string())))
    } else if TOKEN_KEYS.iter().any(|key| key.as_slice() == program) {
        token::parse(data, &accounts).map(|parsed| ("spl-token", parsed))
    } else if ASSOCIATED_TOKEN_KEY
        .iter()
        .any(|key| key.as_slice() == program)
    {
        associated_token::parse(data, &accounts)
            .map(|parsed| ("spl-associated-token-account", parsed))
    } else if ADDRESS_LOOKUP_TABLE_KEY
        .iter()
        .any(|key| key.as_slice() == program)
    {
        address_lookup_table::parse(data, &accounts).map(|parsed| ("address-lookup-table", parsed))
    } else if UPGRADEABLE_LOADER_KEY
        .iter()
        .any(|key| key.as_slice() == program)
    {
        bpf_loader::parse_upgradeable(data, &accounts)
            .map(|parsed| ("bpf-upgradeable-loader", parsed))
    } else if BPF_LOADER_V2_KEY
        .iter()
        .any(|key| key.as_slice() == program)
    {
        bpf_loader::parse_v2(data, &accounts).map(|parsed| ("bpf-loader", parsed))
    } else if VOTE_KEY.iter().any(|key| key.as_slice() == program) {
        vote::parse(data, &accounts).map(|parsed| ("vote", parsed))
    } else if STAKE_KEY.iter().any(|key| key.as_slice() == program) {
        stake::parse(data, &accounts).map(|parsed| ("stake", parsed))
    } else {
        None
    }
}

/// `{"info": info, "type": kind}` (the validator's `ParsedInstructionEnum`; a null `info` is
/// left out).
fn typed(kind: &str, info: Value) -> Value {
    if info.is_null() {
        json!({"type": kind})
    } else {
        json!({"info": info, "type": kind})
    }
}

#[cfg(test)]
mod tests {
    use decoder::program_ids as id;
    use proptest::prelude::*;

    use super::program_keys::{MEMO_KEYS, RESERVED_KEYS, TOKEN_PROGRAMS};
    use super::*;

    #[test]
    fn reserved_keys_all_decode() {
        assert_eq!(RESERVED_KEYS.len(), 31);
        assert_eq!(MEMO_KEYS.len(), 3);
        assert_eq!(TOKEN_KEYS.len(), 2);
        assert_eq!(ASSOCIATED_TOKEN_KEY.len(), 1);
        assert_eq!(UPGRADEABLE_LOADER_KEY.len(), 1);
    }

    #[test]
    fn system_transfer_parses_like_the_validator() {
        let mut data = 2u32.to_le_bytes().to_vec();
        data.extend_from_slice(&1_000_000u64.to_le_bytes());
        let account = |i: usize| Some(["A", "B"].get(i)?.to_string());
        let parsed = parse_system(&data, &account, 2).unwrap();
        assert_eq!(
            serde_json::to_string(&parsed).unwrap(),
            r#"{"info":{"destination":"B","lamports":1000000,"source":"A"},"type":"transfer"}"#
        );
        assert!(parse_system(&data, &account, 1).is_none());
        assert!(parse_system(&data[..6], &account, 2).is_none());
    }

    fn key(text: &str) -> Vec<u8> {
        bs58::decode(text).into_vec().unwrap()
    }

    fn names(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("K{i}")).collect()
    }

    #[test]
    fn token_transfer_checked_with_multisig_signers() {
        let mut data = vec![12];
        data.extend_from_slice(&1_500_000u64.to_le_bytes());
        data.push(6);
        let (name, parsed) = parse_program(&key(TOKEN_PROGRAMS[1]), &data, &names(6)).unwrap();
        assert_eq!(name, "spl-token");
        assert_eq!(
            parsed,
            json!({"type": "transferChecked", "info": {"source": "K0", "mint": "K1",
                   "destination": "K2", "multisigAuthority": "K3", "signers": ["K4", "K5"],
                   "tokenAmount": {"amount": "1500000", "decimals": 6, "uiAmount": 1.5,
                                   "uiAmountString": "1.5"}}})
        );
        // One account short, or the decimals byte missing: partially decoded.
        assert!(parse_program(&key(TOKEN_PROGRAMS[0]), &data, &names(3)).is_none());
        assert!(parse_program(&key(TOKEN_PROGRAMS[0]), &data[..9], &names(4)).is_none());
    }

    #[test]
    fn token_transfer_prints_the_amount_as_a_string() {
        let mut data = vec![3];
        data.extend_from_slice(&u64::MAX.to_le_bytes());
        let (_, parsed) = parse_program(&key(TOKEN_PROGRAMS[0]), &data, &names(3)).unwrap();
        assert_eq!(
            parsed,
            json!({"type": "transfer", "info": {"source": "K0", "destination": "K1",
                   "authority": "K2", "amount": "18446744073709551615"}})
        );
    }

    #[test]
    fn associated_token_create_forms() {
        let program = key(id::ASSOCIATED_TOKEN);
        let (name, parsed) = parse_program(&program, &[1], &names(6)).unwrap();
        assert_eq!(name, "spl-associated-token-account");
        assert_eq!(parsed["type"], "createIdempotent");
        assert_eq!(parsed["info"]["tokenProgram"], "K5");
        assert_eq!(
            parse_program(&program, &[], &names(6)).unwrap().1["type"],
            "create"
        );
        assert!(parse_program(&program, &[1, 0], &names(6)).is_none());
        assert!(parse_program(&program, &[3], &names(6)).is_none());
    }

    /// Data starting with one of `prefixes`, then random bytes.
    fn prefixed(prefixes: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
        (
            proptest::sample::select(prefixes),
            proptest::collection::vec(any::<u8>(), 0..120),
        )
            .prop_map(|(mut prefix, tail)| {
                prefix.extend(tail);
                prefix
            })
    }

    fn u32_tags(count: u32) -> Vec<Vec<u8>> {
        (0..=count).map(|tag| tag.to_le_bytes().to_vec()).collect()
    }

    fn never_panics(program: &str, data: &[u8], accounts: usize) {
        // Either parsed (with a type) or refused; never a panic.
        if let Some((_, parsed)) = parse_program(&key(program), data, &names(accounts)) {
            assert!(parsed.is_string() || parsed["type"].is_string(), "{parsed}");
        }
    }

    proptest! {
        #[test]
        fn token_parser_never_panics(
            data in prefixed((0u8..=48).chain([255]).flat_map(|t| (0..7).map(move |s| vec![t, s])).collect()),
            accounts in 0usize..12,
            program in 0usize..2,
        ) {
            never_panics(TOKEN_PROGRAMS[program], &data, accounts);
        }

        #[test]
        fn associated_token_parser_never_panics(data in proptest::collection::vec(any::<u8>(), 0..4), accounts in 0usize..9) {
            never_panics(id::ASSOCIATED_TOKEN, &data, accounts);
        }

        #[test]
        fn address_lookup_table_parser_never_panics(data in prefixed(u32_tags(5)), accounts in 0usize..6) {
            never_panics(id::ADDRESS_LOOKUP_TABLE, &data, accounts);
        }

        #[test]
        fn vote_parser_never_panics(data in prefixed(u32_tags(20)), accounts in 0usize..6) {
            never_panics(id::VOTE, &data, accounts);
        }

        #[test]
        fn stake_parser_never_panics(data in prefixed(u32_tags(18)), accounts in 0usize..8) {
            never_panics(id::STAKE, &data, accounts);
        }

        #[test]
        fn bpf_loader_parsers_never_panic(data in prefixed(u32_tags(8)), accounts in 0usize..10) {
            never_panics(id::BPF_LOADER_V2, &data, accounts);
            never_panics(id::BPF_LOADER_UPGRADEABLE, &data, accounts);
        }

        #[test]
        fn system_parser_never_panics(data in prefixed(u32_tags(13)), accounts in 0usize..6) {
            let names = names(accounts);
            let account = |i: usize| names.get(i).cloned();
            let _ = parse_system(&data, &account, accounts);
        }
    }
}
