//! Test-only transaction encoder: builds wire bytes from an owned description, independently of the
//! parser, so tests can round-trip fields and break one sanitize rule at a time.

use proptest::collection::vec;
use proptest::prelude::*;

/// An owned transaction description; `encode` turns it into wire bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TransactionSpec {
    pub signatures: Vec<[u8; 64]>,
    /// `None` for legacy, `Some(version)` for a versioned message (prefix `0x80 | version`).
    pub version: Option<u8>,
    pub header: [u8; 3],
    pub keys: Vec<[u8; 32]>,
    pub recent_blockhash: [u8; 32],
    pub instructions: Vec<InstructionSpec>,
    pub lookups: Vec<LookupSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstructionSpec {
    pub program_id_index: u8,
    pub accounts: Vec<u8>,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LookupSpec {
    pub table: [u8; 32],
    pub writable: Vec<u8>,
    pub readonly: Vec<u8>,
}

/// Appends a minimal compact-u16.
pub(crate) fn push_compact_u16(out: &mut Vec<u8>, value: usize) {
    let mut value = u16::try_from(value).expect("short_vec length fits u16");
    loop {
        let low = (value & 0x7F) as u8;
        value >>= 7;
        if value == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

impl TransactionSpec {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        push_compact_u16(&mut out, self.signatures.len());
        for signature in &self.signatures {
            out.extend_from_slice(signature);
        }
        out.extend_from_slice(&self.message());
        out
    }

    pub fn message(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(version) = self.version {
            out.push(0x80 | version);
        }
        out.extend_from_slice(&self.header);
        push_compact_u16(&mut out, self.keys.len());
        for key in &self.keys {
            out.extend_from_slice(key);
        }
        out.extend_from_slice(&self.recent_blockhash);
        push_compact_u16(&mut out, self.instructions.len());
        for instruction in &self.instructions {
            out.push(instruction.program_id_index);
            push_compact_u16(&mut out, instruction.accounts.len());
            out.extend_from_slice(&instruction.accounts);
            push_compact_u16(&mut out, instruction.data.len());
            out.extend_from_slice(&instruction.data);
        }
        if self.version.is_some() {
            push_compact_u16(&mut out, self.lookups.len());
            for lookup in &self.lookups {
                out.extend_from_slice(&lookup.table);
                push_compact_u16(&mut out, lookup.writable.len());
                out.extend_from_slice(&lookup.writable);
                push_compact_u16(&mut out, lookup.readonly.len());
                out.extend_from_slice(&lookup.readonly);
            }
        }
        out
    }
}

fn filled<const N: usize>(byte: u8) -> [u8; N] {
    [byte; N]
}

/// A valid legacy transfer-like transaction: 2 signers (1 read-only), 4 keys (1 read-only
/// unsigned program), 2 instructions.
pub(crate) fn legacy_spec() -> TransactionSpec {
    TransactionSpec {
        signatures: vec![filled(0xA1), filled(0xA2)],
        version: None,
        header: [2, 1, 1],
        keys: vec![filled(0x01), filled(0x02), filled(0x03), filled(0x04)],
        recent_blockhash: filled(0xBB),
        instructions: vec![
            InstructionSpec {
                program_id_index: 3,
                accounts: vec![0, 2],
                data: vec![2, 0, 0, 0],
            },
            InstructionSpec {
                program_id_index: 3,
                accounts: vec![],
                data: vec![],
            },
        ],
        lookups: vec![],
    }
}

/// A valid v0 transaction with two lookups; instruction indexes reach into loaded addresses.
pub(crate) fn v0_spec() -> TransactionSpec {
    TransactionSpec {
        signatures: vec![filled(0xC1)],
        version: Some(0),
        header: [1, 0, 1],
        keys: vec![filled(0x11), filled(0x12), filled(0x13)],
        recent_blockhash: filled(0xCC),
        instructions: vec![InstructionSpec {
            program_id_index: 2,
            // 3 static + 3 loaded writable + 1 loaded read-only = 7 keys, indexes 0..=6.
            accounts: vec![0, 1, 3, 4, 5, 6],
            data: vec![9; 200],
        }],
        lookups: vec![
            LookupSpec {
                table: filled(0x21),
                writable: vec![7, 8],
                readonly: vec![],
            },
            LookupSpec {
                table: filled(0x22),
                writable: vec![1],
                readonly: vec![200],
            },
        ],
    }
}

/// The smallest transaction that passes sanitize (see `TRANSACTION_LEN_BYTES_MIN`).
pub(crate) fn minimal_spec() -> TransactionSpec {
    TransactionSpec {
        signatures: vec![filled(0x5A)],
        version: None,
        header: [1, 0, 0],
        keys: vec![filled(0x77)],
        recent_blockhash: filled(0x33),
        instructions: vec![],
        lookups: vec![],
    }
}

/// Raw material for `valid_spec`; every field shrinks independently.
type RawInstruction = (u8, Vec<u8>, Vec<u8>);
type RawLookup = ([u8; 32], Vec<u8>, Vec<u8>);

/// Random transactions that pass every sanitize rule, legacy and v0, with and without lookups.
pub(crate) fn valid_spec() -> impl Strategy<Value = TransactionSpec> {
    (
        any::<bool>(),
        1usize..=24,
        any::<(u8, u8, u8)>(),
        vec(any::<[u8; 32]>(), 24),
        any::<[u8; 32]>(),
        vec(
            (any::<u8>(), vec(any::<u8>(), 0..8), vec(any::<u8>(), 0..48)),
            0..6,
        ),
        vec(
            (
                any::<[u8; 32]>(),
                vec(any::<u8>(), 0..5),
                vec(any::<u8>(), 0..5),
            ),
            0..4,
        ),
        any::<u8>(),
    )
        .prop_map(
            |(
                is_v0,
                key_count,
                raw_header,
                keys,
                blockhash,
                raw_instructions,
                raw_lookups,
                seed,
            )| {
                build_valid(
                    is_v0,
                    key_count,
                    raw_header,
                    &keys[..key_count],
                    blockhash,
                    raw_instructions,
                    raw_lookups,
                    seed,
                )
            },
        )
}

#[allow(clippy::too_many_arguments)]
fn build_valid(
    is_v0: bool,
    key_count: usize,
    (raw_required, raw_readonly_signed, raw_readonly_unsigned): (u8, u8, u8),
    keys: &[[u8; 32]],
    recent_blockhash: [u8; 32],
    raw_instructions: Vec<RawInstruction>,
    raw_lookups: Vec<RawLookup>,
    seed: u8,
) -> TransactionSpec {
    // 1 <= required <= key_count; readonly_signed < required; required + unsigned <= key_count.
    let required = 1 + usize::from(raw_required) % key_count;
    let readonly_signed = usize::from(raw_readonly_signed) % required;
    let readonly_unsigned = usize::from(raw_readonly_unsigned) % (key_count - required + 1);
    let lookups: Vec<LookupSpec> = if is_v0 {
        raw_lookups
            .into_iter()
            .map(|(table, mut writable, readonly)| {
                if writable.is_empty() && readonly.is_empty() {
                    writable.push(seed);
                }
                LookupSpec {
                    table,
                    writable,
                    readonly,
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let loaded: usize = lookups
        .iter()
        .map(|l| l.writable.len() + l.readonly.len())
        .sum();
    let account_count = key_count + loaded;
    // Programs need a static key other than the payer, so a one-key message has no instructions.
    let instructions = if key_count < 2 {
        Vec::new()
    } else {
        raw_instructions
            .into_iter()
            .map(|(program, accounts, data)| InstructionSpec {
                program_id_index: (1 + usize::from(program) % (key_count - 1)) as u8,
                accounts: accounts
                    .iter()
                    .map(|&a| (usize::from(a) % account_count) as u8)
                    .collect(),
                data,
            })
            .collect()
    };
    TransactionSpec {
        signatures: (0..required)
            .map(|i| [seed.wrapping_add(i as u8); 64])
            .collect(),
        version: is_v0.then_some(0),
        header: [
            required as u8,
            readonly_signed as u8,
            readonly_unsigned as u8,
        ],
        keys: keys.to_vec(),
        recent_blockhash,
        instructions,
        lookups,
    }
}
