//! The background fetcher of the leader schedule: the current and the next epoch from the
//! cluster's JSON-RPC, fetched again as epochs pass (the next one is held before its boundary),
//! retried with backoff, installed into the workers' [`LeaderSlot`] and persisted
//! ([`super::store`]). It runs on its own thread: a slow or failing RPC never blocks the receive
//! path, which keeps verifying against the schedule it has.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use decoder::{EpochLeaders, LeaderEpochs, LeaderSchedule};
use tracing::{info, warn};

use super::rpc::{ClusterRpc, EpochScheduleInfo, RpcError};
use super::store::{StoredEpoch, StoredSchedule};
use super::{LeaderSlot, TrustStatus, unix_secs};

/// Pause between checks once the current and the next epoch are held (epoch info is cheap).
const REFRESH: Duration = Duration::from_secs(5);
/// First retry delay after a failure; doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Granularity of the shutdown check while sleeping.
const TICK: Duration = Duration::from_millis(50);

/// The fetcher's state: what it last installed.
pub struct Fetcher {
    rpc: ClusterRpc,
    path: PathBuf,
    slot: Arc<LeaderSlot>,
    status: Arc<TrustStatus>,
    epoch_schedule: Option<EpochScheduleInfo>,
    shred_version: Option<u16>,
    epochs: Vec<(StoredEpoch, Arc<EpochLeaders>)>,
}

impl Fetcher {
    /// A fetcher that starts from `loaded` (the persisted schedule, already installed).
    pub fn new(
        rpc: ClusterRpc,
        path: PathBuf,
        slot: Arc<LeaderSlot>,
        status: Arc<TrustStatus>,
        loaded: Option<StoredSchedule>,
    ) -> Self {
        let mut fetcher = Self {
            rpc,
            path,
            slot,
            status,
            epoch_schedule: None,
            shred_version: None,
            epochs: Vec::new(),
        };
        if let Some(stored) = loaded {
            fetcher.epoch_schedule = Some(stored.epoch_schedule);
            fetcher.shred_version = stored.shred_version;
            fetcher.epochs = stored
                .epochs
                .into_iter()
                .filter_map(|epoch| epoch.build().ok().map(|built| (epoch, built)))
                .collect();
        }
        fetcher
    }

    /// Runs on its own thread until `shutdown`.
    pub fn spawn(self, shutdown: Arc<AtomicBool>) -> std::io::Result<JoinHandle<()>> {
        std::thread::Builder::new()
            .name("leader-schedule".into())
            .spawn(move || self.run(&shutdown))
    }

    fn run(mut self, shutdown: &AtomicBool) {
        let mut backoff = MIN_BACKOFF;
        let mut failing = false;
        while !shutdown.load(Ordering::Acquire) {
            match self.refresh() {
                Ok(()) => {
                    if failing {
                        info!(rpc = %front::redact::redact_url(self.rpc.url()), "leader schedule fetch recovered");
                    }
                    failing = false;
                    backoff = MIN_BACKOFF;
                    sleep(REFRESH, shutdown);
                }
                Err(error) => {
                    self.status.fetch_failed();
                    warn!(rpc = %front::redact::redact_url(self.rpc.url()), reason = error.label(), %error, retry_in = ?backoff,
                        "leader schedule fetch failed; sets of slots without a known leader are refused");
                    failing = true;
                    sleep(backoff, shutdown);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// One pass: fetches the current and the next epoch when missing, installs and persists on
    /// change.
    fn refresh(&mut self) -> Result<(), RpcError> {
        let schedule = match self.epoch_schedule {
            Some(schedule) => schedule,
            None => *self.epoch_schedule.insert(self.rpc.epoch_schedule()?),
        };
        if self.shred_version.is_none() {
            self.shred_version = self.rpc.shred_version()?;
        }
        let info = self.rpc.epoch_info()?;
        let arithmetic = schedule.schedule();
        let mut changed = false;
        for epoch in [info.epoch, info.epoch + 1] {
            if self.epochs.iter().any(|(held, _)| held.epoch == epoch) {
                continue;
            }
            let first_slot = arithmetic.first_slot(epoch);
            // The next epoch's leaders may not be known yet: asked again on the next pass.
            let Some(leaders) = self.rpc.leader_schedule(first_slot)? else {
                continue;
            };
            let stored = StoredEpoch {
                epoch,
                first_slot,
                slots: arithmetic.slots_in_epoch(epoch),
                leaders,
            };
            let built = stored.build().map_err(|error| RpcError::Response {
                method: "getLeaderSchedule",
                reason: error.to_string(),
            })?;
            info!(
                epoch,
                first_slot,
                leaders = built.distinct_leaders(),
                "leader schedule fetched"
            );
            self.epochs.push((stored, built));
            changed = true;
        }
        // Keep the previous epoch (late shreds after a boundary), the current and the next.
        let before = self.epochs.len();
        self.epochs
            .retain(|(held, _)| held.epoch + 1 >= info.epoch && held.epoch <= info.epoch + 1);
        changed |= self.epochs.len() != before;
        if changed {
            self.install(schedule);
        }
        Ok(())
    }

    fn install(&self, schedule: EpochScheduleInfo) {
        let epochs = LeaderEpochs::new(self.epochs.iter().map(|(_, built)| Arc::clone(built)));
        self.status.refused_leaders_in(&epochs);
        let first = self.epochs.iter().map(|(held, _)| held.epoch).min();
        let last = self.epochs.iter().map(|(held, _)| held.epoch).max();
        self.slot.install(LeaderSchedule::Epochs(epochs));
        let now = unix_secs();
        self.status
            .schedule_installed(now, first.unwrap_or(0), last.unwrap_or(0));
        let stored = StoredSchedule {
            epoch_schedule: schedule,
            shred_version: self.shred_version,
            fetched_unix_secs: now,
            epochs: self.epochs.iter().map(|(held, _)| held.clone()).collect(),
        };
        if let Err(error) = super::store::save(&self.path, &stored) {
            warn!(path = %self.path.display(), %error, "leader schedule not persisted");
        }
    }
}

/// Sleeps `duration`, waking early at shutdown.
fn sleep(duration: Duration, shutdown: &AtomicBool) {
    let until = Instant::now() + duration;
    while !shutdown.load(Ordering::Acquire) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(TICK));
    }
}
