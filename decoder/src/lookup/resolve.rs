//! Resolution of a v0 transaction's address-table lookups against the cache, in the runtime's
//! order, into a caller-owned buffer.
//!
//! The runtime loads every lookup's writable indexes, lookup after lookup, then every lookup's
//! read-only indexes the same way (`LoadedAddresses: FromIterator`); instruction account indexes
//! then count static keys, then loaded writable, then loaded read-only addresses. A lookup with
//! any index at or past the table's active length fails as a whole (`lookup` yields `None` for
//! one index and the runtime rejects the lookup). An unresolved lookup keeps its positions here,
//! so the indexes of the other lookups still line up: its slots hold an all-zero placeholder and
//! are marked unresolved.

use thiserror::Error;

use crate::transaction::{LookupView, TransactionView};

use super::LOOKUP_TABLE_MAX_ADDRESSES;
use super::account::Address;
use super::cache::LookupTableCache;
use super::rules::{Unusable, active_addresses_len};

/// What an unresolved position holds; never a real loaded address for our purposes (it is the
/// System Program's id), so always check [`LoadedAddresses::account_key`] or the masks.
pub const UNRESOLVED_PLACEHOLDER: Address = [0; 32];

/// How a transaction's lookups resolved; [`label`](Self::label) is the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupStatus {
    /// Legacy, or v0 without lookups.
    NoLookups,
    /// Every lookup resolved through cluster-confirmed contents.
    Resolved,
    /// Every lookup resolved, at least one through contents learned from the stream only.
    ProvisionallyResolved,
    /// Some lookups resolved, some not.
    PartlyResolved,
    /// No lookup resolved.
    Unresolved,
}

impl LookupStatus {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::NoLookups => "no_lookups",
            Self::Resolved => "resolved",
            Self::ProvisionallyResolved => "provisionally_resolved",
            Self::PartlyResolved => "partly_resolved",
            Self::Unresolved => "unresolved",
        }
    }
}

/// Why one lookup did not resolve; [`label`](Self::label) is the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum UnresolvedReason {
    #[error("the table is not cached")]
    UnknownTable,
    #[error("index {index} is not below the table's {active_len} active addresses")]
    IndexOutOfRange { index: u8, active_len: u16 },
    #[error("the table is deactivated")]
    Deactivated,
    #[error("the table's metadata claims more addresses than it holds")]
    InvalidTableData,
}

impl UnresolvedReason {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::UnknownTable => "unknown_table",
            Self::IndexOutOfRange { .. } => "index_out_of_range",
            Self::Deactivated => "deactivated",
            Self::InvalidTableData => "invalid_table_data",
        }
    }
}

/// Where a resolved lookup's addresses came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    Confirmed,
    /// At least one index reached past the cluster-confirmed prefix.
    Provisional,
}

/// One lookup's result, in transaction order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupResolution {
    pub table: Address,
    pub outcome: Result<Provenance, UnresolvedReason>,
}

/// What an instruction account index names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountKey<'a> {
    Static(&'a Address),
    LoadedWritable(&'a Address),
    LoadedReadonly(&'a Address),
    /// A loaded position whose lookup did not resolve.
    Unresolved,
    /// Past every key of the transaction.
    OutOfRange,
}

impl<'a> AccountKey<'a> {
    /// The address, if known.
    pub const fn address(&self) -> Option<&'a Address> {
        match self {
            Self::Static(address)
            | Self::LoadedWritable(address)
            | Self::LoadedReadonly(address) => Some(address),
            Self::Unresolved | Self::OutOfRange => None,
        }
    }
}

/// One bit per loaded position (at most 256).
#[derive(Debug, Clone, Copy, Default)]
struct PositionMask([u64; 4]);

impl PositionMask {
    fn set_range(&mut self, start: usize, end: usize) {
        for position in start..end.min(LOOKUP_TABLE_MAX_ADDRESSES) {
            self.0[position / 64] |= 1 << (position % 64);
        }
    }

    fn get(&self, position: usize) -> bool {
        self.0
            .get(position / 64)
            .is_some_and(|word| word & (1 << (position % 64)) != 0)
    }
}

/// The loaded addresses of one transaction. Build once, reuse for every transaction: its buffers
/// are reserved for the largest possible transaction, so resolving never allocates.
#[derive(Debug, Clone)]
pub struct LoadedAddresses {
    writable: Vec<Address>,
    readonly: Vec<Address>,
    writable_resolved: PositionMask,
    readonly_resolved: PositionMask,
    lookups: Vec<LookupResolution>,
    status: LookupStatus,
}

impl Default for LoadedAddresses {
    fn default() -> Self {
        Self::new()
    }
}

impl LoadedAddresses {
    pub fn new() -> Self {
        Self {
            writable: Vec::with_capacity(LOOKUP_TABLE_MAX_ADDRESSES),
            readonly: Vec::with_capacity(LOOKUP_TABLE_MAX_ADDRESSES),
            writable_resolved: PositionMask::default(),
            readonly_resolved: PositionMask::default(),
            lookups: Vec::with_capacity(LOOKUP_TABLE_MAX_ADDRESSES),
            status: LookupStatus::NoLookups,
        }
    }

    fn clear(&mut self) {
        self.writable.clear();
        self.readonly.clear();
        self.writable_resolved = PositionMask::default();
        self.readonly_resolved = PositionMask::default();
        self.lookups.clear();
        self.status = LookupStatus::NoLookups;
    }

    pub fn status(&self) -> LookupStatus {
        self.status
    }

    /// Loaded writable addresses in the runtime's order; unresolved positions hold
    /// [`UNRESOLVED_PLACEHOLDER`].
    pub fn writable(&self) -> &[Address] {
        &self.writable
    }

    /// Loaded read-only addresses in the runtime's order; unresolved positions hold
    /// [`UNRESOLVED_PLACEHOLDER`].
    pub fn readonly(&self) -> &[Address] {
        &self.readonly
    }

    pub fn is_writable_resolved(&self, position: usize) -> bool {
        self.writable_resolved.get(position)
    }

    pub fn is_readonly_resolved(&self, position: usize) -> bool {
        self.readonly_resolved.get(position)
    }

    /// Every lookup's result, in transaction order.
    pub fn lookups(&self) -> &[LookupResolution] {
        &self.lookups
    }

    /// The unresolved lookups: position in the transaction's lookups, table, reason.
    pub fn unresolved(&self) -> impl Iterator<Item = (usize, &Address, UnresolvedReason)> + '_ {
        self.lookups
            .iter()
            .enumerate()
            .filter_map(|(position, lookup)| match lookup.outcome {
                Ok(_) => None,
                Err(reason) => Some((position, &lookup.table, reason)),
            })
    }

    /// What instruction account index `index` names, given the transaction's static keys.
    pub fn account_key<'a>(&'a self, static_keys: &'a [Address], index: u8) -> AccountKey<'a> {
        let mut position = usize::from(index);
        if let Some(key) = static_keys.get(position) {
            return AccountKey::Static(key);
        }
        position -= static_keys.len();
        if let Some(key) = self.writable.get(position) {
            return match self.writable_resolved.get(position) {
                true => AccountKey::LoadedWritable(key),
                false => AccountKey::Unresolved,
            };
        }
        position -= self.writable.len();
        match self.readonly.get(position) {
            Some(key) if self.readonly_resolved.get(position) => AccountKey::LoadedReadonly(key),
            Some(_) => AccountKey::Unresolved,
            None => AccountKey::OutOfRange,
        }
    }
}

