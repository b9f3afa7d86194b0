//! Cross-checks `decoder::transaction` and `decoder::entry` against the official Solana crates.
//!
//! The official `VersionedTransaction` (solana-transaction 6, serde + bincode 1) is the reference
//! for both the wire format and the sanitize verdict: random transactions built with the official
//! types are serialized with bincode and must parse here field for field; random header and index
//! values must get the same accept/reject verdict from our parser as from
//! `VersionedTransaction::sanitize`; mutated wire bytes must get the same verdict as bincode
//! deserialization followed by sanitize; bincode `Vec<Entry>` batches must parse to the same
//! entries; and the real mainnet transactions in `tests/fixtures/mainnet-tx/` must agree too.
//! The random generator is a fixed-seed splitmix64, so every run checks the same cases.

use std::path::PathBuf;

use base64::Engine as _;
use bincode::Options as _;
use decoder::entry::parse_entry_batch;
use decoder::transaction::{MessageVersion, TransactionView, parse_transaction_exact};
use serde::Serialize;
use solana_hash::Hash;
use solana_message::compiled_instruction::CompiledInstruction;
use solana_message::v0::MessageAddressTableLookup;
use solana_message::{MessageHeader, VersionedMessage, legacy, v0};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;

/// splitmix64: tiny, deterministic, good enough to spread test cases.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-enough value in `0..bound` (bound > 0).
    fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }

    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        std::array::from_fn(|_| self.byte())
    }

    fn byte_vec(&mut self, max_len: usize) -> Vec<u8> {
        let len = self.below(max_len + 1);
        (0..len).map(|_| self.byte()).collect()
    }
}

