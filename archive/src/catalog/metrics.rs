//! The catalog's counters ([`CatalogMetrics`]) and their Prometheus text (through
//! [`crate::prom`]).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of the catalog (appended to `/metrics`).
#[derive(Debug, Default)]
pub struct CatalogMetrics {
    pub(super) checks: AtomicU64,
    pub(super) epochs_served: AtomicU64,
    pub(super) pieces_served: AtomicU64,
    pub(super) activations: AtomicU64,
    pub(super) failures: Mutex<BTreeMap<&'static str, u64>>,
}

impl CatalogMetrics {
    pub(super) fn fail(&self, reason: &'static str) {
        if let Ok(mut failures) = self.failures.lock() {
            *failures.entry(reason).or_default() += 1;
        }
    }

    /// Completed checks (the one at start included).
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    /// Failures counted for `reason`.
    pub fn failures(&self, reason: &str) -> u64 {
        self.failures
            .lock()
            .map(|f| f.get(reason).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Appends the Prometheus text.
    pub fn render(&self, out: &mut String) {
        use crate::prom::{header, single};
        use std::fmt::Write;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        for (name, kind, help, value) in [
            (
                "appliance_archive_epochs_served",
                "gauge",
                "Epochs the archive serves now.",
                load(&self.epochs_served),
            ),
            (
                "appliance_archive_pieces_served",
                "gauge",
                "CAR files (whole epochs or pieces) the archive serves now.",
                load(&self.pieces_served),
            ),
            (
                "appliance_archive_catalog_checks_total",
                "counter",
                "Catalog checks of the archive sources (new or replaced epochs).",
                load(&self.checks),
            ),
            (
                "appliance_archive_catalog_activations_total",
                "counter",
                "Epochs or pieces the catalog checks put into service.",
                load(&self.activations),
            ),
        ] {
            single(out, name, kind, help, value);
        }
        let name = "appliance_archive_catalog_failures_total";
        header(
            out,
            name,
            "counter",
            "Archive sources or files a catalog check could not use, by reason.",
        );
        if let Ok(failures) = self.failures.lock() {
            for (reason, count) in failures.iter() {
                let _ = writeln!(out, "{name}{{reason=\"{reason}\"}} {count}");
            }
        }
    }
}
