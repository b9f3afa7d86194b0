//! One cached table: its contents, where they came from, and how snapshots and stream-learned
//! instructions change them.
//!
//! Provenance is tracked per address prefix: `addresses[..confirmed_len]` were in a cluster
//! snapshot, the rest (and any metadata change since) were learned from the stream before replay
//! and stay provisional until a snapshot taken at or after the newest such update agrees.
//! Stream-learned instructions follow the program's own preconditions (authority, frozen,
//! deactivated, capacity): an instruction the program would refuse changes nothing here either.

use thiserror::Error;

use super::LOOKUP_TABLE_MAX_ADDRESSES;
use super::account::{Address, LookupTableAccount, LookupTableMeta};
use super::instruction::LookupInstruction;
use super::rules::{TableStatus, table_status};

/// Bytes charged per entry besides its addresses: its slab node (state, key, two LRU links) and
/// its index slot (key, node number and control byte, at the hash table's 7/8 load factor).
pub const ENTRY_OVERHEAD_BYTES: usize = size_of::<TableState>()
    + size_of::<Address>()
    + 2 * size_of::<u32>()
    + (size_of::<Address>() + size_of::<u32>() + 1).div_ceil(7) * 8;

/// A read-only view of a cached table.
#[derive(Debug, Clone, Copy)]
pub struct TableView<'a> {
    pub meta: &'a LookupTableMeta,
    pub addresses: &'a [Address],
    /// Addresses below this index were confirmed by a cluster snapshot.
    pub confirmed_len: usize,
    /// Slot of the newest stream-learned change not yet confirmed, if any.
    pub provisional_since: Option<u64>,
    /// Context slot of the last cluster snapshot, if any.
    pub snapshot_slot: Option<u64>,
}

/// What a stream-learned instruction needs besides the instruction: its accounts 0 and 1.
#[derive(Debug, Clone, Copy)]
pub struct StreamUpdate<'a> {
    pub instruction: LookupInstruction<'a>,
    /// Account 1 of the instruction.
    pub authority: &'a Address,
    /// Whether account 1 signed the transaction.
    pub authority_signed: bool,
}

/// Why a stream-learned instruction changed nothing: the program would refuse it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum StreamRejection {
    #[error("the authority did not sign")]
    AuthorityNotSigner,
    #[error("the table is frozen")]
    Frozen,
    #[error("the signer is not the table's authority")]
    WrongAuthority,
    #[error("the table is deactivated")]
    Deactivated,
    #[error("freeze of an empty table")]
    EmptyTable,
    #[error("extend with no address")]
    EmptyExtend,
    #[error("the extension would pass 256 addresses")]
    TableFull,
    #[error("close of a table that is not deactivated")]
    NotDeactivated,
    #[error("close of a table still cooling down")]
    CoolingDown,
    #[error("the created table is not at the address derived from its authority and slot")]
    NotDerivedAddress,
    #[error("the instruction names fewer accounts than it needs")]
    MissingAccount,
}

impl StreamRejection {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::AuthorityNotSigner => "authority_not_signer",
            Self::Frozen => "frozen",
            Self::WrongAuthority => "wrong_authority",
            Self::Deactivated => "deactivated",
            Self::EmptyTable => "empty_table",
            Self::EmptyExtend => "empty_extend",
            Self::TableFull => "table_full",
            Self::NotDeactivated => "not_deactivated",
            Self::CoolingDown => "cooling_down",
            Self::NotDerivedAddress => "not_derived_address",
            Self::MissingAccount => "missing_account",
        }
    }
}

/// How a cluster snapshot met the cached entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotOutcome {
    /// The table was not cached; it is now, confirmed.
    Inserted,
    /// Confirmed contents, unchanged.
    Unchanged,
    /// Confirmed contents that the cluster changed (an update the stream did not show).
    Refreshed,
    /// Provisional contents, now confirmed.
    Confirmed,
    /// Provisional contents that the cluster disagrees with; replaced by the snapshot.
    Contradicted,
    /// The snapshot predates the newest stream-learned change and agrees with what came before
    /// it; the later addresses stay provisional (fetch again later).
    StillProvisional,
    /// More than 256 addresses: not a table; handled like
    /// [`apply_absent`](crate::lookup::LookupTableCache::apply_absent).
    Invalid,
}

/// What a stream-learned instruction did to a cached entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamEffect {
    Changed,
    /// Create of a table that exists: the program leaves it as it is.
    Unchanged,
    /// Close: the caller removes the entry.
    Closed,
}

/// A cached table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TableState {
    pub meta: LookupTableMeta,
    pub addresses: Vec<Address>,
    pub confirmed_len: u16,
    pub provisional_since: Option<u64>,
    pub snapshot_slot: Option<u64>,
}

impl TableState {
    pub fn from_snapshot(account: &LookupTableAccount<'_>, context_slot: u64) -> Self {
        Self {
            meta: account.meta,
            addresses: account.addresses.to_vec(),
            confirmed_len: account.addresses.len() as u16,
            provisional_since: None,
            snapshot_slot: Some(context_slot),
        }
    }

    /// A table created by a stream-learned create instruction: empty, provisional.
    pub fn created(authority: &Address, slot: u64) -> Self {
        Self {
            meta: LookupTableMeta::new(Some(*authority)),
            addresses: Vec::new(),
            confirmed_len: 0,
            provisional_since: Some(slot),
            snapshot_slot: None,
        }
    }

