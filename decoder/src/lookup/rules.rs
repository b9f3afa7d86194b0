//! The runtime's rules for which addresses a lookup table lends to a transaction of a given slot.
//!
//! From the SDK's `LookupTableMeta::status` and `AddressLookupTable::get_active_addresses_len`,
//! which the runtime applies when it loads a v0 transaction's addresses in the bank of slot
//! `slot`:
//!
//! 1. Extension: addresses appended in slot `last_extended_slot` are not usable in that slot.
//!    At `slot > last_extended_slot` the whole table is usable; otherwise only the first
//!    `last_extended_slot_start_index` addresses (the length before the first extension of that
//!    slot; later extensions in the same slot keep it).
//! 2. Deactivation: a table deactivated in slot `d` stays usable while `d` is among the bank's
//!    `SlotHashes` (the 512 most recent ancestors) or `d == slot`. Before replay we do not know
//!    which slots the fork skipped, so we apply the runtime's own conservative estimate
//!    (`estimate_last_valid_slot`): usable while `slot <= d + 512`. It is exact when no slot
//!    between `d` and `slot` was skipped; with skipped slots the runtime keeps the table a little
//!    longer, and we report it deactivated early.
//! 3. A table whose active length exceeds its address count is invalid account data.
//!
//! Our cache holds a table's newest known state, which may be newer than a transaction being
//! resolved. Tables are append-only while active, so a lookup valid at its slot resolves to the
//! same addresses against a newer state; a deactivation learned for a slot after the
//! transaction's (`d > slot`) did not exist at the transaction's slot, so the table is active.

use super::account::LookupTableMeta;

/// Entries of the `SlotHashes` sysvar (`solana_slot_hashes::MAX_ENTRIES`): the deactivation
/// cool-down.
pub const SLOT_HASHES_MAX_ENTRIES: u64 = 512;

/// Whether a table lends addresses at a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableStatus {
    Active,
    /// Deactivated but still usable for `remaining_slots` more slots (counting this one).
    Deactivating {
        remaining_slots: u64,
    },
    /// Cooled down: unusable, and the program lets its authority close it.
    Deactivated,
}

/// Why a table lends no address at a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unusable {
    /// Rule 2: cooled down.
    Deactivated,
    /// Rule 3: the metadata claims more active addresses than the table holds.
    InvalidTableData,
}

/// Rule 2 at `slot`.
pub const fn table_status(meta: &LookupTableMeta, slot: u64) -> TableStatus {
    let deactivation_slot = meta.deactivation_slot;
    if deactivation_slot == u64::MAX || slot < deactivation_slot {
        return TableStatus::Active;
    }
    // slot - deactivation_slot - 1 ancestors lie between them when nothing was skipped: the
    // deactivation slot's position in SlotHashes.
    let elapsed = slot - deactivation_slot;
    if elapsed <= SLOT_HASHES_MAX_ENTRIES {
        TableStatus::Deactivating {
            remaining_slots: SLOT_HASHES_MAX_ENTRIES + 1 - elapsed,
        }
    } else {
        TableStatus::Deactivated
    }
}

/// Rules 1–3: how many of the table's first addresses a transaction of `slot` may load.
pub const fn active_addresses_len(
    meta: &LookupTableMeta,
    address_count: usize,
    slot: u64,
) -> Result<usize, Unusable> {
    if matches!(table_status(meta, slot), TableStatus::Deactivated) {
        return Err(Unusable::Deactivated);
    }
    let active = if slot > meta.last_extended_slot {
        address_count
    } else {
        meta.last_extended_slot_start_index as usize
    };
    if active > address_count {
        return Err(Unusable::InvalidTableData);
    }
    Ok(active)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(deactivation_slot: u64, last_extended_slot: u64, start: u8) -> LookupTableMeta {
        LookupTableMeta {
            deactivation_slot,
            last_extended_slot,
            last_extended_slot_start_index: start,
            authority: None,
        }
    }

    #[test]
    fn extension_is_usable_from_the_next_slot() {
        let extended = meta(u64::MAX, 100, 10);
        assert_eq!(active_addresses_len(&extended, 30, 100), Ok(10));
        assert_eq!(active_addresses_len(&extended, 30, 99), Ok(10));
        assert_eq!(active_addresses_len(&extended, 30, 101), Ok(30));
        assert_eq!(
            active_addresses_len(&meta(u64::MAX, 100, 40), 30, 100),
            Err(Unusable::InvalidTableData)
        );
    }

    #[test]
    fn deactivation_cools_down_after_512_slots() {
        let deactivated = meta(1_000, 0, 0);
        assert_eq!(table_status(&deactivated, 999), TableStatus::Active);
        assert_eq!(
            table_status(&deactivated, 1_000),
            TableStatus::Deactivating {
                remaining_slots: 513
            }
        );
        assert_eq!(
            table_status(&deactivated, 1_512),
            TableStatus::Deactivating { remaining_slots: 1 }
        );
        assert_eq!(table_status(&deactivated, 1_513), TableStatus::Deactivated);
        assert_eq!(active_addresses_len(&deactivated, 5, 1_512), Ok(5));
        assert_eq!(
            active_addresses_len(&deactivated, 5, 1_513),
            Err(Unusable::Deactivated)
        );
    }
}
