//! The lookup tables at start: the cache with the configured bounds, warmed from the store, the
//! preload list queued, and the service thread (fetcher with the cluster RPC, persister).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use decoder::lookup::{Address, CacheConfig};
use front::jsonrpc::JsonRpcClient;
use tracing::{info, warn};

use super::LookupTables;
use super::service::{Fetching, Service};
use super::store::TableStore;
use crate::config::Config;

/// What `run` holds: the shared cache and the service thread.
pub struct LookupSetup {
    pub tables: Arc<LookupTables>,
    pub thread: JoinHandle<()>,
}

/// Builds the cache, loads the store and the preload list, and starts the thread.
pub fn start(config: &Config, shutdown: &Arc<AtomicBool>) -> anyhow::Result<LookupSetup> {
    let section = &config.lookup_tables;
    let bounds = CacheConfig {
        max_entries: section.max_entries,
        max_bytes: section.max_mb << 20,
    };
    let rpc = config.cluster.rpc_url(&config.archive);
    let (tables, requests) = LookupTables::new(bounds, rpc.map(|_| section.fetch_queue))
        .context("lookup_tables.max_entries / max_mb")?;
    let tables = Arc::new(tables);
    // A store is kept when there is something confirmed to keep (a cluster RPC), when asked for
    // by name, or when one exists: a run without either creates no file in the data directory.
    let path = section.store_path(&config.data);
    let wanted = rpc.is_some() || section.db.is_some() || path.exists();
    let store = (section.persist && wanted)
        .then(|| open_store(&tables, &path))
        .flatten();
    let fetching = match (rpc, requests) {
        (Some(url), Some(requests)) => {
            let trust =
                front::tls_client::UpstreamTrust::load(config.archive.upstream_ca.as_deref())?;
            let timeout = Duration::from_secs(config.cluster.timeout_secs);
            let limit = config.cluster.max_response_mb << 20;
            Some(Fetching {
                client: JsonRpcClient::new(url, timeout, limit, &trust),
                requests,
                confirm_after: Duration::from_secs(section.confirm_after_secs),
            })
        }
        _ => None,
    };
    if let Some(path) = &section.preload {
        let preload = read_preload(path)?;
        if fetching.is_none() {
            warn!(
                tables = preload.len(),
                "lookup_tables.preload without a cluster RPC: ignored"
            );
        }
        info!(tables = preload.len(), "lookup tables to preload");
        tables.request_all(&preload);
    }
    info!(
        cached = tables.with_cache(|cache| cache.len()),
        fetching = fetching.is_some(),
        "lookup tables"
    );
    let service = Service {
        tables: Arc::clone(&tables),
        fetching,
        store,
    };
    let thread = service.spawn(Arc::clone(shutdown))?;
    Ok(LookupSetup { tables, thread })
}

/// Opens the store and loads it into the cache; a store that cannot be opened is logged and
/// the appliance runs without persistence.
fn open_store(tables: &LookupTables, path: &Path) -> Option<TableStore> {
    let store = match TableStore::open(path) {
        Ok(store) => store,
        Err(error) => {
            warn!(%error, "lookup-table store unusable; the cache is not persisted");
            return None;
        }
    };
    match tables.with_cache(|cache| store.load_into(cache)) {
        Ok((loaded, refused)) => {
            info!(path = %path.display(), loaded, refused, "persisted lookup tables loaded");
        }
        Err(error) => warn!(%error, "persisted lookup tables unreadable"),
    }
    Some(store)
}

/// The preload list: base58 addresses, one per line, blank lines and `#` comments skipped.
pub fn read_preload(path: &Path) -> anyhow::Result<Vec<Address>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("lookup_tables.preload: reading {}", path.display()))?;
    let mut tables = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        tables.push(parse_address(line).with_context(|| {
            format!(
                "lookup_tables.preload: {} line {}",
                path.display(),
                number + 1
            )
        })?);
    }
    Ok(tables)
}

/// A base58 address of 32 bytes.
pub fn parse_address(text: &str) -> anyhow::Result<Address> {
    let bytes = bs58::decode(text)
        .into_vec()
        .with_context(|| format!("{text:?} is not base58"))?;
    Address::try_from(bytes.as_slice())
        .map_err(|_| anyhow::anyhow!("{text:?} is {} bytes, not 32", bytes.len()))
}
