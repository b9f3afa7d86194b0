//! Transactions of the address lookup table program, built byte by byte in the wire format
//! (legacy message, bincode 1 instructions as docs/lookup-tables.md lists them; the decoder's own
//! tests check that layout against the SDK's builders), and fixture v0 transactions pointed at
//! another table, for tests that teach the appliance a table through the stream alone.

use std::collections::HashMap;

use decoder::lookup::{ADDRESS_LOOKUP_TABLE_PROGRAM_ID, derive_table_address};
use decoder::transaction::parse_transaction_exact;
use testkit::synth::push_compact_u16;

pub type Key = [u8; 32];

const SYSTEM_PROGRAM: Key = [0; 32];
const CREATE: u32 = 0;
const EXTEND: u32 = 2;

/// The table `authority` creates with `recent_slot`, and its bump seed (the highest off-curve).
pub fn table_address(authority: &Key, recent_slot: u64) -> (Key, u8) {
    (0..=u8::MAX)
        .rev()
        .find_map(|bump| derive_table_address(authority, recent_slot, bump).map(|a| (a, bump)))
        .expect("some bump seed is off the curve")
}

/// `CreateLookupTable { recent_slot, bump_seed }`.
pub fn create(recent_slot: u64, bump: u8) -> Vec<u8> {
    let mut data = CREATE.to_le_bytes().to_vec();
    data.extend_from_slice(&recent_slot.to_le_bytes());
    data.push(bump);
    data
}

/// `ExtendLookupTable { new_addresses }`.
pub fn extend(addresses: &[Key]) -> Vec<u8> {
    let mut data = EXTEND.to_le_bytes().to_vec();
    data.extend_from_slice(&(addresses.len() as u64).to_le_bytes());
    for address in addresses {
        data.extend_from_slice(address);
    }
    data
}

/// A legacy transaction signed by `authority` (also the payer) calling the lookup table program
/// on `table` with each of `instructions` (accounts: table, authority, payer, system program);
/// `tag` makes its signature unique.
pub fn admin_transaction(
    authority: &Key,
    table: &Key,
    instructions: &[Vec<u8>],
    tag: u8,
) -> Vec<u8> {
    let mut out = Vec::new();
    push_compact_u16(&mut out, 1);
    out.extend_from_slice(&[tag; 64]);
    // One signer (the authority, writable), two read-only unsigned (the programs).
    out.extend_from_slice(&[1, 0, 2]);
    push_compact_u16(&mut out, 4);
    for key in [
        authority,
        table,
        &SYSTEM_PROGRAM,
        &ADDRESS_LOOKUP_TABLE_PROGRAM_ID,
    ] {
        out.extend_from_slice(key);
    }
    out.extend_from_slice(&[tag; 32]);
    push_compact_u16(&mut out, instructions.len());
    for data in instructions {
        out.push(3);
        push_compact_u16(&mut out, 4);
        out.extend_from_slice(&[1, 0, 0, 2]);
        push_compact_u16(&mut out, data.len());
        out.extend_from_slice(data);
    }
    assert!(out.len() <= 1_232, "a transaction fits a packet");
    out
}

/// `fixture` (a v0 transaction) with each lookup's table replaced through `tables` (those not
/// in it kept), signature starting with `tag`.
pub fn pointed_at(fixture: &[u8], tables: &HashMap<Key, Key>, tag: u8) -> Vec<u8> {
    let parsed = parse_transaction_exact(fixture).expect("a fixture transaction");
    let lookups: Vec<_> = parsed.address_table_lookups().collect();
    // The message ends: [count][table][n][writable…][m][read-only…]… (all counts below 128).
    let section: usize = lookups
        .iter()
        .map(|lookup| 34 + lookup.writable_indices.len() + lookup.readonly_indices.len())
        .sum();
    let mut out = fixture.to_vec();
    let mut at = fixture.len() - section;
    for lookup in &lookups {
        assert_eq!(&fixture[at..at + 32], lookup.table);
        if let Some(table) = tables.get(lookup.table) {
            out[at..at + 32].copy_from_slice(table);
        }
        at += 34 + lookup.writable_indices.len() + lookup.readonly_indices.len();
    }
    out[1] = tag;
    out
}
