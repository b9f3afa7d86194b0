//! Who may sign the shreds the appliance publishes (issue 19, docs/deploy.md "Trust modes"): the
//! trust mode, the leader schedule the workers verify against ([`LeaderSlot`], swapped in by the
//! background fetcher of [`schedule`] from the cluster's JSON-RPC ([`rpc`]), kept across restarts
//! by [`store`]), and the status `/health` and `/metrics` show. [`lookup_tables`]: the address
//! lookup tables fetched from the same RPC (issue 20).

pub mod lookup_tables;
pub mod rpc;
pub mod schedule;
pub mod setup;
pub mod store;

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use decoder::{LeaderEpochs, LeaderSchedule};
use front::exposition::{Kind, counter, family, sample, single};
use tracing::warn;

/// How much of a set is checked before it is published; one name each in config, logs,
/// `/health` and `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustMode {
    /// Leader signatures (schedule or fixed keys) and Merkle proofs.
    Verified,
    /// Merkle proofs and chained roots only: whoever reaches the port is believed.
    Trusted,
    /// Nothing checked (`decoder.authenticate = false`).
    Unauthenticated,
    /// No shreds here: a relay re-serves its origin's stream, which the origin checked.
    Relayed,
}

impl TrustMode {
    pub const fn label(self) -> &'static str {
        match self {
            Self::Verified => "verified",
            Self::Trusted => "trusted",
            Self::Unauthenticated => "unauthenticated",
            Self::Relayed => "relayed",
        }
    }
}

/// The schedule the workers verify against. A worker compares [`generation`](Self::generation)
/// (one atomic load) once per batch of datagrams and takes a fresh copy only when it moved.
pub struct LeaderSlot {
    schedule: ArcSwap<LeaderSchedule>,
    generation: AtomicU64,
}

impl LeaderSlot {
    pub fn new(schedule: LeaderSchedule) -> Self {
        Self {
            schedule: ArcSwap::from_pointee(schedule),
            generation: AtomicU64::new(0),
        }
    }

