//! The eBPF instruction encoding: one 8-byte [`Insn`] per slot, built from named opcode parts,
//! as documented in the kernel's `Documentation/bpf/standardization/instruction-set.rst`.
//!
//! ```text
//!  byte 0    byte 1          bytes 2-3     bytes 4-7
//! +--------+-------+-------+-------------+-------------------+
//! | opcode | src:4 | dst:4 | offset i16  | immediate i32     |
//! +--------+-------+-------+-------------+-------------------+
//!  opcode = class (3 bits) | size/source (2+1 or 1 bit) | operation / mode (4 or 3 bits)
//! ```
//! (The register nibbles are in the byte's low half for `dst` on little-endian hosts and in the
//! high half on big-endian hosts, like the kernel's bitfields.) A 64-bit immediate load takes two
//! slots; [`Insn::load_map_fd`] returns both. Only the operations the XDP program needs are
//! named here.

/// A BPF register. `R0` holds return values, `R1`–`R5` are call arguments (clobbered by calls),
/// `R6`–`R9` survive calls, `R10` is the read-only frame pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Reg {
    R0 = 0,
    R1 = 1,
    R2 = 2,
    R3 = 3,
    R4 = 4,
    R5 = 5,
    R6 = 6,
    R7 = 7,
    R8 = 8,
    R9 = 9,
    R10 = 10,
}

// Instruction classes (low 3 bits of the opcode).
pub const BPF_LD: u8 = 0x00;
pub const BPF_LDX: u8 = 0x01;
pub const BPF_ALU: u8 = 0x04;
pub const BPF_JMP: u8 = 0x05;
pub const BPF_ALU64: u8 = 0x07;

// Load/store sizes (bits 3-4) and modes (bits 5-7).
pub const BPF_W: u8 = 0x00;
pub const BPF_H: u8 = 0x08;
pub const BPF_B: u8 = 0x10;
pub const BPF_DW: u8 = 0x18;
pub const BPF_IMM: u8 = 0x00;
pub const BPF_MEM: u8 = 0x60;

// ALU/JMP source (bit 3): the immediate or the source register.
pub const BPF_K: u8 = 0x00;
pub const BPF_X: u8 = 0x08;

// ALU operations (bits 4-7).
pub const BPF_ADD: u8 = 0x00;
pub const BPF_AND: u8 = 0x50;
pub const BPF_LSH: u8 = 0x60;
pub const BPF_MOV: u8 = 0xb0;

// Jump operations (bits 4-7).
pub const BPF_JA: u8 = 0x00;
pub const BPF_JEQ: u8 = 0x10;
pub const BPF_JGT: u8 = 0x20;
pub const BPF_JNE: u8 = 0x50;
pub const BPF_JLT: u8 = 0xa0;
pub const BPF_CALL: u8 = 0x80;
pub const BPF_EXIT: u8 = 0x90;

/// `src` value of a 64-bit immediate load whose immediate is a map file descriptor, which the
/// kernel replaces with the map's address at load time.
pub const BPF_PSEUDO_MAP_FD: u8 = 1;

/// Helper `long bpf_redirect_map(struct bpf_map *map, u64 key, u64 flags)` (`include/uapi/linux/
/// bpf.h`, `__BPF_FUNC_MAPPER`: number 51).
pub const BPF_FUNC_REDIRECT_MAP: i32 = 51;

/// The operand size of a memory load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    Byte,
    Half,
    Word,
    Double,
}

impl Size {
    fn bits(self) -> u8 {
        match self {
            Size::Byte => BPF_B,
            Size::Half => BPF_H,
            Size::Word => BPF_W,
            Size::Double => BPF_DW,
        }
    }

    /// The operand size in bytes.
    pub fn bytes(self) -> usize {
        match self {
            Size::Byte => 1,
            Size::Half => 2,
            Size::Word => 4,
            Size::Double => 8,
        }
    }
}

