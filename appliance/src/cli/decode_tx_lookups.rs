//! `appliance decode-tx --lookup-tables FILE` / `--rpc URL`: the transactions' address-table
//! lookups resolved as the stream resolves them (`decoder::lookup::resolve_lookups` against a
//! cache), the tables read from a JSON file (`{"<table>": ["<address>", …]}`, base58) and/or
//! fetched from the cluster (`getMultipleAccounts`, base64, owner-checked) when first needed.
//!
//! A lone transaction has no slot: lookups resolve as in the bank after the newest table state
//! known (the fetch's context slot + 1). File tables are active and never extended.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use decoder::lookup::{
    Address, CacheConfig, LoadedAddresses, LookupTableCache, LookupTableMeta, UnresolvedReason,
    encode_lookup_table_account, parse_lookup_table_account, resolve_lookups,
};
use decoder::transaction::TransactionView;
use front::jsonrpc::JsonRpcClient;

use crate::cluster::lookup_tables::fetch::{MAX_BATCH, apply, fetch_tables};
use crate::cluster::lookup_tables::setup::parse_address;

/// The tables `decode-tx` resolves through.
pub struct TxLookups {
    cache: LookupTableCache,
    client: Option<JsonRpcClient>,
    loaded: LoadedAddresses,
    slot: u64,
}

impl TxLookups {
    /// From `--lookup-tables FILE` and `--rpc URL` (either may be absent).
    pub fn new(file: Option<&Path>, rpc: Option<&str>) -> anyhow::Result<Self> {
        let cache = LookupTableCache::new(CacheConfig {
            max_entries: 100_000,
            max_bytes: 1 << 30,
        })?;
        let client = match rpc {
            Some(url) => {
                let trust = front::tls_client::UpstreamTrust::load(None)?;
                Some(JsonRpcClient::new(
                    url,
                    Duration::from_secs(30),
                    64 << 20,
                    &trust,
                ))
            }
            None => None,
        };
        let mut lookups = Self {
            cache,
            client,
            loaded: LoadedAddresses::new(),
            slot: 1,
        };
        if let Some(path) = file {
            lookups.load_file(path)?;
        }
        Ok(lookups)
    }

    fn load_file(&mut self, path: &Path) -> anyhow::Result<()> {
        let context = || format!("--lookup-tables {}", path.display());
        let text = std::fs::read_to_string(path).with_context(context)?;
        let tables: BTreeMap<String, Vec<String>> =
            serde_json::from_str(&text).with_context(context)?;
        let mut data = Vec::new();
        for (table, addresses) in &tables {
            let key = parse_address(table).with_context(context)?;
            let addresses = addresses
                .iter()
                .map(|address| parse_address(address))
                .collect::<anyhow::Result<Vec<Address>>>()
                .with_context(|| format!("{}: table {table}", context()))?;
            encode_lookup_table_account(&LookupTableMeta::new(None), &addresses, &mut data);
            let account = parse_lookup_table_account(&data)
                .map_err(|error| anyhow::anyhow!("{}: table {table}: {error}", context()))?;
            self.cache.apply_snapshot(&key, &account, 0);
        }
        Ok(())
    }

    /// The transaction's loaded addresses (`None` without lookups); unknown tables are fetched
    /// first when an RPC is given (a failure goes to `errors` and leaves them unresolved).
    pub fn resolve(
        &mut self,
        transaction: &TransactionView<'_>,
        line: usize,
        errors: &mut impl Write,
    ) -> anyhow::Result<Option<&LoadedAddresses>> {
        if !transaction.uses_lookup_tables() {
            return Ok(None);
        }
        resolve_lookups(transaction, self.slot, &mut self.cache, &mut self.loaded);
        let unknown: Vec<Address> = self
            .loaded
            .unresolved()
            .filter(|(_, _, reason)| *reason == UnresolvedReason::UnknownTable)
            .map(|(_, table, _)| *table)
            .take(MAX_BATCH)
            .collect();
        if let (Some(client), false) = (&self.client, unknown.is_empty()) {
            match fetch_tables(client, &unknown) {
                Ok((slot, answers)) => {
                    self.slot = self.slot.max(slot.saturating_add(1));
                    for (table, answer) in unknown.iter().zip(&answers) {
                        apply(&mut self.cache, table, answer, slot);
                    }
                }
                Err(error) => writeln!(errors, "line {line}: lookup tables not fetched: {error}")?,
            }
            resolve_lookups(transaction, self.slot, &mut self.cache, &mut self.loaded);
        }
        Ok(Some(&self.loaded))
    }
}
