//! The cluster's JSON-RPC as the schedule fetcher uses it: `getEpochSchedule`, `getEpochInfo`,
//! `getLeaderSchedule` and `getClusterNodes`. A blocking HTTP/1.1 client (ureq, keep-alive, http
//! or https with the upstream's trust), every answer bounded in size and time.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use decoder::EpochSchedule;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// Why a call failed; the label names it in logs.
/// Why a call failed (the shared client's error; labels: transport, status, response, rpc).
pub type RpcError = front::jsonrpc::CallError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EpochScheduleInfo {
    pub slots_per_epoch: u64,
    pub leader_schedule_slot_offset: u64,
    pub warmup: bool,
    pub first_normal_epoch: u64,
    pub first_normal_slot: u64,
}

impl EpochScheduleInfo {
    pub const fn schedule(&self) -> EpochSchedule {
        EpochSchedule {
            slots_per_epoch: self.slots_per_epoch,
            warmup: self.warmup,
            first_normal_epoch: self.first_normal_epoch,
            first_normal_slot: self.first_normal_slot,
        }
    }
}

/// The fields of `getEpochInfo`'s result the fetcher needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EpochInfo {
    pub absolute_slot: u64,
    pub epoch: u64,
    pub slot_index: u64,
    pub slots_in_epoch: u64,
}

/// `getLeaderSchedule`'s result: each leader (base58) with its slot offsets in the epoch.
pub type LeaderOffsets = BTreeMap<String, Vec<u64>>;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClusterNode {
    #[serde(default)]
    shred_version: Option<u16>,
}

/// A JSON-RPC client of the cluster.
pub struct ClusterRpc {
    client: front::jsonrpc::JsonRpcClient,
}

impl ClusterRpc {
    pub fn new(
        url: &str,
        timeout: Duration,
        max_response_bytes: u64,
        trust: &front::tls_client::UpstreamTrust,
    ) -> Self {
        Self {
            client: front::jsonrpc::JsonRpcClient::new(url, timeout, max_response_bytes, trust),
        }
    }

    pub fn url(&self) -> &str {
        self.client.url()
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<Option<T>, RpcError> {
        self.client.call(method, params)
    }

    fn required<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<T, RpcError> {
        self.call(method, params)?.ok_or(RpcError::Response {
            method,
            reason: "no result".into(),
        })
    }

    pub fn epoch_schedule(&self) -> Result<EpochScheduleInfo, RpcError> {
        self.required("getEpochSchedule", serde_json::json!([]))
    }

    pub fn epoch_info(&self) -> Result<EpochInfo, RpcError> {
        self.required(
            "getEpochInfo",
            serde_json::json!([{"commitment": "confirmed"}]),
        )
    }

    /// The leaders of the epoch holding `slot`; `None` while the cluster does not know them yet.
    pub fn leader_schedule(&self, slot: u64) -> Result<Option<LeaderOffsets>, RpcError> {
        self.call(
            "getLeaderSchedule",
            serde_json::json!([slot, {"commitment": "confirmed"}]),
        )
    }

    /// The shred version most cluster nodes announce; `None` when no node announces one.
    pub fn shred_version(&self) -> Result<Option<u16>, RpcError> {
        let nodes: Vec<ClusterNode> = self.required("getClusterNodes", serde_json::json!([]))?;
        let mut votes: HashMap<u16, usize> = HashMap::new();
        for version in nodes.iter().filter_map(|node| node.shred_version) {
            *votes.entry(version).or_default() += 1;
        }
        Ok(votes
            .into_iter()
            .max_by_key(|&(version, count)| (count, version))
            .map(|(version, _)| version))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use testkit::cluster_rpc::{Behavior, ClusterStandin, ClusterState};

    use super::*;

    const LEADER: &str = "7EPbph2S7MU9vxdiTd8HwseuYN3pDnsy4xZiRBHBQFWF";

    fn client(standin: &ClusterStandin, limit: u64) -> ClusterRpc {
        let trust = front::tls_client::UpstreamTrust::load(None).unwrap();
        ClusterRpc::new(&standin.url(), Duration::from_secs(5), limit, &trust)
    }

    #[test]
    fn the_validators_answers_are_read() {
        let mut state = ClusterState::new(32, 70).with_leader(64..=65, LEADER);
        state.node_shred_versions = vec![3, 9, 3];
        state.unknown_epochs = vec![3];
        let standin = ClusterStandin::start(state).unwrap();
        let rpc = client(&standin, 1 << 20);
        let schedule = rpc.epoch_schedule().unwrap();
        assert_eq!((schedule.slots_per_epoch, schedule.warmup), (32, false));
        let info = rpc.epoch_info().unwrap();
        assert_eq!(
            (info.epoch, info.slot_index, info.absolute_slot),
            (2, 6, 70)
        );
        let leaders = rpc.leader_schedule(64).unwrap().unwrap();
        assert_eq!(leaders[LEADER], [0, 1]);
        assert_eq!(rpc.leader_schedule(96).unwrap(), None);
        assert_eq!(rpc.shred_version().unwrap(), Some(3));
    }

    #[test]
    fn down_garbage_and_oversized_answers_are_errors_with_their_reason() {
        let standin = ClusterStandin::start(ClusterState::new(32, 0)).unwrap();
        let rpc = client(&standin, 4096);
        for (behavior, label) in [
            (Behavior::Down, "transport"),
            (Behavior::Garbage, "response"),
            (Behavior::Oversized(1 << 20), "transport"),
        ] {
            standin.update(|state| state.behavior = behavior);
            let error = rpc.epoch_info().unwrap_err();
            assert_eq!(error.label(), label, "{behavior:?}: {error}");
        }
    }
}
