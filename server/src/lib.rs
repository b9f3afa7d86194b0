//! Client-facing frontends of the appliance, kept apart from the receive pipeline.
//!
//! ```text
//! decoder values (TransactionView, DecodedInstruction) ─ updates ─► stream::SubscribeUpdate
//! ```
//! Today: [`updates`], the one place where decoded values become the stream's wire messages
//! (used by the workers that publish and by `appliance decode-tx`). The tonic
//! `stream.Stream/SubscribeDecoded` service (filter compile, matching, encoding, per-subscriber
//! session loop), the JSON-RPC archive and the insights API join here with their issues.
#![forbid(unsafe_code)]

pub mod auth;
pub mod delta_updates;
pub mod fanout;
pub mod filter;
pub mod http;
pub mod insights;
pub mod rpc;
pub mod stream_service;
pub mod tls_client;
pub mod updates;
