//! Address lookup tables (`decoder::lookup`) against the official SDK and the shred fixtures.
//!
//! Oracles: `solana-address-lookup-table-interface` 4 (the program's account layout, its
//! instruction builders and the runtime's `AddressLookupTable::lookup` rule, with a `SlotHashes`
//! of contiguous ancestors) and `solana-message` 6 (`LoadedAddresses: FromIterator` and
//! `v0::LoadedMessage::account_keys`, the runtime's key order). The fixture tables are those the
//! reference generator gave the v0 transactions of `tests/fixtures/shreds/` (its manifest's
//! `address_lookup_tables`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

use std::collections::HashSet;

use base64::Engine as _;
use decoder::lookup::{
    self, AccountKey, CacheConfig, LoadedAddresses, LookupInstruction, LookupStatus,
    LookupTableCache, Provenance, SnapshotOutcome, TableStatus, UnresolvedReason,
};
use decoder::transaction::{TransactionView, parse_transaction_exact};
use solana_address_lookup_table_interface::instruction as sdk_instruction;
use solana_address_lookup_table_interface::state::{
    AddressLookupTable, LookupTableMeta as SdkMeta,
};
use solana_hash::Hash;
use solana_message::compiled_instruction::CompiledInstruction;
use solana_message::v0::{self, LoadedAddresses as SdkLoaded, MessageAddressTableLookup};
use solana_message::{MessageHeader, VersionedMessage, legacy};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_slot_hashes::SlotHashes;
use solana_transaction::versioned::VersionedTransaction;

type Address = [u8; 32];

fn key(text: &str) -> Address {
    bs58::decode(text).into_vec().unwrap().try_into().unwrap()
}

fn cache(max_entries: usize, max_bytes: usize) -> LookupTableCache {
    LookupTableCache::new(CacheConfig {
        max_entries,
        max_bytes,
    })
    .unwrap()
}

/// The SlotHashes sysvar of the bank of `slot` when no slot was skipped: its 512 ancestors.
fn contiguous_slot_hashes(slot: u64) -> SlotHashes {
    (slot.saturating_sub(512)..slot)
        .rev()
        .map(|ancestor| (ancestor, Hash::default()))
        .collect()
}

/// Account data written by the SDK's own serializer.
fn sdk_account_data(meta: SdkMeta, addresses: &[Address]) -> Vec<u8> {
    let addresses: Vec<Pubkey> = addresses
        .iter()
        .map(|a| Pubkey::new_from_array(*a))
        .collect();
    AddressLookupTable {
        meta,
        addresses: addresses.into(),
    }
    .serialize_for_tests()
    .unwrap()
}

struct FixtureTable {
    address: Address,
    data: Vec<u8>,
}

/// Slot the fixture tables were last extended in: before every fixture slot.
const FIXTURE_TABLES_EXTENDED_AT: u64 = 361_100_000;

fn manifest() -> serde_json::Value {
    serde_json::from_slice(&common::read_fixture("shreds/manifest.json")).unwrap()
}

fn fixture_tables(manifest: &serde_json::Value) -> Vec<FixtureTable> {
    let tables = manifest["address_lookup_tables"].as_array().unwrap();
    tables
        .iter()
        .map(|table| {
            let addresses: Vec<Address> = table["addresses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| key(a.as_str().unwrap()))
                .collect();
            let meta = SdkMeta {
                last_extended_slot: FIXTURE_TABLES_EXTENDED_AT,
                last_extended_slot_start_index: 0,
                ..SdkMeta::new(Pubkey::new_from_array([7; 32]))
            };
            FixtureTable {
                address: key(table["address"].as_str().unwrap()),
                data: sdk_account_data(meta, &addresses),
            }
        })
        .collect()
}

/// Every v0 transaction of the fixture slots with its slot, as wire bytes.
fn fixture_v0_transactions(manifest: &serde_json::Value) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    for slot in manifest["slots"].as_array().unwrap() {
        let slot_number = slot["slot"].as_u64().unwrap();
        for entry in slot["entries"].as_array().unwrap() {
            for transaction in entry["transactions"].as_array().unwrap() {
                if transaction["version"] == "v0" {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(transaction["bytes"].as_str().unwrap())
                        .unwrap();
                    out.push((slot_number, bytes));
                }
            }
        }
    }
    out
}

