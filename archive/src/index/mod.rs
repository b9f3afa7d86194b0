//! Index files: the published formats (compactindexsized, sig-exists, slot-to-blocktime,
//! slot-ranges), our own slot-to-blockhash and address → signatures index, and the names they
//! carry next to their CAR (format §5, adapted per piece).

pub mod addr;
pub mod compact;
pub mod meta;
pub mod sigexists;
pub mod slots;

use std::path::{Path, PathBuf};

use crate::cid::Cid;
use crate::index::addr::AddressIndexPaths;

/// The network name written into index metadata and file names.
pub const NETWORK: &str = "mainnet";

/// Where the indexes of one CAR live: `<dir>/<stem>-<rootCid>-mainnet-<kind>.index`, where
/// `<stem>` is the CAR's file name without `.car` (`epoch-<N>` for a whole epoch as published,
/// e.g. `epoch-0-1` for a piece).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexPaths {
    pub slot_to_cid: PathBuf,
    pub sig_to_cid: PathBuf,
    pub cid_to_offset: PathBuf,
    pub sig_exists: PathBuf,
    pub slot_to_blocktime: PathBuf,
    /// `<stem>-slot-ranges.raw` (the published name has no CID).
    pub slot_ranges: PathBuf,
    pub slot_to_blockhash: PathBuf,
    pub address: AddressIndexPaths,
}

impl IndexPaths {
    /// Names for the CAR at `car` with root `root`.
    pub fn for_car(car: &Path, root: &Cid) -> IndexPaths {
        let dir = car.parent().map(Path::to_path_buf).unwrap_or_default();
        let stem = car
            .file_name()
            .and_then(|n| n.to_str())
            .map(|n| n.strip_suffix(".car").unwrap_or(n).to_string())
            .unwrap_or_default();
        let name = |kind: &str| dir.join(format!("{stem}-{root}-{NETWORK}-{kind}.index"));
        IndexPaths {
            slot_to_cid: name("slot-to-cid"),
            sig_to_cid: name("sig-to-cid"),
            cid_to_offset: name("cid-to-offset-and-size"),
            sig_exists: name("sig-exists"),
            slot_to_blocktime: name("slot-to-blocktime"),
            slot_ranges: dir.join(format!("{stem}-slot-ranges.raw")),
            slot_to_blockhash: name("slot-to-blockhash"),
            address: AddressIndexPaths {
                txs: name("asig-txs"),
                sig_to_ordinal: name("asig-sig-to-ordinal"),
                postings: name("asig-postings"),
                directory: name("asig-address-to-postings"),
            },
        }
    }
}
