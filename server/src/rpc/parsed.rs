//! The `jsonParsed` and `accounts` views (json-rpc-compat.md §4.3, §6.4): the full account-key
//! list (static keys, then lookup-table keys loaded writable, then read-only) with the validator's
//! signer/writable flags, and instructions parsed for the programs this server knows.
//!
//! Writable follows the validator: a key is writable when the header (or the lookup's writable
//! list) says so, it is not a reserved account (builtin programs and sysvars), and it is not
//! called as a program while the upgradeable BPF loader is absent from the static keys.
//!
//! Parsed programs: System (every instruction) and SPL Memo (v1 and v3). Instructions of other
//! programs print in the partially decoded form (`programId`, `accounts` as keys, base58 `data`),
//! which is also what the validator prints for programs it cannot parse; for the other programs
//! the validator parses (SPL Token, Token-2022, associated token account, vote, stake, BPF loaders,
//! address lookup table) this is a documented deviation (docs/archive-rpc.md).

use std::sync::LazyLock;

use decoder::transaction::TransactionView;
use serde::Serialize;
use serde_json::{Value, json};

use super::encode::{UiCompiledInstruction, b58};

/// The reserved account keys of the current validator (all features active): builtin programs
/// and sysvars, never writable.
const RESERVED: [&str; 31] = [
    "AddressLookupTab1e1111111111111111111111111",
    "BPFLoader2111111111111111111111111111111111",
    "BPFLoader1111111111111111111111111111111111",
    "BPFLoaderUpgradeab1e11111111111111111111111",
    "ComputeBudget111111111111111111111111111111",
    "Config1111111111111111111111111111111111111",
    "Ed25519SigVerify111111111111111111111111111",
    "Feature111111111111111111111111111111111111",
    "LoaderV411111111111111111111111111111111111",
    "NativeLoader1111111111111111111111111111111",
    "KeccakSecp256k11111111111111111111111111111",
    "Secp256r1SigVerify1111111111111111111111111",
    "Stake11111111111111111111111111111111111111",
    "StakeConfig11111111111111111111111111111111",
    "11111111111111111111111111111111",
    "Vote111111111111111111111111111111111111111",
    "ZkE1Gama1Proof11111111111111111111111111111",
    "ZkTokenProof1111111111111111111111111111111",
    "SysvarC1ock11111111111111111111111111111111",
    "SysvarEpochRewards1111111111111111111111111",
    "SysvarEpochSchedu1e111111111111111111111111",
    "SysvarFees111111111111111111111111111111111",
    "Sysvar1nstructions1111111111111111111111111",
    "SysvarLastRestartS1ot1111111111111111111111",
    "SysvarRecentB1ockHashes11111111111111111111",
    "SysvarRent111111111111111111111111111111111",
    "SysvarRewards111111111111111111111111111111",
    "SysvarS1otHashes111111111111111111111111111",
    "SysvarS1otHistory11111111111111111111111111",
    "SysvarStakeHistory1111111111111111111111111",
    "Sysvar1111111111111111111111111111111111111",
];

const UPGRADEABLE_LOADER: &str = "BPFLoaderUpgradeab1e11111111111111111111111";
const SYSTEM_PROGRAM: [u8; 32] = [0; 32];
const MEMO_PROGRAMS: [&str; 2] = [
    "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
    "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
];

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
    LazyLock::new(|| decode_keys([UPGRADEABLE_LOADER]));
static MEMO_KEYS: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_keys(MEMO_PROGRAMS));

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
    let account = |position: usize| -> Option<String> {
        let index = *accounts.get(position)?;
        keys.get(usize::from(index)).map(b58)
    };
    let parsed = if program == SYSTEM_PROGRAM {
        parse_system(data, &account, accounts.len()).map(|parsed| ("system", parsed))
    } else if is_memo_program(program) {
        std::str::from_utf8(data)
            .ok()
            .map(|text| ("spl-memo", Value::String(text.to_string())))
    } else {
        None
    };
    match parsed {
        Some((name, parsed)) => UiInstruction::Parsed(ParsedInstruction {
            parsed,
            program: name,
            program_id: b58(program),
            stack_height,
        }),
        None => UiInstruction::PartiallyDecoded(PartiallyDecodedInstruction {
            accounts: accounts
                .iter()
                .map(|&index| keys.get(usize::from(index)).map(b58).unwrap_or_default())
                .collect(),
            data: b58(data),
            program_id: b58(program),
            stack_height,
        }),
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

    fn u32(&mut self) -> Option<u32> {
        self.take::<4>().map(u32::from_le_bytes)
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
    use super::*;

    #[test]
    fn reserved_keys_all_decode() {
        assert_eq!(RESERVED_KEYS.len(), 31);
        assert_eq!(MEMO_KEYS.len(), 2);
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
}