/// The runtime's account keys for a v0 transaction, computed by the SDK from the table data.
fn sdk_account_keys(bytes: &[u8], slot: u64, tables: &[FixtureTable]) -> Vec<Address> {
    let transaction: VersionedTransaction = bincode::deserialize(bytes).unwrap();
    let VersionedMessage::V0(message) = transaction.message else {
        panic!("not v0");
    };
    let slot_hashes = contiguous_slot_hashes(slot);
    let loaded: SdkLoaded = message
        .address_table_lookups
        .iter()
        .map(|lookup| {
            let table = tables
                .iter()
                .find(|t| t.address == lookup.account_key.to_bytes())
                .unwrap();
            let table = AddressLookupTable::deserialize(&table.data).unwrap();
            SdkLoaded {
                writable: table
                    .lookup(slot, &lookup.writable_indexes, &slot_hashes)
                    .unwrap(),
                readonly: table
                    .lookup(slot, &lookup.readonly_indexes, &slot_hashes)
                    .unwrap(),
            }
        })
        .collect();
    let loaded_message = v0::LoadedMessage::new(message, loaded, &HashSet::new());
    loaded_message
        .account_keys()
        .iter()
        .map(|k| k.to_bytes())
        .collect()
}

fn ours_account_keys(view: &TransactionView<'_>, loaded: &LoadedAddresses) -> Vec<Address> {
    let mut keys = view.static_account_keys().to_vec();
    keys.extend_from_slice(loaded.writable());
    keys.extend_from_slice(loaded.readonly());
    keys
}

#[test]
fn fixture_v0_transactions_resolve_as_the_runtime_orders_them() {
    let manifest = manifest();
    let tables = fixture_tables(&manifest);
    assert_eq!(tables.len(), 4);
    let mut cache = cache(16, 1 << 20);
    for table in &tables {
        let account = lookup::parse_lookup_table_account(&table.data).unwrap();
        let outcome = cache.apply_snapshot(&table.address, &account, FIXTURE_TABLES_EXTENDED_AT);
        assert_eq!(outcome, SnapshotOutcome::Inserted);
    }
    let transactions = fixture_v0_transactions(&manifest);
    assert!(
        transactions.len() >= 50,
        "{} v0 transactions",
        transactions.len()
    );
    let mut loaded = LoadedAddresses::new();
    let mut lookups_resolved = 0;
    let mut tables_used = HashSet::new();
    for (slot, bytes) in &transactions {
        let view = parse_transaction_exact(bytes).unwrap();
        let status = lookup::resolve_lookups(&view, *slot, &mut cache, &mut loaded);
        if view.address_table_lookup_count() == 0 {
            assert_eq!(status, LookupStatus::NoLookups);
            continue;
        }
        assert_eq!(status, LookupStatus::Resolved);
        assert_eq!(loaded.writable().len(), view.loaded_writable_count());
        assert_eq!(loaded.readonly().len(), view.loaded_readonly_count());
        assert_eq!(
            ours_account_keys(&view, &loaded),
            sdk_account_keys(bytes, *slot, &tables)
        );
        for instruction in view.instructions() {
            for &index in instruction.account_indices {
                let named = loaded.account_key(view.static_account_keys(), index);
                assert!(named.address().is_some(), "index {index}: {named:?}");
            }
        }
        lookups_resolved += view.address_table_lookup_count() as u64;
        tables_used.extend(view.address_table_lookups().map(|l| *l.table));
    }
    assert_eq!(tables_used.len(), tables.len());
    assert_eq!(cache.counters().hits, lookups_resolved);
    assert_eq!(cache.counters().misses, 0);
}

