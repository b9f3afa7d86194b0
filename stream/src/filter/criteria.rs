//! `CompiledFilter`: one validated filter and its evaluation against an [`UpdateView`] (the AND of
//! the four criteria of product decisions §A).

use std::collections::HashSet;

use super::names::NameId;
use super::view::{Call, Key, UpdateView};

/// `DexProgram` values: 1..=6 direct programs, 7..=12 their `DELTA_*` legs.
pub const PROGRAM_VALUE_MAX: i32 = 12;

/// The hasher of key sets: keys are chosen by clients, so the seed is random per set.
pub type KeyHasher = foldhash::quality::RandomState;

/// A set of public keys.
pub type KeySet = HashSet<Key, KeyHasher>;

/// One compiled filter.
#[derive(Debug, Clone)]
pub struct CompiledFilter {
    pub(super) id: String,
    /// Bit `p` set for each selected `DexProgram` value `p`; 0 selects every program.
    pub(super) programs: u16,
    /// Bit `n` set for each selected [`NameId`]; 0 selects every name.
    pub(super) names: u64,
    pub(super) include: KeySet,
    pub(super) exclude: KeySet,
    pub(super) required: Vec<Key>,
}

impl CompiledFilter {
    /// The client's filter id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The selected `DexProgram` values (empty: every program).
    pub fn programs(&self) -> impl Iterator<Item = i32> + '_ {
        (1..=PROGRAM_VALUE_MAX).filter(|value| self.programs >> value & 1 == 1)
    }

    /// The selected instruction names (empty: every name).
    pub fn names(&self) -> impl Iterator<Item = NameId> + '_ {
        (0..64u8).filter(|name| self.names >> name & 1 == 1)
    }

    /// `accounts_include` keys.
    pub fn include(&self) -> &KeySet {
        &self.include
    }

    /// `accounts_required` keys.
    pub fn required(&self) -> &[Key] {
        &self.required
    }

    /// Criterion 1 for one call (program value and logical name).
    pub fn selects(&self, call: Call) -> bool {
        let program_ok = self.programs == 0
            || (1..=PROGRAM_VALUE_MAX).contains(&call.program)
                && self.programs >> call.program & 1 == 1;
        program_ok && (self.names == 0 || call.name.is_some_and(|name| self.names >> name & 1 == 1))
    }

    /// Criteria 2–4 (include any, exclude none, require all).
    pub fn accounts_hold(&self, view: &UpdateView) -> bool {
        let keys = view.keys();
        let include_ok = self.include.is_empty()
            || if self.include.len() < keys.len() {
                self.include.iter().any(|key| view.has_key(key))
            } else {
                keys.iter().any(|key| self.include.contains(key))
            };
        include_ok
            && (self.exclude.is_empty() || !keys.iter().any(|key| self.exclude.contains(key)))
            && self.required.len() <= keys.len()
            && self.required.iter().all(|key| view.has_key(key))
    }

    /// The whole filter: some call passes criterion 1 and the account criteria hold.
    pub fn evaluate(&self, view: &UpdateView) -> bool {
        view.calls().iter().any(|call| self.selects(*call)) && self.accounts_hold(view)
    }
}
