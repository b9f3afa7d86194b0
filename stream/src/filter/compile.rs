//! `Filters::compile` (validation, applied whole or not at all) and the per-subscription matching
//! (`Filters::match_view`, and `Filters::matches` on a whole update).

use std::collections::HashMap;

use decoder::dex::DexProgram;
use stream_proto::stream::{self, ProgramFilter, SubscribeUpdate};

use super::bits::IndexSet;
use super::criteria::{CompiledFilter, KeySet, PROGRAM_VALUE_MAX};
use super::names::name_id;
use super::view::{Key, UpdateKind, UpdateView};
use super::{FilterError, Matched, Matches};

/// Bounds of one subscription request; configurable, with the product defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterLimits {
    /// Named filters in one request. Default 64.
    pub max_filters: usize,
    /// Account keys across all filters of one request. Default 10,000.
    pub max_keys: usize,
    /// Bytes of one filter id (echoed in every matching update). Default 128.
    pub max_id_bytes: usize,
    /// `instruction_types` entries across all filters of one request. Default 1,024.
    pub max_instruction_types: usize,
}

impl Default for FilterLimits {
    fn default() -> Self {
        Self {
            max_filters: 64,
            max_keys: 10_000,
            max_id_bytes: 128,
            max_instruction_types: 1_024,
        }
    }
}

impl FilterLimits {
    /// At most `max_filters` named filters and `max_keys` account keys in one request (also the
    /// Yellowstone stream's requests, `deshred::filter`).
    pub(crate) fn check_counts(&self, filters: usize, keys: usize) -> Result<(), FilterError> {
        if filters > self.max_filters {
            return Err(FilterError::TooManyFilters {
                count: filters,
                max: self.max_filters,
            });
        }
        if keys > self.max_keys {
            return Err(FilterError::TooManyKeys {
                count: keys,
                max: self.max_keys,
            });
        }
        Ok(())
    }

    /// Every filter id (name) within `max_id_bytes`; the error quotes the first over-long one.
    pub(crate) fn check_ids<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a String>,
    ) -> Result<(), FilterError> {
        match ids.into_iter().find(|id| id.len() > self.max_id_bytes) {
            Some(id) => Err(FilterError::IdTooLong {
                filter: id.chars().take(ID_QUOTED).collect(),
                bytes: id.len(),
                max: self.max_id_bytes,
            }),
            None => Ok(()),
        }
    }
}

/// Characters of an over-long filter id quoted in the error.
const ID_QUOTED: usize = 32;

/// A compiled subscription: the filters in id order. An empty set matches everything.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    filters: Vec<CompiledFilter>,
}

impl Filters {
    /// Validates and compiles a request's `subscriptions` map.
    pub fn compile(
        subscriptions: &HashMap<String, ProgramFilter>,
        limits: &FilterLimits,
    ) -> Result<Self, FilterError> {
        let keys: usize = subscriptions
            .values()
            .map(|f| {
                f.accounts_include.len() + f.accounts_exclude.len() + f.accounts_required.len()
            })
            .sum();
        limits.check_counts(subscriptions.len(), keys)?;
        limits.check_ids(subscriptions.keys())?;
        check_instruction_types(subscriptions, limits)?;
        let mut filters = subscriptions
            .iter()
            .map(|(id, filter)| compile_filter(id, filter))
            .collect::<Result<Vec<_>, _>>()?;
        filters.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(Self { filters })
    }

    /// An empty map: matches everything, with no ids.
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    pub fn len(&self) -> usize {
        self.filters.len()
    }

