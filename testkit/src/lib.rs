//! Test support, shared by the workspace's tests and the bench tools, never linked into the
//! appliance binary: synthetic epochs ([`synth`]), the JSON-RPC fixture store ([`rpc_fixture`]),
//! the insights stand-in upstream ([`insights_standin`]) and its fixture chain's blocks
//! ([`insights_fixture`]), and the stand-in cluster JSON-RPC of the leader-schedule fetcher
//! ([`cluster_rpc`]), hostile variations of genuine shreds ([`shred_attacks`]) and the
//! range-capable public file host of the archive tests ([`file_host`]), JSON comparison with
//! expected figures ([`json_match`]), and a leader's shredder for transactions a test builds
//! ([`shredder`]).
#![forbid(unsafe_code)]

/// The archive crate the kit writes with, for the archive's own unit tests (which link a second
/// copy of it, so they must write through this one).
pub use archive;

pub mod cluster_rpc;
pub mod file_host;
pub mod insights_fixture;
pub mod insights_standin;
pub mod json_match;
pub mod rpc_fixture;
pub mod shred_attacks;
pub mod shredder;
pub mod synth;
