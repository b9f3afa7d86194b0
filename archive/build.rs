//! Generates the prost types of `proto/confirmed_block.proto` (the validator's stored block and
//! transaction-status schema, as the epoch archive stores metadata and rewards). protoc comes from
//! `PROTOC` when set, else from `protoc-bin-vendored`, so a fresh machine needs no system package.

use std::env;
use std::error::Error;
use std::path::PathBuf;

const PROTO: &str = "proto/confirmed_block.proto";

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed={PROTO}");
    println!("cargo:rerun-if-env-changed=PROTOC");
    let protoc = match env::var_os("PROTOC") {
        Some(path) => PathBuf::from(path),
        None => protoc_bin_vendored::protoc_bin_path().map_err(|e| {
            format!("no PROTOC set and protoc-bin-vendored has no binary for this host: {e}")
        })?,
    };
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc);
    config.compile_protos(&[PROTO], &["proto"])?;
    Ok(())
}
