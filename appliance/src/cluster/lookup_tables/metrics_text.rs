//! The `appliance_lookup_*` families of `/metrics`: the cache's size, bounds and counters, the
//! fetcher's requests and outcomes, and the transactions resolved per lookup status.

use std::sync::atomic::{AtomicU64, Ordering};

use decoder::lookup::{CacheConfig, CacheCounters};
use front::exposition::{Kind, by_label, counter, single};

use super::{LookupTables, REASONS, STATUSES};

impl LookupTables {
    /// The `appliance_lookup_*` families.
    pub fn render_metrics(&self, out: &mut String) {
        let (len, bytes, counters, statuses, unresolved, pending) = {
            let state = self.lock();
            (
                state.cache.len(),
                state.cache.bytes(),
                state.cache.counters(),
                state.statuses,
                state.unresolved,
                state.pending.len(),
            )
        };
        let config = self.with_cache(|cache| cache.config());
        render_cache(out, (len, bytes), &config, &counters);
        self.render_fetches(out, pending);
        render_resolution(out, &statuses, &unresolved);
    }

    /// The fetcher: requests, tables asked for, errors, outcomes, the queue.
    fn render_fetches(&self, out: &mut String, pending: usize) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let c = &self.counters;
        for (name, help, value) in [
            (
                "appliance_lookup_table_fetches_total",
                "getMultipleAccounts requests sent.",
                load(&c.requests),
            ),
            (
                "appliance_lookup_table_fetched_tables_total",
                "Tables asked for in getMultipleAccounts requests.",
                load(&c.tables_requested),
            ),
            (
                "appliance_lookup_table_fetch_errors_total",
                "getMultipleAccounts requests that failed.",
                load(&c.errors),
            ),
        ] {
            counter(out, name, help, value);
        }
        let outcomes = [
            ("found", load(&c.found)),
            ("absent", load(&c.absent)),
            ("wrong_owner", load(&c.wrong_owner)),
            ("invalid_data", load(&c.invalid_data)),
        ];
        by_label(
            out,
            "appliance_lookup_table_fetch_outcomes_total",
            "Tables answered by the cluster, per outcome.",
            "outcome",
            outcomes,
        );
        for (name, help, value) in [
            (
                "appliance_lookup_table_fetch_pending",
                "Tables requested and not answered yet.",
                pending,
            ),
            (
                "appliance_lookup_table_fetch_queue_capacity",
                "lookup_tables.fetch_queue.",
                self.queue_capacity,
            ),
        ] {
            single(out, name, Kind::Gauge, Some(help), value);
        }
        counter(
            out,
            "appliance_lookup_table_fetch_queue_full_total",
            "Fetch requests dropped: the queue was full.",
            load(&c.queue_full),
        );
        counter(
            out,
            "appliance_lookup_table_store_errors_total",
            "Failed writes of the persisted cache.",
            load(&c.store_errors),
        );
    }
}

/// The cache: its size and bounds, then its counters.
fn render_cache(
    out: &mut String,
    (len, bytes): (usize, usize),
    config: &CacheConfig,
    counters: &CacheCounters,
) {
    for (name, help, value) in [
        (
            "appliance_lookup_tables_cached",
            "Lookup tables in the cache.",
            len,
        ),
        (
            "appliance_lookup_tables_bytes",
            "Bytes charged by the cached lookup tables.",
            bytes,
        ),
        (
            "appliance_lookup_tables_bound_entries",
            "lookup_tables.max_entries.",
            config.max_entries,
        ),
        (
            "appliance_lookup_tables_bound_bytes",
            "lookup_tables.max_mb in bytes.",
            config.max_bytes,
        ),
    ] {
        single(out, name, Kind::Gauge, Some(help), value);
    }
    render_cache_counters(out, counters);
}

/// The cache's hits, misses, evictions and what the stream taught it.
fn render_cache_counters(out: &mut String, counters: &CacheCounters) {
    for (name, help, value) in [
        (
            "appliance_lookup_table_hits_total",
            "Lookups that found their table cached.",
            counters.hits,
        ),
        (
            "appliance_lookup_table_misses_total",
            "Lookups whose table was not cached.",
            counters.misses,
        ),
        (
            "appliance_lookup_table_evictions_total",
            "Tables evicted by the bounds.",
            counters.evictions,
        ),
        (
            "appliance_lookup_table_stream_updates_total",
            "Lookup-table instructions learned from the stream (provisional).",
            counters.stream_updates,
        ),
        (
            "appliance_lookup_table_stream_rejected_total",
            "Lookup-table instructions of the stream the program would refuse.",
            counters.stream_rejected,
        ),
    ] {
        counter(out, name, help, value);
    }
    let provisional = [
        ("confirmed", counters.confirmed),
        ("contradicted", counters.contradicted),
    ];
    by_label(
        out,
        "appliance_lookup_table_provisional_total",
        "Stream-learned contents met by a cluster snapshot.",
        "outcome",
        provisional,
    );
}

/// Transactions per lookup status, and unresolved lookups per reason.
fn render_resolution(out: &mut String, statuses: &[u64; 5], unresolved: &[u64; 4]) {
    let statuses = STATUSES
        .iter()
        .zip(statuses)
        .map(|(status, count)| (status.label(), *count));
    by_label(
        out,
        "appliance_lookup_transactions_total",
        "Transactions resolved, per lookup status.",
        "status",
        statuses,
    );
    let unresolved = REASONS
        .iter()
        .zip(unresolved)
        .map(|(reason, count)| (*reason, *count));
    by_label(
        out,
        "appliance_lookup_unresolved_total",
        "Lookups that did not resolve, per reason.",
        "reason",
        unresolved,
    );
}
