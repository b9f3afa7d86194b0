//! The XDP program itself: Ethernet → IPv4 → UDP destination port → `bpf_redirect_map` into the
//! XSKMAP slot of the receiving queue; every other frame goes on to the kernel stack.
//!
//! ```text
//!     r6 = r1                            ; struct xdp_md *ctx (survives the helper call)
//!     r2 = *(u32 *)(r6 + 0)              ; data
//!     r3 = *(u32 *)(r6 + 4)              ; data_end
//!     r4 = r2 ; r4 += 34                 ; Ethernet (14) + minimal IPv4 header (20)
//!     if r4 > r3 goto pass
//!     r5 = *(u16 *)(r2 + 12)             ; EtherType; VLAN tags (0x8100) are not parsed: pass
//!     if r5 != ETH_P_IP goto pass
//!     r5 = *(u8 *)(r2 + 14)              ; version (4 bits) | IHL (4 bits)
//!     r7 = r5 ; r7 &= 0xf0
//!     if r7 != 0x40 goto pass            ; IPv4 only
//!     r5 &= 0x0f
//!     if r5 < 5 goto pass                ; IHL below the minimum: malformed
//!     r7 = *(u8 *)(r2 + 23)              ; protocol
//!     if r7 != IPPROTO_UDP goto pass
//!     r7 = *(u16 *)(r2 + 20)             ; flags | fragment offset
//!     r7 &= MF | OFFSET
//!     if r7 != 0 goto pass               ; fragments go to the stack for reassembly
//!     r5 <<= 2                           ; header length in bytes, 20..=60 (IP options)
//!     r2 += r5
//!     r4 = r2 ; r4 += 22                 ; Ethernet (14) + UDP header (8) past the IP header
//!     if r4 > r3 goto pass
//!     r7 = *(u16 *)(r2 + 16)             ; UDP destination port (14 + 2)
//!     if r7 == PORT_0 goto redirect      ; one compare per configured port
//!     ...
//!     goto pass
//! redirect:
//!     r2 = *(u32 *)(r6 + 16)             ; ctx->rx_queue_index: the XSKMAP key
//!     r1 = map XSKMAP                    ; 64-bit immediate, map fd resolved by the kernel
//!     r3 = FALLBACK                      ; action when the queue has no socket (XDP_PASS)
//!     call bpf_redirect_map
//!     exit
//! pass:
//!     r0 = XDP_PASS
//!     exit
//! ```
//! Header fields are compared in network byte order: the constants are the host's reading of
//! the big-endian wire bytes, computed when the program is built on the host that loads it.

use crate::asm::{AsmError, Assembler};
use crate::insn::{BPF_FUNC_REDIRECT_MAP, BPF_JEQ, BPF_JGT, BPF_JLT, BPF_JNE, Insn, Reg, Size};

/// XDP verdicts (`enum xdp_action`).
pub const XDP_ABORTED: i32 = 0;
pub const XDP_DROP: i32 = 1;
pub const XDP_PASS: i32 = 2;
pub const XDP_REDIRECT: i32 = 4;

/// Offsets in `struct xdp_md` (`include/uapi/linux/bpf.h`).
const XDP_MD_DATA: i16 = 0;
const XDP_MD_DATA_END: i16 = 4;
const XDP_MD_RX_QUEUE_INDEX: i16 = 16;

/// Header sizes and field offsets (RFC 894, RFC 791, RFC 768).
const ETHERNET_HEADER_BYTES: i32 = 14;
const ETHERTYPE_OFFSET: i16 = 12;
const IPV4_MIN_HEADER_BYTES: i32 = 20;
const IPV4_VERSION_IHL_OFFSET: i16 = 14;
const IPV4_FRAGMENT_OFFSET: i16 = 14 + 6;
const IPV4_PROTOCOL_OFFSET: i16 = 14 + 9;
const UDP_HEADER_BYTES: i32 = 8;
const UDP_DESTINATION_PORT_OFFSET: i16 = 14 + 2;
const ETH_P_IP: u16 = 0x0800;
const IPPROTO_UDP: i32 = 17;
/// The "more fragments" flag and the 13-bit fragment offset.
const IPV4_MF_AND_OFFSET: u16 = 0x3fff;

/// At most this many destination ports: one compare each, far below any verifier limit.
pub const PORTS_MAX: usize = 16;

/// What to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramSpec {
    /// UDP destination ports to redirect (host order), 1..=[`PORTS_MAX`] of them.
    pub ports: Vec<u16>,
    /// File descriptor of the XSKMAP (`BPF_MAP_TYPE_XSKMAP`, key = rx queue index).
    pub xskmap_fd: i32,
    /// Verdict when the queue's XSKMAP slot is empty: [`XDP_PASS`] in production; tests use
    /// [`XDP_DROP`] to tell "matched" from "not matched" without a socket.
    pub fallback: i32,
}

