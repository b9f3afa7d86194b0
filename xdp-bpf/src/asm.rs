//! A minimal assembler over [`Insn`]: forward jumps to named labels, resolved when the program
//! is finished, so the program text reads top-down like the pseudo-assembly in `docs/receive.md`.

use crate::insn::{Insn, Reg};

/// A jump target, bound to one instruction index with [`Assembler::bind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label(usize);

/// Why a program could not be assembled (a programming error of the program text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error("label {0} is used but never bound")]
    Unbound(usize),
    #[error("label {0} is bound twice")]
    BoundTwice(usize),
    #[error("jump from {from} to {to} does not fit a 16-bit offset")]
    OutOfRange { from: usize, to: usize },
}

impl AsmError {
    /// A short stable name of the reason.
    pub fn label(&self) -> &'static str {
        match self {
            AsmError::Unbound(_) => "unbound_label",
            AsmError::BoundTwice(_) => "label_bound_twice",
            AsmError::OutOfRange { .. } => "jump_out_of_range",
        }
    }
}

/// Collects instructions and label references.
#[derive(Debug, Default)]
pub struct Assembler {
    program: Vec<Insn>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Label)>,
}

impl Assembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh, unbound label.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `label` to the next instruction emitted.
    pub fn bind(&mut self, label: Label) -> Result<(), AsmError> {
        match self.labels.get_mut(label.0) {
            Some(slot @ None) => {
                *slot = Some(self.program.len());
                Ok(())
            }
            _ => Err(AsmError::BoundTwice(label.0)),
        }
    }

    /// Appends one instruction.
    pub fn emit(&mut self, insn: Insn) {
        self.program.push(insn);
    }

    /// Appends several instructions (e.g. the two slots of a 64-bit immediate load).
    pub fn emit_all(&mut self, insns: &[Insn]) {
        self.program.extend_from_slice(insns);
    }

    /// `if dst <op> imm goto label`.
    pub fn jump_imm(&mut self, op: u8, dst: Reg, imm: i32, target: Label) {
        self.fixups.push((self.program.len(), target));
        self.program.push(Insn::jump_imm(op, dst, imm, 0));
    }

    /// `if dst <op> src goto label`.
    pub fn jump_reg(&mut self, op: u8, dst: Reg, src: Reg, target: Label) {
        self.fixups.push((self.program.len(), target));
        self.program.push(Insn::jump_reg(op, dst, src, 0));
    }

    /// `goto label`.
    pub fn jump(&mut self, target: Label) {
        self.fixups.push((self.program.len(), target));
        self.program.push(Insn::jump_always(0));
    }

    /// Resolves every jump and returns the program.
    pub fn finish(mut self) -> Result<Vec<Insn>, AsmError> {
        for &(from, label) in &self.fixups {
            let to = self
                .labels
                .get(label.0)
                .copied()
                .flatten()
                .ok_or(AsmError::Unbound(label.0))?;
            let offset = to as i64 - from as i64 - 1;
            let offset = i16::try_from(offset).map_err(|_| AsmError::OutOfRange { from, to })?;
            self.program[from].off = offset;
        }
        Ok(self.program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insn::BPF_JEQ;

    #[test]
    fn forward_and_backward_offsets_count_from_the_next_instruction() {
        let mut asm = Assembler::new();
        let top = asm.label();
        let end = asm.label();
        asm.bind(top).unwrap();
        asm.jump_imm(BPF_JEQ, Reg::R1, 0, end); // 0 -> 3: off 2
        asm.emit(Insn::mov_imm(Reg::R0, 1)); // 1
        asm.jump(top); // 2 -> 0: off -3
        asm.bind(end).unwrap();
        asm.emit(Insn::exit()); // 3
        let program = asm.finish().unwrap();
        assert_eq!(program[0].off, 2);
        assert_eq!(program[2].off, -3);
    }

    #[test]
    fn unbound_and_doubly_bound_labels_are_errors() {
        let mut asm = Assembler::new();
        let nowhere = asm.label();
        asm.jump(nowhere);
        assert_eq!(asm.finish().unwrap_err(), AsmError::Unbound(0));
        let mut asm = Assembler::new();
        let twice = asm.label();
        asm.bind(twice).unwrap();
        assert_eq!(asm.bind(twice).unwrap_err(), AsmError::BoundTwice(0));
    }
}
