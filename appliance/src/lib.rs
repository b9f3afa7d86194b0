//! The shred appliance as a library: what the `appliance` binary runs, and what the bench tools
//! and tests drive directly. docs/architecture.md maps it.
//!
//! - [`cli`]: the command line, one module per subcommand; `cli::run` wires the service.
//! - [`config`]: the TOML file and every flag of `run`, validated as one; the operator's
//!   vocabulary the other rooms import (a leaf: it imports no other room).
//! - [`receive`]: receive threads (AF_XDP, batched UDP) that shard datagrams into the worker rings.
//! - [`handoff`]: what receive threads and workers share: the datagram slot, the lock-free rings,
//!   wake-ups and real-time scheduling.
//! - [`pipeline`]: the worker pool (decode, stamp, publish).
//! - [`replay`]: the replay source of the embedded default and `--replay`.
//! - [`relay`]: `--relay`, re-serving another appliance's stream (a second tier).
//! - [`grpc`], [`frontends`]: serving the stream, and the HTTP address (archive, insights,
//!   health, metrics).
//! - [`metrics`]: every Prometheus family of the appliance.
//! - [`console`]: the operator console's stats document (the page is `front::console`).

// Unsafe code lives only in the receive backends (`receive::{sockopt, udp, xdp}`), the lock-free
// worker ring (`handoff::ring`), the replay's sendmmsg (`replay::send`) and
// `sched_setscheduler` (`handoff::sched`), which allow it module by module with a `// SAFETY:`
// note on every block.
#![deny(unsafe_code)]

pub mod cli;
pub mod cluster;
pub mod config;
pub mod console;
#[allow(unsafe_code)] // getrlimit/setrlimit
pub mod fd_limit;
pub mod frontends;
pub mod grpc;
pub mod handoff;
pub mod metrics;
pub mod pipeline;
pub mod receive;
pub mod relay;
pub mod replay;
pub mod samples;
pub mod security;
