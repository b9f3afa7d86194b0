//! Byte-level equivalence of the fan-out: for random updates and random subscriptions (some
//! sessions in the index, some changed since its build, some with an empty map), every session's
//! encode-once message, decoded with prost as a `SubscribeUpdate`, equals the personalised copy
//! that an independent model of product decisions §A computes from the published struct (the
//! deep-clone path the service used before). Each session receives exactly the updates the model
//! says it matches, in publish order.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::collections::HashMap;
use std::time::Duration;

use ::stream::fanout::{Hub, Subscriber};
use ::stream::filter::{FilterLimits, Filters};
use proptest::prelude::*;
use prost::Message;
use stream_proto::stream::{
    DecodedInstruction, DecodedTransaction, DeltaDexLeg, DeltaTopLevelInstruction, DeltaUpdate,
    ProgramFilter, ServerTiming, SlotNotification, SubscribeUpdate, subscribe_update::Update,
};

/// The key pool: ten plain keys and two busy ones (the system program, all zeros, and the token
/// program), so that the anchors' fallbacks are exercised too.
fn pool_key(index: usize) -> Vec<u8> {
    match index {
        10 => vec![0; 32],
        11 => bs58::decode("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
            .into_vec()
            .unwrap(),
        _ => vec![index as u8 + 1; 32],
    }
}

const POOL: usize = 12;

/// The instruction names of docs/dex-mapping.md plus one that no program has.
const NAMES: &[&str] = &[
    "create",
    "buy",
    "sell",
    "create_pool",
    "deposit",
    "withdraw",
    "swap_base_input",
    "swap_base_output",
    "buy_exact_in",
    "sell_exact_out",
    "migrate",
    "swap",
    "initialize",
    "add_liquidity",
    "not_a_name",
];

fn call() -> impl Strategy<Value = (i32, &'static str)> {
    (0i32..=13, proptest::sample::select(NAMES))
}

fn timing() -> impl Strategy<Value = Option<ServerTiming>> {
    proptest::option::of(
        (1u64..1 << 62, 0u64..1 << 40).prop_map(|(base, step)| ServerTiming {
            first_read_unix_nanos: base,
            capture_done_unix_nanos: base + step,
            deshred_done_unix_nanos: base + 2 * step,
            decode_done_unix_nanos: base + 3 * step,
            publish_unix_nanos: base + 4 * step,
            // Stale per-subscriber values the publisher must not pass on.
            subscriber_recv_unix_nanos: step,
            ..Default::default()
        }),
    )
}

fn transaction() -> impl Strategy<Value = DecodedTransaction> {
    (
        proptest::collection::vec(0..POOL, 0..8),
        proptest::collection::vec(call(), 0..4),
        timing(),
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 64),
        (any::<bool>(), proptest::collection::vec(0..POOL, 0..4)),
    )
        .prop_map(
            |(keys, calls, server_timing, slot, signature, (lookups, loaded))| {
                // Loaded addresses (issue 20): pool keys, and one unresolved (empty) position.
                let loaded: Vec<Vec<u8>> = match lookups {
                    true => loaded
                        .iter()
                        .map(|k| pool_key(*k))
                        .chain([Vec::new()])
                        .collect(),
                    false => Vec::new(),
                };
                DecodedTransaction {
                    slot,
                    signature,
                    tx_index: (slot % 1000) as u32,
                    signer: keys.first().map(|k| pool_key(*k)).unwrap_or_default(),
                    account_keys: keys.iter().map(|k| pool_key(*k)).collect(),
                    decoded_instructions: calls
                        .iter()
                        .enumerate()
                        .map(|(index, (program, name))| DecodedInstruction {
                            program: *program,
                            instruction_name: (*name).to_owned(),
                            instruction_index: index as u32,
                            account_indices: vec![0, 1, index as u32],
                            raw_data: vec![index as u8; 12],
                            decoded: None,
                        })
                        .collect(),
                    uses_lookup_tables: lookups,
                    matched_filters: vec!["stale".to_owned()],
                    server_timing,
                    loaded_readonly_addresses: loaded.iter().take(1).cloned().collect(),
                    loaded_writable_addresses: loaded,
                    lookup_status: i32::from(lookups) * 3,
                }
            },
        )
}

