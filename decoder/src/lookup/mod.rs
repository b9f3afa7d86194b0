//! Address lookup tables: naming every account of a v0 transaction before replay.
//!
//! ```text
//! cluster account data ─ parse_lookup_table_account ─► LookupTableAccount ─┐ apply_snapshot
//!                                                                          ▼ (confirmed)
//! TransactionView ─ resolve_lookups(slot) ◄──── LookupTableCache (bounded, LRU, provenance)
//!        │               └► LoadedAddresses: writable ++ readonly, status   ▲ apply_stream
//!        └─ learn_from_transaction(slot) ─ lookup_program_calls ─────────────┘ (provisional)
//! ```
//!
//! * [`account`]: the program's account layout; [`instruction`]: its instructions; [`derive`](mod@derive):
//!   the address a create instruction must name.
//! * [`rules`]: the runtime's rules for which addresses a table lends at a slot.
//! * [`cache`]: the bounded cache, fed by cluster snapshots and by the stream; [`persist`]: its
//!   entries as plain bytes.
//! * [`resolve`]: a transaction's loaded addresses in the runtime's order, into a reused buffer.
//! * [`learn`]: the program's instructions in a decoded transaction, applied to the cache.
//!
//! Pure: no I/O, no clocks. Fetching tables from a cluster and persisting the cache are the
//! appliance's; the decisions are in `docs/decisions.md` (address lookup tables).

pub mod account;
pub mod cache;
pub mod derive;
mod entry;
pub mod instruction;
pub mod learn;
pub mod persist;
pub mod resolve;
pub mod rules;

pub use account::{
    AccountError, Address, LookupTableAccount, LookupTableMeta, encode_lookup_table_account,
    parse_lookup_table_account,
};
pub use cache::{
    CacheChange, CacheConfig, CacheConfigError, CacheCounters, LookupTableCache, StreamOutcome,
};
pub use derive::derive_table_address;
pub use entry::{ENTRY_OVERHEAD_BYTES, SnapshotOutcome, StreamRejection, StreamUpdate, TableView};
pub use instruction::{InstructionError, LookupInstruction, parse_lookup_instruction};
pub use learn::{LearnSummary, LookupProgramCall, learn_from_transaction, lookup_program_calls};
pub use persist::ImportError;
pub use resolve::{
    AccountKey, LoadedAddresses, LookupResolution, LookupStatus, Provenance,
    UNRESOLVED_PLACEHOLDER, UnresolvedReason, resolve_lookups,
};
pub use rules::{SLOT_HASHES_MAX_ENTRIES, TableStatus, active_addresses_len, table_status};

/// The address lookup table program, `AddressLookupTab1e1111111111111111111111111`.
pub const ADDRESS_LOOKUP_TABLE_PROGRAM_ID: Address = [
    0x02, 0x77, 0xa6, 0xaf, 0x97, 0x33, 0x9b, 0x7a, 0xc8, 0x8d, 0x18, 0x92, 0xc9, 0x04, 0x46, 0xf5,
    0x00, 0x02, 0x30, 0x92, 0x66, 0xf6, 0x2e, 0x53, 0xc1, 0x18, 0x24, 0x49, 0x82, 0x00, 0x00, 0x00,
];

/// Size of a table account's metadata area; addresses start here (`LOOKUP_TABLE_META_SIZE`).
pub const LOOKUP_TABLE_META_LEN_BYTES: usize = 56;

/// Most addresses a table holds (`LOOKUP_TABLE_MAX_ADDRESSES`); lookup indexes are `u8`.
pub const LOOKUP_TABLE_MAX_ADDRESSES: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_id_is_the_published_address() {
        assert_eq!(
            bs58::encode(ADDRESS_LOOKUP_TABLE_PROGRAM_ID).into_string(),
            crate::program_ids::ADDRESS_LOOKUP_TABLE
        );
    }
}
