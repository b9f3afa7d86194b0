//! Which program id is which supported program: the mainnet ids of docs/dex-mapping.md
//! §1 by default, each overridable by configuration (a fork, a devnet deployment, a test cluster).

use thiserror::Error;

/// The supported programs, numbered as the `DexProgram` enum of proto/stream.proto
/// (docs/dex-mapping.md, dex §1). The aggregator is not a DEX program: its legs map to `DELTA_*`
/// values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DexProgram {
    AlphaFun = 1,
    AlphaAmm = 2,
    BetaCpmm = 3,
    BetaLaunchLab = 4,
    GammaDbc = 5,
    GammaDammV2 = 6,
}

impl DexProgram {
    pub const ALL: [DexProgram; 6] = [
        Self::AlphaFun,
        Self::AlphaAmm,
        Self::BetaCpmm,
        Self::BetaLaunchLab,
        Self::GammaDbc,
        Self::GammaDammV2,
    ];

    /// The `DexProgram` enum number of this program.
    pub const fn proto_number(self) -> i32 {
        self as i32
    }

    /// The `DexProgram` enum number of the aggregator legs wrapping this program (`DELTA_*`).
    pub const fn delta_proto_number(self) -> i32 {
        self as i32 + 6
    }

    /// The enum value's name in the specification (`ALPHA_FUN` …), also its metric label.
    pub const fn name(self) -> &'static str {
        match self {
            Self::AlphaFun => "ALPHA_FUN",
            Self::AlphaAmm => "ALPHA_AMM",
            Self::BetaCpmm => "BETA_CPMM",
            Self::BetaLaunchLab => "BETA_LAUNCH_LAB",
            Self::GammaDbc => "GAMMA_DBC",
            Self::GammaDammV2 => "GAMMA_DAMM_V2",
        }
    }

    /// The logical instruction names of the specification's §2.2 table: exactly the names a
    /// filter may select for this program.
    pub const fn logical_names(self) -> &'static [&'static str] {
        match self {
            Self::AlphaFun => &["create", "buy", "sell"],
            Self::AlphaAmm => &["buy", "sell", "create_pool", "deposit", "withdraw"],
            Self::BetaCpmm => &["swap_base_input", "swap_base_output", "create_pool"],
            Self::BetaLaunchLab => &[
                "create",
                "buy_exact_in",
                "buy_exact_out",
                "sell_exact_in",
                "sell_exact_out",
                "migrate",
            ],
            Self::GammaDbc => &["swap", "initialize", "migrate"],
            Self::GammaDammV2 => &["swap", "create_pool", "add_liquidity", "remove_liquidity"],
        }
    }

    /// The mainnet program id (dex §1).
    pub const fn mainnet_id(self) -> &'static str {
        match self {
            Self::AlphaFun => "6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P",
            Self::AlphaAmm => "pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA",
            Self::BetaCpmm => "CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C",
            Self::BetaLaunchLab => "LanMV9sAd7wArD4vJFi2qDdfnVhFxYSUg6eADduJ3uj",
            Self::GammaDbc => "dbcij3LWUppWqq96dh6gJWwBifmcGfLSB5D4DuSMaqN",
            Self::GammaDammV2 => "cpamdpZCGKUy5JxQXB4dcpGPiikHawvSWAd6mEn1sGG",
        }
    }

    /// Parses a specification name (`ALPHA_FUN` …).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|program| program.name() == name)
    }
}

/// The aggregator's mainnet program id (dex §1, DELTA).
pub const DELTA_MAINNET_ID: &str = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4";

/// A program id that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RegistryError {
    #[error("program id {text:?} is not base58 of 32 bytes")]
    BadProgramId { text: String },
    #[error("program id {text} is assigned to both {first} and {second}")]
    DuplicateProgramId {
        text: String,
        first: &'static str,
        second: &'static str,
    },
}

