//! The relay (issue 22), real binaries and real gRPC: an origin appliance (the embedded replay),
//! a TCP proxy standing for the network between it and the relay, a relay (`run --relay`) and a
//! subscriber of the relay. The relay's link is cut for a second, then the origin is killed and
//! restarted (continuing the chain at a later slot, as a live cluster would). A witness subscribed
//! to the origin itself (reconnecting and resuming too) records what the origin published; the
//! relay's subscriber must have received exactly that, each update once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::collections::{BTreeSet, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{SubscribeRequest, SubscribeUpdate, subscribe_update::Update};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_stream::StreamExt;

use process::{free_tcp_address, metric_value, start_on, wait_for_metric};

/// What identifies an update: kind, slot, signature, and the route call of a delta.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Key {
    slot: u64,
    kind: u8,
    signature: Vec<u8>,
    route: u32,
}

fn key(update: &SubscribeUpdate) -> Option<Key> {
    let (kind, slot, signature, route) = match update.update.as_ref()? {
        Update::Transaction(tx) => (1, tx.slot, tx.signature.clone(), tx.tx_index),
        Update::Delta(delta) => {
            let envelope = delta.envelope.as_ref()?;
            let route = delta.top_level_instruction.as_ref()?.instruction_index;
            (2, envelope.slot, envelope.signature.clone(), route)
        }
        Update::Slot(slot) => (3, slot.slot, Vec::new(), 0),
        Update::Footer(footer) => (4, footer.slot, Vec::new(), 0),
        Update::DuplicateBlock(duplicate) => (5, duplicate.slot, Vec::new(), 0),
        Update::Pong(_) => return None,
    };
    Some(Key {
        slot,
        kind,
        signature,
        route,
    })
}

/// A TCP proxy from a loopback port to `target` whose connections can be cut.
struct Proxy {
    address: SocketAddr,
    /// `true`: every connection is closed and new ones are refused.
    cut: watch::Sender<bool>,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (cut, cut_rx) = watch::channel(false);
        tokio::spawn(async move {
            loop {
                let Ok((inbound, _)) = listener.accept().await else {
                    return;
                };
                if *cut_rx.borrow() {
                    continue; // dropped: closed at once
                }
                let mut cut_rx = cut_rx.clone();
                tokio::spawn(async move {
                    let Ok(outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    let (mut inbound, mut outbound) = (inbound, outbound);
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut_rx.wait_for(|cut| *cut) => {}
                    }
                });
            }
        });
        Self { address, cut }
    }

    /// Closes every connection and refuses new ones for `duration`.
    async fn cut_for(&self, duration: Duration) {
        self.cut.send_replace(true);
        tokio::time::sleep(duration).await;
        self.cut.send_replace(false);
    }
}

/// Everything a subscriber received, in order.
type Received = Arc<Mutex<Vec<Key>>>;

