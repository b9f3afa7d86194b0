//! A worker's hook into the lookup-table cache (issue 20, docs/lookup-tables.md): one call per
//! transaction, which takes the shared cache's lock only when the transaction has lookups to
//! resolve for publication or calls the lookup-table program (to learn from it). Never waits on
//! I/O: an unknown table is published unresolved and requested from the fetcher.

use std::sync::Arc;

use decoder::lookup::{Address, LoadedAddresses, LookupStatus, lookup_program_calls};
use decoder::transaction::TransactionView;

use crate::cluster::lookup_tables::LookupTables;

/// One worker's resolution buffers (reserved once for the largest transaction).
pub struct WorkerLookups {
    tables: Arc<LookupTables>,
    loaded: LoadedAddresses,
    scratch: Vec<Address>,
}

impl WorkerLookups {
    pub fn new(tables: Arc<LookupTables>) -> Self {
        Self {
            tables,
            loaded: LoadedAddresses::new(),
            scratch: Vec::with_capacity(2 * decoder::lookup::LOOKUP_TABLE_MAX_ADDRESSES),
        }
    }

    /// A worker of its own cache (default bounds, no cluster): benches and tests.
    pub fn standalone() -> Self {
        let bounds = decoder::lookup::CacheConfig {
            max_entries: 100_000,
            max_bytes: 512 << 20,
        };
        let tables = match LookupTables::new(bounds, None) {
            Ok((tables, _)) => tables,
            Err(error) => unreachable!("default bounds refused: {error}"),
        };
        Self::new(Arc::new(tables))
    }

    /// Resolves `transaction` of `slot` when it is `published` and has lookups (the result, for
    /// `stream::encode::encode_resolved`), and learns from its lookup-table instructions whether
    /// published or not (resolution first, as the runtime loads before it executes).
    pub fn process(
        &mut self,
        transaction: &TransactionView<'_>,
        slot: u64,
        published: bool,
    ) -> Option<&LoadedAddresses> {
        let resolve = published && transaction.uses_lookup_tables();
        let learn = lookup_program_calls(transaction).next().is_some();
        if !resolve && !learn {
            return None;
        }
        self.tables.process(
            transaction,
            slot,
            learn,
            &mut self.loaded,
            &mut self.scratch,
        );
        resolve.then_some(&self.loaded)
    }

    /// `transaction`'s loaded addresses for the deshred stream when every lookup resolved (else
    /// none, as agave leaves them empty when it cannot resolve); learns nothing.
    pub fn resolve_all(
        &mut self,
        transaction: &TransactionView<'_>,
        slot: u64,
    ) -> Option<&LoadedAddresses> {
        if !transaction.uses_lookup_tables() {
            return None;
        }
        let status = self.tables.resolve(transaction, slot, &mut self.loaded);
        matches!(
            status,
            LookupStatus::Resolved | LookupStatus::ProvisionallyResolved
        )
        .then_some(&self.loaded)
    }
}
