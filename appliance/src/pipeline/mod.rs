//! The worker pool between the receive threads and the stream: each worker owns a shard of FEC
//! sets and slots, decodes (decoder crate), stamps `ServerTiming` (it owns the clock) and
//! publishes into the fan-out. Its rings, wake-ups and scheduling are [`crate::handoff`];
//! [`output`] is the worker's publish path in one room (the drain of its slot stage per
//! transaction or per batch, the stamps and every clock read, the feeds), [`lookups`] a worker's
//! hook into the shared lookup-table cache, [`forward`] a set-stage event's way to the worker
//! owning its slot.

pub mod forward;
pub mod lookups;
pub mod output;
pub mod workers;