#[test]
fn parser_reads_the_sdk_layout_and_agrees_on_malformed_data() {
    let addresses: Vec<Address> = (0..5u8).map(|i| [i + 1; 32]).collect();
    let metas = [
        SdkMeta::new(Pubkey::new_from_array([9; 32])),
        SdkMeta {
            deactivation_slot: 1_234,
            last_extended_slot: 999,
            last_extended_slot_start_index: 3,
            authority: None,
            _padding: 0,
        },
    ];
    for meta in metas {
        let data = sdk_account_data(meta.clone(), &addresses);
        let ours = lookup::parse_lookup_table_account(&data).unwrap();
        assert_eq!(ours.meta.deactivation_slot, meta.deactivation_slot);
        assert_eq!(ours.meta.last_extended_slot, meta.last_extended_slot);
        assert_eq!(
            ours.meta.last_extended_slot_start_index,
            meta.last_extended_slot_start_index
        );
        assert_eq!(ours.meta.authority, meta.authority.map(|a| a.to_bytes()));
        assert_eq!(ours.addresses, &addresses[..]);
        let mut encoded = Vec::new();
        lookup::encode_lookup_table_account(&ours.meta, ours.addresses, &mut encoded);
        assert_eq!(encoded, data);
        // Every truncation and every single-byte change of the metadata: same verdict as the SDK.
        for len in 0..data.len() {
            assert_same_verdict(&data[..len]);
        }
        for position in 0..56 {
            for value in [0, 1, 2, 0xFF] {
                let mut mutated = data.clone();
                mutated[position] = value;
                assert_same_verdict(&mutated);
            }
        }
    }
}

fn assert_same_verdict(data: &[u8]) {
    let ours = lookup::parse_lookup_table_account(data);
    let sdk = AddressLookupTable::deserialize(data);
    assert_eq!(
        ours.is_ok(),
        sdk.is_ok(),
        "{} bytes: {ours:?} vs {sdk:?}",
        data.len()
    );
    if let (Ok(ours), Ok(sdk)) = (ours, sdk) {
        assert_eq!(ours.meta.deactivation_slot, sdk.meta.deactivation_slot);
        assert_eq!(
            ours.meta.authority,
            sdk.meta.authority.map(|a| a.to_bytes())
        );
        assert_eq!(ours.addresses.len(), sdk.addresses.len());
    }
}

#[test]
fn instructions_built_by_the_sdk_decode_with_their_accounts() {
    let authority = Pubkey::new_from_array([1; 32]);
    let payer = Pubkey::new_from_array([2; 32]);
    let (create, table) = sdk_instruction::create_lookup_table(authority, payer, 77);
    for (seed, recent_slot) in (0..20u8).zip((0..u64::MAX).step_by(1 << 59)) {
        let authority = Pubkey::new_from_array([seed; 32]);
        let (address, bump) = sdk_instruction::derive_lookup_table_address(&authority, recent_slot);
        let ours = lookup::derive_table_address(&authority.to_bytes(), recent_slot, bump);
        assert_eq!(ours, Some(address.to_bytes()));
        // Bumps above the canonical one give curve points (`find_program_address` skipped them).
        for above in (u16::from(bump) + 1)..=255 {
            let above = above as u8;
            assert_eq!(
                lookup::derive_table_address(&authority.to_bytes(), recent_slot, above),
                None
            );
        }
    }
    let new_addresses = vec![
        Pubkey::new_from_array([3; 32]),
        Pubkey::new_from_array([4; 32]),
    ];
    let extend =
        sdk_instruction::extend_lookup_table(table, authority, Some(payer), new_addresses.clone());
    let cases = [
        (create, "create"),
        (extend, "extend"),
        (
            sdk_instruction::freeze_lookup_table(table, authority),
            "freeze",
        ),
        (
            sdk_instruction::deactivate_lookup_table(table, authority),
            "deactivate",
        ),
        (
            sdk_instruction::close_lookup_table(table, authority, payer),
            "close",
        ),
    ];
    for (instruction, name) in cases {
        assert_eq!(
            instruction.program_id.to_bytes(),
            lookup::ADDRESS_LOOKUP_TABLE_PROGRAM_ID
        );
        let parsed = lookup::parse_lookup_instruction(&instruction.data).unwrap();
        assert_eq!(parsed.name(), name);
        assert_eq!(instruction.accounts[0].pubkey, table);
        assert!(instruction.accounts[0].is_writable);
        assert_eq!(instruction.accounts[1].pubkey, authority);
        assert_eq!(
            instruction.accounts[1].is_signer,
            parsed.authority_must_sign()
        );
        match parsed {
            LookupInstruction::Create { recent_slot, .. } => assert_eq!(recent_slot, 77),
            LookupInstruction::Extend { new_addresses: got } => {
                let want: Vec<Address> = new_addresses.iter().map(|a| a.to_bytes()).collect();
                assert_eq!(got, &want[..]);
            }
            _ => {}
        }
    }
}

