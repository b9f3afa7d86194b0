//! Length: over 600 lines because the jsonParsed dispatcher and the system program's table: a
//! protocol table; ~150 of the lines are tests.
//!
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

mod address_lookup_table;
mod associated_token;
mod bpf_loader;
mod stake;
mod token;
mod token_extension;
mod token_interfaces;
mod vote;

use std::sync::LazyLock;

use decoder::program_ids as id;
use decoder::transaction::TransactionView;
use serde::Serialize;
use serde_json::{Value, json};

use super::encode::{UiCompiledInstruction, b58};

/// The reserved account keys of the current validator (all features active): builtin programs
/// and sysvars, never writable.
const RESERVED: [&str; 31] = [
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

const SYSTEM_PROGRAM: [u8; 32] = [0; 32];
/// The memo program ids parsed as `spl-memo`.
const MEMO_PROGRAMS: [&str; 3] = [
    id::MEMO_V1,
    id::MEMO_V3,
    "Memo4c2pN8afCj432Lb7RMVKi9PbQnnW7ewFFaV3oAH",
];
/// SPL Token and Token-2022: one parser (`program` prints `spl-token` for both).
const TOKEN_PROGRAMS: [&str; 2] = [id::TOKEN, id::TOKEN_2022];

fn decode_keys<const N: usize>(texts: [&str; N]) -> Vec<[u8; 32]> {
    let mut keys: Vec<[u8; 32]> = texts
        .iter()
        .filter_map(|text| bs58::decode(text).into_vec().ok()?.try_into().ok())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

static RESERVED_KEYS: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys(RESERVED));
static UPGRADEABLE_LOADER_KEY: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys([id::BPF_LOADER_UPGRADEABLE]));
static MEMO_KEYS: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys(MEMO_PROGRAMS));
static TOKEN_KEYS: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys(TOKEN_PROGRAMS));
static ASSOCIATED_TOKEN_KEY: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys([id::ASSOCIATED_TOKEN]));
static ADDRESS_LOOKUP_TABLE_KEY: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys([id::ADDRESS_LOOKUP_TABLE]));
static BPF_LOADER_V2_KEY: LazyLock<Vec<[u8; 32]>> =
    LazyLock::new(|| decode_keys([id::BPF_LOADER_V2]));
static VOTE_KEY: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys([id::VOTE]));
static STAKE_KEY: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys([id::STAKE]));

/// Whether `key` is one of the SPL Memo programs.
pub fn is_memo_program(key: &[u8]) -> bool {
    MEMO_KEYS.iter().any(|memo| memo.as_slice() == key)
}

/// `{"pubkey","signer","source","writable"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParsedAccount {
    pub pubkey: String,
    pub signer: bool,
    pub source: &'static str,
    pub writable: bool,
}

/// Every key a transaction references, in index order, with what is needed for the flags.
pub struct AccountKeys<'a> {
    static_keys: &'a [[u8; 32]],
    loaded_writable: &'a [Vec<u8>],
    loaded_readonly: &'a [Vec<u8>],
    num_required_signatures: usize,
    num_readonly_signed: usize,
    num_readonly_unsigned: usize,
    /// Static key indexes called as a program by a top-level instruction.
    called_as_program: [bool; 256],
    upgradeable_loader_present: bool,
}

impl<'a> AccountKeys<'a> {
    pub fn new(
        view: &TransactionView<'a>,
        loaded_writable: &'a [Vec<u8>],
        loaded_readonly: &'a [Vec<u8>],
    ) -> Self {
        let header = view.header();
        let static_keys = view.static_account_keys();
        let mut called_as_program = [false; 256];
        for ix in view.instructions() {
            called_as_program[usize::from(ix.program_id_index)] = true;
        }
        Self {
            static_keys,
            loaded_writable,
            loaded_readonly,
            num_required_signatures: usize::from(header.num_required_signatures),
            num_readonly_signed: usize::from(header.num_readonly_signed_accounts),
            num_readonly_unsigned: usize::from(header.num_readonly_unsigned_accounts),
            called_as_program,
            upgradeable_loader_present: static_keys
                .iter()
                .any(|key| UPGRADEABLE_LOADER_KEY.contains(key)),
        }
    }

