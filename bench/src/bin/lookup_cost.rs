//! What the lookup-table cache costs (issue 20): the time to resolve a cached transaction's
//! lookups, per call, as a distribution, and the memory the cache takes per table.
//!
//! Resolve: the fixture's v0 transactions (every one that uses lookup tables, from the complete
//! shred files) resolved through [`decoder::lookup::resolve_lookups`] against a cache holding the
//! manifest's tables plus `--tables` synthetic ones (so the hash index has a realistic size), the
//! clock read around each call. The clock's own cost (two reads back to back) is measured the
//! same way and reported beside it.
//!
//! Contention: the same resolves through the appliance's shared cache
//! (`appliance::cluster::lookup_tables::LookupTables::process`, one mutex for every worker) from
//! 1 and then `--threads` threads at once, each thread over every transaction, first without pause
//! (the worst case: in the appliance a worker takes the lock only for a v0 transaction or a
//! lookup-table instruction), then spinning `--gap-ns` between calls (the rest of a worker's work
//! per transaction); per-call time and the calls per second of all threads.
//!
//! Memory: the bytes the allocator holds for a cache filled with `--tables` tables of
//! `--addresses` addresses each (a counting global allocator), per table and in all, beside the
//! bytes the cache charges against its `max_bytes` bound.
//!
//! `cargo run --release -p bench --bin lookup_cost -- --tables 100000 --addresses 256`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, bail};
use appliance::cluster::lookup_tables::LookupTables;
use clap::Parser;
use decoder::cursor::Cursor;
use decoder::entry::parse_components;
use decoder::lookup::{
    Address, CacheConfig, LoadedAddresses, LookupTableAccount, LookupTableCache, LookupTableMeta,
    resolve_lookups,
};
use decoder::transaction::parse_transaction;
use hdrhistogram::Histogram;

