//! Shared helpers of the benchmarks: loading fixture shreds in their framings, the decoder
//! configuration the benches use, and an allocator that keeps first-touch page faults out of timed
//! loops.
//!
//! The fixtures are the reference shreds of `decoder/tests/fixtures/shreds/` (see its README): six
//! slots, each as a complete file (`slot-<n>.full.bin`, every shred in emitted order) and a lossy
//! one (`slot-<n>.bin`, shuffled, some shreds dropped so recovery is needed). Both use the u16-LE
//! length-prefixed framing. Loading panics with the path on any problem: a benchmark over missing
//! data is worthless.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::path::PathBuf;

use capture::framing;
use decoder::decoder::ShredOutcome;
use decoder::entry::EntryBatch;
use decoder::fec::FecConfig;
use decoder::{DecoderConfig, LeaderSchedule, ShredDecoder};

pub mod appliance_process;
pub mod steady;

/// The folder of the reference shred fixtures, relative to this crate.
pub const FIXTURE_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../decoder/tests/fixtures/shreds"
);

/// Shred version of every fixture shred.
pub const SHRED_VERSION: u16 = 50093;

/// Full path of a file in [`FIXTURE_DIR`].
pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(FIXTURE_DIR).join(name)
}

/// The bytes of a file in [`FIXTURE_DIR`].
pub fn read_fixture(name: &str) -> Vec<u8> {
    let path = fixture_path(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The payloads of a capture (any framing `capture::framing` knows), one owned buffer per record,
/// as a receive ring would hold them.
pub fn records(bytes: &[u8]) -> Vec<Vec<u8>> {
    framing::records(bytes)
        .map(|record| match record {
            Ok(record) => record.payload.to_vec(),
            Err(error) => panic!("fixture framing: {error}"),
        })
        .collect()
}

/// The slots that have fixture files, ascending (the order of `manifest.json`).
pub fn fixture_slots() -> Vec<u64> {
    let entries =
        std::fs::read_dir(FIXTURE_DIR).unwrap_or_else(|error| panic!("{FIXTURE_DIR}: {error}"));
    let mut slots: Vec<u64> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_prefix("slot-")?
                .strip_suffix(".full.bin")?
                .parse()
                .ok()
        })
        .collect();
    slots.sort_unstable();
    assert!(!slots.is_empty(), "no slot-*.full.bin in {FIXTURE_DIR}");
    slots
}

/// Every record of the complete files (`slot-<n>.full.bin`), slot after slot.
pub fn full_records() -> Vec<Vec<u8>> {
    fixture_slots()
        .into_iter()
        .flat_map(|slot| records(&read_fixture(&format!("slot-{slot}.full.bin"))))
        .collect()
}

/// Every record of the lossy, shuffled files (`slot-<n>.bin`), slot after slot.
pub fn lossy_records() -> Vec<Vec<u8>> {
    fixture_slots()
        .into_iter()
        .flat_map(|slot| records(&read_fixture(&format!("slot-{slot}.bin"))))
        .collect()
}

/// A per-slot leader schedule from `(slot, base58 key)` pairs (the manifest's `slots[i].slot` and
/// `slots[i].leader`).
pub fn per_slot_schedule<'a>(leaders: impl IntoIterator<Item = (u64, &'a str)>) -> LeaderSchedule {
    LeaderSchedule::PerSlot(
        leaders
            .into_iter()
            .map(|(slot, text)| match LeaderSchedule::key_from_base58(text) {
                Ok(key) => (slot, key),
                Err(error) => panic!("leader of slot {slot}: {error}"),
            })
            .collect(),
    )
}

/// FEC pool of the benches: 128 sets (~10 MB) instead of the production 1,024 (~83 MB). The
/// fixtures hold 85 sets in all, so nothing is evicted, and a fresh pool per iteration stays cheap
/// to build.
pub fn fec_config() -> FecConfig {
    FecConfig {
        max_sets_in_flight: 128,
        ..FecConfig::default()
    }
}

/// Decoder configuration of the benches: production defaults, the fixtures' shred version, the
/// smaller FEC pool of [`fec_config`] and a 4 MiB batch buffer (the largest fixture batch is
/// 194 KB, a whole fixture slot 1.7 MB).
pub fn decoder_config() -> DecoderConfig {
    DecoderConfig {
        shred_version: Some(SHRED_VERSION),
        fec: fec_config(),
        max_batch_bytes: 4 << 20,
        ..DecoderConfig::default()
    }
}

