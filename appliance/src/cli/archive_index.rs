//! `appliance archive index CAR...`: builds the archive indexes of each CAR next to it (see
//! `archive::build` and `docs/archive.md`). Thin wrapper: argument handling and a summary line per
//! CAR (on a rerun with nothing to build, what the existing indexes hold); the work is in the
//! archive crate.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use archive::build::{BuildOptions, build_indexes};

/// Indexes every CAR in order; stops at the first failure (finished CARs stay indexed, and a rerun
/// skips their complete indexes).
pub fn run(cars: &[PathBuf], progress: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    for car in cars {
        let options = BuildOptions {
            progress,
            partitions: None,
        };
        let report =
            build_indexes(car, &options).with_context(|| format!("indexing {}", car.display()))?;
        let secs = report.elapsed.as_secs_f64().max(1e-9);
        // A rerun with every index complete reports what the indexes hold (read from them).
        let rate = if report.built.is_empty() {
            "indexes complete".to_owned()
        } else {
            format!("{:.1} MB/s", report.bytes as f64 / 1e6 / secs)
        };
        writeln!(
            out,
            "{}: root {} epoch {} blocks {} transactions {} built [{}] kept [{}] {rate}",
            car.display(),
            report.root,
            report
                .epoch
                .map_or_else(|| "?".to_string(), |e| e.to_string()),
            report.blocks,
            report.transactions,
            report.built.join(", "),
            report.skipped.join(", "),
        )?;
    }
    Ok(())
}