/// Program ids of the supported programs and of the aggregator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramRegistry {
    programs: [(DexProgram, [u8; 32]); 6],
    aggregator: [u8; 32],
}

impl Default for ProgramRegistry {
    fn default() -> Self {
        let programs = DexProgram::ALL.map(|program| (program, decode_key(program.mainnet_id())));
        Self {
            programs,
            aggregator: decode_key(DELTA_MAINNET_ID),
        }
    }
}

impl ProgramRegistry {
    /// Replaces one program's id; ids must stay distinct.
    pub fn with_program_id(mut self, program: DexProgram, id: &str) -> Result<Self, RegistryError> {
        let key = parse_key(id)?;
        if let Some((other, _)) = self
            .programs
            .iter()
            .find(|(other, existing)| *existing == key && *other != program)
        {
            return Err(RegistryError::DuplicateProgramId {
                text: id.to_owned(),
                first: other.name(),
                second: program.name(),
            });
        }
        if let Some(entry) = self
            .programs
            .iter_mut()
            .find(|(entry, _)| *entry == program)
        {
            entry.1 = key;
        }
        Ok(self)
    }

    /// Replaces the aggregator's id.
    pub fn with_aggregator_id(mut self, id: &str) -> Result<Self, RegistryError> {
        self.aggregator = parse_key(id)?;
        Ok(self)
    }

    /// The supported program with this id.
    #[inline]
    pub fn program(&self, id: &[u8; 32]) -> Option<DexProgram> {
        self.programs
            .iter()
            .find(|(_, key)| key == id)
            .map(|(program, _)| *program)
    }

    pub fn program_id(&self, program: DexProgram) -> &[u8; 32] {
        // Every program has an entry: the array is built from DexProgram::ALL.
        self.programs
            .iter()
            .find(|(entry, _)| *entry == program)
            .map_or(&self.aggregator, |(_, key)| key)
    }

    #[inline]
    pub fn is_aggregator(&self, id: &[u8; 32]) -> bool {
        &self.aggregator == id
    }

    pub fn aggregator_id(&self) -> &[u8; 32] {
        &self.aggregator
    }
}

fn parse_key(text: &str) -> Result<[u8; 32], RegistryError> {
    let bytes = bs58::decode(text)
        .into_vec()
        .map_err(|_| RegistryError::BadProgramId {
            text: text.to_owned(),
        })?;
    bytes.try_into().map_err(|_| RegistryError::BadProgramId {
        text: text.to_owned(),
    })
}

/// Decodes a built-in id; the constants above are valid base58 keys (checked by a test).
fn decode_key(text: &str) -> [u8; 32] {
    parse_key(text).unwrap_or([0; 32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_ids_decode_and_are_distinct() {
        let registry = ProgramRegistry::default();
        for program in DexProgram::ALL {
            assert_eq!(
                parse_key(program.mainnet_id()).unwrap(),
                *registry.program_id(program)
            );
            assert_eq!(
                registry.program(registry.program_id(program)),
                Some(program)
            );
        }
        assert!(registry.is_aggregator(&parse_key(DELTA_MAINNET_ID).unwrap()));
    }

    #[test]
    fn overrides_replace_and_stay_distinct() {
        let other = DexProgram::BetaCpmm.mainnet_id();
        let error = ProgramRegistry::default().with_program_id(DexProgram::AlphaFun, other);
        assert!(matches!(
            error,
            Err(RegistryError::DuplicateProgramId { .. })
        ));
        let key = "11111111111111111111111111111112";
        let registry = ProgramRegistry::default()
            .with_program_id(DexProgram::AlphaFun, key)
            .unwrap();
        assert_eq!(
            registry.program(&parse_key(key).unwrap()),
            Some(DexProgram::AlphaFun)
        );
        assert!(
            ProgramRegistry::default()
                .with_program_id(DexProgram::AlphaFun, "xyz0")
                .is_err()
        );
    }
}