#[test]
fn usability_rules_agree_with_the_sdk() {
    let addresses: Vec<Address> = (0..40u8).map(|i| [i; 32]).collect();
    let extended_at = 10_000;
    let deactivations = [u64::MAX, 10_000, 10_100, 10_400];
    for deactivation_slot in deactivations {
        let meta = SdkMeta {
            deactivation_slot,
            last_extended_slot: extended_at,
            last_extended_slot_start_index: 25,
            ..SdkMeta::new(Pubkey::new_from_array([9; 32]))
        };
        let data = sdk_account_data(meta, &addresses);
        let sdk = AddressLookupTable::deserialize(&data).unwrap();
        let ours = lookup::parse_lookup_table_account(&data).unwrap();
        for slot in (extended_at..extended_at + 1_100)
            .step_by(7)
            .chain([10_512, 10_513])
        {
            if slot < deactivation_slot && deactivation_slot != u64::MAX {
                // A deactivation after the transaction's slot did not exist in that slot's bank
                // (the SDK, given that future state, would call the table deactivated).
                assert_eq!(lookup::table_status(&ours.meta, slot), TableStatus::Active);
                continue;
            }
            let slot_hashes = contiguous_slot_hashes(slot);
            let want = sdk.get_active_addresses_len(slot, &slot_hashes).ok();
            let got = lookup::active_addresses_len(&ours.meta, addresses.len(), slot).ok();
            assert_eq!(got, want, "deactivated {deactivation_slot}, slot {slot}");
            let want_usable = sdk.meta.is_active(slot, &slot_hashes);
            let got_usable = lookup::table_status(&ours.meta, slot) != TableStatus::Deactivated;
            assert_eq!(
                got_usable, want_usable,
                "deactivated {deactivation_slot}, slot {slot}"
            );
        }
    }
}

/// A signed-shaped transaction (signatures are not checked by the parser) as wire bytes.
fn wire(message: VersionedMessage) -> Vec<u8> {
    let signatures =
        vec![Signature::default(); usize::from(message.header().num_required_signatures)];
    bincode::serialize(&VersionedTransaction {
        signatures,
        message,
    })
    .unwrap()
}

/// A v0 transaction whose one instruction names two writable and one read-only loaded account
/// through `table` (indexes `writable`, then `readonly`).
fn user_transaction(table: Pubkey, writable: [u8; 2], readonly: u8) -> Vec<u8> {
    let payer = Pubkey::new_from_array([50; 32]);
    let program = Pubkey::new_from_array([51; 32]);
    wire(VersionedMessage::V0(v0::Message {
        header: MessageHeader {
            num_required_signatures: 1,
            num_readonly_signed_accounts: 0,
            num_readonly_unsigned_accounts: 1,
        },
        account_keys: vec![payer, program],
        recent_blockhash: Hash::default(),
        instructions: vec![CompiledInstruction::new_from_raw_parts(
            1,
            vec![],
            vec![2, 3, 4],
        )],
        address_table_lookups: vec![MessageAddressTableLookup {
            account_key: table,
            writable_indexes: writable.to_vec(),
            readonly_indexes: vec![readonly],
        }],
    }))
}

/// A legacy transaction of the lookup table program's instructions, as a wallet sends them.
fn admin_transaction(instructions: &[solana_instruction::Instruction], payer: &Pubkey) -> Vec<u8> {
    wire(VersionedMessage::Legacy(legacy::Message::new(
        instructions,
        Some(payer),
    )))
}

fn learn(bytes: &[u8], slot: u64, cache: &mut LookupTableCache) -> lookup::LearnSummary {
    let view = parse_transaction_exact(bytes).unwrap();
    let mut loaded = LoadedAddresses::new();
    lookup::resolve_lookups(&view, slot, cache, &mut loaded);
    lookup::learn_from_transaction(&view, slot, &loaded, cache, |_| {})
}

fn resolve(bytes: &[u8], slot: u64, cache: &mut LookupTableCache) -> LoadedAddresses {
    let view = parse_transaction_exact(bytes).unwrap();
    let mut loaded = LoadedAddresses::new();
    lookup::resolve_lookups(&view, slot, cache, &mut loaded);
    loaded
}

