//! `appliance subscribe --filter NAME:key=value[+value…][,key=value…]`: one named filter of the
//! stream's `SubscribeRequest` written on the command line. Keys: `programs` (DexProgram names,
//! e.g. `ALPHA_FUN`), `instructions` (instruction names, e.g. `buy`), `accounts` (include: any of),
//! `exclude` (none of), `required` (all of); values joined by `+`, and a key may repeat.

use std::collections::HashMap;

use stream_proto::stream::{DexProgram, ProgramFilter};
use thiserror::Error;

/// Why a `--filter` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FilterSpecError {
    #[error("--filter {0:?}: expected NAME:key=value[,key=value…]")]
    Shape(String),
    #[error(
        "--filter {spec:?}: unknown key {key:?} (programs, instructions, accounts, exclude, required)"
    )]
    Key { spec: String, key: String },
    #[error(
        "--filter {spec:?}: unknown program {program:?} (e.g. ALPHA_FUN, BETA_CPMM, DELTA_GAMMA_DBC)"
    )]
    Program { spec: String, program: String },
    #[error("--filter {0:?}: the same name twice")]
    Duplicate(String),
}

/// The named filters of every `--filter` (none: the empty map, everything).
pub fn parse_filters(specs: &[String]) -> Result<HashMap<String, ProgramFilter>, FilterSpecError> {
    let mut filters = HashMap::new();
    for spec in specs {
        let (name, filter) = parse_filter(spec)?;
        if filters.insert(name.to_owned(), filter).is_some() {
            return Err(FilterSpecError::Duplicate(spec.clone()));
        }
    }
    Ok(filters)
}

fn parse_filter(spec: &str) -> Result<(&str, ProgramFilter), FilterSpecError> {
    let shape = || FilterSpecError::Shape(spec.to_owned());
    let (name, criteria) = spec.split_once(':').unwrap_or((spec, ""));
    if name.is_empty() {
        return Err(shape());
    }
    let mut filter = ProgramFilter::default();
    for criterion in criteria.split(',').filter(|part| !part.is_empty()) {
        let (key, values) = criterion.split_once('=').ok_or_else(shape)?;
        let values = values.split('+').filter(|value| !value.is_empty());
        match key {
            "programs" => {
                for value in values {
                    filter.programs.push(program(spec, value)?);
                }
            }
            "instructions" => filter.instruction_types.extend(values.map(str::to_owned)),
            "accounts" => filter.accounts_include.extend(values.map(str::to_owned)),
            "exclude" => filter.accounts_exclude.extend(values.map(str::to_owned)),
            "required" => filter.accounts_required.extend(values.map(str::to_owned)),
            _ => {
                return Err(FilterSpecError::Key {
                    spec: spec.to_owned(),
                    key: key.to_owned(),
                });
            }
        }
    }
    Ok((name, filter))
}

fn program(spec: &str, name: &str) -> Result<i32, FilterSpecError> {
    let upper = name.to_ascii_uppercase();
    DexProgram::from_str_name(&upper)
        .filter(|program| *program != DexProgram::Unspecified)
        .map(|program| program as i32)
        .ok_or_else(|| FilterSpecError::Program {
            spec: spec.to_owned(),
            program: name.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Test code: a failed unwrap is a failed test.

    use super::*;

    #[test]
    fn every_key_and_joined_values_are_read() {
        let specs = vec![
            "pump:programs=ALPHA_FUN+beta_cpmm,instructions=buy+sell,accounts=A,exclude=B,required=C+D"
                .to_owned(),
            "all".to_owned(),
        ];
        let filters = parse_filters(&specs).unwrap();
        let pump = &filters["pump"];
        assert_eq!(pump.programs.len(), 2);
        assert_eq!(pump.instruction_types, ["buy", "sell"]);
        assert_eq!(pump.accounts_include, ["A"]);
        assert_eq!(pump.accounts_exclude, ["B"]);
        assert_eq!(pump.accounts_required, ["C", "D"]);
        assert_eq!(filters["all"], ProgramFilter::default());
    }

    #[test]
    fn malformed_specs_name_what_is_wrong() {
        let error = |spec: &str| parse_filters(&[spec.to_owned()]).unwrap_err();
        assert!(matches!(
            error(":programs=ALPHA_FUN"),
            FilterSpecError::Shape(_)
        ));
        assert!(matches!(error("x:programs"), FilterSpecError::Shape(_)));
        assert!(matches!(error("x:colour=red"), FilterSpecError::Key { .. }));
        assert!(matches!(
            error("x:programs=NOPE"),
            FilterSpecError::Program { .. }
        ));
        let twice = parse_filters(&["a".to_owned(), "a:programs=ALPHA_FUN".to_owned()]);
        assert!(matches!(twice, Err(FilterSpecError::Duplicate(_))));
    }
}
