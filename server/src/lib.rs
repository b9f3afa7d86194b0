//! Client-facing frontends of the appliance, kept apart from the receive pipeline.
//!
//! This crate will hold the tonic `stream.Stream/SubscribeDecoded` service (filter compile, matching,
//! encoding, per-subscriber session loop), the JSON-RPC archive over the public epoch archive, and the
//! insights API, each with its colocated store. It depends on `decoder` for decoded values and on
//! `stream-proto` for the wire types; it owns no sockets of the shred path.
#![forbid(unsafe_code)]