#[test]
fn a_table_learned_from_the_stream_resolves_from_the_slot_after_its_extension() {
    let authority = Pubkey::new_from_array([1; 32]);
    let payer = Pubkey::new_from_array([2; 32]);
    let (create, table) = sdk_instruction::create_lookup_table(authority, payer, 500);
    let first: Vec<Pubkey> = (10..14u8)
        .map(|i| Pubkey::new_from_array([i; 32]))
        .collect();
    let extend = sdk_instruction::extend_lookup_table(table, authority, Some(payer), first.clone());
    let slot = 1_000;
    let mut cache = cache(8, 1 << 20);
    let summary = learn(
        &admin_transaction(&[create, extend], &payer),
        slot,
        &mut cache,
    );
    assert_eq!((summary.calls, summary.applied), (2, 2));
    assert_eq!(cache.counters().stream_updates, 2);

    // Same slot as the extension: the new addresses are not active yet.
    let use_it = user_transaction(table, [0, 3], 1);
    let same_slot = resolve(&use_it, slot, &mut cache);
    assert_eq!(same_slot.status(), LookupStatus::Unresolved);
    assert_eq!(
        same_slot.lookups()[0].outcome,
        Err(UnresolvedReason::IndexOutOfRange {
            index: 0,
            active_len: 0
        })
    );
    assert_eq!(same_slot.writable(), &[lookup::UNRESOLVED_PLACEHOLDER; 2]);
    assert_eq!(
        same_slot.account_key(&[[50; 32], [51; 32]], 2),
        AccountKey::Unresolved
    );

    // The next slot: resolved, provisionally (nothing confirmed by the cluster yet).
    let next_slot = resolve(&use_it, slot + 1, &mut cache);
    assert_eq!(next_slot.status(), LookupStatus::ProvisionallyResolved);
    assert_eq!(next_slot.writable(), &[[10; 32], [13; 32]]);
    assert_eq!(next_slot.readonly(), &[[11; 32]]);

    // A second extension in slot + 5 keeps the first four usable in that slot, not the new ones.
    let more: Vec<Pubkey> = (20..22u8)
        .map(|i| Pubkey::new_from_array([i; 32]))
        .collect();
    let extend_more = sdk_instruction::extend_lookup_table(table, authority, None, more);
    learn(
        &admin_transaction(&[extend_more], &authority),
        slot + 5,
        &mut cache,
    );
    let new_index = user_transaction(table, [0, 5], 1);
    assert_eq!(
        resolve(&new_index, slot + 5, &mut cache).status(),
        LookupStatus::Unresolved
    );
    assert_eq!(
        resolve(&use_it, slot + 5, &mut cache).status(),
        LookupStatus::ProvisionallyResolved
    );
    let later = resolve(&new_index, slot + 6, &mut cache);
    assert_eq!(later.writable(), &[[10; 32], [21; 32]]);

    // The cluster confirms what the stream taught, at a slot after the last change.
    let table_key = table.to_bytes();
    let view = cache.peek(&table_key).unwrap();
    let mut data = Vec::new();
    lookup::encode_lookup_table_account(view.meta, view.addresses, &mut data);
    let account = lookup::parse_lookup_table_account(&data).unwrap();
    assert_eq!(account.meta.last_extended_slot, slot + 5);
    assert_eq!(account.meta.last_extended_slot_start_index, 4);
    assert_eq!(
        cache.apply_snapshot(&table_key, &account, slot + 10),
        SnapshotOutcome::Confirmed
    );
    assert_eq!(
        resolve(&new_index, slot + 11, &mut cache).status(),
        LookupStatus::Resolved
    );
    assert_eq!(cache.counters().confirmed, 1);
}