fn update() -> impl Strategy<Value = SubscribeUpdate> {
    let delta = (
        proptest::option::of(transaction()),
        proptest::collection::vec((call(), any::<bool>()), 0..5),
    )
        .prop_map(|(envelope, legs)| {
            Update::Delta(DeltaUpdate {
                envelope,
                top_level_instruction: Some(DeltaTopLevelInstruction {
                    instruction_name: "route".to_owned(),
                    decoded_args: [("in".to_owned(), "5".to_owned())].into(),
                    ..Default::default()
                }),
                dex_legs: legs
                    .iter()
                    .enumerate()
                    .map(|(index, ((program, name), with_instruction))| DeltaDexLeg {
                        wrapped_program: program - 6,
                        instruction: with_instruction.then(|| DecodedInstruction {
                            program: *program,
                            instruction_name: "raw".to_owned(),
                            ..Default::default()
                        }),
                        route_step_index: index as u32,
                        logical_instruction_name: (*name).to_owned(),
                        split_percent: Some(100),
                        ..Default::default()
                    })
                    .collect(),
                matched_leg_indices: vec![9, 9],
            })
        });
    prop_oneof![
        4 => transaction().prop_map(Update::Transaction),
        4 => delta,
        1 => any::<u64>().prop_map(|slot| Update::Slot(SlotNotification { slot })),
    ]
    .prop_map(|update| SubscribeUpdate {
        update: Some(update),
        ..Default::default()
    })
}

fn program_filter() -> impl Strategy<Value = ProgramFilter> {
    let keys = || proptest::collection::vec(0..POOL, 0..3);
    (
        proptest::collection::vec(1i32..=12, 0..3),
        proptest::collection::vec(proptest::sample::select(&NAMES[..14]), 0..2),
        keys(),
        keys(),
        keys(),
    )
        .prop_map(
            |(programs, names, include, exclude, required)| ProgramFilter {
                programs,
                instruction_types: names.into_iter().map(str::to_owned).collect(),
                accounts_include: include.iter().map(|k| b58(*k)).collect(),
                accounts_exclude: exclude.iter().map(|k| b58(*k)).collect(),
                accounts_required: required.iter().map(|k| b58(*k)).collect(),
            },
        )
}

fn b58(key: usize) -> String {
    bs58::encode(pool_key(key)).into_string()
}

/// A subscription map that compiles: names that no selected program has are dropped.
fn subscription() -> impl Strategy<Value = HashMap<String, ProgramFilter>> {
    proptest::collection::vec(program_filter(), 0..4).prop_map(|filters| {
        filters
            .into_iter()
            .enumerate()
            .map(|(index, mut filter)| {
                let single: HashMap<String, ProgramFilter> =
                    [("probe".to_owned(), filter.clone())].into();
                if Filters::compile(&single, &FilterLimits::default()).is_err() {
                    filter.instruction_types.clear();
                }
                (format!("f{}", 3 - index), filter)
            })
            .collect()
    })
}

// ---- The independent model (product decisions §A), on the published struct. ----

fn decode_key(text: &str) -> Vec<u8> {
    bs58::decode(text).into_vec().unwrap()
}

/// Criterion 1 for one call.
fn model_selects(filter: &ProgramFilter, program: i32, name: &str) -> bool {
    (filter.programs.is_empty() || filter.programs.contains(&program))
        && (filter.instruction_types.is_empty()
            || filter.instruction_types.iter().any(|wanted| wanted == name))
}

