//! The relay's counters and their Prometheus families.

use std::sync::atomic::{AtomicU64, Ordering};

use front::exposition::{Kind, by_label, counter, single};

use super::dedupe::Verdict;
use super::link::LinkError;

/// What `/metrics` shows of the relay (written by its task, read at scrape time).
#[derive(Debug, Default)]
pub struct RelayCounters {
    /// 1 while a stream from the origin is open.
    pub connected: AtomicU64,
    pub connects: AtomicU64,
    /// Links lost, by [`LinkError::label`].
    pub link_errors: [AtomicU64; LinkError::LABELS.len()],
    /// Resumes the origin could not serve in full (its buffer no longer held the slot, or
    /// resuming is off there): updates may be missing.
    pub gaps: AtomicU64,
    /// Connections to an origin process other than the previous one.
    pub numbering_changes: AtomicU64,
    pub received: AtomicU64,
    pub published: AtomicU64,
    pub repeats_by_sequence: AtomicU64,
    pub repeats_by_content: AtomicU64,
    pub last_slot: AtomicU64,
    pub content_keys: AtomicU64,
}

impl RelayCounters {
    pub fn count(&self, verdict: Verdict) {
        let counter = match verdict {
            Verdict::New => &self.published,
            Verdict::RepeatBySequence => &self.repeats_by_sequence,
            Verdict::RepeatByContent => &self.repeats_by_content,
            Verdict::NotRelayed => return,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn link_lost(&self, error: &LinkError) {
        if let Some(index) = LinkError::LABELS.iter().position(|l| *l == error.label()) {
            self.link_errors[index].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `/health`'s `"relay"` object: whether the link to the origin is up, the last slot taken
    /// and the gaps so far.
    pub fn health_fields(&self) -> String {
        let load = |value: &AtomicU64| value.load(Ordering::Relaxed);
        format!(
            ",\"relay\":{{\"connected\":{},\"last_slot\":{},\"gaps\":{}}}",
            load(&self.connected) == 1,
            load(&self.last_slot),
            load(&self.gaps)
        )
    }

    /// The `appliance_relay_*` families.
    pub fn render(&self, out: &mut String) {
        let load = |value: &AtomicU64| value.load(Ordering::Relaxed);
        single(
            out,
            "appliance_relay_connected",
            Kind::Gauge,
            Some("1 while the relay's stream from its origin is open."),
            load(&self.connected),
        );
        single(
            out,
            "appliance_relay_last_slot",
            Kind::Gauge,
            Some("The highest slot the relay took from its origin (it resumes from there)."),
            load(&self.last_slot),
        );
        single(
            out,
            "appliance_relay_content_keys",
            Kind::Gauge,
            Some("Content keys the relay keeps to drop repeats from a restarted origin."),
            load(&self.content_keys),
        );
        for (name, help, value) in [
            (
                "appliance_relay_connects_total",
                "Streams the relay opened to its origin.",
                &self.connects,
            ),
            (
                "appliance_relay_gaps_total",
                "Resumes the origin could not serve in full: updates may be missing.",
                &self.gaps,
            ),
            (
                "appliance_relay_numbering_changes_total",
                "Connections to an origin process other than the previous one.",
                &self.numbering_changes,
            ),
            (
                "appliance_relay_received_total",
                "Updates read from the origin.",
                &self.received,
            ),
            (
                "appliance_relay_published_total",
                "Updates the relay published to its own subscribers.",
                &self.published,
            ),
        ] {
            counter(out, name, help, load(value));
        }
        by_label(
            out,
            "appliance_relay_repeats_dropped_total",
            "Updates from the origin the relay had already published, by the key that told.",
            "key",
            [
                ("sequence", load(&self.repeats_by_sequence)),
                ("content", load(&self.repeats_by_content)),
            ],
        );
        by_label(
            out,
            "appliance_relay_link_errors_total",
            "Streams from the origin that ended, by reason.",
            "reason",
            LinkError::LABELS
                .iter()
                .zip(&self.link_errors)
                .map(|(label, value)| (*label, load(value))),
        );
    }
}