/// Subscribes to `grpc` from `from_slot` and records every update; on any error, reconnects
/// with `from_slot` = the last slot seen when `resume` (else ends).
async fn record(grpc: SocketAddr, from_slot: u64, resume: bool, into: Received) {
    let mut from_slot = from_slot;
    loop {
        if let Ok(mut client) = StreamClient::connect(format!("http://{grpc}")).await {
            let request = SubscribeRequest {
                from_slot: Some(from_slot),
                ..Default::default()
            };
            let outbound = tokio_stream::iter([request]).chain(tokio_stream::pending());
            if let Ok(response) = client.subscribe_decoded(outbound).await {
                let mut updates = response.into_inner();
                while let Some(Ok(update)) = updates.next().await {
                    if let Some(key) = key(&update) {
                        from_slot = from_slot.max(key.slot);
                        into.lock().unwrap().push(key);
                    }
                }
            }
        }
        if !resume {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn metric(http: SocketAddr, name: &str) -> u64 {
    metric_value(http, name).unwrap_or_else(|| panic!("{name} missing"))
}

/// Waits (off the runtime's threads) until `name` on `http` passes `ready`.
async fn wait_metric(
    http: SocketAddr,
    name: &'static str,
    ready: impl Fn(u64) -> bool + Send + 'static,
) -> u64 {
    tokio::task::spawn_blocking(move || wait_for_metric(http, name, ready))
        .await
        .unwrap()
}

/// The highest slot of `keys` below `limit`.
fn last_below(keys: &[Key], limit: u64) -> u64 {
    keys.iter()
        .map(|key| key.slot)
        .filter(|slot| *slot < limit)
        .max()
        .unwrap()
}

/// The slots of `keys` in `range`, as a set.
fn within(keys: &[Key], range: std::ops::RangeInclusive<u64>) -> BTreeSet<Key> {
    keys.iter()
        .filter(|key| range.contains(&key.slot))
        .cloned()
        .collect()
}

const FIRST_SLOT: u64 = 500_000_000;
/// The restarted origin continues the chain here (far above anything the first one reaches).
const RESTART_SLOT: u64 = 600_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relays_subscriber_sees_every_update_once_across_a_cut_link_and_a_restarted_origin() {
    let origin_data = tempfile::tempdir().unwrap();
    let relay_data = tempfile::tempdir().unwrap();
    let (origin_grpc, origin_http) = (free_tcp_address(), free_tcp_address());
    let origin_flags = |first_slot: u64| {
        vec![
            "--replay-rate".to_owned(),
            "5000".to_owned(),
            "--recent-slots".to_owned(),
            "2000".to_owned(),
            "--replay-first-slot".to_owned(),
            first_slot.to_string(),
        ]
    };
    let flags = origin_flags(FIRST_SLOT);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut origin = start_on(origin_grpc, origin_http, &flags, origin_data.path());
    let proxy = Proxy::start(origin_grpc).await;

    let (relay_grpc, relay_http) = (free_tcp_address(), free_tcp_address());
    let origin_url = format!("http://{}", proxy.address);
    let _relay = start_on(
        relay_grpc,
        relay_http,
        &["--relay", &origin_url, "--recent-slots", "2000"],
        relay_data.path(),
    );
    let relay_start = wait_metric(relay_http, "appliance_relay_last_slot", |slot| slot > 0).await;
    let from = relay_start + 1;

    let witness: Received = Arc::default();
    let subscriber: Received = Arc::default();
    tokio::spawn(record(origin_grpc, from, true, Arc::clone(&witness)));
    tokio::spawn(record(relay_grpc, from, false, Arc::clone(&subscriber)));

    tokio::time::sleep(Duration::from_secs(2)).await;
    proxy.cut_for(Duration::from_secs(1)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    origin.child.kill().unwrap();
    origin.child.wait().unwrap();
    let flags = origin_flags(RESTART_SLOT);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _restarted = start_on(origin_grpc, origin_http, &flags, origin_data.path());
    wait_metric(relay_http, "appliance_relay_last_slot", |slot| {
        slot > RESTART_SLOT + 20
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let witness = witness.lock().unwrap().clone();
    let received = subscriber.lock().unwrap().clone();
    // Each update once.
    let mut once = HashSet::new();
    let repeated: Vec<&Key> = received.iter().filter(|key| !once.insert(*key)).collect();
    assert!(
        repeated.is_empty(),
        "{} updates reached the relay's subscriber twice, e.g. {:?}",
        repeated.len(),
        &repeated[..repeated.len().min(3)]
    );
    // What the origin published, in both lives, leaving out each life's last slot (the kill
    // may have cut an update off from one of the two streams only) and the newest slots.
    let first_life =
        from..=last_below(&witness, RESTART_SLOT).min(last_below(&received, RESTART_SLOT)) - 1;
    let newest = |keys: &[Key]| keys.iter().map(|key| key.slot).max().unwrap();
    let second_life = RESTART_SLOT..=newest(&witness).min(newest(&received)) - 1;
    for (life, range) in [("first", first_life), ("second", second_life)] {
        let published = within(&witness, range.clone());
        let relayed = within(&received, range.clone());
        assert!(
            published.len() > 200,
            "{life} life: too little to compare ({} updates in slots {range:?})",
            published.len()
        );
        let missing: Vec<&Key> = published.difference(&relayed).collect();
        let extra: Vec<&Key> = relayed.difference(&published).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{life} life, slots {range:?}: {} published updates missing at the relay's \
             subscriber (e.g. {:?}), {} it got that the origin did not publish (e.g. {:?})",
            missing.len(),
            &missing[..missing.len().min(3)],
            extra.len(),
            &extra[..extra.len().min(3)]
        );
        eprintln!(
            "{life} life: {} updates in slots {range:?}, all relayed once",
            published.len()
        );
    }
    // The cut and the restart were seen and handled as such.
    assert!(metric(relay_http, "appliance_relay_connects_total") >= 3);
    assert!(metric(relay_http, "appliance_relay_numbering_changes_total") >= 1);
    assert!(
        metric(
            relay_http,
            "appliance_relay_repeats_dropped_total{key=\"sequence\"}"
        ) > 0
    );
    assert_eq!(metric(relay_http, "appliance_relay_gaps_total"), 0);
}