/// Criteria 2–4.
fn model_accounts(filter: &ProgramFilter, keys: &[Vec<u8>]) -> bool {
    let present = |text: &String| keys.contains(&decode_key(text));
    (filter.accounts_include.is_empty() || filter.accounts_include.iter().any(present))
        && !filter.accounts_exclude.iter().any(present)
        && filter.accounts_required.iter().all(present)
}

/// The keys the account criteria see: static keys and resolved loaded addresses (an unresolved
/// position, empty bytes, is unknown: docs/decisions.md, "Filters and lookups").
fn model_keys(transaction: &DecodedTransaction) -> Vec<Vec<u8>> {
    transaction
        .account_keys
        .iter()
        .chain(&transaction.loaded_writable_addresses)
        .chain(&transaction.loaded_readonly_addresses)
        .filter(|key| !key.is_empty())
        .cloned()
        .collect()
}

/// The subscriber's copy per the model; `None` when it is not sent.
fn model_personal(
    update: &SubscribeUpdate,
    subscriptions: &HashMap<String, ProgramFilter>,
    recv: u64,
) -> Option<SubscribeUpdate> {
    let (keys, calls): (Vec<Vec<u8>>, Vec<(i32, String)>) = match update.update.as_ref()? {
        Update::Transaction(transaction) => (
            model_keys(transaction),
            transaction
                .decoded_instructions
                .iter()
                .map(|i| (i.program, i.instruction_name.clone()))
                .collect(),
        ),
        Update::Delta(delta) => (
            delta.envelope.as_ref().map(model_keys).unwrap_or_default(),
            delta
                .dex_legs
                .iter()
                .map(|leg| {
                    (
                        leg.instruction.as_ref().map_or(0, |i| i.program),
                        leg.logical_instruction_name.clone(),
                    )
                })
                .collect(),
        ),
        _ => return Some(update.clone()),
    };
    let mut ids: Vec<String> = Vec::new();
    let mut legs: Vec<u32> = Vec::new();
    for (id, filter) in subscriptions {
        let selected: Vec<u32> = calls
            .iter()
            .enumerate()
            .filter(|(_, (program, name))| model_selects(filter, *program, name))
            .map(|(index, _)| index as u32)
            .collect();
        if !selected.is_empty() && model_accounts(filter, &keys) {
            ids.push(id.clone());
            legs.extend(selected);
        }
    }
    if subscriptions.is_empty() {
        legs = (0..calls.len() as u32).collect();
    } else if ids.is_empty() {
        return None;
    }
    ids.sort();
    legs.sort_unstable();
    legs.dedup();
    let mut personal = update.clone();
    let stamp = |timing: &mut Option<ServerTiming>| {
        if let Some(timing) = timing {
            timing.subscriber_recv_unix_nanos = recv.max(timing.publish_unix_nanos);
        }
    };
    match personal.update.as_mut()? {
        Update::Transaction(transaction) => {
            transaction.matched_filters = ids;
            stamp(&mut transaction.server_timing);
        }
        Update::Delta(delta) => {
            delta.matched_leg_indices = legs;
            if let Some(envelope) = delta.envelope.as_mut() {
                envelope.matched_filters = ids;
                stamp(&mut envelope.server_timing);
            }
        }
        _ => {}
    }
    Some(personal)
}

// ---- The property. ----

#[derive(Debug)]
struct Case {
    subscriptions: Vec<HashMap<String, ProgramFilter>>,
    /// Per session, `Some(map)`: the session re-subscribes to `map` after the index was rebuilt,
    /// so it is evaluated directly while its old index entries are stale.
    replacements: Vec<Option<HashMap<String, ProgramFilter>>>,
    updates: Vec<SubscribeUpdate>,
    recv: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..7)
        .prop_flat_map(|sessions| {
            (
                proptest::collection::vec(subscription(), sessions),
                proptest::collection::vec(
                    proptest::option::weighted(0.3, subscription()),
                    sessions,
                ),
                proptest::collection::vec(update(), 1..12),
                any::<u64>(),
            )
        })
        .prop_map(|(subscriptions, replacements, updates, recv)| Case {
            subscriptions,
            replacements,
            updates,
            recv,
        })
}

