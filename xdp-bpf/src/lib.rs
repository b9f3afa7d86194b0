//! The XDP program of the AF_XDP receive path, generated as BPF bytecode in Rust.
//!
//! The program parses Ethernet/IPv4/UDP, redirects datagrams whose destination port is one of the
//! configured shred ports to the XSKMAP entry of the receiving queue, and passes everything else to
//! the kernel stack. Emitting the bytecode from Rust (as Firedancer does from C in
//! `src/waltz/xdp/fd_xdp_redirect_prog.c`) means the build needs no nightly toolchain, no
//! bpf-linker and no clang. This crate only builds bytes; loading, attaching and the sockets are
//! the appliance's `receive::xdp` modules.
//!
//! ```text
//! ProgramSpec { ports, xskmap_fd, fallback } --program::build--> Vec<Insn> --insn::to_bytes--> BPF_PROG_LOAD
//! ```
#![forbid(unsafe_code)]

pub mod asm;
pub mod insn;
pub mod program;

pub use insn::{Insn, to_bytes};
pub use program::{PORTS_MAX, ProgramError, ProgramSpec, XDP_DROP, XDP_PASS, XDP_REDIRECT, build};
