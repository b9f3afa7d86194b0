//! The gRPC stream `stream.Stream/SubscribeDecoded`, from a decoded transaction to the wire:
//!
//! ```text
//! decoder::DecodedTransaction ─ encode ─► SubscribeUpdate ─ service::Feed::publish ─►
//!   fanout::Hub (match once via the filter index, encode once) ─► per-session queue ─►
//!   service session (personalise: matched filters, subscriber_recv) ─► tonic ─► client
//! ```
//! [`filter`] compiles and matches subscriber filters; [`encode`] builds messages (pure: no
//! clock, no publishing); [`fanout`] holds the hub, its index and the bounded session queues;
//! [`service`] is the tonic service and its per-subscriber sessions; [`timing`] is the one
//! `ServerTiming` clock. [`entries`] is the second service on the same port: the shredstream
//! proxy's `SubscribeEntries` (whole entry batches as deshredded), and [`deshred`] the third:
//! Yellowstone's `geyser.Geyser/SubscribeDeshred`. [`grpc`] is the session layer the streaming
//! methods share (tonic plumbing, limits, inbound rules, encode-only outbound messages).
#![forbid(unsafe_code)]

pub mod deshred;
pub mod encode;
pub mod entries;
pub mod fanout;
pub mod filter;
pub mod grpc;
pub mod service;
pub mod timing;