    /// The filters in id order (their position is their index in [`Matches::filters`]).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &CompiledFilter> {
        self.filters.iter()
    }

    /// The filter at `index` (id order).
    pub fn get(&self, index: usize) -> Option<&CompiledFilter> {
        self.filters.get(index)
    }

    /// What one update matches, from its view; `None` when a non-empty set matches nothing.
    /// Unfiltered updates (slots, pongs) match with nothing.
    pub fn match_view(&self, view: &UpdateView) -> Option<Matches> {
        if view.kind() == UpdateKind::Unfiltered {
            return Some(Matches::default());
        }
        if self.filters.is_empty() {
            return Some(Matches::everything(view));
        }
        let mut matched = IndexSet::with_capacity(self.filters.len());
        for (index, filter) in self.filters.iter().enumerate() {
            if filter.evaluate(view) {
                matched.insert(index);
            }
        }
        if matched.is_empty() {
            return None;
        }
        Some(self.matches_of(view, matched))
    }

    /// The full match of filters already known to match (`filters`, each evaluated true): adds
    /// the legs of a delta update, the union of the legs each of them selects.
    pub fn matches_of(&self, view: &UpdateView, filters: IndexSet) -> Matches {
        let mut legs = Vec::new();
        if view.kind() == UpdateKind::Delta {
            for (index, call) in view.calls().iter().enumerate() {
                let selected = filters
                    .iter()
                    .filter_map(|filter| self.filters.get(filter))
                    .any(|filter| filter.selects(*call));
                if selected {
                    legs.push(index as u32);
                }
            }
        }
        Matches { filters, legs }
    }

    /// The filters this update matches; `None` when a non-empty set matches nothing. Updates
    /// other than transactions and deltas are not filtered.
    pub fn matches(&self, update: &SubscribeUpdate) -> Option<Matched> {
        let matches = self.match_view(&UpdateView::new(update))?;
        Some(Matched {
            filter_ids: matches
                .filters
                .iter()
                .filter_map(|index| self.filters.get(index))
                .map(|filter| filter.id.clone())
                .collect(),
            leg_indices: matches.legs,
        })
    }
}

/// The logical instruction names of a `DexProgram` value (`DELTA_*` take their wrapped program's).
fn names_of(value: i32) -> &'static [&'static str] {
    let direct = if value > 6 { value - 6 } else { value };
    DexProgram::ALL
        .iter()
        .find(|program| program.proto_number() == direct)
        .map_or(&[], |program| program.logical_names())
}

/// `instruction_types` entries within `max_instruction_types`.
fn check_instruction_types(
    subscriptions: &HashMap<String, ProgramFilter>,
    limits: &FilterLimits,
) -> Result<(), FilterError> {
    let types: usize = subscriptions
        .values()
        .map(|filter| filter.instruction_types.len())
        .sum();
    if types > limits.max_instruction_types {
        return Err(FilterError::TooManyInstructionTypes {
            count: types,
            max: limits.max_instruction_types,
        });
    }
    Ok(())
}

fn compile_filter(id: &str, filter: &ProgramFilter) -> Result<CompiledFilter, FilterError> {
    let mut programs = 0u16;
    for &value in &filter.programs {
        if value == stream::DexProgram::Unspecified as i32 {
            return Err(FilterError::UnspecifiedProgram {
                filter: id.to_owned(),
            });
        }
        if !(1..=PROGRAM_VALUE_MAX).contains(&value) {
            return Err(FilterError::UnknownProgram {
                filter: id.to_owned(),
                value,
            });
        }
        programs |= 1 << value;
    }
    let mut names = 0u64;
    for name in &filter.instruction_types {
        let known = (1..=PROGRAM_VALUE_MAX)
            .filter(|value| programs == 0 || programs >> value & 1 == 1)
            .any(|value| names_of(value).contains(&name.as_str()));
        // Every name of a supported program is interned (a test checks it).
        let interned = name_id(name);
        match interned {
            Some(interned) if known => names |= 1 << interned,
            _ => {
                return Err(FilterError::UnknownInstruction {
                    filter: id.to_owned(),
                    value: name.clone(),
                });
            }
        }
    }
    let keys = |field: &'static str, values: &[String]| -> Result<Vec<Key>, FilterError> {
        values
            .iter()
            .map(|value| parse_key(id, field, value))
            .collect()
    };
    let mut required = keys("accounts_required", &filter.accounts_required)?;
    required.sort_unstable();
    required.dedup();
    Ok(CompiledFilter {
        id: id.to_owned(),
        programs,
        names,
        include: keys("accounts_include", &filter.accounts_include)?
            .into_iter()
            .collect::<KeySet>(),
        exclude: keys("accounts_exclude", &filter.accounts_exclude)?
            .into_iter()
            .collect::<KeySet>(),
        required,
    })
}

/// A base58 account key of filter `id`'s `field`, or the error naming all three.
pub(crate) fn parse_key(id: &str, field: &'static str, value: &str) -> Result<Key, FilterError> {
    let bad = || FilterError::BadKey {
        filter: id.to_owned(),
        field,
        value: value.to_owned(),
    };
    let bytes = bs58::decode(value).into_vec().map_err(|_| bad())?;
    Key::try_from(bytes.as_slice()).map_err(|_| bad())
}
