//! The resume seam (issue 22) at the hub: a session that resumes reads the recent-slot buffer,
//! then its live queue, and sends every update of the asked slots once, in publish order, even
//! when updates are published between its registration and the end of its replay (they are then
//! both buffered and queued); its filters apply to what it replays.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::collections::HashMap;

use ::stream::fanout::{Hub, QueueBounds, RecentBounds, Subscriber};
use ::stream::filter::{FilterLimits, Filters};
use stream_proto::stream::{
    DecodedInstruction, DecodedTransaction, ProgramFilter, SlotNotification, SubscribeUpdate,
    subscribe_update::Update,
};

fn hub() -> std::sync::Arc<Hub> {
    Hub::with_recent(QueueBounds::updates(1_000), RecentBounds::default())
}

fn slot_update(slot: u64) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Slot(SlotNotification { slot })),
        ..Default::default()
    }
}

fn call(slot: u64, program: i32) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Transaction(DecodedTransaction {
            slot,
            decoded_instructions: vec![DecodedInstruction {
                program,
                instruction_name: "buy".to_owned(),
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn filters(programs: Vec<i32>) -> Filters {
    let map: HashMap<String, ProgramFilter> = [(
        "f".to_owned(),
        ProgramFilter {
            programs,
            ..Default::default()
        },
    )]
    .into();
    Filters::compile(&map, &FilterLimits::default()).unwrap()
}

/// What the session sends now: (sequence, slot) of each update, in order.
fn sent(subscriber: &mut Subscriber) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    while let Some(delivery) = subscriber.try_next() {
        let update = delivery.update.clone();
        if subscriber.personalise(delivery, 0).is_some() {
            let slot = match update.update().update.as_ref().unwrap() {
                Update::Transaction(tx) => tx.slot,
                Update::Slot(slot) => slot.slot,
                _ => unreachable!("only transactions and slots are published here"),
            };
            out.push((update.sequence(), slot));
        }
    }
    out
}

#[test]
fn updates_published_during_the_replay_are_sent_once_in_order() {
    let hub = hub();
    for slot in 1..=4 {
        hub.publish(slot_update(slot));
        hub.publish(call(slot, 1));
    }
    let mut subscriber = Subscriber::new(hub.clone());
    subscriber.replace(filters(Vec::new()));
    subscriber.resume(3).unwrap();
    // Published after registration, before the replay reads anything: buffered and queued.
    hub.publish(call(4, 1));
    hub.publish(slot_update(5));
    let first = sent(&mut subscriber);
    hub.publish(call(5, 1));
    let then = sent(&mut subscriber);
    let sequences: Vec<u64> = first.iter().chain(&then).map(|(s, _)| *s).collect();
    // Slots 3 and 4 of the buffer (5..=8), the two published during the replay (9, 10), the
    // live one (11): each once.
    assert_eq!(sequences, [5, 6, 7, 8, 9, 10, 11]);
    assert!(first.iter().all(|(_, slot)| *slot >= 3));
}

#[test]
fn a_resume_replays_through_the_session_filters() {
    let hub = hub();
    for slot in 1..=3 {
        hub.publish(call(slot, 1));
        hub.publish(call(slot, 2));
    }
    let mut subscriber = Subscriber::new(hub.clone());
    subscriber.replace(filters(vec![2]));
    subscriber.resume(2).unwrap();
    let replayed = sent(&mut subscriber);
    // Program 2's calls of slots 2 and 3 (sequences 4 and 6); the slot filter drops slot 1.
    assert_eq!(replayed, [(4, 2), (6, 3)]);
}

#[test]
fn a_session_without_from_slot_sees_only_what_is_published_after_it_starts() {
    let hub = hub();
    hub.publish(call(1, 1));
    let mut subscriber = Subscriber::new(hub.clone());
    subscriber.replace(filters(Vec::new()));
    hub.publish(call(2, 1));
    assert_eq!(sent(&mut subscriber), [(2, 2)]);
}