/// One 8-byte instruction slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Self {
        Self {
            code,
            dst,
            src,
            off,
            imm,
        }
    }

    /// `dst = imm` (64-bit, sign-extended).
    pub const fn mov_imm(dst: Reg, imm: i32) -> Self {
        Self::new(BPF_ALU64 | BPF_MOV | BPF_K, dst as u8, 0, 0, imm)
    }

    /// `dst = src` (64-bit).
    pub const fn mov_reg(dst: Reg, src: Reg) -> Self {
        Self::new(BPF_ALU64 | BPF_MOV | BPF_X, dst as u8, src as u8, 0, 0)
    }

    /// `dst += imm` (64-bit).
    pub const fn add_imm(dst: Reg, imm: i32) -> Self {
        Self::new(BPF_ALU64 | BPF_ADD | BPF_K, dst as u8, 0, 0, imm)
    }

    /// `dst += src` (64-bit).
    pub const fn add_reg(dst: Reg, src: Reg) -> Self {
        Self::new(BPF_ALU64 | BPF_ADD | BPF_X, dst as u8, src as u8, 0, 0)
    }

    /// `dst &= imm` (64-bit).
    pub const fn and_imm(dst: Reg, imm: i32) -> Self {
        Self::new(BPF_ALU64 | BPF_AND | BPF_K, dst as u8, 0, 0, imm)
    }

    /// `dst <<= imm` (64-bit).
    pub const fn lsh_imm(dst: Reg, imm: i32) -> Self {
        Self::new(BPF_ALU64 | BPF_LSH | BPF_K, dst as u8, 0, 0, imm)
    }

    /// `w_dst = imm` (32-bit move, upper half zeroed); only used by tests of the encoding.
    pub const fn mov32_imm(dst: Reg, imm: i32) -> Self {
        Self::new(BPF_ALU | BPF_MOV | BPF_K, dst as u8, 0, 0, imm)
    }

    /// `dst = *(size *)(src + off)`, zero-extended.
    pub fn load(size: Size, dst: Reg, src: Reg, off: i16) -> Self {
        Self::new(
            BPF_LDX | BPF_MEM | size.bits(),
            dst as u8,
            src as u8,
            off,
            0,
        )
    }

    /// `if dst <op> imm goto pc + 1 + off`, `op` one of the `BPF_J*` operations.
    pub const fn jump_imm(op: u8, dst: Reg, imm: i32, off: i16) -> Self {
        Self::new(BPF_JMP | op | BPF_K, dst as u8, 0, off, imm)
    }

    /// `if dst <op> src goto pc + 1 + off`.
    pub const fn jump_reg(op: u8, dst: Reg, src: Reg, off: i16) -> Self {
        Self::new(BPF_JMP | op | BPF_X, dst as u8, src as u8, off, 0)
    }

    /// `goto pc + 1 + off`.
    pub const fn jump_always(off: i16) -> Self {
        Self::new(BPF_JMP | BPF_JA, 0, 0, off, 0)
    }

    /// `r0 = helper(r1, ..., r5)`.
    pub const fn call(helper: i32) -> Self {
        Self::new(BPF_JMP | BPF_CALL, 0, 0, 0, helper)
    }

    /// `return r0`.
    pub const fn exit() -> Self {
        Self::new(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
    }

    /// `dst = map` as the two-slot 64-bit immediate load of a map file descriptor.
    pub const fn load_map_fd(dst: Reg, map_fd: i32) -> [Self; 2] {
        [
            Self::new(
                BPF_LD | BPF_DW | BPF_IMM,
                dst as u8,
                BPF_PSEUDO_MAP_FD,
                0,
                map_fd,
            ),
            Self::new(0, 0, 0, 0, 0),
        ]
    }

    /// The 8 bytes the kernel reads (`struct bpf_insn`), in host byte order.
    pub fn to_bytes(self) -> [u8; 8] {
        let registers = if cfg!(target_endian = "little") {
            (self.src << 4) | (self.dst & 0x0f)
        } else {
            (self.dst << 4) | (self.src & 0x0f)
        };
        let off = self.off.to_ne_bytes();
        let imm = self.imm.to_ne_bytes();
        [
            self.code, registers, off[0], off[1], imm[0], imm[1], imm[2], imm[3],
        ]
    }
}

