//! Generates the Rust side of `stream.proto` (and of `shredstream.proto`, the shredstream proxy's
//! entry service, without JSON) at build time:
//!
//! 1. protoc (from `PROTOC` when set, else the binary shipped by `protoc-bin-vendored`, so a fresh
//!    machine needs no system package) compiles the proto into a `FileDescriptorSet`;
//! 2. `tonic-prost-build` emits the prost messages plus the tonic server and client
//!    (`$OUT_DIR/stream.rs`) and writes the encoded descriptor set (`$OUT_DIR/stream.fds.bin`);
//! 3. `pbjson-build` reads that descriptor set and emits serde impls following the canonical
//!    proto3 JSON mapping (`$OUT_DIR/stream.serde.rs`).

use std::env;
use std::error::Error;
use std::path::PathBuf;

const PROTO: &str = "stream.proto";
const SHREDSTREAM_PROTO: &str = "shredstream.proto";

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed={PROTO}");
    println!("cargo:rerun-if-changed={SHREDSTREAM_PROTO}");
    println!("cargo:rerun-if-env-changed=PROTOC");

    let out_dir =
        PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR is not set: run through cargo")?);
    let descriptor_path = out_dir.join("stream.fds.bin");

    let protoc = match env::var_os("PROTOC") {
        Some(path) => PathBuf::from(path),
        None => protoc_bin_vendored::protoc_bin_path().map_err(|e| {
            format!("no PROTOC set and protoc-bin-vendored has no binary for this host: {e}")
        })?,
    };
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(&protoc);

    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .file_descriptor_set_path(&descriptor_path)
        // Our own `rerun-if-changed` above is enough; avoid also watching the include dir.
        .emit_rerun_if_changed(false)
        .compile_with_config(config, &[PROTO], &["."])?;

    // The shredstream proxy's service (issue 26): its own descriptor set, so the `stream`
    // package's stays one file.
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(&protoc);
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .bytes(".shredstream.Entry.entries")
        .file_descriptor_set_path(out_dir.join("shredstream.fds.bin"))
        .emit_rerun_if_changed(false)
        .compile_with_config(config, &[SHREDSTREAM_PROTO], &["."])?;

    let descriptor_set = std::fs::read(&descriptor_path)
        .map_err(|e| format!("reading {}: {e}", descriptor_path.display()))?;
    pbjson_build::Builder::new()
        .register_descriptors(&descriptor_set)?
        .build(&[".stream"])?;

    Ok(())
}