#[test]
fn a_snapshot_contradicting_the_stream_wins_and_is_counted() {
    let authority = Pubkey::new_from_array([1; 32]);
    let payer = Pubkey::new_from_array([2; 32]);
    let (create, table) = sdk_instruction::create_lookup_table(authority, payer, 500);
    let addresses: Vec<Pubkey> = (10..13u8)
        .map(|i| Pubkey::new_from_array([i; 32]))
        .collect();
    let extend = sdk_instruction::extend_lookup_table(table, authority, Some(payer), addresses);
    let mut cache = cache(8, 1 << 20);
    learn(
        &admin_transaction(&[create, extend], &payer),
        1_000,
        &mut cache,
    );

    // An older snapshot that agrees with what came before the stream's changes: still provisional.
    let meta = SdkMeta::new(authority);
    let empty = sdk_account_data(meta.clone(), &[]);
    let empty = lookup::parse_lookup_table_account(&empty).unwrap();
    let table_key = table.to_bytes();
    assert_eq!(
        cache.apply_snapshot(&table_key, &empty, 999),
        SnapshotOutcome::StillProvisional
    );
    // A newer snapshot with other addresses: the cluster wins.
    let other = sdk_account_data(
        SdkMeta {
            last_extended_slot: 1_000,
            ..meta
        },
        &[[99; 32]],
    );
    let other = lookup::parse_lookup_table_account(&other).unwrap();
    assert_eq!(
        cache.apply_snapshot(&table_key, &other, 1_001),
        SnapshotOutcome::Contradicted
    );
    assert_eq!(cache.counters().contradicted, 1);
    let loaded = resolve(&user_transaction(table, [0, 0], 0), 1_002, &mut cache);
    assert_eq!(loaded.status(), LookupStatus::Resolved);
    assert_eq!(loaded.writable(), &[[99; 32]; 2]);
}

#[test]
fn stream_instructions_the_program_would_refuse_change_nothing() {
    let authority = Pubkey::new_from_array([1; 32]);
    let intruder = Pubkey::new_from_array([3; 32]);
    let table = Pubkey::new_from_array([4; 32]);
    let mut cache = cache(8, 1 << 20);
    let data = sdk_account_data(SdkMeta::new(authority), &[[10; 32]]);
    let account = lookup::parse_lookup_table_account(&data).unwrap();
    cache.apply_snapshot(&table.to_bytes(), &account, 900);

    let wrong = sdk_instruction::extend_lookup_table(table, intruder, None, vec![intruder]);
    let summary = learn(&admin_transaction(&[wrong], &intruder), 1_000, &mut cache);
    assert_eq!(summary.rejected, 1);
    assert_eq!(cache.peek(&table.to_bytes()).unwrap().addresses.len(), 1);

    // Unknown table: reported to the caller, nothing cached.
    let unknown = Pubkey::new_from_array([5; 32]);
    let extend = sdk_instruction::extend_lookup_table(unknown, authority, None, vec![intruder]);
    let view_bytes = admin_transaction(&[extend], &authority);
    let view = parse_transaction_exact(&view_bytes).unwrap();
    let mut reported = Vec::new();
    let loaded = LoadedAddresses::new();
    let summary = lookup::learn_from_transaction(&view, 1_000, &loaded, &mut cache, |table| {
        reported.push(*table)
    });
    assert_eq!(summary.unknown_table, 1);
    assert_eq!(reported, vec![unknown.to_bytes()]);
    assert!(!cache.contains(&unknown.to_bytes()));
    assert_eq!(cache.counters().stream_rejected, 1);
    assert_eq!(cache.counters().stream_unknown_table, 1);
}

#[test]
fn deactivation_and_close_follow_the_cool_down() {
    let authority = Pubkey::new_from_array([1; 32]);
    let table = Pubkey::new_from_array([4; 32]);
    let mut cache = cache(8, 1 << 20);
    let data = sdk_account_data(SdkMeta::new(authority), &[[10; 32], [11; 32]]);
    let account = lookup::parse_lookup_table_account(&data).unwrap();
    cache.apply_snapshot(&table.to_bytes(), &account, 900);
    let deactivate = sdk_instruction::deactivate_lookup_table(table, authority);
    learn(
        &admin_transaction(&[deactivate], &authority),
        1_000,
        &mut cache,
    );

    let use_it = user_transaction(table, [0, 1], 0);
    assert_eq!(
        resolve(&use_it, 1_512, &mut cache).status(),
        LookupStatus::Resolved
    );
    let cooled = resolve(&use_it, 1_513, &mut cache);
    assert_eq!(
        cooled.lookups()[0].outcome,
        Err(UnresolvedReason::Deactivated)
    );

    let close = sdk_instruction::close_lookup_table(table, authority, authority);
    let early = learn(
        &admin_transaction(std::slice::from_ref(&close), &authority),
        1_512,
        &mut cache,
    );
    assert_eq!(early.rejected, 1);
    let closed = learn(&admin_transaction(&[close], &authority), 1_513, &mut cache);
    assert_eq!(closed.applied, 1);
    assert!(!cache.contains(&table.to_bytes()));
}

