//! Instruction-name interning: every logical instruction name of the supported programs (spec
//! §2.2) gets a small number, so that a filter's `instruction_types` is a bit mask and a call's
//! name is compared with one bit test instead of string comparisons.

use std::sync::OnceLock;

use decoder::dex::DexProgram;

/// The number of a known logical instruction name (below [`NAME_COUNT_MAX`]).
pub type NameId = u8;

/// Names a mask of `u64` can hold; the instruction names of docs/dex-mapping.md are 17 (checked by
/// a test).
pub const NAME_COUNT_MAX: usize = 64;

/// Every logical name of every supported program, sorted and deduplicated.
fn universe() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<&'static str> = DexProgram::ALL
            .iter()
            .flat_map(|program| program.logical_names().iter().copied())
            .collect();
        names.sort_unstable();
        names.dedup();
        names.truncate(NAME_COUNT_MAX);
        names
    })
}

/// How many names are interned (the `by_call` table width of the fan-out index).
pub fn name_count() -> usize {
    universe().len()
}

/// The number of a known name; `None` for a name no supported program has.
pub fn name_id(name: &str) -> Option<NameId> {
    universe()
        .binary_search(&name)
        .ok()
        .map(|index| index as NameId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_logical_name_fits_the_mask_and_round_trips() {
        let all: Vec<&str> = DexProgram::ALL
            .iter()
            .flat_map(|program| program.logical_names().iter().copied())
            .collect();
        assert!(name_count() <= NAME_COUNT_MAX);
        for name in all {
            let id = name_id(name).unwrap();
            assert_eq!(universe()[id as usize], name);
        }
        assert_eq!(name_id("rug"), None);
    }
}
