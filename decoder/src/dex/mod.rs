//! Decoding the top-level instructions of the supported DEX programs from signed instruction
//! bytes alone (before replay).
//!
//! ```text
//! TransactionView ─ dex_instructions(registry) ─► InstructionOutcome per supported-program call
//!                                                  ├ Decoded(DecodedInstruction { program, index,
//!                                                  │   account_indices, raw_data, call })
//!                                                  └ Failed { program, index, DexError }
//! decode_call(program, data): program id first, then the 8-byte discriminator (shared between
//! programs) ─► DecodedCall { logical name, on-chain name, DecodedArgs }
//! ```
//! Nothing allocates: names are static, strings and byte strings borrow from the instruction.
//! The mapping of every on-chain instruction to its logical name and message fields is in
//! `docs/dex-mapping.md`.

mod alpha;
mod args;
mod beta;
mod gamma;
pub(crate) mod reader;
mod registry;

pub use args::{DecodedArgs, DecodedCall};
pub use reader::{DISCRIMINATOR_LEN, DexError};
pub use registry::{DELTA_MAINNET_ID, DexProgram, ProgramRegistry, RegistryError};

use crate::transaction::{InstructionIter, TransactionView};

/// Decodes one instruction's data for a known program.
pub fn decode_call(program: DexProgram, data: &[u8]) -> Result<DecodedCall<'_>, DexError> {
    match program {
        DexProgram::AlphaFun => alpha::decode_alpha_fun(data),
        DexProgram::AlphaAmm => alpha::decode_alpha_amm(data),
        DexProgram::BetaCpmm => beta::decode_beta_cpmm(data),
        DexProgram::BetaLaunchLab => beta::decode_beta_launch_lab(data),
        DexProgram::GammaDbc => gamma::decode_gamma_dbc(data),
        DexProgram::GammaDammV2 => gamma::decode_gamma_damm_v2(data),
    }
}

/// A decoded top-level instruction of a supported program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedInstruction<'a> {
    pub program: DexProgram,
    /// Position in the transaction's instruction list.
    pub instruction_index: u32,
    /// The compiled account indexes (static keys, then lookup-table addresses).
    pub account_indices: &'a [u8],
    /// Discriminator plus arguments.
    pub raw_data: &'a [u8],
    pub call: DecodedCall<'a>,
}

/// What became of one top-level instruction of a supported program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstructionOutcome<'a> {
    Decoded(DecodedInstruction<'a>),
    /// Skipped (unknown or unmapped instruction) or malformed; see [`DexError::is_skip`].
    Failed {
        program: DexProgram,
        instruction_index: u32,
        error: DexError,
    },
}

/// The supported-program instructions of a transaction, in order.
pub fn dex_instructions<'a, 'r>(
    transaction: &TransactionView<'a>,
    registry: &'r ProgramRegistry,
) -> DexInstructions<'a, 'r> {
    DexInstructions {
        transaction: *transaction,
        instructions: transaction.instructions(),
        next_index: 0,
        registry,
    }
}

/// Iterator of [`dex_instructions`].
pub struct DexInstructions<'a, 'r> {
    transaction: TransactionView<'a>,
    instructions: InstructionIter<'a>,
    next_index: u32,
    registry: &'r ProgramRegistry,
}

impl<'a> Iterator for DexInstructions<'a, '_> {
    type Item = InstructionOutcome<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        for instruction in self.instructions.by_ref() {
            let instruction_index = self.next_index;
            self.next_index += 1;
            // Sanitized transactions keep program ids among the static keys.
            let Some(program_id) = self
                .transaction
                .static_account_key(usize::from(instruction.program_id_index))
            else {
                continue;
            };
            let Some(program) = self.registry.program(program_id) else {
                continue;
            };
            return Some(match decode_call(program, instruction.data) {
                Ok(call) => InstructionOutcome::Decoded(DecodedInstruction {
                    program,
                    instruction_index,
                    account_indices: instruction.account_indices,
                    raw_data: instruction.data,
                    call,
                }),
                Err(error) => InstructionOutcome::Failed {
                    program,
                    instruction_index,
                    error,
                },
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    #[test]
    fn every_discriminator_is_the_anchor_hash_of_its_name() {
        for (discriminator, family, name) in
            alpha::KNOWN.iter().chain(beta::KNOWN).chain(gamma::KNOWN)
        {
            let hash = Sha256::digest(format!("global:{name}"));
            let expected = u64::from_le_bytes(hash[..8].try_into().unwrap());
            assert_eq!(*discriminator, expected, "{family} {name}");
        }
    }

    #[test]
    fn same_discriminator_means_different_things_per_program() {
        // `buy` (66063d1201daebea) in both ALPHA programs, `initialize` (afaf6d1f0d989bed) in both
        // BETA programs.
        let mut data = vec![0x66, 0x06, 0x3d, 0x12, 0x01, 0xda, 0xeb, 0xea];
        data.extend_from_slice(&5u64.to_le_bytes());
        data.extend_from_slice(&9u64.to_le_bytes());
        assert_eq!(
            decode_call(DexProgram::AlphaFun, &data).unwrap().args,
            DecodedArgs::AlphaFunBuy {
                amount: 5,
                max_sol_cost: 9
            }
        );
        assert_eq!(
            decode_call(DexProgram::AlphaAmm, &data).unwrap().args,
            DecodedArgs::AlphaAmmBuy {
                base_amount_out: 5,
                max_quote_amount_in: 9
            }
        );
        assert!(matches!(
            decode_call(DexProgram::BetaCpmm, &data),
            Err(DexError::UnknownDiscriminator { .. })
        ));
    }

    #[test]
    fn truncation_inside_a_carried_argument_fails() {
        let mut data = vec![0x66, 0x06, 0x3d, 0x12, 0x01, 0xda, 0xeb, 0xea];
        data.extend_from_slice(&5u64.to_le_bytes());
        data.extend_from_slice(&9u64.to_le_bytes()[..7]);
        assert_eq!(
            decode_call(DexProgram::AlphaFun, &data),
            Err(DexError::TruncatedArgument {
                argument: "max_sol_cost"
            })
        );
        assert_eq!(
            decode_call(DexProgram::AlphaFun, &data[..3]),
            Err(DexError::MissingDiscriminator { len: 3 })
        );
    }
}
