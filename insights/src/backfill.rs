//! Backfill of history from the archive: per-block statistics of a slot range read through the
//! [`archive::ArchiveStore`] contract, and the snapshot of the window ending at each block,
//! written to the store in batches, with progress reports (and a text progress bar).

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use archive::{ArchiveStore, SlotLookup};

use super::block_stats::BlockStats;
use super::config::Limits;
use super::error::InsightsError;
use super::from_archive::stats_from_archive_block;
use super::live::{Live, Window};
use super::store::{BlockRecord, Store};

/// Slots scanned back from `from` looking for the blocks that fill the first windows.
pub const LEAD_IN_SCAN_SLOTS: u64 = 1_000;
/// Blocks written per store transaction.
const BATCH_BLOCKS: usize = 64;

/// Where a backfill stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    pub from: u64,
    pub to: u64,
    /// Last slot handled.
    pub slot: u64,
    pub blocks: u64,
    pub skipped: u64,
    /// Slots whose epoch the archive does not hold.
    pub not_held: u64,
    pub snapshots: u64,
}

impl Progress {
    /// Fraction of the range done.
    pub fn fraction(&self) -> f64 {
        let total = self.to - self.from + 1;
        (self.slot.saturating_sub(self.from) + 1).min(total) as f64 / total as f64
    }
}

/// Backfills `from..=to` from `archive` into `store`, calling `report` after every batch.
pub fn backfill(
    archive: &dyn ArchiveStore,
    store: &Store,
    limits: &Limits,
    from: u64,
    to: u64,
    report: &mut dyn FnMut(&Progress),
) -> Result<Progress, InsightsError> {
    if from > to {
        return Err(InsightsError::BackfillRange { from, to });
    }
    let mut window = Window::new(limits.window_blocks);
    // Lead-in: the produced blocks just before `from`, so the first windows are full.
    let mut lead_in = Vec::new();
    let mut slot = from;
    while lead_in.len() + 1 < limits.window_blocks && slot > 0 && from - slot < LEAD_IN_SCAN_SLOTS {
        slot -= 1;
        if let SlotLookup::Found(block) = archive
            .block(slot)
            .map_err(|source| InsightsError::Archive { slot, source })?
        {
            lead_in.push(stats_from_archive_block(&block)?);
        }
    }
    // Kept with the range (without snapshots of their own), so the store alone can rebuild the
    // window of its newest block (`Insights::serve_stored`).
    let lead_in: Vec<Arc<BlockStats>> = lead_in.into_iter().rev().map(Arc::new).collect();
    let records: Vec<BlockRecord<'_>> = lead_in
        .iter()
        .map(|stats| BlockRecord {
            stats,
            snapshot: None,
        })
        .collect();
    store.write(&records, None)?;
    for stats in lead_in {
        window.push(stats);
    }
    let mut progress = Progress {
        from,
        to,
        slot: from,
        ..Progress::default()
    };
    let mut pending: Vec<(Arc<BlockStats>, Option<Live>)> = Vec::with_capacity(BATCH_BLOCKS);
    for slot in from..=to {
        progress.slot = slot;
        match archive
            .block(slot)
            .map_err(|source| InsightsError::Archive { slot, source })?
        {
            SlotLookup::Found(block) => {
                let stats = Arc::new(stats_from_archive_block(&block)?);
                let live = window
                    .push(Arc::clone(&stats))
                    .and_then(|blocks| Live::build(blocks, limits, SystemTime::now()));
                progress.blocks += 1;
                progress.snapshots += u64::from(live.is_some());
                pending.push((stats, live));
            }
            SlotLookup::Skipped => progress.skipped += 1,
            SlotLookup::NotHeld => progress.not_held += 1,
        }
        if pending.len() == BATCH_BLOCKS || slot == to {
            let records: Vec<BlockRecord<'_>> = pending
                .iter()
                .map(|(stats, live)| BlockRecord {
                    stats,
                    snapshot: live.as_ref().map(|live| live.snapshot.as_ref()),
                })
                .collect();
            store.write(&records, None)?;
            pending.clear();
            report(&progress);
        }
    }
    Ok(progress)
}

/// A one-line text progress bar, redrawn at most every 100 ms.
pub struct ProgressBar<W: Write> {
    out: W,
    last_draw: Option<Instant>,
}

impl<W: Write> ProgressBar<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            last_draw: None,
        }
    }

    /// The bar's text for `progress`.
    pub fn render(progress: &Progress) -> String {
        const WIDTH: usize = 30;
        let fraction = progress.fraction();
        let filled = ((fraction * WIDTH as f64) as usize).min(WIDTH);
        format!(
            "[{}{}] {:5.1}% slot {} of {}..={}: {} blocks, {} skipped, {} not held, {} snapshots",
            "#".repeat(filled),
            ".".repeat(WIDTH - filled),
            fraction * 100.0,
            progress.slot,
            progress.from,
            progress.to,
            progress.blocks,
            progress.skipped,
            progress.not_held,
            progress.snapshots,
        )
    }

    /// Redraws the bar (always at the end of the range).
    pub fn update(&mut self, progress: &Progress) {
        let due = self
            .last_draw
            .is_none_or(|last| last.elapsed() >= Duration::from_millis(100));
        if due || progress.slot == progress.to {
            self.last_draw = Some(Instant::now());
            let _ = write!(self.out, "\r{}", Self::render(progress));
            if progress.slot == progress.to {
                let _ = writeln!(self.out);
            }
            let _ = self.out.flush();
        }
    }
}
