//! `reference_pass`: the reference implementation's decode path over the fixture files that
//! `decode_pass` reads, timed the same way, so the two can be run side by side on one machine.
//!
//! The path is Agave `solana-ledger` 4.0.0's, as issue 24 describes it: deserialize each shred,
//! group by FEC set, recover incomplete sets with its Reed-Solomon cache, deshred each
//! data-complete range, bincode the entries, read every transaction's first signature; no
//! verification. It sees the whole pass at once (grouping once, no completeness check per shred),
//! the reference's most favourable case; ours decodes shred by shred as they arrive.
//!
//! ```text
//! reference_pass [--order lossy|full] [--passes 200] [--cache warm|fresh]
//! ```
//! The global allocator is jemalloc, as in the `agave-validator` binary.
//!
//! Prints one JSON line with the keys `decode_pass` prints. `--cache warm` (the default) keeps one
//! `ReedSolomonCache` across passes, as a validator does, so its decode matrices are built once;
//! `fresh` makes a new one per pass, as `decode_pass` makes a fresh decoder.

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use solana_entry::entry::Entry;
use solana_ledger::shred::{self, ReedSolomonCache, Shred, Shredder};

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Data shreds in every fixture FEC set (32 data + 32 coding).
const DATA_SHREDS_PER_SET: usize = 32;

struct Args {
    order: String,
    passes: usize,
    fresh_cache: bool,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args {
        order: "lossy".into(),
        passes: 200,
        fresh_cache: false,
    };
    let mut words = std::env::args().skip(1);
    while let Some(flag) = words.next() {
        let value = words
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--order" => args.order = value,
            "--passes" => args.passes = value.parse().context("--passes: not a number")?,
            "--cache" => {
                args.fresh_cache = match value.as_str() {
                    "warm" => false,
                    "fresh" => true,
                    other => bail!("--cache {other}: expected warm or fresh"),
                }
            }
            other => bail!("unknown flag {other}: expected --order, --passes or --cache"),
        }
    }
    if args.passes == 0 {
        bail!("--passes must be at least 1");
    }
    Ok(args)
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../decoder/tests/fixtures/shreds")
}

/// The records of one file: u16-LE length, then that many bytes of shred.
fn read_records(path: &Path) -> anyhow::Result<Vec<Vec<u8>>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut records = Vec::new();
    let mut rest = bytes.as_slice();
    while let [lo, hi, tail @ ..] = rest {
        let len = usize::from(u16::from_le_bytes([*lo, *hi]));
        if tail.len() < len {
            bail!("{}: record runs past the end", path.display());
        }
        records.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    Ok(records)
}

/// The fixture slots, in increasing order: those with a `slot-<n>.full.bin` file, as
/// `bench::fixture_slots` finds them, so both sides read the same set.
fn fixture_slots() -> anyhow::Result<Vec<u64>> {
    let dir = fixture_dir();
    let entries = std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut slots = Vec::new();
    for entry in entries {
        let name = entry?.file_name();
        let slot: Option<u64> = name.to_str().and_then(|name| {
            name.strip_prefix("slot-")?
                .strip_suffix(".full.bin")?
                .parse()
                .ok()
        });
        slots.extend(slot);
    }
    slots.sort_unstable();
    Ok(slots)
}

fn fixture_records(order: &str) -> anyhow::Result<Vec<Vec<u8>>> {
    let suffix = match order {
        "lossy" => "bin",
        "full" => "full.bin",
        other => bail!("--order {other}: expected lossy or full"),
    };
    let mut records = Vec::new();
    for slot in fixture_slots()? {
        records.extend(read_records(
            &fixture_dir().join(format!("slot-{slot}.{suffix}")),
        )?);
    }
    Ok(records)
}

/// One pass: every record deserialized, sets recovered, ranges deshredded and decoded. Returns
/// the number of transactions read.
fn decode_pass(records: &[Vec<u8>], cache: &ReedSolomonCache) -> anyhow::Result<usize> {
    let mut sets: HashMap<(u64, u32), Vec<Shred>> = HashMap::new();
    for record in records {
        let shred = Shred::new_from_serialized_shred(record.clone())
            .map_err(|err| anyhow::anyhow!("shred rejected: {err:?}"))?;
        sets.entry((shred.slot(), shred.fec_set_index()))
            .or_default()
            .push(shred);
    }
    let mut data: BTreeMap<(u64, u32), Shred> = BTreeMap::new();
    for set in sets.into_values() {
        recover_set(set, cache, &mut data)?;
    }
    deshred_all(&data)
}

/// Keeps a set's data shreds, recovering the missing ones when it has coding shreds for them.
fn recover_set(
    set: Vec<Shred>,
    cache: &ReedSolomonCache,
    data: &mut BTreeMap<(u64, u32), Shred>,
) -> anyhow::Result<()> {
    let data_present = set.iter().filter(|shred| shred.is_data()).count();
    if data_present < DATA_SHREDS_PER_SET {
        let recovered = shred::recover(set.iter().cloned(), cache)
            .map_err(|err| anyhow::anyhow!("recovery failed: {err:?}"))?;
        for shred in recovered {
            let shred = shred.map_err(|err| anyhow::anyhow!("recovered shred: {err:?}"))?;
            if shred.is_data() {
                data.insert((shred.slot(), shred.index()), shred);
            }
        }
    }
    for shred in set.into_iter().filter(Shred::is_data) {
        data.insert((shred.slot(), shred.index()), shred);
    }
    Ok(())
}

/// Deshreds every data-complete range of every slot, bincodes its entries and reads each
/// transaction's first signature.
fn deshred_all(data: &BTreeMap<(u64, u32), Shred>) -> anyhow::Result<usize> {
    let mut transactions = 0;
    let mut range: Vec<&Shred> = Vec::new();
    let mut slot = None;
    for ((shred_slot, _), shred) in data {
        if slot != Some(*shred_slot) {
            range.clear();
            slot = Some(*shred_slot);
        }
        range.push(shred);
        if shred.data_complete() {
            let bytes = Shredder::deshred(range.iter().map(|shred| shred.payload().as_ref()))
                .map_err(|err| anyhow::anyhow!("deshred failed: {err:?}"))?;
            let entries: Vec<Entry> = bincode::deserialize(&bytes).context("bincode entries")?;
            for transaction in entries.iter().flat_map(|entry| &entry.transactions) {
                black_box(transaction.signatures.first());
                transactions += 1;
            }
            range.clear();
        }
    }
    Ok(transactions)
}

fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let records = fixture_records(&args.order)?;
    let mut cache = ReedSolomonCache::default();
    let transactions = decode_pass(&records, &cache)?;
    let mut seconds = Vec::with_capacity(args.passes);
    for _ in 0..args.passes {
        if args.fresh_cache {
            cache = ReedSolomonCache::default();
        }
        let started = Instant::now();
        black_box(decode_pass(&records, &cache)?);
        seconds.push(started.elapsed().as_secs_f64());
    }
    seconds.sort_by(f64::total_cmp);
    let rate = |seconds: f64| (records.len() as f64 / seconds).round();
    println!(
        "{}",
        serde_json::json!({
            "implementation": "solana-ledger 4.0.0",
            "order": args.order,
            "cache": if args.fresh_cache { "fresh" } else { "warm" },
            "records": records.len(),
            "transactions": transactions,
            "passes": args.passes,
            "p90_shreds_per_s": rate(seconds[seconds.len() / 10]),
            "median_shreds_per_s": rate(seconds[seconds.len() / 2]),
            "best_shreds_per_s": rate(seconds[0]),
        })
    );
    Ok(())
}