#[test]
fn an_unknown_table_leaves_the_other_lookups_in_place() {
    let manifest = manifest();
    let tables = fixture_tables(&manifest);
    let mut cache = cache(16, 1 << 20);
    // Cache all fixture tables but the first.
    for table in &tables[1..] {
        let account = lookup::parse_lookup_table_account(&table.data).unwrap();
        cache.apply_snapshot(&table.address, &account, FIXTURE_TABLES_EXTENDED_AT);
    }
    let missing = tables[0].address;
    let mut loaded = LoadedAddresses::new();
    let mut partly = 0;
    for (slot, bytes) in fixture_v0_transactions(&manifest) {
        let view = parse_transaction_exact(&bytes).unwrap();
        let status = lookup::resolve_lookups(&view, slot, &mut cache, &mut loaded);
        let uses_missing = view.address_table_lookups().any(|l| *l.table == missing);
        if !uses_missing {
            continue;
        }
        let want = sdk_account_keys(&bytes, slot, &tables);
        let statics = view.static_account_count();
        let writable = view.loaded_writable_count();
        for (position, want_key) in want.iter().enumerate().skip(statics) {
            let named = loaded.account_key(view.static_account_keys(), position as u8);
            match named {
                AccountKey::LoadedWritable(got) => {
                    assert!(position - statics < writable);
                    assert_eq!(got, want_key);
                }
                AccountKey::LoadedReadonly(got) => {
                    assert!(position - statics >= writable);
                    assert_eq!(got, want_key);
                }
                AccountKey::Unresolved => {}
                other => panic!("position {position}: {other:?}"),
            }
        }
        for (position, table, reason) in loaded.unresolved() {
            assert_eq!(*table, missing, "lookup {position}");
            assert_eq!(reason, UnresolvedReason::UnknownTable);
        }
        if view.address_table_lookups().all(|l| *l.table == missing) {
            assert_eq!(status, LookupStatus::Unresolved);
        } else {
            assert_eq!(status, LookupStatus::PartlyResolved);
            partly += 1;
        }
    }
    assert!(cache.counters().misses > 0);
    assert!(
        partly > 0,
        "no transaction mixes the missing table with another"
    );
}

#[test]
fn the_cache_stays_within_its_bounds_under_a_flood_of_distinct_tables() {
    let max_bytes = LookupTableCache::MIN_BYTES * 4;
    let mut cache = cache(100, max_bytes);
    let hot = [0xEE; 32];
    let hot_data = sdk_account_data(SdkMeta::new(Pubkey::new_from_array([1; 32])), &[[1; 32]]);
    let hot_account = lookup::parse_lookup_table_account(&hot_data).unwrap();
    cache.apply_snapshot(&hot, &hot_account, 1);
    let mut data = Vec::new();
    let mut high_water = (0, 0);
    for i in 0..20_000u32 {
        let mut table = [0u8; 32];
        table[..4].copy_from_slice(&i.to_le_bytes());
        let count = (i as usize * 37) % 257;
        let addresses: Vec<Address> = (0..count).map(|j| [j as u8; 32]).collect();
        let meta = lookup::LookupTableMeta::new(None);
        lookup::encode_lookup_table_account(&meta, &addresses, &mut data);
        let account = lookup::parse_lookup_table_account(&data).unwrap();
        cache.apply_snapshot(&table, &account, u64::from(i));
        assert!(cache.len() <= 100 && cache.bytes() <= max_bytes);
        high_water = (
            high_water.0.max(cache.len()),
            high_water.1.max(cache.bytes()),
        );
        // The hot table is used all the time: least recently used never picks it.
        assert!(cache.lookup(&hot).is_some(), "hot table evicted at {i}");
    }
    assert!(cache.counters().evictions >= 20_000 - 100);
    assert!(high_water.1 > max_bytes / 2, "{high_water:?}");
    let mut changes = Vec::new();
    // The change log overflowed (2 × max_entries distinct keys): the owner must resync.
    assert!(!cache.drain_changes(&mut changes));
    assert!(cache.drain_changes(&mut changes));
}

