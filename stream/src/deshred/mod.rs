//! Yellowstone gRPC's `geyser.Geyser/SubscribeDeshred` (issue 26, docs/yellowstone.md): every
//! transaction of every completed entry batch, before execution, as Yellowstone clients expect
//! it (the full `solana.storage` transaction, the vote flag, loaded addresses, the data set's
//! shred range), through their named filters; slot updates; pings.
//!
//! ```text
//! worker ─ DeshredTransaction::new (encode once) ─ DeshredFeed::publish ─► broadcast ring ─►
//!   each session: its filters ─► OutboundDeshred (names + shared body) ─► tonic ─► client
//! ```
//! [`item`] builds what is published, [`filter`] compiles and matches a session's filters,
//! [`feed`] is the ring, [`session`] the method on the shared ring session
//! ([`crate::grpc::ring`]), [`outbound`] the message on the wire and [`server`] the tonic service
//! with the unary methods.

pub mod feed;
pub mod filter;
pub mod item;
pub mod outbound;
pub mod server;
pub mod session;

pub use feed::{DEFAULT_DESHRED_QUEUE, DeshredFeed};
pub use item::{DataSet, DeshredTransaction, Loaded, SlotUpdate};
pub use server::GeyserServer;
pub use yellowstone_grpc_proto::geyser::SlotStatus;