/// Touches every transaction of a batch the way a consumer would (reads its first signature);
/// returns how many there were.
pub fn walk_transactions(entries: &EntryBatch<'_>) -> u64 {
    let mut count = 0;
    for transaction in entries.transactions() {
        black_box(transaction.first_signature());
        count += 1;
    }
    count
}

/// What one pass of the whole decode path produced; the benches check it once before timing so a
/// regression into a rejection path cannot pass for a speed-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassSummary {
    pub stored: u64,
    pub redundant: u64,
    pub rejected: u64,
    pub batches: u64,
    pub transactions: u64,
}

/// Feeds every record to `decoder`, draining and walking the batches after each one, exactly as
/// the timed loop of `decode_path` does, and counts what happened.
pub fn decode_all(decoder: &mut ShredDecoder, records: &[Vec<u8>]) -> PassSummary {
    let mut summary = PassSummary::default();
    for (rx_ns, record) in (1_u64..).zip(records) {
        match decoder.ingest(record, rx_ns) {
            ShredOutcome::Stored { .. } => summary.stored += 1,
            ShredOutcome::Redundant { .. } => summary.redundant += 1,
            ShredOutcome::Rejected { .. } => summary.rejected += 1,
        }
        while let Some(batch) = decoder.next_batch() {
            summary.batches += 1;
            summary.transactions += walk_transactions(&batch.entries);
        }
    }
    summary
}

/// The entry batches of the complete files (`bincode(Vec<Entry>)` bytes, one buffer per batch), as
/// the decoder assembles them.
pub fn full_file_batches() -> Vec<Vec<u8>> {
    let mut decoder = ShredDecoder::new(decoder_config(), LeaderSchedule::Unchecked);
    let mut batches = Vec::new();
    for record in full_records() {
        if let ShredOutcome::Rejected { reason, .. } = decoder.ingest(&record, 0) {
            panic!("full fixture shred rejected: {reason}");
        }
        while let Some(batch) = decoder.next_batch() {
            batches.push(batch.bytes.to_vec());
        }
    }
    batches
}

/// Smallest allocation [`PrefaultAlloc`] touches.
const PREFAULT_MIN_BYTES: usize = 64 << 10;
const PAGE_BYTES: usize = 4096;

/// The system allocator, except that large blocks (≥ 64 KiB) are written once per page when they
/// are handed out.
///
/// The decoder reserves its pools at construction, and a long-running worker reuses the same,
/// long-resident pages. A bench that builds a fresh decoder per iteration would instead get fresh
/// zero pages from the kernel (glibc returns freed blocks of this size to the system) and pay one
/// page fault per 4 KiB page on first write *inside* the timed routine. With this allocator the
/// faults happen in the untimed setup, so the routine measures the steady state. Install it with
/// `#[global_allocator] static ALLOC: bench::PrefaultAlloc = bench::PrefaultAlloc;`.
pub struct PrefaultAlloc;

/// Writes a zero at `from` and then at every page boundary step up to `to`.
///
/// # Safety
/// `block..block + to` must be one allocation owned by the caller, and the bytes at the written
/// offsets (`from`, `from + 4096`, …) must be free to overwrite with zero.
unsafe fn touch_pages(block: *mut u8, from: usize, to: usize) {
    let mut offset = from;
    while offset < to {
        // SAFETY: offset < to, inside the caller's block; the caller allows the write.
        unsafe { block.add(offset).write_volatile(0) };
        offset += PAGE_BYTES;
    }
}

// SAFETY: every request is forwarded to `System` with the same layout; the only addition is writing
// zeros into bytes of fresh blocks that carry no value yet (or are zero already).
unsafe impl GlobalAlloc for PrefaultAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() && layout.size() >= PREFAULT_MIN_BYTES {
            // SAFETY: a fresh block of layout.size() bytes, uninitialised.
            unsafe { touch_pages(block, 0, layout.size()) };
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let block = unsafe { System.alloc_zeroed(layout) };
        if !block.is_null() && layout.size() >= PREFAULT_MIN_BYTES {
            // SAFETY: a fresh zeroed block; writing zero keeps it zeroed.
            unsafe { touch_pages(block, 0, layout.size()) };
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(block, layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let moved = unsafe { System.realloc(block, layout, new_size) };
        if !moved.is_null() && new_size >= PREFAULT_MIN_BYTES {
            // SAFETY: bytes from layout.size() on are the new, uninitialised tail.
            unsafe { touch_pages(moved, layout.size(), new_size) };
        }
        moved
    }
}