/// The program as the byte array `BPF_PROG_LOAD` takes (`insns`, 8 bytes per slot).
pub fn to_bytes(program: &[Insn]) -> Vec<u8> {
    program.iter().flat_map(|insn| insn.to_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte patterns as `llvm-objdump -d` prints them for the same instructions (little endian).
    #[test]
    #[cfg(target_endian = "little")]
    fn encodings_match_the_llvm_disassembly() {
        // r6 = r1
        assert_eq!(
            Insn::mov_reg(Reg::R6, Reg::R1).to_bytes(),
            [0xbf, 0x16, 0, 0, 0, 0, 0, 0]
        );
        // r2 = *(u32 *)(r6 + 4)
        assert_eq!(
            Insn::load(Size::Word, Reg::R2, Reg::R6, 4).to_bytes(),
            [0x61, 0x62, 4, 0, 0, 0, 0, 0]
        );
        // r5 = *(u16 *)(r2 + 12)
        assert_eq!(
            Insn::load(Size::Half, Reg::R5, Reg::R2, 12).to_bytes(),
            [0x69, 0x25, 12, 0, 0, 0, 0, 0]
        );
        // r5 = *(u8 *)(r2 + 14)
        assert_eq!(
            Insn::load(Size::Byte, Reg::R5, Reg::R2, 14).to_bytes(),
            [0x71, 0x25, 14, 0, 0, 0, 0, 0]
        );
        // if r4 > r3 goto +7
        assert_eq!(
            Insn::jump_reg(BPF_JGT, Reg::R4, Reg::R3, 7).to_bytes(),
            [0x2d, 0x34, 7, 0, 0, 0, 0, 0]
        );
        // if r5 != 0x8 goto +3
        assert_eq!(
            Insn::jump_imm(BPF_JNE, Reg::R5, 8, 3).to_bytes(),
            [0x55, 0x05, 3, 0, 8, 0, 0, 0]
        );
        // r0 = 2; exit
        assert_eq!(
            Insn::mov_imm(Reg::R0, 2).to_bytes(),
            [0xb7, 0x00, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(Insn::exit().to_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        // call 51
        assert_eq!(
            Insn::call(BPF_FUNC_REDIRECT_MAP).to_bytes(),
            [0x85, 0, 0, 0, 51, 0, 0, 0]
        );
        // r1 = map fd 7 (ld_imm64 with src = BPF_PSEUDO_MAP_FD)
        let [first, second] = Insn::load_map_fd(Reg::R1, 7);
        assert_eq!(first.to_bytes(), [0x18, 0x11, 0, 0, 7, 0, 0, 0]);
        assert_eq!(second.to_bytes(), [0; 8]);
        // r5 &= 15; r5 <<= 2; r2 += r5; r4 += 8; goto -1; w1 = 1
        assert_eq!(
            Insn::and_imm(Reg::R5, 15).to_bytes(),
            [0x57, 0x05, 0, 0, 15, 0, 0, 0]
        );
        assert_eq!(
            Insn::lsh_imm(Reg::R5, 2).to_bytes(),
            [0x67, 0x05, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(
            Insn::add_reg(Reg::R2, Reg::R5).to_bytes(),
            [0x0f, 0x52, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            Insn::add_imm(Reg::R4, 8).to_bytes(),
            [0x07, 0x04, 0, 0, 8, 0, 0, 0]
        );
        assert_eq!(
            Insn::jump_always(-1).to_bytes(),
            [0x05, 0, 0xff, 0xff, 0, 0, 0, 0]
        );
        assert_eq!(
            Insn::mov32_imm(Reg::R1, 1).to_bytes(),
            [0xb4, 0x01, 0, 0, 1, 0, 0, 0]
        );
    }
}