    pub fn len(&self) -> usize {
        self.static_keys.len() + self.loaded_writable.len() + self.loaded_readonly.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key at `index` (static, then loaded writable, then loaded read-only).
    pub fn get(&self, index: usize) -> Option<&[u8]> {
        if let Some(key) = self.static_keys.get(index) {
            return Some(key);
        }
        let index = index - self.static_keys.len();
        if let Some(key) = self.loaded_writable.get(index) {
            return Some(key);
        }
        self.loaded_readonly
            .get(index - self.loaded_writable.len())
            .map(Vec::as_slice)
    }

    fn writable_by_position(&self, index: usize) -> bool {
        let statics = self.static_keys.len();
        if index < statics {
            if index < self.num_required_signatures {
                index
                    < self
                        .num_required_signatures
                        .saturating_sub(self.num_readonly_signed)
            } else {
                index < statics.saturating_sub(self.num_readonly_unsigned)
            }
        } else {
            index - statics < self.loaded_writable.len()
        }
    }

    fn is_writable(&self, index: usize) -> bool {
        let Some(key) = self.get(index) else {
            return false;
        };
        let reserved = RESERVED_KEYS
            .binary_search_by(|k| k.as_slice().cmp(key))
            .is_ok();
        let demoted = self.called_as_program.get(index).copied().unwrap_or(false)
            && !self.upgradeable_loader_present;
        self.writable_by_position(index) && !reserved && !demoted
    }

    /// The `accountKeys` list of the `accounts` and `jsonParsed` views.
    pub fn parsed_accounts(&self) -> Vec<ParsedAccount> {
        (0..self.len())
            .map(|index| ParsedAccount {
                pubkey: self.get(index).map(b58).unwrap_or_default(),
                signer: index < self.num_required_signatures,
                source: if index < self.static_keys.len() {
                    "transaction"
                } else {
                    "lookupTable"
                },
                writable: self.is_writable(index),
            })
            .collect()
    }
}

/// An instruction in the `jsonParsed` view, or a compiled one (inner instructions of the other
/// encodings share this type).
#[derive(Serialize)]
#[serde(untagged)]
pub enum UiInstruction {
    Compiled(UiCompiledInstruction),
    Parsed(ParsedInstruction),
    PartiallyDecoded(PartiallyDecodedInstruction),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParsedInstruction {
    pub parsed: Value,
    pub program: &'static str,
    pub program_id: String,
    pub stack_height: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartiallyDecodedInstruction {
    pub accounts: Vec<String>,
    pub data: String,
    pub program_id: String,
    pub stack_height: Option<u32>,
}

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

/// The account keys of an instruction, in its account order.
#[derive(Clone, Copy)]
struct Accounts<'a>(&'a [String]);

impl<'a> Accounts<'a> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The key at `position`.
    fn get(&self, position: usize) -> Option<&'a str> {
        self.0.get(position).map(String::as_str)
    }

    /// `Some` when there are at least `count` accounts (the validator's `check_num_accounts`).
    fn need(&self, count: usize) -> Option<()> {
        (self.0.len() >= count).then_some(())
    }

    /// The keys from `position` on (empty when past the end).
    fn keys(&self, position: usize) -> Option<Vec<String>> {
        Some(self.0.get(position..).unwrap_or_default().to_vec())
    }

    /// The accounts `start..end`.
    fn slice(&self, start: usize, end: usize) -> Option<Accounts<'a>> {
        self.0.get(start..end).map(Accounts)
    }
}