/// Why a program spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    #[error("at least one destination port is needed")]
    NoPorts,
    #[error("{given} destination ports given, at most {max} are supported")]
    TooManyPorts { given: usize, max: usize },
    #[error("the fallback verdict {0} is not an XDP action")]
    BadFallback(i32),
    #[error("assembling the program: {0}")]
    Assembly(#[from] AsmError),
}

impl ProgramError {
    /// A short stable name of the reason.
    pub fn label(&self) -> &'static str {
        match self {
            ProgramError::NoPorts => "no_ports",
            ProgramError::TooManyPorts { .. } => "too_many_ports",
            ProgramError::BadFallback(_) => "bad_fallback",
            ProgramError::Assembly(error) => error.label(),
        }
    }
}

/// A 16-bit header field as the program's `u16` load reads it: wire (big-endian) bytes, host order.
fn wire_u16(value: u16) -> i32 {
    i32::from(u16::from_ne_bytes(value.to_be_bytes()))
}

/// Builds the program; see the module documentation for its text.
pub fn build(spec: &ProgramSpec) -> Result<Vec<Insn>, ProgramError> {
    if spec.ports.is_empty() {
        return Err(ProgramError::NoPorts);
    }
    if spec.ports.len() > PORTS_MAX {
        return Err(ProgramError::TooManyPorts {
            given: spec.ports.len(),
            max: PORTS_MAX,
        });
    }
    if !(XDP_ABORTED..=XDP_REDIRECT).contains(&spec.fallback) {
        return Err(ProgramError::BadFallback(spec.fallback));
    }
    let mut asm = Assembler::new();
    let pass = asm.label();
    let redirect = asm.label();
    parse_headers(&mut asm, pass);
    for &port in &spec.ports {
        asm.jump_imm(BPF_JEQ, Reg::R7, wire_u16(port), redirect);
    }
    asm.jump(pass);
    asm.bind(redirect)?;
    asm.emit(Insn::load(
        Size::Word,
        Reg::R2,
        Reg::R6,
        XDP_MD_RX_QUEUE_INDEX,
    ));
    asm.emit_all(&Insn::load_map_fd(Reg::R1, spec.xskmap_fd));
    asm.emit(Insn::mov_imm(Reg::R3, spec.fallback));
    asm.emit(Insn::call(BPF_FUNC_REDIRECT_MAP));
    asm.emit(Insn::exit());
    asm.bind(pass)?;
    asm.emit(Insn::mov_imm(Reg::R0, XDP_PASS));
    asm.emit(Insn::exit());
    Ok(asm.finish()?)
}

