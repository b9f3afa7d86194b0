//! Wire types of the decoded-transaction stream: the `stream` protobuf package of
//! `proto/stream.proto` (interface specification, area A: sections 2.1-2.10, 4.1 and 6).
//!
//! Everything is generated at build time from the `.proto` (see `build.rs`):
//!
//! * [`stream`]: the prost messages and enums (e.g. [`stream::SubscribeUpdate`],
//!   [`stream::DecodedTransaction`], [`stream::DexProgram`]), the oneofs as nested modules
//!   ([`stream::subscribe_update::Update`], [`stream::decoded_instruction::Decoded`]), the tonic
//!   server ([`stream::stream_server::StreamServer`] and the [`stream::stream_server::Stream`]
//!   trait to implement) and client ([`stream::stream_client::StreamClient`]);
//! * serde `Serialize`/`Deserialize` for every message and enum, following the canonical proto3
//!   JSON mapping (lowerCamelCase keys, 64-bit integers as strings, bytes as base64, enums by
//!   name, default values omitted);
//! * [`FILE_DESCRIPTOR_SET`]: the encoded `FileDescriptorSet` of the package, for gRPC reflection
//!   and for checking the schema against the specification.
//!
//! This crate holds no logic: the server crate implements the service, clients and tests use the
//! types.

/// The `stream` protobuf package: messages, enums, oneofs, tonic server and client, and the
/// proto3-JSON serde impls.
pub mod stream {
    tonic::include_proto!("stream");
    include!(concat!(env!("OUT_DIR"), "/stream.serde.rs"));
}

/// The encoded `google.protobuf.FileDescriptorSet` of `stream.proto` (as written by protoc with
/// source info), e.g. for `tonic-reflection` or for checking the schema at run time.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/stream.fds.bin"));

/// The shredstream proxy's `shredstream` package (`proto/shredstream.proto`, transcribed from
/// jito-labs/mev-protos): `SubscribeEntries`, its messages, tonic server and client.
pub mod shredstream {
    tonic::include_proto!("shredstream");
}

/// The encoded `FileDescriptorSet` of `shredstream.proto`, for gRPC reflection.
pub const SHREDSTREAM_FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/shredstream.fds.bin"));
