//! The trust mode chosen at start (docs/deploy.md, "Trust modes"), the schedule the workers begin
//! with (fixed keys, the persisted schedule, or none yet) and the fetcher when an RPC is known.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread::JoinHandle;
use std::time::Duration;

use decoder::{LeaderEpochs, LeaderSchedule};
use ed25519_dalek::VerifyingKey;
use tracing::{info, warn};

use super::rpc::ClusterRpc;
use super::schedule::Fetcher;
use super::store::{self, StoredSchedule};
use super::{LeaderSlot, TrustMode, TrustStatus};
use crate::config::Config;

/// Longest wait at start for the cluster's shred version (the RPC may be down).
const START_TIMEOUT: Duration = Duration::from_secs(3);

/// What `run` holds of trust: the workers' schedule, the status, the fetcher thread.
pub struct Trust {
    pub slot: Arc<LeaderSlot>,
    pub status: Arc<TrustStatus>,
    pub fetcher: Option<JoinHandle<()>>,
}

impl Trust {
    fn fixed(mode: TrustMode, schedule: LeaderSchedule) -> Self {
        Self {
            slot: Arc::new(LeaderSlot::new(schedule)),
            status: Arc::new(TrustStatus::new(mode)),
            fetcher: None,
        }
    }
}

/// Chooses the mode, logs it, and starts the fetcher in verified mode with an RPC. May set
/// `config.decoder.shred_version` (the cluster's, unless configured). `replay_leader`: the key
/// of a looping replay, which verifies its own signatures unless `--trust-feed` is given (the
/// latency harness compares the two modes on the same replay).
pub fn start(
    config: &mut Config,
    replay_leader: Option<VerifyingKey>,
    shutdown: &Arc<AtomicBool>,
) -> anyhow::Result<Trust> {
    let trust = if !config.decoder.authenticate {
        warn!(
            mode = "unauthenticated",
            "decoder.authenticate = false: nothing is checked, forged shreds are published"
        );
        Trust::fixed(TrustMode::Unauthenticated, LeaderSchedule::Unchecked)
    } else if let Some(key) = replay_leader.filter(|_| !config.cluster.trust_feed) {
        info!(mode = "verified", "trust mode: the replay's own key");
        Trust::fixed(TrustMode::Verified, LeaderSchedule::Fixed(key))
    } else if !config.cluster.leaders.is_empty() {
        let keys = config
            .cluster
            .leaders
            .iter()
            .map(|text| LeaderSchedule::key_from_base58(text))
            .collect::<Result<Vec<_>, _>>()?;
        info!(mode = "verified", leaders = ?config.cluster.leaders, "trust mode: fixed leader keys");
        Trust::fixed(TrustMode::Verified, LeaderSchedule::any_of(keys))
    } else if config.cluster.trust_feed {
        warn!(
            mode = "trusted",
            "--trust-feed: leader signatures are not checked; whoever reaches the receive port is believed"
        );
        Trust::fixed(TrustMode::Trusted, LeaderSchedule::Unchecked)
    } else if let Some(url) = config.cluster.rpc_url(&config.archive).map(str::to_owned) {
        from_rpc(config, &url, shutdown)?
    } else {
        warn!(
            mode = "trusted",
            "no --rpc, --upstream or --leader: leader signatures are not checked; whoever reaches the receive port is believed (docs/deploy.md)"
        );
        Trust::fixed(TrustMode::Trusted, LeaderSchedule::Unchecked)
    };
    Ok(trust)
}

/// Verified mode from the cluster's RPC: the persisted schedule at once, the fetcher for the rest.
fn from_rpc(config: &mut Config, url: &str, shutdown: &Arc<AtomicBool>) -> anyhow::Result<Trust> {
    let upstream_trust =
        front::tls_client::UpstreamTrust::load(config.archive.upstream_ca.as_deref())?;
    let cluster = &config.cluster;
    let timeout = Duration::from_secs(cluster.timeout_secs);
    let limit = cluster.max_response_mb << 20;
    let path = store::path(&config.data.dir);
    let loaded = match store::load(&path) {
        Ok(loaded) => loaded,
        Err(error) => {
            warn!(path = %path.display(), %error, "persisted leader schedule unreadable; ignored");
            None
        }
    };
    let status = Arc::new(TrustStatus::new(TrustMode::Verified));
    let schedule = initial_schedule(loaded.as_ref(), &status);
    if config.decoder.shred_version.is_none() {
        let quick = ClusterRpc::new(url, START_TIMEOUT.min(timeout), limit, &upstream_trust);
        config.decoder.shred_version = match quick.shred_version() {
            Ok(version) => version,
            Err(error) => {
                warn!(%error, "cluster shred version unknown at start; the persisted one is used");
                loaded.as_ref().and_then(|stored| stored.shred_version)
            }
        };
        info!(shred_version = ?config.decoder.shred_version, "shred version");
    }
    info!(mode = "verified", rpc = %front::redact::redact_url(url), schedule_loaded = loaded.is_some(),
        "trust mode: leader schedule from the cluster; sets of slots without a known leader are refused");
    let slot = Arc::new(LeaderSlot::new(schedule));
    let rpc = ClusterRpc::new(url, timeout, limit, &upstream_trust);
    let fetcher = Fetcher::new(rpc, path, Arc::clone(&slot), Arc::clone(&status), loaded);
    let handle = fetcher.spawn(Arc::clone(shutdown))?;
    Ok(Trust {
        slot,
        status,
        fetcher: Some(handle),
    })
}

/// The persisted epochs (none: every set is refused until the first fetch).
fn initial_schedule(loaded: Option<&StoredSchedule>, status: &TrustStatus) -> LeaderSchedule {
    let Some(stored) = loaded else {
        return LeaderSchedule::Epochs(LeaderEpochs::default());
    };
    match stored.leader_epochs() {
        Ok(epochs) => {
            status.refused_leaders_in(&epochs);
            let numbers = stored.epochs.iter().map(|epoch| epoch.epoch);
            let (first, last) = (numbers.clone().min(), numbers.max());
            status.schedule_installed(
                stored.fetched_unix_secs,
                first.unwrap_or(0),
                last.unwrap_or(0),
            );
            info!(first_epoch = ?first, last_epoch = ?last, "persisted leader schedule loaded");
            LeaderSchedule::Epochs(epochs)
        }
        Err(error) => {
            warn!(%error, "persisted leader schedule refused");
            LeaderSchedule::Epochs(LeaderEpochs::default())
        }
    }
}