/// Resolves `transaction`'s lookups as the runtime would in the bank of `slot`, into `out`
/// (cleared first). Counts a cache hit or miss per lookup.
pub fn resolve_lookups(
    transaction: &TransactionView<'_>,
    slot: u64,
    cache: &mut LookupTableCache,
    out: &mut LoadedAddresses,
) -> LookupStatus {
    out.clear();
    let mut resolved = 0;
    let mut provisional = false;
    for lookup in transaction.address_table_lookups() {
        let outcome = resolve_one(&lookup, slot, cache, out);
        if let Ok(provenance) = outcome {
            resolved += 1;
            provisional |= provenance == Provenance::Provisional;
        }
        out.lookups.push(LookupResolution {
            table: *lookup.table,
            outcome,
        });
    }
    out.status = match (out.lookups.len(), resolved) {
        (0, _) => LookupStatus::NoLookups,
        (_, 0) => LookupStatus::Unresolved,
        (count, resolved) if resolved < count => LookupStatus::PartlyResolved,
        _ if provisional => LookupStatus::ProvisionallyResolved,
        _ => LookupStatus::Resolved,
    };
    out.status
}

/// Appends one lookup's addresses (or placeholders) and marks them resolved on success.
fn resolve_one(
    lookup: &LookupView<'_>,
    slot: u64,
    cache: &mut LookupTableCache,
    out: &mut LoadedAddresses,
) -> Result<Provenance, UnresolvedReason> {
    let writable_start = out.writable.len();
    let readonly_start = out.readonly.len();
    let result = load(lookup, slot, cache, out);
    let writable_end = writable_start + lookup.writable_indices.len();
    let readonly_end = readonly_start + lookup.readonly_indices.len();
    match result {
        Ok(_) => {
            out.writable_resolved
                .set_range(writable_start, writable_end);
            out.readonly_resolved
                .set_range(readonly_start, readonly_end);
        }
        Err(_) => {
            out.writable.truncate(writable_start);
            out.writable.resize(writable_end, UNRESOLVED_PLACEHOLDER);
            out.readonly.truncate(readonly_start);
            out.readonly.resize(readonly_end, UNRESOLVED_PLACEHOLDER);
        }
    }
    result
}

fn load(
    lookup: &LookupView<'_>,
    slot: u64,
    cache: &mut LookupTableCache,
    out: &mut LoadedAddresses,
) -> Result<Provenance, UnresolvedReason> {
    let table = cache
        .lookup(lookup.table)
        .ok_or(UnresolvedReason::UnknownTable)?;
    let active_len =
        active_addresses_len(table.meta, table.addresses.len(), slot).map_err(|unusable| {
            match unusable {
                Unusable::Deactivated => UnresolvedReason::Deactivated,
                Unusable::InvalidTableData => UnresolvedReason::InvalidTableData,
            }
        })?;
    let active = table.addresses.get(..active_len).unwrap_or_default();
    let writable_end = copy_indexed(active, lookup.writable_indices, &mut out.writable)?;
    let readonly_end = copy_indexed(active, lookup.readonly_indices, &mut out.readonly)?;
    if writable_end.max(readonly_end) > table.confirmed_len {
        Ok(Provenance::Provisional)
    } else {
        Ok(Provenance::Confirmed)
    }
}

/// Appends `active[index]` for every index; returns one past the largest index.
fn copy_indexed(
    active: &[Address],
    indices: &[u8],
    out: &mut Vec<Address>,
) -> Result<usize, UnresolvedReason> {
    let mut end = 0;
    for &index in indices {
        let Some(address) = active.get(usize::from(index)) else {
            return Err(UnresolvedReason::IndexOutOfRange {
                index,
                active_len: active.len() as u16,
            });
        };
        out.push(*address);
        end = end.max(usize::from(index) + 1);
    }
    Ok(end)
}