    /// Replaces the schedule; workers pick it up before their next batch.
    pub fn install(&self, schedule: LeaderSchedule) {
        self.schedule.store(Arc::new(schedule));
        self.generation.fetch_add(1, Ordering::Release);
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn load(&self) -> Arc<LeaderSchedule> {
        self.schedule.load_full()
    }
}

/// What `/health` and `/metrics` report about trust.
pub struct TrustStatus {
    pub mode: TrustMode,
    /// Unix seconds of the last schedule installed (fetched or loaded); 0 = none.
    schedule_unix_secs: AtomicU64,
    fetch_errors: AtomicU64,
    /// Leaders of the installed schedule left out for an unusable key, and their slots.
    refused: [AtomicU64; 2],
    /// Epochs the installed schedule covers, as `first..=last` packed (0 = none).
    epochs: [AtomicU64; 2],
}

impl TrustStatus {
    pub fn new(mode: TrustMode) -> Self {
        Self {
            mode,
            schedule_unix_secs: AtomicU64::new(0),
            fetch_errors: AtomicU64::new(0),
            refused: [AtomicU64::new(0), AtomicU64::new(0)],
            epochs: [AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    /// A schedule covering `first..=last` epochs was installed, obtained at `unix_secs`.
    pub fn schedule_installed(&self, unix_secs: u64, first: u64, last: u64) {
        self.schedule_unix_secs.store(unix_secs, Ordering::Relaxed);
        self.epochs[0].store(first, Ordering::Relaxed);
        self.epochs[1].store(last, Ordering::Relaxed);
    }

    /// Counts the leaders `epochs` (the schedule being installed) left out for an unusable key,
    /// and logs them: their slots have no leader, the rest of each epoch verifies.
    pub fn refused_leaders_in(&self, epochs: &LeaderEpochs) {
        let (mut leaders, mut slots) = (0u64, 0u64);
        for epoch in epochs.epochs() {
            let refused = epoch.refused_leaders();
            if let Some(first) = refused.first() {
                warn!(epoch = epoch.epoch(), refused = refused.len(), first = %first.leader,
                    reason = %first.reason, "leader schedule entries with an unusable key: their slots have no leader");
            }
            leaders += refused.len() as u64;
            slots += refused
                .iter()
                .map(|leader| leader.slots as u64)
                .sum::<u64>();
        }
        self.refused[0].store(leaders, Ordering::Relaxed);
        self.refused[1].store(slots, Ordering::Relaxed);
    }

    pub fn fetch_failed(&self) {
        self.fetch_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Seconds since the schedule was obtained; `None` without one.
    fn schedule_age(&self) -> Option<u64> {
        match self.schedule_unix_secs.load(Ordering::Relaxed) {
            0 => None,
            at => Some(unix_secs().saturating_sub(at)),
        }
    }

    /// The fields `/health` adds after `"status":"ok"`.
    pub fn health_fields(&self) -> String {
        let mut out = format!(",\"trust_mode\":\"{}\"", self.mode.label());
        if let Some(age) = self.schedule_age() {
            let first = self.epochs[0].load(Ordering::Relaxed);
            let last = self.epochs[1].load(Ordering::Relaxed);
            let _ = write!(
                out,
                ",\"leader_schedule\":{{\"age_seconds\":{age},\"epochs\":[{first},{last}]}}"
            );
        }
        out
    }

    /// `appliance_trust_mode`, `appliance_leader_schedule_age_seconds` (-1 without a schedule)
    /// and `appliance_leader_schedule_fetch_errors_total`.
    pub fn render_metrics(&self, out: &mut String) {
        let mode = self.mode.label();
        let age = self.schedule_age().map_or(-1, |age| age as i64);
        let errors = self.fetch_errors.load(Ordering::Relaxed);
        let name = "appliance_trust_mode";
        let help = "How sets are checked before publication (1 = this mode).";
        family(out, name, Kind::Gauge, Some(help));
        sample(out, name, &[("mode", mode)], 1);
        single(
            out,
            "appliance_leader_schedule_age_seconds",
            Kind::Gauge,
            Some("Age of the leader schedule installed (-1 = none)."),
            age,
        );
        counter(
            out,
            "appliance_leader_schedule_fetch_errors_total",
            "Failed fetches of the leader schedule.",
            errors,
        );
        single(
            out,
            "appliance_leader_schedule_refused_leaders",
            Kind::Gauge,
            Some(
                "Leaders of the installed schedule left out for a key that is not an ed25519 point.",
            ),
            self.refused[0].load(Ordering::Relaxed),
        );
        single(
            out,
            "appliance_leader_schedule_refused_slots",
            Kind::Gauge,
            Some("Slots of the installed schedule without a leader because its key was refused."),
            self.refused[1].load(Ordering::Relaxed),
        );
    }
}

pub fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_metrics_text() {
        let status = TrustStatus::new(TrustMode::Verified);
        status.fetch_failed();
        let mut out = String::new();
        status.render_metrics(&mut out);
        assert_eq!(
            out,
            "# HELP appliance_trust_mode How sets are checked before publication (1 = this mode).\n\
             # TYPE appliance_trust_mode gauge\n\
             appliance_trust_mode{mode=\"verified\"} 1\n\
             # HELP appliance_leader_schedule_age_seconds Age of the leader schedule installed (-1 = none).\n\
             # TYPE appliance_leader_schedule_age_seconds gauge\n\
             appliance_leader_schedule_age_seconds -1\n\
             # HELP appliance_leader_schedule_fetch_errors_total Failed fetches of the leader schedule.\n\
             # TYPE appliance_leader_schedule_fetch_errors_total counter\n\
             appliance_leader_schedule_fetch_errors_total 1\n\
             # HELP appliance_leader_schedule_refused_leaders Leaders of the installed schedule left out for a key that is not an ed25519 point.\n\
             # TYPE appliance_leader_schedule_refused_leaders gauge\n\
             appliance_leader_schedule_refused_leaders 0\n\
             # HELP appliance_leader_schedule_refused_slots Slots of the installed schedule without a leader because its key was refused.\n\
             # TYPE appliance_leader_schedule_refused_slots gauge\n\
             appliance_leader_schedule_refused_slots 0\n"
        );
    }
}
