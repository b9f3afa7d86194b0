//! The worker pool between the receive threads and the stream: each worker owns a shard of FEC
//! sets and slots, decodes (decoder crate), stamps `ServerTiming` (it owns the clock) and
//! publishes into the fan-out. Its rings, wake-ups and scheduling are [`crate::handoff`];
//! [`drain`] is the worker's drain of its slot stage (per transaction or per batch), [`publish`]
//! the per-transaction step, [`lookups`] a worker's hook into the shared lookup-table cache,
//! [`deshred`] the publication for Yellowstone's `SubscribeDeshred`.

pub mod deshred;
pub mod drain;
pub mod lookups;
pub mod publish;
pub mod workers;
