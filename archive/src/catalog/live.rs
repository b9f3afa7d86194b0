//! The store the frontends read ([`LiveStore`]): the current composition behind an `arc-swap`,
//! so that requests in flight finish on the store they started with.

use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::local::EpochArchive;
use crate::model::{Block, SignatureInfo, SignatureQuery, TransactionInBlock};
use crate::store::{ArchiveError, ArchiveStore, SignaturePage, SlotLookup};

/// The store the frontends read: the current composition, swapped atomically by the catalog.
pub struct LiveStore {
    pub(super) current: ArcSwap<EpochArchive>,
}

impl LiveStore {
    /// A store that always serves `archive` (no catalog).
    pub fn new(archive: EpochArchive) -> Self {
        LiveStore {
            current: ArcSwap::from_pointee(archive),
        }
    }

    /// The composition requests see now.
    pub fn current(&self) -> Arc<EpochArchive> {
        self.current.load_full()
    }
}

impl ArchiveStore for LiveStore {
    fn epochs(&self) -> Vec<u64> {
        self.current.load().epochs()
    }
    fn block(&self, slot: u64) -> Result<SlotLookup<Block>, ArchiveError> {
        self.current.load().block(slot)
    }
    fn block_time(&self, slot: u64) -> Result<SlotLookup<Option<i64>>, ArchiveError> {
        self.current.load().block_time(slot)
    }
    fn transaction(
        &self,
        signature: &[u8; 64],
    ) -> Result<Option<TransactionInBlock>, ArchiveError> {
        self.current.load().transaction(signature)
    }
    fn signatures_for_address(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<Vec<SignatureInfo>, ArchiveError> {
        // One snapshot for the whole query (before/until positions refer to it).
        self.current.load().signatures_for_address(address, query)
    }
    fn signatures_page(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<SignaturePage, ArchiveError> {
        self.current.load().signatures_page(address, query)
    }
    fn newest_slot(&self) -> Option<u64> {
        self.current.load().newest_slot()
    }
}
