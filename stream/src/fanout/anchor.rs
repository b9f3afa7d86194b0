//! Anchor choice: for each compiled filter, the index entries under which the publisher finds it.
//! A filter is only evaluated for an update that hits one of its anchors, so every anchor set must
//! be implied by the filter (no false negatives) and should be as selective as possible:
//!
//! 1. one `accounts_required` key (every one must be present, so any one will do), preferring a
//!    key that is not in [`busy_keys`] (programs and mints present in most transactions);
//! 2. else every `accounts_include` key (one must be present), if none of them is busy;
//! 3. else its (program, instruction) pairs from criterion 1 (an empty side is a wildcard);
//! 4. else a busy required key, else every include key (still correct, merely frequent);
//! 5. else (only `accounts_exclude`, or nothing) the always-evaluate list.

use std::sync::OnceLock;

use decoder::dex::{DELTA_MAINNET_ID, DexProgram};
use decoder::program_ids;

use crate::filter::{CompiledFilter, Key, names::NameId};

/// Where a filter is registered in the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    /// The update's static keys must contain one of these.
    Keys(Vec<Key>),
    /// Some call must be one of these (program value, name); `None` is a wildcard.
    Calls(Vec<(Option<i32>, Option<NameId>)>),
    /// Evaluated for every filtered update.
    Always,
}

/// Accounts present in a large share of the stream's transactions: poor anchors.
const BUSY_KEYS: &[&str] = &[
    program_ids::SYSTEM,
    program_ids::COMPUTE_BUDGET,
    program_ids::TOKEN,
    program_ids::TOKEN_2022,
    program_ids::ASSOCIATED_TOKEN,
    WRAPPED_SOL_MINT,
    USDC_MINT,
    program_ids::SYSVAR_RENT,
    program_ids::SYSVAR_CLOCK,
    program_ids::MEMO_V3,
];
/// Mints in most swaps.
const WRAPPED_SOL_MINT: &str = "So11111111111111111111111111111111111111112";
const USDC_MINT: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/// The busy keys: [`BUSY_KEYS`], the supported programs' and the aggregator's mainnet ids.
pub fn busy_keys() -> &'static [Key] {
    static KEYS: OnceLock<Vec<Key>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let programs = DexProgram::ALL.iter().map(|program| program.mainnet_id());
        let mut keys: Vec<Key> = BUSY_KEYS
            .iter()
            .copied()
            .chain(programs)
            .chain([DELTA_MAINNET_ID])
            .filter_map(|text| bs58::decode(text).into_vec().ok())
            .filter_map(|bytes| Key::try_from(bytes.as_slice()).ok())
            .collect();
        keys.sort_unstable();
        keys
    })
}

fn is_busy(key: &Key) -> bool {
    busy_keys().binary_search(key).is_ok()
}

/// The anchor of one filter (see the module doc for the order).
pub fn anchor(filter: &CompiledFilter) -> Anchor {
    if let Some(key) = filter.required().iter().find(|key| !is_busy(key)) {
        return Anchor::Keys(vec![*key]);
    }
    let include: Vec<Key> = filter.include().iter().copied().collect();
    if !include.is_empty() && !include.iter().any(is_busy) {
        return Anchor::Keys(include);
    }
    let programs: Vec<i32> = filter.programs().collect();
    let names: Vec<NameId> = filter.names().collect();
    if !programs.is_empty() || !names.is_empty() {
        let programs: Vec<Option<i32>> = if programs.is_empty() {
            vec![None]
        } else {
            programs.into_iter().map(Some).collect()
        };
        let names: Vec<Option<NameId>> = if names.is_empty() {
            vec![None]
        } else {
            names.into_iter().map(Some).collect()
        };
        let pairs = programs
            .iter()
            .flat_map(|program| names.iter().map(move |name| (*program, *name)))
            .collect();
        return Anchor::Calls(pairs);
    }
    if let Some(key) = filter.required().first() {
        return Anchor::Keys(vec![*key]);
    }
    if !include.is_empty() {
        return Anchor::Keys(include);
    }
    Anchor::Always
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_busy_key_decodes() {
        assert_eq!(
            busy_keys().len(),
            BUSY_KEYS.len() + DexProgram::ALL.len() + 1
        );
    }
}
