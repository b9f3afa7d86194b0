//! `appliance insights backfill --archive DIR --from SLOT --to SLOT`: fills the insights store
//! with the per-block statistics and window snapshots of a slot range read from the epoch archive
//! (see `insights::backfill` and `docs/insights.md`). Thin wrapper: argument handling, the
//! progress bar on stderr and a summary line on stdout; the work is in the server crate.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use insights::Limits;
use insights::backfill::{ProgressBar, backfill};
use insights::store::Store;

/// What to backfill, and where from and to.
pub struct BackfillArgs<'a> {
    /// The `--archive` values: local epoch directories and http(s) base URLs, in priority order
    /// (as `appliance run --archive`).
    pub archives: &'a [String],
    /// The insights store file (the one `appliance run --insights-db` uses).
    pub store: &'a Path,
    pub from: u64,
    pub to: u64,
    /// Draw the progress bar on stderr.
    pub progress: bool,
}

/// Backfills `from..=to`; the store must not be open in a running appliance (redb locks it).
pub fn run(args: &BackfillArgs<'_>, out: &mut dyn Write) -> anyhow::Result<()> {
    let archive = archive::catalog::open_archives(args.archives)
        .with_context(|| format!("opening the archive {:?}", args.archives))?;
    let store = Store::open(args.store).with_context(|| {
        format!(
            "opening the insights store {} (stop the appliance that uses it first)",
            args.store.display()
        )
    })?;
    let mut bar = ProgressBar::new(std::io::stderr());
    let mut report = |progress: &insights::backfill::Progress| {
        if args.progress {
            bar.update(progress);
        }
    };
    let progress = backfill(
        archive.as_ref(),
        &store,
        &Limits::default(),
        args.from,
        args.to,
        &mut report,
    )
    .with_context(|| format!("backfilling slots {}..={}", args.from, args.to))?;
    writeln!(
        out,
        "backfilled slots {}..={} into {}: {} blocks, {} skipped, {} not held by the archive, {} snapshots",
        progress.from,
        progress.to,
        args.store.display(),
        progress.blocks,
        progress.skipped,
        progress.not_held,
        progress.snapshots,
    )?;
    if progress.blocks == 0 {
        anyhow::bail!(
            "the archive holds no block in slots {}..={} (epochs held: {:?})",
            args.from,
            args.to,
            archive.epochs()
        );
    }
    Ok(())
}