/// A random transaction that passes `VersionedTransaction::sanitize`.
fn valid_transaction(rng: &mut Rng) -> VersionedTransaction {
    let key_count = 1 + rng.below(32);
    let required = 1 + rng.below(key_count.min(8));
    let readonly_signed = rng.below(required);
    let readonly_unsigned = rng.below(key_count - required + 1);
    let header = MessageHeader {
        num_required_signatures: required as u8,
        num_readonly_signed_accounts: readonly_signed as u8,
        num_readonly_unsigned_accounts: readonly_unsigned as u8,
    };
    let keys: Vec<Pubkey> = (0..key_count)
        .map(|_| Pubkey::new_from_array(rng.bytes()))
        .collect();
    let is_v0 = rng.chance(60);
    let lookups: Vec<MessageAddressTableLookup> = if is_v0 {
        (0..rng.below(4))
            .map(|_| {
                let mut writable_indexes = rng.byte_vec(6);
                let readonly_indexes = rng.byte_vec(6);
                if writable_indexes.is_empty() && readonly_indexes.is_empty() {
                    writable_indexes.push(rng.byte());
                }
                MessageAddressTableLookup {
                    account_key: Pubkey::new_from_array(rng.bytes()),
                    writable_indexes,
                    readonly_indexes,
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let loaded: usize = lookups
        .iter()
        .map(|l| l.writable_indexes.len() + l.readonly_indexes.len())
        .sum();
    let account_count = key_count + loaded;
    let instruction_count = if key_count < 2 { 0 } else { rng.below(6) };
    let instructions = (0..instruction_count)
        .map(|_| CompiledInstruction {
            program_id_index: (1 + rng.below(key_count - 1)) as u8,
            accounts: (0..rng.below(10))
                .map(|_| rng.below(account_count) as u8)
                .collect(),
            data: rng.byte_vec(64),
        })
        .collect();
    let recent_blockhash = Hash::new_from_array(rng.bytes());
    let message = if is_v0 {
        VersionedMessage::V0(v0::Message {
            header,
            account_keys: keys,
            recent_blockhash,
            instructions,
            address_table_lookups: lookups,
        })
    } else {
        VersionedMessage::Legacy(legacy::Message {
            header,
            account_keys: keys,
            recent_blockhash,
            instructions,
        })
    };
    let signatures = (0..required)
        .map(|_| Signature::from(rng.bytes::<64>()))
        .collect();
    VersionedTransaction {
        signatures,
        message,
    }
}

/// A valid transaction with one or two fields replaced by random values, often breaking a
/// sanitize rule and sometimes not.
fn perturbed_transaction(rng: &mut Rng) -> VersionedTransaction {
    let mut transaction = valid_transaction(rng);
    for _ in 0..1 + rng.below(2) {
        perturb(rng, &mut transaction);
    }
    transaction
}

fn perturb(rng: &mut Rng, transaction: &mut VersionedTransaction) {
    let small = |rng: &mut Rng| rng.below(6) as u8;
    match (rng.below(8), &mut transaction.message) {
        (0, message) => message_header_mut(message).num_required_signatures = small(rng),
        (1, message) => message_header_mut(message).num_readonly_signed_accounts = small(rng),
        (2, message) => message_header_mut(message).num_readonly_unsigned_accounts = small(rng),
        (3, _) => {
            let count = rng.below(4);
            transaction.signatures = (0..count)
                .map(|_| Signature::from(rng.bytes::<64>()))
                .collect();
        }
        (4, message) => {
            if let Some(instruction) = instructions_mut(message).first_mut() {
                instruction.program_id_index = rng.below(40) as u8;
            }
        }
        (5, message) => {
            if let Some(instruction) = instructions_mut(message).last_mut() {
                instruction.accounts.push(rng.byte());
            }
        }
        (6, VersionedMessage::V0(message)) => {
            message
                .address_table_lookups
                .push(MessageAddressTableLookup {
                    account_key: Pubkey::new_from_array(rng.bytes()),
                    writable_indexes: vec![0; rng.below(3) * 120],
                    readonly_indexes: Vec::new(),
                });
        }
        (_, message) => {
            let keys = account_keys_mut(message);
            keys.truncate(rng.below(keys.len() + 1));
        }
    }
}

fn message_header_mut(message: &mut VersionedMessage) -> &mut MessageHeader {
    match message {
        VersionedMessage::Legacy(m) => &mut m.header,
        VersionedMessage::V0(m) => &mut m.header,
        VersionedMessage::V1(m) => &mut m.header,
    }
}

fn instructions_mut(message: &mut VersionedMessage) -> &mut Vec<CompiledInstruction> {
    match message {
        VersionedMessage::Legacy(m) => &mut m.instructions,
        VersionedMessage::V0(m) => &mut m.instructions,
        VersionedMessage::V1(_) => unreachable!("the generator builds no v1 messages"),
    }
}

fn account_keys_mut(message: &mut VersionedMessage) -> &mut Vec<Pubkey> {
    match message {
        VersionedMessage::Legacy(m) => &mut m.account_keys,
        VersionedMessage::V0(m) => &mut m.account_keys,
        VersionedMessage::V1(m) => &mut m.account_keys,
    }
}

/// Asserts that our view shows exactly what the official transaction holds.
fn assert_same(ours: &TransactionView<'_>, theirs: &VersionedTransaction, wire: &[u8]) {
    assert_eq!(ours.bytes(), wire);
    assert_eq!(
        ours.message_bytes(),
        &bincode::serialize(&theirs.message).expect("message serializes")[..]
    );

    let signatures: Vec<[u8; 64]> = theirs.signatures.iter().map(|s| *s.as_array()).collect();
    assert_eq!(ours.signatures(), &signatures[..]);
    assert_eq!(ours.signature_count(), signatures.len());
    assert_eq!(ours.first_signature(), &signatures[0]);

    let version = match &theirs.message {
        VersionedMessage::Legacy(_) => MessageVersion::Legacy,
        VersionedMessage::V0(_) => MessageVersion::V0,
        VersionedMessage::V1(_) => panic!("v1 message reached the comparison"),
    };
    assert_eq!(ours.version(), version);

    let header = theirs.message.header();
    assert_eq!(
        ours.header().num_required_signatures,
        header.num_required_signatures
    );
    assert_eq!(
        ours.header().num_readonly_signed_accounts,
        header.num_readonly_signed_accounts
    );
    assert_eq!(
        ours.header().num_readonly_unsigned_accounts,
        header.num_readonly_unsigned_accounts
    );

    let keys: Vec<[u8; 32]> = theirs
        .message
        .static_account_keys()
        .iter()
        .map(|k| k.to_bytes())
        .collect();
    assert_eq!(ours.static_account_count(), keys.len());
    assert_eq!(ours.static_account_keys(), &keys[..]);
    assert_eq!(ours.fee_payer(), &keys[0]);
    assert_eq!(
        ours.recent_blockhash(),
        &theirs.message.recent_blockhash().to_bytes()
    );

    let instructions = theirs.message.instructions();
    assert_eq!(ours.instruction_count(), instructions.len());
    assert_eq!(ours.instructions().count(), instructions.len());
    for (mine, official) in ours.instructions().zip(instructions) {
        assert_eq!(mine.program_id_index, official.program_id_index);
        assert_eq!(mine.account_indices, &official.accounts[..]);
        assert_eq!(mine.data, &official.data[..]);
    }

    let lookups = theirs.message.address_table_lookups().unwrap_or(&[]);
    assert_eq!(ours.address_table_lookup_count(), lookups.len());
    assert_eq!(ours.uses_lookup_tables(), !lookups.is_empty());
    assert_eq!(ours.address_table_lookups().count(), lookups.len());
    for (mine, official) in ours.address_table_lookups().zip(lookups) {
        assert_eq!(mine.table, official.account_key.as_array());
        assert_eq!(mine.writable_indices, &official.writable_indexes[..]);
        assert_eq!(mine.readonly_indices, &official.readonly_indexes[..]);
    }
    let loaded: usize = lookups
        .iter()
        .map(|l| l.writable_indexes.len() + l.readonly_indexes.len())
        .sum();
    assert_eq!(ours.account_count(), keys.len() + loaded);
}

/// Official verdict on wire bytes: bincode 1 with trailing bytes rejected, then sanitize. `None`
/// for a v1 message, which the official crate knows and we deliberately do not accept.
fn official_verdict(wire: &[u8]) -> Option<Result<VersionedTransaction, String>> {
    let decoded = bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .reject_trailing_bytes()
        .deserialize::<VersionedTransaction>(wire);
    match decoded {
        Err(error) => Some(Err(error.to_string())),
        Ok(transaction) if matches!(transaction.message, VersionedMessage::V1(_)) => None,
        Ok(transaction) => Some(match transaction.sanitize() {
            Ok(()) => Ok(transaction),
            Err(error) => Err(error.to_string()),
        }),
    }
}

#[test]
fn random_valid_transactions_conformance() {
    let mut rng = Rng(0x5EED_0001);
    let mut versions = [0usize; 2];
    for _ in 0..3_000 {
        let transaction = valid_transaction(&mut rng);
        assert_eq!(
            transaction.sanitize(),
            Ok(()),
            "generator must build valid transactions"
        );
        let wire = bincode::serialize(&transaction).unwrap();
        let view =
            parse_transaction_exact(&wire).unwrap_or_else(|e| panic!("{e}: {transaction:?}"));
        assert_same(&view, &transaction, &wire);
        versions[usize::from(view.version() == MessageVersion::V0)] += 1;
    }
    assert!(
        versions.iter().all(|&count| count > 500),
        "both versions covered: {versions:?}"
    );
}

#[test]
fn random_sanitize_verdicts_conformance() {
    let mut rng = Rng(0x5EED_0002);
    let (mut accepted, mut rejected) = (0usize, 0usize);
    for case in 0..10_000 {
        let transaction = perturbed_transaction(&mut rng);
        let wire = bincode::serialize(&transaction).unwrap();
        let official = transaction.sanitize();
        let ours = parse_transaction_exact(&wire);
        assert_eq!(
            ours.is_ok(),
            official.is_ok(),
            "case {case}: ours {:?}, official {official:?}, {transaction:?}",
            ours.err()
        );
        match ours {
            Ok(view) => {
                assert_same(&view, &transaction, &wire);
                accepted += 1;
            }
            Err(_) => rejected += 1,
        }
    }
    assert!(
        accepted > 1_000 && rejected > 1_000,
        "accepted {accepted}, rejected {rejected}"
    );
}

#[test]
fn mutated_wire_verdicts_conformance() {
    let mut rng = Rng(0x5EED_0003);
    let (mut accepted, mut rejected, mut skipped_v1) = (0usize, 0usize, 0usize);
    for case in 0..20_000 {
        let mut wire = bincode::serialize(&valid_transaction(&mut rng)).unwrap();
        match rng.below(4) {
            0 => wire.truncate(rng.below(wire.len())),
            1 => wire.push(rng.byte()),
            _ => {
                // Flip bytes near the front more often: that is where the counts and header are.
                for _ in 0..1 + rng.below(3) {
                    let front = rng.below(wire.len()) + 1;
                    let position = rng.below(front);
                    wire[position] = rng.byte();
                }
            }
        }
        let Some(official) = official_verdict(&wire) else {
            skipped_v1 += 1;
            continue;
        };
        let ours = parse_transaction_exact(&wire);
        assert_eq!(
            ours.is_ok(),
            official.is_ok(),
            "case {case}: ours {:?}, official {:?}, wire {wire:02x?}",
            ours.as_ref().err(),
            official.as_ref().err()
        );
        match (ours, official) {
            (Ok(view), Ok(transaction)) => {
                assert_same(&view, &transaction, &wire);
                accepted += 1;
            }
            _ => rejected += 1,
        }
    }
    assert!(
        accepted > 1_000 && rejected > 5_000,
        "accepted {accepted}, rejected {rejected}"
    );
    assert!(skipped_v1 < 200, "skipped {skipped_v1} v1 decodes");
}

/// The bincode shape of a ledger entry (`solana_entry::entry::Entry`).
#[derive(Serialize)]
struct Entry {
    num_hashes: u64,
    hash: Hash,
    transactions: Vec<VersionedTransaction>,
}

#[test]
fn entry_batch_conformance() {
    let mut rng = Rng(0x5EED_0004);
    for _ in 0..200 {
        let entries: Vec<Entry> = (0..rng.below(12))
            .map(|_| Entry {
                num_hashes: rng.next_u64(),
                hash: Hash::new_from_array(rng.bytes()),
                // About a third are ticks.
                transactions: (0..rng.below(6).saturating_sub(2))
                    .map(|_| valid_transaction(&mut rng))
                    .collect(),
            })
            .collect();
        let wire = bincode::serialize(&entries).unwrap();
        let batch = parse_entry_batch(&wire).unwrap();
        let transaction_count: usize = entries.iter().map(|e| e.transactions.len()).sum();
        assert_eq!(batch.entry_count(), entries.len() as u64);
        assert_eq!(batch.transaction_count(), transaction_count as u64);
        assert_eq!(batch.entries().count(), entries.len());
        for (view, entry) in batch.entries().zip(&entries) {
            assert_eq!(view.num_hashes, entry.num_hashes);
            assert_eq!(view.hash, &entry.hash.to_bytes());
            assert_eq!(view.transaction_count, entry.transactions.len() as u64);
            assert_eq!(view.transactions().count(), entry.transactions.len());
            for (mine, official) in view.transactions().zip(&entry.transactions) {
                assert_same(&mine, official, &bincode::serialize(official).unwrap());
            }
        }
        let flat: Vec<&VersionedTransaction> =
            entries.iter().flat_map(|e| &e.transactions).collect();
        assert_eq!(batch.transactions().count(), flat.len());
        for (mine, official) in batch.transactions().zip(flat) {
            assert_eq!(mine.bytes(), &bincode::serialize(official).unwrap()[..]);
        }
    }
}

fn mainnet_fixtures() -> Vec<(String, Vec<u8>)> {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mainnet-tx");
    let mut fixtures: Vec<(String, Vec<u8>)> = std::fs::read_dir(&directory)
        .expect("fixture directory tests/fixtures/mainnet-tx")
        .map(|entry| entry.expect("fixture directory entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "b64"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("fixture file readable");
            let wire = base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .expect("fixture is one line of base64");
            (
                path.file_name()
                    .expect("fixture has a file name")
                    .to_string_lossy()
                    .into_owned(),
                wire,
            )
        })
        .collect();
    fixtures.sort();
    fixtures
}

#[test]
fn mainnet_transactions_conformance() {
    let fixtures = mainnet_fixtures();
    assert_eq!(fixtures.len(), 5, "fixture files missing");
    let mut versions = Vec::new();
    for (name, wire) in &fixtures {
        let official: VersionedTransaction = bincode::DefaultOptions::new()
            .with_fixint_encoding()
            .reject_trailing_bytes()
            .deserialize(wire)
            .unwrap_or_else(|e| panic!("{name}: official decode: {e}"));
        assert_eq!(official.sanitize(), Ok(()), "{name}");
        let view = parse_transaction_exact(wire).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            view.first_signature(),
            official.signatures[0].as_array(),
            "{name}"
        );
        assert_eq!(
            view.static_account_count(),
            official.message.static_account_keys().len(),
            "{name}"
        );
        assert_same(&view, &official, wire);
        // The file name carries the start of the base58 signature.
        let signature = bs58::encode(view.first_signature()).into_string();
        let prefix = name.rsplit('.').nth(1).unwrap();
        assert!(
            signature.starts_with(prefix),
            "{name}: signature {signature}"
        );
        versions.push(view.version());
    }
    assert!(versions.contains(&MessageVersion::Legacy) && versions.contains(&MessageVersion::V0));
}

#[test]
fn mainnet_transactions_as_one_entry_batch_conformance() {
    let fixtures = mainnet_fixtures();
    let transactions: Vec<VersionedTransaction> = fixtures
        .iter()
        .map(|(_, wire)| bincode::deserialize(wire).unwrap())
        .collect();
    let entries = vec![
        Entry {
            num_hashes: 1,
            hash: Hash::new_from_array([1; 32]),
            transactions: vec![],
        },
        Entry {
            num_hashes: 2,
            hash: Hash::new_from_array([2; 32]),
            transactions,
        },
    ];
    let wire = bincode::serialize(&entries).unwrap();
    let batch = parse_entry_batch(&wire).unwrap();
    assert_eq!(batch.entry_count(), 2);
    assert_eq!(batch.transaction_count(), fixtures.len() as u64);
    let parsed: Vec<&[u8]> = batch.transactions().map(|t| t.bytes()).collect();
    let expected: Vec<&[u8]> = fixtures.iter().map(|(_, wire)| wire.as_slice()).collect();
    assert_eq!(parsed, expected);
}
