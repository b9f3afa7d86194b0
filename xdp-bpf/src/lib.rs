//! The XDP program of the AF_XDP receive path, generated as BPF bytecode in Rust.
//!
//! The program parses Ethernet/IPv4/UDP, redirects datagrams whose destination port is one of the
//! configured shred ports to the XSKMAP entry of the receiving queue, and passes everything else to
//! the kernel stack. Emitting the bytecode from Rust (as Firedancer does from C) means the build needs
//! no nightly toolchain and no bpf-linker. Filled in by the pipeline work (issue: appliance pipeline).
#![forbid(unsafe_code)]