/// Counts the bytes currently allocated, so the cache's footprint can be read off.
struct CountingAlloc;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is updated.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
        ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with `layout`; the caller guarantees `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[derive(Parser, Debug)]
#[command(about = "Lookup-table cache: resolve time per transaction and memory per table")]
struct Args {
    /// Synthetic tables in the cache besides the fixture's.
    #[arg(long, default_value_t = 100_000)]
    tables: usize,
    /// Addresses per synthetic table (1..=256).
    #[arg(long, default_value_t = 256)]
    addresses: usize,
    /// Passes over the fixture's v0 transactions.
    #[arg(long, default_value_t = 2_000)]
    passes: usize,
    /// Threads resolving at once through the shared cache, for the contention part.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Busy time between two calls of one thread in the second contention run, ns.
    #[arg(long, default_value_t = 2_000)]
    gap_ns: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !(1..=256).contains(&args.addresses) {
        bail!("--addresses must lie in 1..=256");
    }
    let config = CacheConfig {
        max_entries: args.tables + 16,
        max_bytes: usize::MAX,
    };
    let before = ALLOCATED.load(Ordering::Relaxed);
    let mut cache = LookupTableCache::new(config).context("cache bounds")?;
    fill_synthetic(&mut cache, args.tables, args.addresses);
    let held = ALLOCATED.load(Ordering::Relaxed) - before;
    println!(
        "memory: {} tables of {} addresses: {:.1} MiB held by the allocator ({} bytes per table; \
         the addresses alone are {} bytes), {:.1} MiB charged against max_bytes",
        args.tables,
        args.addresses,
        held as f64 / f64::from(1 << 20),
        held / args.tables.max(1),
        args.addresses * 32,
        cache.bytes() as f64 / f64::from(1 << 20),
    );

    load_fixture_tables(&mut cache)?;
    let transactions = fixture_v0_transactions();
    if transactions.is_empty() {
        bail!("the fixture holds no transaction that uses lookup tables");
    }
    let (resolve, clock) = time_resolves(&mut cache, &transactions, args.passes)?;
    println!(
        "resolve: {} v0 transactions x {} passes",
        transactions.len(),
        args.passes
    );
    report("resolve_lookups (incl. clock)", &resolve);
    report("clock alone (two reads)", &clock);
    drop(cache);
    contention(&transactions, &args)
}

/// The shared cache of the appliance, holding the fixture's tables, resolved through from 1 and
/// then `threads` threads at once.
fn contention(transactions: &[(u64, Vec<u8>)], args: &Args) -> anyhow::Result<()> {
    let bounds = CacheConfig {
        max_entries: 1_000,
        max_bytes: 64 << 20,
    };
    let (tables, _) = LookupTables::new(bounds, None).context("shared cache")?;
    tables.with_cache(load_fixture_tables)?;
    let passes = args.passes;
    println!("shared cache (one mutex), {passes} passes per thread:");
    let runs = [1, args.threads.max(1)].map(|count| (count, 0)).into_iter();
    for (count, gap) in runs.chain([(1, args.gap_ns), (args.threads.max(1), args.gap_ns)]) {
        let started = Instant::now();
        let histograms = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..count)
                .map(|_| scope.spawn(|| time_shared(&tables, transactions, passes, gap)))
                .collect();
            workers
                .into_iter()
                .map(|worker| {
                    worker
                        .join()
                        .map_err(|_| anyhow::anyhow!("a thread panicked"))?
                })
                .collect::<anyhow::Result<Vec<_>>>()
        })?;
        let seconds = started.elapsed().as_secs_f64();
        let mut all = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3)?;
        for histogram in &histograms {
            all.add(histogram)?;
        }
        let rate = all.len() as f64 / seconds;
        report(&format!("{count} thr, gap {gap} ns, {rate:.0}/s"), &all);
    }
    Ok(())
}

/// One thread's calls of `LookupTables::process`, timed one by one (ns, clock included), with
/// `gap_ns` of spinning after each.
fn time_shared(
    tables: &LookupTables,
    transactions: &[(u64, Vec<u8>)],
    passes: usize,
    gap_ns: u64,
) -> anyhow::Result<Histogram<u64>> {
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3)?;
    let mut loaded = LoadedAddresses::new();
    let mut scratch = Vec::with_capacity(512);
    for _ in 0..passes {
        for (slot, bytes) in transactions {
            let view = parse_transaction(&mut Cursor::new(bytes))?;
            let start = Instant::now();
            tables.process(&view, *slot, false, &mut loaded, &mut scratch);
            let took = start.elapsed().as_nanos() as u64;
            histogram.saturating_record(took);
            while (start.elapsed().as_nanos() as u64) < took + gap_ns {
                std::hint::spin_loop();
            }
        }
    }
    Ok(histogram)
}

/// `count` tables of `addresses` distinct addresses, derived from their number. The change log is
/// drained every 1,000 tables, as the appliance's store writer does between its flushes.
fn fill_synthetic(cache: &mut LookupTableCache, count: usize, addresses: usize) {
    let mut table = Vec::with_capacity(addresses);
    let mut changes = Vec::new();
    for number in 0..count {
        if number % 1_000 == 0 {
            cache.drain_changes(&mut changes);
            changes.clear();
        }
        table.clear();
        table.extend((0..addresses).map(|position| synthetic_address(number, position, 1)));
        let account = LookupTableAccount {
            meta: LookupTableMeta::new(None),
            addresses: &table,
        };
        cache.apply_snapshot(&synthetic_address(number, 0, 0), &account, 1);
    }
    cache.drain_changes(&mut changes);
}

fn synthetic_address(number: usize, position: usize, kind: u8) -> Address {
    let mut address = [0xA5; 32];
    address[..8].copy_from_slice(&(number as u64).to_le_bytes());
    address[8..16].copy_from_slice(&(position as u64).to_le_bytes());
    address[16] = kind;
    address
}

/// The manifest's lookup tables, as the cluster would return them.
fn load_fixture_tables(cache: &mut LookupTableCache) -> anyhow::Result<()> {
    let manifest: serde_json::Value =
        serde_json::from_slice(&bench::read_fixture("manifest.json"))?;
    let tables = manifest["address_lookup_tables"]
        .as_array()
        .context("manifest address_lookup_tables")?;
    for table in tables {
        let key = base58_address(&table["address"])?;
        let addresses = table["addresses"]
            .as_array()
            .context("table addresses")?
            .iter()
            .map(base58_address)
            .collect::<anyhow::Result<Vec<_>>>()?;
        let account = LookupTableAccount {
            meta: LookupTableMeta::new(None),
            addresses: &addresses,
        };
        cache.apply_snapshot(&key, &account, 0);
    }
    Ok(())
}

fn base58_address(value: &serde_json::Value) -> anyhow::Result<Address> {
    let text = value.as_str().context("address is not a string")?;
    let bytes = bs58::decode(text).into_vec()?;
    Address::try_from(bytes.as_slice()).map_err(|_| anyhow::anyhow!("{text}: not 32 bytes"))
}

/// The wire bytes of every fixture transaction that uses lookup tables.
fn fixture_v0_transactions() -> Vec<(u64, Vec<u8>)> {
    let slot = bench::fixture_slots().into_iter().max().unwrap_or(0);
    let mut out = Vec::new();
    for batch in bench::full_file_batches() {
        let Ok(entries) = parse_components(&batch) else {
            continue;
        };
        for transaction in entries.transactions() {
            if transaction.uses_lookup_tables() {
                out.push((slot + 1, transaction.bytes().to_vec()));
            }
        }
    }
    out
}

/// One histogram of resolve calls (clock included) and one of the clock alone, in ns.
fn time_resolves(
    cache: &mut LookupTableCache,
    transactions: &[(u64, Vec<u8>)],
    passes: usize,
) -> anyhow::Result<(Histogram<u64>, Histogram<u64>)> {
    let mut resolve = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3)?;
    let mut clock = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3)?;
    let mut loaded = LoadedAddresses::new();
    for _ in 0..passes {
        for (slot, bytes) in transactions {
            let view = parse_transaction(&mut Cursor::new(bytes))?;
            let start = Instant::now();
            std::hint::black_box(resolve_lookups(&view, *slot, cache, &mut loaded));
            resolve.saturating_record(start.elapsed().as_nanos() as u64);
            let start = Instant::now();
            clock.saturating_record(std::hint::black_box(start).elapsed().as_nanos() as u64);
        }
    }
    Ok((resolve, clock))
}

fn report(name: &str, histogram: &Histogram<u64>) {
    println!(
        "  {name:<32} p50 {:>6} ns  p99 {:>6} ns  p999 {:>6} ns  max {:>8} ns  ({} calls)",
        histogram.value_at_quantile(0.50),
        histogram.value_at_quantile(0.99),
        histogram.value_at_quantile(0.999),
        histogram.max(),
        histogram.len(),
    );
}
