//! HTTP plumbing shared by the appliance's frontends: the actix server that carries `/health`,
//! `/metrics` and the mounted frontends ([`http`]), the operator console's page ([`console`]), access tokens for HTTP and gRPC ([`auth`]),
//! cross-origin requests ([`cors`]), the per-address connection cap of both listeners
//! ([`conn_cap`]),
//! the TLS trust of clients that talk to an upstream validator ([`tls_client`]), and the one
//! writer of the Prometheus text format every `/metrics` renderer uses ([`exposition`]).
#![forbid(unsafe_code)]

pub mod auth;
pub mod body_deadline;
pub mod conn_cap;
pub mod console;
pub mod cors;
pub mod exposition;
pub mod http;
pub mod jsonrpc;
pub mod redact;
pub mod tls_client;
