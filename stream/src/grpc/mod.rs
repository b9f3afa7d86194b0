//! The session layer every streaming gRPC method of the stream's port stands on, so that a
//! method is a filter and an encoder, not a copy of the plumbing:
//!
//! ```text
//! http request ─ method::serve (codec, compression, sizes) ─► StreamingMethod::open(requests, client)
//!   ─ places::OpenStream::admit (caps: total, per address, per token; counted) ─► the method's session:
//!       inbound::InboundReader ─► session::turn (half-close, bad request, shutdown; ends counted)
//!       ring::session (Yellowstone's rules over a broadcast ring, for a RingMethod) or its own loop
//!   ─► outbound::Outbound<F> (own message, or a SharedFrame around encode-once bytes) ─► client
//! ```
//! - [`method`]: the hand-written tonic plumbing of a streaming method and its [`CodecConfig`].
//! - [`places`]: the caps on open streams and one stream's place ([`OpenStream`]).
//! - [`metrics`]: the sessions' counters and [`DisconnectReason`]s.
//! - [`inbound`]: the reader of a session's requests and the server's shutdown.
//! - [`session`]: what a session does with each inbound event.
//! - [`ring`]: a whole session over a broadcast ring, for a method's filter and encoder.
//! - [`outbound`]: the encode-only message a session sends.

pub mod inbound;
pub mod method;
pub mod metrics;
pub mod outbound;
pub mod places;
pub mod ring;
pub mod session;

pub use method::{CodecConfig, OutboundStream, StreamingMethod};
pub use metrics::{DisconnectReason, StreamMetrics};
pub use outbound::{Outbound, SharedFrame};
pub use places::{Client, OpenStream, PlaceCaps, Places};
pub use ring::RingMethod;
