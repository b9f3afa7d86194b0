//! `Filters::compile` (validation, applied whole or not at all) and `Filters::matches`.

use std::collections::{HashMap, HashSet};

use decoder::dex::DexProgram;
use stream_proto::stream::{self, ProgramFilter, subscribe_update::Update};

use super::{FilterError, Matched};

/// Bounds of one subscription request; configurable, with the product defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterLimits {
    /// Named filters in one request. Default 64.
    pub max_filters: usize,
    /// Account keys across all filters of one request. Default 10,000.
    pub max_keys: usize,
}

impl Default for FilterLimits {
    fn default() -> Self {
        Self {
            max_filters: 64,
            max_keys: 10_000,
        }
    }
}

/// `DexProgram` values: 1..=6 direct programs, 7..=12 their `DELTA_*` legs.
const PROGRAM_VALUE_MAX: i32 = 12;

type Key = [u8; 32];

#[derive(Debug, Clone)]
struct CompiledFilter {
    id: String,
    /// Bit `p` set for each selected `DexProgram` value `p`; 0 selects every program.
    programs: u16,
    instruction_types: Vec<String>,
    include: HashSet<Key>,
    exclude: HashSet<Key>,
    required: Vec<Key>,
}

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
        if subscriptions.len() > limits.max_filters {
            return Err(FilterError::TooManyFilters {
                count: subscriptions.len(),
                max: limits.max_filters,
            });
        }
        let keys: usize = subscriptions
            .values()
            .map(|f| {
                f.accounts_include.len() + f.accounts_exclude.len() + f.accounts_required.len()
            })
            .sum();
        if keys > limits.max_keys {
            return Err(FilterError::TooManyKeys {
                count: keys,
                max: limits.max_keys,
            });
        }
        let mut filters = subscriptions
            .iter()
            .map(|(id, filter)| compile_filter(id, filter))
            .collect::<Result<Vec<_>, _>>()?;
        filters.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(Self { filters })
    }

    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    /// The filters this update matches; `None` when a non-empty set matches nothing. Updates
    /// other than transactions and deltas are not filtered.
    pub fn matches(&self, update: &stream::SubscribeUpdate) -> Option<Matched> {
        let (account_keys, calls): (&[Vec<u8>], Vec<(i32, &str)>) = match update.update.as_ref() {
            Some(Update::Transaction(transaction)) => (
                &transaction.account_keys,
                transaction
                    .decoded_instructions
                    .iter()
                    .map(|i| (i.program, i.instruction_name.as_str()))
                    .collect(),
            ),
            Some(Update::Delta(delta)) => (
                delta
                    .envelope
                    .as_ref()
                    .map_or(&[][..], |envelope| &envelope.account_keys),
                delta
                    .dex_legs
                    .iter()
                    .map(|leg| {
                        let program = leg.instruction.as_ref().map_or(0, |i| i.program);
                        (program, leg.logical_instruction_name.as_str())
                    })
                    .collect(),
            ),
            _ => return Some(Matched::default()),
        };
        let is_delta = matches!(update.update, Some(Update::Delta(_)));
        if self.filters.is_empty() {
            let leg_indices = if is_delta {
                (0..calls.len() as u32).collect()
            } else {
                Vec::new()
            };
            return Some(Matched {
                filter_ids: Vec::new(),
                leg_indices,
            });
        }
        let keys: HashSet<Key> = account_keys
            .iter()
            .filter_map(|key| key.as_slice().try_into().ok())
            .collect();
        let mut matched = Matched::default();
        let mut legs = 0u128;
        for filter in &self.filters {
            if !filter.accounts_hold(&keys) {
                continue;
            }
            let mut call_hits = 0u128;
            for (index, (program, name)) in calls.iter().enumerate() {
                if filter.selects(*program, name) {
                    call_hits |= 1 << index.min(127);
                }
            }
            if call_hits == 0 {
                continue;
            }
            matched.filter_ids.push(filter.id.clone());
            legs |= call_hits;
        }
        if matched.filter_ids.is_empty() {
            return None;
        }
        if is_delta {
            matched.leg_indices = (0..calls.len().min(128) as u32)
                .filter(|i| legs >> i & 1 == 1)
                .collect();
        }
        Some(matched)
    }
}

impl CompiledFilter {
    /// Criteria 2–4 (include any, exclude none, require all).
    fn accounts_hold(&self, keys: &HashSet<Key>) -> bool {
        (self.include.is_empty() || self.include.iter().any(|key| keys.contains(key)))
            && !self.exclude.iter().any(|key| keys.contains(key))
            && self.required.iter().all(|key| keys.contains(key))
    }

    /// Criterion 1 for one call (program value and logical name).
    fn selects(&self, program: i32, name: &str) -> bool {
        let program_ok = self.programs == 0
            || (1..=PROGRAM_VALUE_MAX).contains(&program) && self.programs >> program & 1 == 1;
        program_ok
            && (self.instruction_types.is_empty()
                || self.instruction_types.iter().any(|n| n == name))
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
    for name in &filter.instruction_types {
        let known = (1..=PROGRAM_VALUE_MAX)
            .filter(|value| programs == 0 || programs >> value & 1 == 1)
            .any(|value| names_of(value).contains(&name.as_str()));
        if !known {
            return Err(FilterError::UnknownInstruction {
                filter: id.to_owned(),
                value: name.clone(),
            });
        }
    }
    let keys = |field: &'static str, values: &[String]| -> Result<Vec<Key>, FilterError> {
        values
            .iter()
            .map(|value| {
                let bad = || FilterError::BadKey {
                    filter: id.to_owned(),
                    field,
                    value: value.clone(),
                };
                let bytes = bs58::decode(value).into_vec().map_err(|_| bad())?;
                Key::try_from(bytes.as_slice()).map_err(|_| bad())
            })
            .collect()
    };
    Ok(CompiledFilter {
        id: id.to_owned(),
        programs,
        instruction_types: filter.instruction_types.clone(),
        include: keys("accounts_include", &filter.accounts_include)?
            .into_iter()
            .collect(),
        exclude: keys("accounts_exclude", &filter.accounts_exclude)?
            .into_iter()
            .collect(),
        required: keys("accounts_required", &filter.accounts_required)?,
    })
}
