//! The hub's bookkeeping: bounded queues that mark a session lagged instead of waiting, slot
//! notifications to started sessions only, unregistration on drop, and index rebuilds that
//! coalesce a burst of changes while matching stays right before, during and after them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ::stream::fanout::{Hub, Subscriber};
use ::stream::filter::{FilterLimits, Filters};
use stream_proto::stream::{
    DecodedInstruction, DecodedTransaction, ProgramFilter, SlotNotification, SubscribeUpdate,
    subscribe_update::Update,
};

fn slot(slot: u64) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Slot(SlotNotification { slot })),
        ..Default::default()
    }
}

fn key(seed: u32) -> [u8; 32] {
    let mut key = [7u8; 32];
    key[..4].copy_from_slice(&seed.to_le_bytes());
    key
}

fn buy_with_keys(keys: &[[u8; 32]]) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Transaction(DecodedTransaction {
            account_keys: keys.iter().map(|k| k.to_vec()).collect(),
            decoded_instructions: vec![DecodedInstruction {
                program: 1,
                instruction_name: "buy".to_owned(),
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// Session `seed`'s filter: pump buys that touch one of its own keys.
fn own_keys_filter(seed: u32, keys: u32) -> Filters {
    let filter = ProgramFilter {
        programs: vec![1],
        accounts_include: (0..keys)
            .map(|i| bs58::encode(key(seed * 10_000 + i)).into_string())
            .collect(),
        ..Default::default()
    };
    let map: HashMap<String, ProgramFilter> = [(format!("s{seed}"), filter)].into();
    Filters::compile(&map, &FilterLimits::default()).unwrap()
}

fn drain(subscriber: &mut Subscriber) -> usize {
    let mut count = 0;
    while let Some(delivery) = subscriber.try_next() {
        assert!(subscriber.personalise(delivery, 0).is_some());
        count += 1;
    }
    count
}

#[test]
fn a_full_queue_marks_the_session_lagged_without_waiting() {
    let hub = Hub::new(2);
    let mut subscriber = Subscriber::new(hub.clone());
    subscriber.replace(Filters::default());
    let queue = subscriber.queue();
    for n in 0..5 {
        hub.publish(slot(n));
    }
    assert!(queue.is_lagged());
    // The third update overflowed: it and the two queued are dropped at once, the queue is
    // emptied and the session leaves the hub, so the last two are not offered at all.
    assert_eq!(queue.dropped(), 3);
    assert_eq!(queue.queued(), (0, 0));
    assert_eq!(hub.session_count(), 0);
    assert_eq!(subscriber.end_lagged(), 3);
}

#[test]
fn slots_go_to_started_sessions_only() {
    let hub = Hub::new(8);
    let mut started = Subscriber::new(hub.clone());
    let mut waiting = Subscriber::new(hub.clone());
    started.replace(own_keys_filter(1, 1));
    assert_eq!(hub.session_count(), 1);
    hub.publish(slot(10));
    assert_eq!(drain(&mut started), 1);
    assert!(waiting.try_next().is_none());
    hub.rebuild();
    hub.publish(slot(11));
    assert_eq!(drain(&mut started), 1);
    assert!(waiting.try_next().is_none());
}

#[test]
fn a_dropped_subscriber_leaves_the_hub() {
    let hub = Hub::new(8);
    let mut keep = Subscriber::new(hub.clone());
    keep.replace(Filters::default());
    {
        let mut gone = Subscriber::new(hub.clone());
        gone.replace(Filters::default());
        hub.rebuild();
        assert_eq!(hub.session_count(), 2);
    }
    assert_eq!(hub.session_count(), 1);
    hub.publish(slot(1));
    assert_eq!(drain(&mut keep), 1);
}

/// A thousand sessions with a thousand keys each subscribe in a burst: the rebuilds coalesce,
/// and each session receives exactly the transactions touching its keys, both while sessions
/// are evaluated directly and once they are indexed.
#[test]
fn a_burst_of_subscriptions_is_indexed_in_few_rebuilds() {
    const SESSIONS: u32 = 1000;
    let hub = Hub::new(64);
    let filters: Vec<Filters> = (0..SESSIONS)
        .map(|seed| own_keys_filter(seed, 1000))
        .collect();
    let mut subscribers: Vec<Subscriber> = Vec::new();
    for filters in filters {
        let mut subscriber = Subscriber::new(hub.clone());
        subscriber.replace(filters);
        subscribers.push(subscriber);
    }
    let changes = hub.stats().changes.load(Ordering::Relaxed);
    assert_eq!(changes, u64::from(SESSIONS));
    // Session 7's 500th key and session 900's 3rd key, with unrelated keys.
    let update = buy_with_keys(&[key(u32::MAX), key(7 * 10_000 + 499), key(900 * 10_000 + 2)]);
    hub.publish(update.clone());
    // Wait for the background rebuild to index every session.
    let deadline = Instant::now() + Duration::from_secs(30);
    while hub.direct_sessions() != 0 || hub.indexed_sessions() != SESSIONS as usize {
        assert!(Instant::now() < deadline, "no rebuild");
        std::thread::sleep(Duration::from_millis(10));
    }
    let rebuilds = hub.stats().rebuilds.load(Ordering::Relaxed);
    assert!(rebuilds < u64::from(SESSIONS) / 10, "{rebuilds} rebuilds");
    hub.publish(update);
    for (seed, subscriber) in subscribers.iter_mut().enumerate() {
        let expected = if seed == 7 || seed == 900 { 2 } else { 0 };
        assert_eq!(drain(subscriber), expected, "session {seed}");
    }
}