/// Little-endian bincode reader over instruction data.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, tail) = self.0.split_first_chunk::<N>()?;
        self.0 = tail;
        Some(*head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|[byte]| byte)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take::<2>().map(u16::from_le_bytes)
    }

    fn i8(&mut self) -> Option<i8> {
        self.take::<1>().map(i8::from_le_bytes)
    }

    fn i16(&mut self) -> Option<i16> {
        self.take::<2>().map(i16::from_le_bytes)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take::<4>().map(u32::from_le_bytes)
    }

    fn i64(&mut self) -> Option<i64> {
        self.take::<8>().map(i64::from_le_bytes)
    }

    fn f64(&mut self) -> Option<f64> {
        self.take::<8>().map(f64::from_le_bytes)
    }

    /// A Borsh/bincode `bool` (only 0 and 1).
    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    /// An SPL `COption<Pubkey>` as packed by the token program: tag 0, or tag 1 and the key.
    /// `Some(None)` is "none"; `None` is malformed.
    fn coption_key(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.key().map(Some),
            _ => None,
        }
    }

    /// An SPL `COption<u64>` (tag 0, or tag 1 and the value).
    fn coption_u64(&mut self) -> Option<Option<u64>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.u64().map(Some),
            _ => None,
        }
    }

    /// A Borsh `Option<u64>` (same layout as `COption<u64>`).
    fn option_u64(&mut self) -> Option<Option<u64>> {
        self.coption_u64()
    }

    /// A 32-byte key where all zeroes mean "none" (`OptionalNonZeroPubkey` / `MaybeNull`).
    fn maybe_null_key(&mut self) -> Option<Option<String>> {
        let key = self.take::<32>()?;
        Some((key != [0; 32]).then(|| b58(&key)))
    }

    /// A Borsh `String`: u32 length, UTF-8 bytes.
    fn borsh_string(&mut self) -> Option<String> {
        let len = usize::try_from(self.u32()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (text, tail) = self.0.split_at(len);
        self.0 = tail;
        std::str::from_utf8(text).ok().map(str::to_string)
    }

    /// `Some` when every byte was read (Borsh's `try_from_slice`).
    fn finished(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }

    fn u64(&mut self) -> Option<u64> {
        self.take::<8>().map(u64::from_le_bytes)
    }

    fn key(&mut self) -> Option<String> {
        self.take::<32>().map(|key| b58(&key))
    }

    /// A bincode `String`: u64 length, UTF-8 bytes.
    fn string(&mut self) -> Option<String> {
        let len = usize::try_from(self.u64()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (text, tail) = self.0.split_at(len);
        self.0 = tail;
        std::str::from_utf8(text).ok().map(str::to_string)
    }
}

/// The validator's parse of a System program instruction: `{"info":{...},"type":"..."}`, or
/// `None` (printed partially decoded) when the data or the account count do not fit.
fn parse_system(
    data: &[u8],
    account: &dyn Fn(usize) -> Option<String>,
    account_count: usize,
) -> Option<Value> {
    let mut reader = Reader(data);
    let tag = reader.u32()?;
    let need = |count: usize| (account_count >= count).then_some(());
    let (kind, info) = match tag {
        0 => {
            let (lamports, space, owner) = (reader.u64()?, reader.u64()?, reader.key()?);
            need(2)?;
            (
                "createAccount",
                json!({"source": account(0)?, "newAccount": account(1)?, "lamports": lamports,
                       "space": space, "owner": owner}),
            )
        }
        1 => {
            let owner = reader.key()?;
            need(1)?;
            ("assign", json!({"account": account(0)?, "owner": owner}))
        }
        2 => {
            let lamports = reader.u64()?;
            need(2)?;
            (
                "transfer",
                json!({"source": account(0)?, "destination": account(1)?, "lamports": lamports}),
            )
        }
        3 => {
            let (base, seed) = (reader.key()?, reader.string()?);
            let (lamports, space, owner) = (reader.u64()?, reader.u64()?, reader.key()?);
            need(2)?;
            (
                "createAccountWithSeed",
                json!({"source": account(0)?, "newAccount": account(1)?, "base": base,
                       "seed": seed, "lamports": lamports, "space": space, "owner": owner}),
            )
        }
        4 => {
            need(3)?;
            (
                "advanceNonce",
                json!({"nonceAccount": account(0)?, "recentBlockhashesSysvar": account(1)?,
                       "nonceAuthority": account(2)?}),
            )
        }
        5 => {
            let lamports = reader.u64()?;
            need(5)?;
            (
                "withdrawFromNonce",
                json!({"nonceAccount": account(0)?, "destination": account(1)?,
                       "recentBlockhashesSysvar": account(2)?, "rentSysvar": account(3)?,
                       "nonceAuthority": account(4)?, "lamports": lamports}),
            )
        }
        6 => {
            let authority = reader.key()?;
            need(3)?;
            (
                "initializeNonce",
                json!({"nonceAccount": account(0)?, "recentBlockhashesSysvar": account(1)?,
                       "rentSysvar": account(2)?, "nonceAuthority": authority}),
            )
        }
        7 => {
            let authority = reader.key()?;
            need(2)?;
            (
                "authorizeNonce",
                json!({"nonceAccount": account(0)?, "nonceAuthority": account(1)?,
                       "newAuthorized": authority}),
            )
        }
        8 => {
            let space = reader.u64()?;
            need(1)?;
            ("allocate", json!({"account": account(0)?, "space": space}))
        }
        9 => {
            let (base, seed) = (reader.key()?, reader.string()?);
            let (space, owner) = (reader.u64()?, reader.key()?);
            need(2)?;
            (
                "allocateWithSeed",
                json!({"account": account(0)?, "base": base, "seed": seed, "space": space,
                       "owner": owner}),
            )
        }
        10 => {
            let (base, seed, owner) = (reader.key()?, reader.string()?, reader.key()?);
            need(2)?;
            (
                "assignWithSeed",
                json!({"account": account(0)?, "base": base, "seed": seed, "owner": owner}),
            )
        }
        11 => {
            let (lamports, seed, owner) = (reader.u64()?, reader.string()?, reader.key()?);
            need(3)?;
            (
                "transferWithSeed",
                json!({"source": account(0)?, "sourceBase": account(1)?,
                       "destination": account(2)?, "lamports": lamports, "sourceSeed": seed,
                       "sourceOwner": owner}),
            )
        }
        12 => {
            need(1)?;
            ("upgradeNonce", json!({"nonceAccount": account(0)?}))
        }
        _ => return None,
    };
    Some(json!({"info": info, "type": kind}))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

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
