//! The filter rules of docs/decisions.md (product decisions §A), criterion by criterion, on
//! synthetic updates.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::collections::HashMap;

use ::stream::filter::{FilterError, FilterLimits, Filters, Matched};
use stream_proto::stream::{
    self, DecodedInstruction, DecodedTransaction, DeltaDexLeg, DeltaUpdate, DexProgram,
    ProgramFilter, SubscribeUpdate, subscribe_update::Update,
};

fn key(byte: u8) -> Vec<u8> {
    vec![byte; 32]
}

fn b58(byte: u8) -> String {
    bs58::encode(key(byte)).into_string()
}

fn transaction(keys: &[u8], calls: &[(DexProgram, &str)]) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Transaction(DecodedTransaction {
            account_keys: keys.iter().map(|&k| key(k)).collect(),
            decoded_instructions: calls
                .iter()
                .map(|(program, name)| DecodedInstruction {
                    program: *program as i32,
                    instruction_name: (*name).to_owned(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn delta(keys: &[u8], legs: &[(DexProgram, &str)]) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Delta(DeltaUpdate {
            envelope: Some(DecodedTransaction {
                account_keys: keys.iter().map(|&k| key(k)).collect(),
                ..Default::default()
            }),
            dex_legs: legs
                .iter()
                .map(|(program, name)| DeltaDexLeg {
                    instruction: Some(DecodedInstruction {
                        program: *program as i32,
                        instruction_name: (*name).to_owned(),
                        ..Default::default()
                    }),
                    logical_instruction_name: (*name).to_owned(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn filters(entries: &[(&str, ProgramFilter)]) -> Filters {
    try_filters(entries).unwrap()
}

fn try_filters(entries: &[(&str, ProgramFilter)]) -> Result<Filters, FilterError> {
    let map: HashMap<String, ProgramFilter> = entries
        .iter()
        .map(|(id, filter)| ((*id).to_owned(), filter.clone()))
        .collect();
    Filters::compile(&map, &FilterLimits::default())
}

fn programs(values: &[DexProgram]) -> ProgramFilter {
    ProgramFilter {
        programs: values.iter().map(|p| *p as i32).collect(),
        ..Default::default()
    }
}

fn ids(matched: Option<Matched>) -> Option<Vec<String>> {
    matched.map(|m| m.filter_ids)
}

#[test]
fn empty_map_matches_everything_without_ids() {
    let all = filters(&[]);
    let buy = transaction(&[1], &[(DexProgram::AlphaFun, "buy")]);
    assert_eq!(all.matches(&buy), Some(Matched::default()));
    let routed = delta(
        &[1],
        &[
            (DexProgram::DeltaAlphaFun, "buy"),
            (DexProgram::DeltaGammaDbc, "swap"),
        ],
    );
    assert_eq!(all.matches(&routed).unwrap().leg_indices, [0, 1]);
}

#[test]
fn program_and_instruction_criteria() {
    let buy = transaction(&[1], &[(DexProgram::AlphaFun, "buy")]);
    let swap = transaction(&[1], &[(DexProgram::BetaCpmm, "swap_base_input")]);
    let only_fun = filters(&[("f", programs(&[DexProgram::AlphaFun]))]);
    assert_eq!(ids(only_fun.matches(&buy)), Some(vec!["f".to_owned()]));
    assert_eq!(only_fun.matches(&swap), None);
    let sells = ProgramFilter {
        instruction_types: vec!["sell".into()],
        ..programs(&[DexProgram::AlphaFun])
    };
    assert_eq!(filters(&[("s", sells)]).matches(&buy), None);
    // A name alone (no programs) selects that name in any program.
    let any_buy = ProgramFilter {
        instruction_types: vec!["buy".into()],
        ..Default::default()
    };
    assert!(filters(&[("b", any_buy)]).matches(&buy).is_some());
}

#[test]
fn direct_programs_do_not_match_routed_legs() {
    let routed = delta(&[1], &[(DexProgram::DeltaAlphaFun, "buy")]);
    assert_eq!(
        filters(&[("d", programs(&[DexProgram::AlphaFun]))]).matches(&routed),
        None
    );
    let legs = filters(&[("l", programs(&[DexProgram::DeltaAlphaFun]))]);
    assert_eq!(legs.matches(&routed).unwrap().leg_indices, [0]);
}

#[test]
fn account_criteria() {
    let update = transaction(&[1, 2, 3], &[(DexProgram::GammaDbc, "swap")]);
    let include = |keys: &[u8]| ProgramFilter {
        accounts_include: keys.iter().map(|&k| b58(k)).collect(),
        ..Default::default()
    };
    assert!(
        filters(&[("i", include(&[9, 2]))])
            .matches(&update)
            .is_some()
    );
    assert!(
        filters(&[("i", include(&[9, 8]))])
            .matches(&update)
            .is_none()
    );
    let exclude = ProgramFilter {
        accounts_exclude: vec![b58(3)],
        ..Default::default()
    };
    assert!(filters(&[("x", exclude)]).matches(&update).is_none());
    let required = |keys: &[u8]| ProgramFilter {
        accounts_required: keys.iter().map(|&k| b58(k)).collect(),
        ..Default::default()
    };
    assert!(
        filters(&[("r", required(&[1, 3]))])
            .matches(&update)
            .is_some()
    );
    assert!(
        filters(&[("r", required(&[1, 4]))])
            .matches(&update)
            .is_none()
    );
    // AND inside one filter: the program matches but the required key is missing.
    let both = ProgramFilter {
        accounts_required: vec![b58(4)],
        ..programs(&[DexProgram::GammaDbc])
    };
    assert!(filters(&[("a", both)]).matches(&update).is_none());
}

#[test]
fn several_filters_or_and_sorted_ids() {
    let update = transaction(&[1], &[(DexProgram::AlphaAmm, "sell")]);
    let set = filters(&[
        ("zeta", programs(&[DexProgram::AlphaAmm])),
        (
            "alpha",
            ProgramFilter {
                instruction_types: vec!["sell".into()],
                ..Default::default()
            },
        ),
        ("miss", programs(&[DexProgram::BetaCpmm])),
    ]);
    assert_eq!(
        ids(set.matches(&update)),
        Some(vec!["alpha".to_owned(), "zeta".to_owned()])
    );
}

#[test]
fn matched_legs_are_the_union_over_matching_filters() {
    let routed = delta(
        &[1, 2],
        &[
            (DexProgram::DeltaAlphaFun, "buy"),
            (DexProgram::DeltaBetaCpmm, "swap_base_input"),
            (DexProgram::DeltaGammaDammV2, "swap"),
        ],
    );
    let set = filters(&[
        ("cpmm", programs(&[DexProgram::DeltaBetaCpmm])),
        ("damm", programs(&[DexProgram::DeltaGammaDammV2])),
        (
            "excluded",
            ProgramFilter {
                accounts_exclude: vec![b58(2)],
                ..programs(&[DexProgram::DeltaAlphaFun])
            },
        ),
    ]);
    let matched = set.matches(&routed).unwrap();
    assert_eq!(matched.filter_ids, ["cpmm", "damm"]);
    assert_eq!(matched.leg_indices, [1, 2]);
}

#[test]
fn slot_and_pong_updates_are_not_filtered() {
    let set = filters(&[("f", programs(&[DexProgram::AlphaFun]))]);
    let slot = SubscribeUpdate {
        update: Some(Update::Slot(stream::SlotNotification { slot: 5 })),
        ..Default::default()
    };
    assert_eq!(set.matches(&slot), Some(Matched::default()));
}

#[test]
fn invalid_requests_name_the_filter_and_value() {
    let bad_key = ProgramFilter {
        accounts_include: vec!["not-base58!".into()],
        ..Default::default()
    };
    let error = try_filters(&[("mine", bad_key)]).unwrap_err();
    assert_eq!(error.label(), "bad_key");
    assert!(error.to_string().contains("\"mine\"") && error.to_string().contains("not-base58!"));
    let short_key = ProgramFilter {
        accounts_required: vec![bs58::encode([1u8; 31]).into_string()],
        ..Default::default()
    };
    assert_eq!(
        try_filters(&[("k", short_key)]).unwrap_err().label(),
        "bad_key"
    );
    let unspecified = ProgramFilter {
        programs: vec![0],
        ..Default::default()
    };
    assert_eq!(
        try_filters(&[("u", unspecified)]).unwrap_err().label(),
        "unspecified_program"
    );
    let unknown = ProgramFilter {
        programs: vec![99],
        ..Default::default()
    };
    let error = try_filters(&[("p", unknown)]).unwrap_err();
    assert!(error.to_string().contains("99"));
    let wrong_name = ProgramFilter {
        instruction_types: vec!["swap".into()],
        ..programs(&[DexProgram::AlphaFun])
    };
    let error = try_filters(&[("n", wrong_name)]).unwrap_err();
    assert_eq!(error.label(), "unknown_instruction");
    assert!(error.to_string().contains("\"swap\""));
    // DELTA_* programs take their wrapped program's names.
    let delta_name = ProgramFilter {
        instruction_types: vec!["buy".into()],
        ..programs(&[DexProgram::DeltaAlphaFun])
    };
    assert!(try_filters(&[("d", delta_name)]).is_ok());
    let nonsense = ProgramFilter {
        instruction_types: vec!["rug".into()],
        ..Default::default()
    };
    assert_eq!(
        try_filters(&[("x", nonsense)]).unwrap_err().label(),
        "unknown_instruction"
    );
}

#[test]
fn request_bounds() {
    let many: HashMap<String, ProgramFilter> = (0..65)
        .map(|i| (format!("f{i}"), ProgramFilter::default()))
        .collect();
    let error = Filters::compile(&many, &FilterLimits::default()).unwrap_err();
    assert_eq!(error, FilterError::TooManyFilters { count: 65, max: 64 });
    let keys = ProgramFilter {
        accounts_include: (0..3).map(b58).collect(),
        ..Default::default()
    };
    let limits = FilterLimits {
        max_keys: 2,
        ..FilterLimits::default()
    };
    let map: HashMap<String, ProgramFilter> = [("k".to_owned(), keys)].into();
    assert_eq!(
        Filters::compile(&map, &limits).unwrap_err(),
        FilterError::TooManyKeys { count: 3, max: 2 }
    );
}

#[test]
fn long_filter_ids_and_many_instruction_types_are_refused() {
    // A 1 MiB id would be echoed in every matching update.
    let long = "x".repeat(1 << 20);
    let map: HashMap<String, ProgramFilter> = [(long, ProgramFilter::default())].into();
    let error = Filters::compile(&map, &FilterLimits::default()).unwrap_err();
    assert_eq!(
        error,
        FilterError::IdTooLong {
            filter: "x".repeat(32),
            bytes: 1 << 20,
            max: 128,
        }
    );
    assert!(error.to_string().len() < 200, "{error}");
    let at_bound: HashMap<String, ProgramFilter> =
        [("y".repeat(128), ProgramFilter::default())].into();
    assert!(Filters::compile(&at_bound, &FilterLimits::default()).is_ok());
    // 200,000 entries were accepted before: now counted across the request's filters.
    let types = ProgramFilter {
        instruction_types: vec!["swap".to_owned(); 600],
        ..Default::default()
    };
    let map: HashMap<String, ProgramFilter> =
        [("a".to_owned(), types.clone()), ("b".to_owned(), types)].into();
    assert_eq!(
        Filters::compile(&map, &FilterLimits::default()).unwrap_err(),
        FilterError::TooManyInstructionTypes {
            count: 1_200,
            max: 1_024
        }
    );
}

/// Issue 20 (docs/decisions.md, "Filters and lookups"): the account criteria see the addresses of
/// resolved lookups; an unresolved position (empty bytes) never matches include or required and
/// never triggers exclude.
#[test]
fn account_criteria_see_resolved_loaded_addresses_only() {
    let mut update = transaction(&[1], &[(DexProgram::AlphaFun, "buy")]);
    if let Some(Update::Transaction(tx)) = update.update.as_mut() {
        tx.loaded_writable_addresses = vec![key(5), Vec::new()];
        tx.loaded_readonly_addresses = vec![key(6)];
        tx.lookup_status = stream::LookupStatus::PartlyResolved as i32;
    }
    let include = |k: u8| ProgramFilter {
        accounts_include: vec![b58(k)],
        ..Default::default()
    };
    let exclude = |k: u8| ProgramFilter {
        accounts_exclude: vec![b58(k)],
        ..Default::default()
    };
    let required = |keys: &[u8]| ProgramFilter {
        accounts_required: keys.iter().map(|&k| b58(k)).collect(),
        ..Default::default()
    };
    assert!(filters(&[("w", include(5))]).matches(&update).is_some());
    assert!(filters(&[("r", include(6))]).matches(&update).is_some());
    assert!(filters(&[("x", exclude(6))]).matches(&update).is_none());
    assert!(
        filters(&[("q", required(&[1, 5, 6]))])
            .matches(&update)
            .is_some()
    );
    // Nothing is known of the unresolved position: the all-zero key is not there.
    assert!(filters(&[("z", include(0))]).matches(&update).is_none());
    assert!(filters(&[("z", exclude(0))]).matches(&update).is_some());
    assert!(
        filters(&[("z", required(&[1, 0]))])
            .matches(&update)
            .is_none()
    );
}