fn compile(map: &HashMap<String, ProgramFilter>) -> Filters {
    Filters::compile(map, &FilterLimits::default()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn every_session_gets_the_models_personalised_update(case in case()) {
        let hub = Hub::new(1024);
        let mut subscribers: Vec<Subscriber> = case
            .subscriptions
            .iter()
            .map(|map| {
                let mut subscriber = Subscriber::new(hub.clone());
                subscriber.replace(compile(map));
                subscriber
            })
            .collect();
        hub.rebuild();
        let mut effective = case.subscriptions.clone();
        for (index, replacement) in case.replacements.iter().enumerate() {
            if let Some(map) = replacement {
                subscribers[index].replace(compile(map));
                effective[index] = map.clone();
            }
        }
        for update in &case.updates {
            hub.publish(update.clone());
        }
        for (index, subscriber) in subscribers.iter_mut().enumerate() {
            let expected: Vec<SubscribeUpdate> = case
                .updates
                .iter()
                .filter_map(|update| model_personal(update, &effective[index], case.recv))
                .collect();
            let mut received = Vec::new();
            while let Some(delivery) = subscriber.try_next() {
                let outbound = subscriber.personalise(delivery, case.recv).unwrap();
                let bytes = outbound.encode_to_vec();
                prop_assert_eq!(bytes.len(), outbound.encoded_len());
                received.push(SubscribeUpdate::decode(bytes.as_slice()).unwrap());
            }
            prop_assert_eq!(received, expected, "session {}", index);
        }
    }
}

/// Updates published under the old filters and taken after a new request are re-matched: the
/// session sends what its new filters select, with their ids.
#[test]
fn queued_updates_follow_the_new_filters() {
    let hub = Hub::new(16);
    let mut subscriber = Subscriber::new(hub.clone());
    let old: HashMap<String, ProgramFilter> = [(
        "old".to_owned(),
        ProgramFilter {
            accounts_include: vec![b58(0)],
            ..Default::default()
        },
    )]
    .into();
    subscriber.replace(compile(&old));
    let with_key = |key: usize, program: i32| SubscribeUpdate {
        update: Some(Update::Transaction(DecodedTransaction {
            account_keys: vec![pool_key(key)],
            decoded_instructions: vec![DecodedInstruction {
                program,
                instruction_name: "buy".to_owned(),
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    };
    hub.publish(with_key(0, 1));
    hub.publish(with_key(0, 2));
    let new: HashMap<String, ProgramFilter> = [(
        "new".to_owned(),
        ProgramFilter {
            programs: vec![2],
            ..Default::default()
        },
    )]
    .into();
    subscriber.replace(compile(&new));
    // The first queued update no longer matches; the second is sent with the new id.
    let first = subscriber.try_next().unwrap();
    assert!(subscriber.personalise(first, 0).is_none());
    let second = subscriber.try_next().unwrap();
    let decoded = SubscribeUpdate::decode(
        subscriber
            .personalise(second, 0)
            .unwrap()
            .encode_to_vec()
            .as_slice(),
    )
    .unwrap();
    let Some(Update::Transaction(transaction)) = decoded.update else {
        panic!("not a transaction");
    };
    assert_eq!(transaction.matched_filters, ["new"]);
    assert!(subscriber.try_next().is_none());
    // Published after the request: matched under the new filters directly.
    hub.publish(with_key(5, 2));
    hub.publish(with_key(0, 1));
    assert!(subscriber.try_next().is_some());
    assert!(subscriber.try_next().is_none());
    // The background rebuild changes nothing.
    std::thread::sleep(Duration::from_millis(50));
    hub.publish(with_key(5, 2));
    assert!(subscriber.try_next().is_some());
}
