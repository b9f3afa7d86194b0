//! The pure decoding core of the shred appliance: datagrams in, entries and transactions out.
//!
//! ```text
//!  &[u8] datagram, rx_ns
//!     │  shred::parse_shred ──────────────► ShredRef (checked header view, format §§2–6, §10)
//!     │  set_stage::SetStage: version + slot window
//!     ▼
//!  fec::FecResolver::insert ───────────────► Merkle proof → root, ed25519 once per set (leader,
//!     │   (fixed pool of 32+32 set slots)     epoch_leaders), confirm, dedup, duplicate blocks,
//!     │                                       chained-root links
//!     │  recovery::recover (≥ 32 of 64) ───► Reed-Solomon (erasure), rebuilt shreds, root check
//!     ▼
//!  SetEvent::DataShredReady (payload copy) ► slot_stage::SlotStage (store keyed by slot, index)
//!     ▼
//!  deshred::Deshredder::insert ────────────► BatchSpan (complete run ending in DATA_COMPLETE)
//!     ▼
//!  SlotStage::next_batch ──────────────────► Batch { bytes, entries: entry::EntryBatch }
//!     │   (a range of block components:        entry batches and block markers, entry::marker)
//!     ▼
//!  entry::EntryView ──► transaction::TransactionView (zero-copy, borrows the batch bytes)
//! ```
//!
//! [`lookup`] names the accounts a v0 transaction loads through address lookup tables: a bounded
//! table cache fed by cluster snapshots and by the lookup table program's instructions seen in
//! the stream, and resolution in the runtime's order into a reused buffer.
//! With `incremental.enabled`, `SlotStage::next_ready` replaces `next_batch`: each transaction
//! is handed out as soon as its bytes are contiguous from a certain batch start
//! (`incremental::RangeParser` over a stream's window), then one `BatchEnd` per batch.
//!
//! No sockets, threads, clocks, files or async: receive times come in as values, results go out as
//! values, and the same bytes always give the same results. `ShredDecoder` runs both stages on one
//! thread; the appliance runs `SetStage`s sharded by `(slot, fec_set_index)` and `SlotStage`s
//! sharded by slot on its workers (docs/workers.md). Every buffer is reserved when a
//! [`ShredDecoder`] is built; the per-shred path does not allocate.
//!
//! The stage core imports one way: [`decoder`] → [`slot_stage`] → [`set_stage`] → [`stage`] (the
//! shared config, rejection and outcome types) and [`fec`]. Who owns a data shred's bytes, and
//! until when, is written down once, in [`set_stage::held`]; every shred header position is named
//! in [`shred::offset`].
//!
//! Comments in this crate cite the wire format as "format §N": the numbered sections of
//! docs/decoder.md, "Shred wire format".
#![forbid(unsafe_code)]

pub mod cursor;
pub mod decoded;
pub mod decoder;
pub mod delta;
pub mod deshred;
pub mod dex;
pub mod entry;
pub mod epoch_leaders;
pub mod erasure;
pub mod fec;
pub mod incremental;
pub mod leader;
pub mod leader_key;
pub mod lookup;
pub mod merkle;
pub mod program_ids;
mod recovery;
pub mod set_stage;
pub mod shard;
pub mod shred;
pub mod slot_stage;
pub mod stage;
pub mod transaction;

pub use decoded::{DecodeStats, DecodedRoute, DecodedTransaction, decode_transaction};
pub use decoder::{Batch, DecoderConfig, Rejection, ShredDecoder, ShredOutcome};
pub use epoch_leaders::{EpochLeaders, EpochSchedule, LeaderEpochs};
pub use leader::LeaderSchedule;
pub use recovery::RecoveryError;
pub use set_stage::{DataShredReady, SetEvent, SetStage};
pub use slot_stage::{
    BatchEnd, ReadyItem, ReadyMarker, ReadyTransaction, SlotStage, SlotStageConfig,
};