/// Emits the header walk; leaves the UDP destination port (wire order) in `r7`.
fn parse_headers(asm: &mut Assembler, pass: crate::asm::Label) {
    asm.emit(Insn::mov_reg(Reg::R6, Reg::R1));
    asm.emit(Insn::load(Size::Word, Reg::R2, Reg::R6, XDP_MD_DATA));
    asm.emit(Insn::load(Size::Word, Reg::R3, Reg::R6, XDP_MD_DATA_END));
    // Ethernet and the fixed part of the IPv4 header must be inside the frame.
    asm.emit(Insn::mov_reg(Reg::R4, Reg::R2));
    asm.emit(Insn::add_imm(
        Reg::R4,
        ETHERNET_HEADER_BYTES + IPV4_MIN_HEADER_BYTES,
    ));
    asm.jump_reg(BPF_JGT, Reg::R4, Reg::R3, pass);
    asm.emit(Insn::load(Size::Half, Reg::R5, Reg::R2, ETHERTYPE_OFFSET));
    asm.jump_imm(BPF_JNE, Reg::R5, wire_u16(ETH_P_IP), pass);
    asm.emit(Insn::load(
        Size::Byte,
        Reg::R5,
        Reg::R2,
        IPV4_VERSION_IHL_OFFSET,
    ));
    asm.emit(Insn::mov_reg(Reg::R7, Reg::R5));
    asm.emit(Insn::and_imm(Reg::R7, 0xf0));
    asm.jump_imm(BPF_JNE, Reg::R7, 0x40, pass);
    asm.emit(Insn::and_imm(Reg::R5, 0x0f));
    asm.jump_imm(BPF_JLT, Reg::R5, IPV4_MIN_HEADER_BYTES / 4, pass);
    asm.emit(Insn::load(
        Size::Byte,
        Reg::R7,
        Reg::R2,
        IPV4_PROTOCOL_OFFSET,
    ));
    asm.jump_imm(BPF_JNE, Reg::R7, IPPROTO_UDP, pass);
    asm.emit(Insn::load(
        Size::Half,
        Reg::R7,
        Reg::R2,
        IPV4_FRAGMENT_OFFSET,
    ));
    asm.emit(Insn::and_imm(Reg::R7, wire_u16(IPV4_MF_AND_OFFSET)));
    asm.jump_imm(BPF_JNE, Reg::R7, 0, pass);
    // Skip the IP header with its options; the UDP header must be inside the frame.
    asm.emit(Insn::lsh_imm(Reg::R5, 2));
    asm.emit(Insn::add_reg(Reg::R2, Reg::R5));
    asm.emit(Insn::mov_reg(Reg::R4, Reg::R2));
    asm.emit(Insn::add_imm(
        Reg::R4,
        ETHERNET_HEADER_BYTES + UDP_HEADER_BYTES,
    ));
    asm.jump_reg(BPF_JGT, Reg::R4, Reg::R3, pass);
    asm.emit(Insn::load(
        Size::Half,
        Reg::R7,
        Reg::R2,
        UDP_DESTINATION_PORT_OFFSET,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insn::{BPF_CALL, BPF_DW, BPF_EXIT, BPF_JMP, BPF_LD, BPF_PSEUDO_MAP_FD};

    fn spec(ports: Vec<u16>) -> ProgramSpec {
        ProgramSpec {
            ports,
            xskmap_fd: 9,
            fallback: XDP_PASS,
        }
    }

    #[test]
    fn every_port_gets_one_compare_against_its_wire_bytes() {
        let program = build(&spec(vec![8001, 20_000])).unwrap();
        let compares: Vec<i32> = program
            .iter()
            .filter(|insn| insn.code == BPF_JMP | BPF_JEQ)
            .map(|insn| insn.imm)
            .collect();
        let expected: Vec<i32> = [8001u16, 20_000]
            .iter()
            .map(|port| i32::from(u16::from_ne_bytes(port.to_be_bytes())))
            .collect();
        assert_eq!(compares, expected);
        #[cfg(target_endian = "little")]
        assert_eq!(compares[0], 0x411f, "8001 = 0x1f41 on the wire");
    }

    #[test]
    fn two_ports_take_the_36_slots_of_the_documented_listing() {
        // 25 header slots, one compare per port, goto pass, 6 redirect slots, 2 pass slots.
        assert_eq!(
            build(&spec(vec![8001, 20_000])).unwrap().len(),
            25 + 2 + 1 + 6 + 2
        );
    }

    #[test]
    fn the_map_fd_is_a_pseudo_map_load_before_the_single_helper_call() {
        let program = build(&spec(vec![8001])).unwrap();
        let load = program
            .iter()
            .position(|insn| insn.code == BPF_LD | BPF_DW)
            .unwrap();
        assert_eq!(program[load].src, BPF_PSEUDO_MAP_FD);
        assert_eq!(program[load].imm, 9);
        let calls: Vec<usize> = (0..program.len())
            .filter(|&index| program[index].code == BPF_JMP | BPF_CALL)
            .collect();
        assert_eq!(calls.len(), 1);
        assert!(calls[0] > load);
        assert_eq!(program[calls[0]].imm, 51);
        assert_eq!(program.last().unwrap().code, BPF_JMP | BPF_EXIT);
    }

    #[test]
    fn every_jump_lands_inside_the_program() {
        let program = build(&spec((1..=16).collect())).unwrap();
        for (index, insn) in program.iter().enumerate() {
            let class_is_jump = insn.code & 0x07 == BPF_JMP;
            let is_call_or_exit =
                insn.code == BPF_JMP | BPF_CALL || insn.code == BPF_JMP | BPF_EXIT;
            if class_is_jump && !is_call_or_exit {
                let target = index as i64 + 1 + i64::from(insn.off);
                assert!(
                    (0..program.len() as i64).contains(&target),
                    "{index}: {insn:?}"
                );
            }
        }
    }

    #[test]
    fn bad_specs_are_refused() {
        assert_eq!(build(&spec(vec![])).unwrap_err(), ProgramError::NoPorts);
        assert_eq!(
            build(&spec((0..17).collect())).unwrap_err(),
            ProgramError::TooManyPorts { given: 17, max: 16 }
        );
        let mut bad = spec(vec![1]);
        bad.fallback = 7;
        assert_eq!(build(&bad).unwrap_err(), ProgramError::BadFallback(7));
    }
}