    pub fn view(&self) -> TableView<'_> {
        TableView {
            meta: &self.meta,
            addresses: &self.addresses,
            confirmed_len: usize::from(self.confirmed_len),
            provisional_since: self.provisional_since,
            snapshot_slot: self.snapshot_slot,
        }
    }

    /// Bytes charged against the cache's byte bound.
    pub fn charged_bytes(&self) -> usize {
        ENTRY_OVERHEAD_BYTES + self.addresses.capacity() * size_of::<Address>()
    }

    pub fn merge_snapshot(
        &mut self,
        account: &LookupTableAccount<'_>,
        context_slot: u64,
    ) -> SnapshotOutcome {
        let same = self.meta == account.meta && self.addresses == account.addresses;
        let outcome = match self.provisional_since {
            None if same => SnapshotOutcome::Unchanged,
            None => SnapshotOutcome::Refreshed,
            Some(since) if context_slot >= since => {
                if same {
                    SnapshotOutcome::Confirmed
                } else {
                    SnapshotOutcome::Contradicted
                }
            }
            Some(_) if self.addresses.starts_with(account.addresses) => {
                let confirmed = account.addresses.len() as u16;
                self.confirmed_len = self.confirmed_len.max(confirmed);
                self.snapshot_slot = Some(context_slot);
                return SnapshotOutcome::StillProvisional;
            }
            Some(_) => SnapshotOutcome::Contradicted,
        };
        self.replace(account, context_slot);
        outcome
    }

    /// Takes the snapshot's contents, reusing the address buffer.
    fn replace(&mut self, account: &LookupTableAccount<'_>, context_slot: u64) {
        self.meta = account.meta;
        self.addresses.clear();
        self.addresses.extend_from_slice(account.addresses);
        self.confirmed_len = account.addresses.len() as u16;
        self.provisional_since = None;
        self.snapshot_slot = Some(context_slot);
    }

    /// Applies a stream-learned instruction of `slot` to this existing table.
    pub fn apply_stream(
        &mut self,
        update: &StreamUpdate<'_>,
        slot: u64,
    ) -> Result<StreamEffect, StreamRejection> {
        if let LookupInstruction::Create { .. } = update.instruction {
            return Ok(StreamEffect::Unchanged);
        }
        self.check_authority(update)?;
        match update.instruction {
            LookupInstruction::Create { .. } => return Ok(StreamEffect::Unchanged),
            LookupInstruction::Freeze => self.freeze()?,
            LookupInstruction::Extend { new_addresses } => self.extend(new_addresses, slot)?,
            LookupInstruction::Deactivate => self.deactivate(slot)?,
            LookupInstruction::Close => return self.close(slot),
        }
        self.provisional_since = Some(self.provisional_since.map_or(slot, |s| s.max(slot)));
        Ok(StreamEffect::Changed)
    }

    /// The program's checks, in its order: signer, frozen, authority.
    fn check_authority(&self, update: &StreamUpdate<'_>) -> Result<(), StreamRejection> {
        if !update.authority_signed {
            return Err(StreamRejection::AuthorityNotSigner);
        }
        match &self.meta.authority {
            None => Err(StreamRejection::Frozen),
            Some(authority) if authority != update.authority => {
                Err(StreamRejection::WrongAuthority)
            }
            Some(_) => Ok(()),
        }
    }

    fn freeze(&mut self) -> Result<(), StreamRejection> {
        if self.meta.is_deactivated() {
            return Err(StreamRejection::Deactivated);
        }
        if self.addresses.is_empty() {
            return Err(StreamRejection::EmptyTable);
        }
        self.meta.authority = None;
        Ok(())
    }

    /// The program's extend: the start index moves only on the first extension of a slot.
    fn extend(&mut self, new_addresses: &[Address], slot: u64) -> Result<(), StreamRejection> {
        if self.meta.is_deactivated() {
            return Err(StreamRejection::Deactivated);
        }
        let len = self.addresses.len();
        if len >= LOOKUP_TABLE_MAX_ADDRESSES {
            return Err(StreamRejection::TableFull);
        }
        if new_addresses.is_empty() {
            return Err(StreamRejection::EmptyExtend);
        }
        if len + new_addresses.len() > LOOKUP_TABLE_MAX_ADDRESSES {
            return Err(StreamRejection::TableFull);
        }
        if slot != self.meta.last_extended_slot {
            self.meta.last_extended_slot = slot;
            // len < 256 was checked above.
            self.meta.last_extended_slot_start_index = len as u8;
        }
        self.addresses.reserve_exact(new_addresses.len());
        self.addresses.extend_from_slice(new_addresses);
        Ok(())
    }

    fn deactivate(&mut self, slot: u64) -> Result<(), StreamRejection> {
        if self.meta.is_deactivated() {
            return Err(StreamRejection::Deactivated);
        }
        self.meta.deactivation_slot = slot;
        Ok(())
    }

    fn close(&self, slot: u64) -> Result<StreamEffect, StreamRejection> {
        match table_status(&self.meta, slot) {
            TableStatus::Deactivated => Ok(StreamEffect::Closed),
            TableStatus::Active => Err(StreamRejection::NotDeactivated),
            TableStatus::Deactivating { .. } => Err(StreamRejection::CoolingDown),
        }
    }
}