#[test]
fn exported_entries_import_into_a_fresh_cache() {
    let authority = Pubkey::new_from_array([1; 32]);
    let payer = Pubkey::new_from_array([2; 32]);
    let (create, table) = sdk_instruction::create_lookup_table(authority, payer, 500);
    let addresses: Vec<Pubkey> = (10..14u8)
        .map(|i| Pubkey::new_from_array([i; 32]))
        .collect();
    let extend = sdk_instruction::extend_lookup_table(table, authority, Some(payer), addresses);
    let mut before = cache(8, 1 << 20);
    learn(
        &admin_transaction(&[create, extend], &payer),
        1_000,
        &mut before,
    );
    let confirmed = [0xCC; 32];
    let data = sdk_account_data(SdkMeta::new(authority), &[[7; 32]]);
    let account = lookup::parse_lookup_table_account(&data).unwrap();
    before.apply_snapshot(&confirmed, &account, 990);

    let mut changes = Vec::new();
    assert!(before.drain_changes(&mut changes));
    assert_eq!(changes.len(), 2);
    let mut after = cache(8, 1 << 20);
    let mut bytes = Vec::new();
    for (key, change) in &changes {
        assert_eq!(*change, lookup::CacheChange::Upserted);
        assert!(before.export_entry(key, &mut bytes));
        after.import_entry(key, &bytes).unwrap();
    }
    let use_it = user_transaction(table, [0, 3], 2);
    let loaded = resolve(&use_it, 1_001, &mut after);
    assert_eq!(loaded.status(), LookupStatus::ProvisionallyResolved);
    assert_eq!(loaded.lookups()[0].outcome, Ok(Provenance::Provisional));
    assert_eq!(loaded.writable(), &[[10; 32], [13; 32]]);
    let use_confirmed = user_transaction(Pubkey::new_from_array(confirmed), [0, 0], 0);
    assert_eq!(
        resolve(&use_confirmed, 1_001, &mut after).status(),
        LookupStatus::Resolved
    );
    assert!(
        after
            .import_entry(&confirmed, &bytes[..bytes.len() - 1])
            .is_err()
    );
    assert_eq!(after.counters().stream_updates, 0);
}

/// Rough timing of `resolve_lookups` over the fixture's v0 transactions (per transaction, cache
/// hot). Not a benchmark: run with `cargo test --release -p decoder --test lookup -- --ignored
/// --nocapture`; the lead's criterion bench is the reference.
#[test]
#[ignore]
fn resolve_timing() {
    let manifest = manifest();
    let tables = fixture_tables(&manifest);
    let mut cache = cache(16, 1 << 20);
    for table in &tables {
        let account = lookup::parse_lookup_table_account(&table.data).unwrap();
        cache.apply_snapshot(&table.address, &account, FIXTURE_TABLES_EXTENDED_AT);
    }
    let transactions = fixture_v0_transactions(&manifest);
    let views: Vec<(u64, TransactionView<'_>)> = transactions
        .iter()
        .map(|(slot, bytes)| (*slot, parse_transaction_exact(bytes).unwrap()))
        .filter(|(_, view)| view.address_table_lookup_count() > 0)
        .collect();
    let mut loaded = LoadedAddresses::new();
    let mut samples = Vec::new();
    for _ in 0..200 {
        for (slot, view) in &views {
            let start = std::time::Instant::now();
            let status = lookup::resolve_lookups(view, *slot, &mut cache, &mut loaded);
            samples.push(start.elapsed().as_nanos());
            assert_eq!(status, LookupStatus::Resolved);
        }
    }
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    let lookups: usize = views
        .iter()
        .map(|(_, v)| v.address_table_lookup_count())
        .sum();
    let loaded_count: usize = views
        .iter()
        .map(|(_, v)| v.loaded_writable_count() + v.loaded_readonly_count())
        .sum();
    println!(
        "{} transactions ({:.1} lookups, {:.1} loaded addresses each): \
         p50 {} ns, p99 {} ns, max {} ns",
        views.len(),
        lookups as f64 / views.len() as f64,
        loaded_count as f64 / views.len() as f64,
        at(0.5),
        at(0.99),
        at(1.0)
    );
}
