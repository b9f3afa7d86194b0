//! The last good leader schedule on disk (`leader-schedule.json` in the data directory), written
//! after every change and read at start, so a restart mid-epoch verifies from its first shred.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use decoder::{EpochLeaders, LeaderEpochs};
use serde::{Deserialize, Serialize};

use super::rpc::{EpochScheduleInfo, LeaderOffsets};

/// File name in `data.dir`.
pub const FILE_NAME: &str = "leader-schedule.json";

/// Largest file read back (three mainnet epochs as JSON are about 20 MB).
const MAX_FILE_BYTES: u64 = 256 << 20;

/// One epoch as `getLeaderSchedule` returned it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEpoch {
    pub epoch: u64,
    pub first_slot: u64,
    pub slots: u64,
    pub leaders: LeaderOffsets,
}

impl StoredEpoch {
    pub fn build(&self) -> Result<Arc<EpochLeaders>, decoder::epoch_leaders::EpochLeadersError> {
        EpochLeaders::from_offsets(self.epoch, self.first_slot, self.slots, &self.leaders)
            .map(Arc::new)
    }
}

/// The file's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredSchedule {
    pub epoch_schedule: EpochScheduleInfo,
    pub shred_version: Option<u16>,
    /// Unix seconds of the newest epoch fetched.
    pub fetched_unix_secs: u64,
    pub epochs: Vec<StoredEpoch>,
}

impl StoredSchedule {
    /// The epochs as the decoder holds them (the newest three).
    pub fn leader_epochs(&self) -> Result<LeaderEpochs, decoder::epoch_leaders::EpochLeadersError> {
        let built: Result<Vec<_>, _> = self.epochs.iter().map(StoredEpoch::build).collect();
        Ok(LeaderEpochs::new(built?))
    }
}

pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

/// Reads the file; `Ok(None)` when there is none.
pub fn load(path: &Path) -> anyhow::Result<Option<StoredSchedule>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.into()),
    };
    let mut text = Vec::new();
    file.take(MAX_FILE_BYTES).read_to_end(&mut text)?;
    Ok(Some(serde_json::from_slice(&text)?))
}

/// Writes the file (a temporary file renamed over it, so a crash leaves the old one whole).
pub fn save(path: &Path, schedule: &StoredSchedule) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, serde_json::to_vec(schedule)?)?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const LEADER: &str = "7EPbph2S7MU9vxdiTd8HwseuYN3pDnsy4xZiRBHBQFWF";

    #[test]
    fn a_saved_schedule_loads_back_and_verifies_its_slots() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        assert!(load(&file).unwrap().is_none());
        let stored = StoredSchedule {
            epoch_schedule: EpochScheduleInfo {
                slots_per_epoch: 432_000,
                leader_schedule_slot_offset: 432_000,
                warmup: false,
                first_normal_epoch: 0,
                first_normal_slot: 0,
            },
            shred_version: Some(50_093),
            fetched_unix_secs: 1,
            epochs: vec![StoredEpoch {
                epoch: 836,
                first_slot: 361_152_000,
                slots: 432_000,
                leaders: [(LEADER.to_owned(), vec![48_000, 48_001])].into(),
            }],
        };
        save(&file, &stored).unwrap();
        let loaded = load(&file).unwrap().unwrap();
        assert_eq!(loaded, stored);
        let epochs = loaded.leader_epochs().unwrap();
        let key = decoder::LeaderSchedule::key_from_base58(LEADER).unwrap();
        assert_eq!(epochs.leader(361_200_001), Some(&key));
        assert_eq!(epochs.leader(361_200_002), None);
    }

    #[test]
    fn a_garbage_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        std::fs::write(&file, b"{\"epochs\": 7").unwrap();
        assert!(load(&file).is_err());
    }
}
