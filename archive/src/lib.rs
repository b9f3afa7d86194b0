//! The public per-epoch Solana archive ("Old Faithful" CAR files and their indexes): reading
//! epochs, building their indexes, writing CARs, and the [`ArchiveStore`] contract through which
//! the JSON-RPC archive (the `rpc` crate) and the insights backfill read blocks and transactions.
//!
//! Format reference: docs/archive.md ("Format reference", cited in this crate as "format §n").

pub mod block;
pub mod build;
pub mod car;
pub mod catalog;
pub mod cid;
pub mod error;
pub mod frame;
pub mod http;
pub mod index;
pub mod local;
pub mod lru;
pub mod meta;
pub mod model;
pub mod node;
pub mod prom;
pub mod rangecache;
pub mod rangeclient;
pub mod readat;
pub mod slotmemo;
pub mod store;
pub mod txerror;
pub mod txwire;
pub mod varint;
pub mod writer;

/// Generated prost types of the validator's stored schema (`solana.storage.ConfirmedBlock`).
pub mod proto {
    #![allow(clippy::all, missing_docs)]
    include!(concat!(
        env!("OUT_DIR"),
        "/solana.storage.confirmed_block.rs"
    ));
}

pub use catalog::{Catalog, LiveStore, open_archives};
pub use cid::Cid;
pub use error::FormatError;
pub use local::{EpochArchive, LocalArchive, PieceInfo};
pub use model::{Block, SignatureInfo, SignatureQuery, Transaction, TransactionInBlock};
pub use store::{ArchiveError, ArchiveStore, SignaturePage, SlotLookup};

/// Slots per epoch: the mainnet constant the archive hard-codes (never read from a file).
pub const SLOTS_PER_EPOCH: u64 = 432_000;

/// The epoch that holds `slot`.
pub const fn epoch_of(slot: u64) -> u64 {
    slot / SLOTS_PER_EPOCH
}
