//! The hand-written tonic service over a real HTTP/2 connection with the generated client: the
//! pong comes first, matching transactions arrive with their filter ids and stamps, a new request
//! replaces the filters for the very next update, slots reach every started session, invalid
//! filters are refused, an unknown method is UNIMPLEMENTED, a subscriber that stops reading is cut
//! with RESOURCE_EXHAUSTED while the publisher never waits, and shutdown ends every session with
//! UNAVAILABLE.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod service_support;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ::stream::service::{DisconnectReason, Feed};
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{
    DecodedInstruction, DecodedTransaction, ProgramFilter, ServerTiming, SlotNotification,
    SubscribeRequest, SubscribeUpdate, subscribe_update::Update,
};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;

use service_support::{Running, serve_feed};
use tonic::transport::Channel;

async fn serve(queue: usize) -> Running {
    serve_feed(Feed::new(queue), None).await
}

async fn client(address: SocketAddr) -> StreamClient<Channel> {
    StreamClient::connect(format!("http://{address}"))
        .await
        .unwrap()
}

async fn subscribe(
    client: &mut StreamClient<Channel>,
) -> (mpsc::Sender<SubscribeRequest>, Streaming<SubscribeUpdate>) {
    let (requests, receiver) = mpsc::channel(4);
    let updates = client
        .subscribe_decoded(ReceiverStream::new(receiver))
        .await
        .unwrap()
        .into_inner();
    (requests, updates)
}

fn request(filters: &[(&str, ProgramFilter)], ping_id: Option<i32>) -> SubscribeRequest {
    SubscribeRequest {
        subscriptions: filters
            .iter()
            .map(|(id, filter)| ((*id).to_owned(), filter.clone()))
            .collect::<HashMap<_, _>>(),
        ping_id,
        ..Default::default()
    }
}

fn programs(values: &[i32]) -> ProgramFilter {
    ProgramFilter {
        programs: values.to_vec(),
        ..Default::default()
    }
}

fn transaction(program: i32, name: &str, tx_index: u32, publish: u64) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Transaction(DecodedTransaction {
            slot: 42,
            tx_index,
            signature: vec![tx_index as u8; 64],
            account_keys: vec![vec![1; 32]],
            decoded_instructions: vec![DecodedInstruction {
                program,
                instruction_name: name.to_owned(),
                raw_data: vec![0; 600],
                ..Default::default()
            }],
            server_timing: Some(ServerTiming {
                first_read_unix_nanos: publish - 4,
                capture_done_unix_nanos: publish - 3,
                deshred_done_unix_nanos: publish - 2,
                decode_done_unix_nanos: publish - 1,
                publish_unix_nanos: publish,
                subscriber_recv_unix_nanos: 0,
                ..Default::default()
            }),
            ..Default::default()
        })),
        ..Default::default()
    }
}

async fn next(updates: &mut Streaming<SubscribeUpdate>) -> SubscribeUpdate {
    tokio::time::timeout(Duration::from_secs(10), updates.next())
        .await
        .expect("no update within 10 s")
        .expect("stream ended")
        .expect("stream failed")
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_pongs_slots_and_replacement() {
    let running = serve(64).await;
    let mut client = client(running.address).await;
    let (requests, mut updates) = subscribe(&mut client).await;
    requests
        .send(request(&[("pump", programs(&[1]))], Some(7)))
        .await
        .unwrap();
    assert_eq!(next(&mut updates).await.update, Some(Update::Pong(7)));
    assert_eq!(running.feed.subscriber_count(), 1);

    let publish = now();
    running.feed.publish(transaction(2, "buy", 1, publish));
    running.feed.publish(transaction(1, "buy", 2, publish));
    let Some(Update::Transaction(pump)) = next(&mut updates).await.update else {
        panic!("not a transaction");
    };
    assert_eq!(pump.tx_index, 2);
    assert_eq!(pump.matched_filters, ["pump"]);
    assert_eq!(pump.signature, vec![2u8; 64]);
    assert_eq!(pump.decoded_instructions[0].raw_data.len(), 600);
    let timing = pump.server_timing.unwrap();
    assert_eq!(timing.publish_unix_nanos, publish);
    assert!(timing.subscriber_recv_unix_nanos >= publish);
    assert!(timing.subscriber_recv_unix_nanos <= now());

    // A new request: its pong first, then only what the new filters select, with their id.
    requests
        .send(request(&[("amm", programs(&[2]))], Some(8)))
        .await
        .unwrap();
    assert_eq!(next(&mut updates).await.update, Some(Update::Pong(8)));
    running.feed.publish(transaction(1, "buy", 3, now()));
    running.feed.publish(transaction(2, "sell", 4, now()));
    let Some(Update::Transaction(amm)) = next(&mut updates).await.update else {
        panic!("not a transaction");
    };
    assert_eq!(
        (amm.tx_index, amm.matched_filters),
        (4, vec!["amm".to_owned()])
    );

    // A pure ping keeps the filters; slots pass every filter.
    requests.send(request(&[], Some(9))).await.unwrap();
    assert_eq!(next(&mut updates).await.update, Some(Update::Pong(9)));
    running.feed.publish(SubscribeUpdate {
        update: Some(Update::Slot(SlotNotification { slot: 43 })),
        ..Default::default()
    });
    running.feed.publish(transaction(2, "buy", 5, now()));
    assert_eq!(
        next(&mut updates).await.update,
        Some(Update::Slot(SlotNotification { slot: 43 }))
    );
    let Some(Update::Transaction(amm)) = next(&mut updates).await.update else {
        panic!("not a transaction");
    };
    assert_eq!(amm.tx_index, 5);

    // An invalid request ends the stream with INVALID_ARGUMENT naming the filter and value.
    let bad = ProgramFilter {
        accounts_include: vec!["not-a-key!".to_owned()],
        ..Default::default()
    };
    requests
        .send(request(&[("broken", bad)], None))
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), updates.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("broken") && status.message().contains("not-a-key!"));
    let reason = DisconnectReason::InvalidFilter as usize;
    assert_eq!(
        running.metrics.disconnects[reason].load(Ordering::Relaxed),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_method_is_unimplemented() {
    let running = serve(4).await;
    let channel = Channel::from_shared(format!("http://{}", running.address))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path = tonic::codegen::http::uri::PathAndQuery::from_static("/stream.Stream/Nope");
    let codec = tonic_prost::ProstCodec::<SubscribeRequest, SubscribeUpdate>::default();
    let status = grpc
        .unary(
            tonic::Request::new(SubscribeRequest::default()),
            path,
            codec,
        )
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented);
}

/// A subscriber that stops reading: once the HTTP/2 windows are full its queue of 1,024 fills, the
/// publisher drops for it (never waits) and the stream ends with RESOURCE_EXHAUSTED after what
/// was already in flight; a reading subscriber gets every update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_subscriber_is_cut_and_the_publisher_never_waits() {
    const UPDATES: u32 = 20_000;
    let running = serve(1024).await;
    let mut slow_client = client(running.address).await;
    let (slow_requests, mut slow) = subscribe(&mut slow_client).await;
    slow_requests
        .send(request(&[("all", ProgramFilter::default())], Some(1)))
        .await
        .unwrap();
    assert_eq!(next(&mut slow).await.update, Some(Update::Pong(1)));
    let mut fast_client = client(running.address).await;
    let (fast_requests, mut fast) = subscribe(&mut fast_client).await;
    fast_requests
        .send(request(&[("all", ProgramFilter::default())], Some(2)))
        .await
        .unwrap();
    assert_eq!(next(&mut fast).await.update, Some(Update::Pong(2)));
    let fast_reader = tokio::spawn(async move {
        let mut received = 0u32;
        while received < UPDATES {
            match tokio::time::timeout(Duration::from_secs(10), fast.next()).await {
                Ok(Some(Ok(_))) => received += 1,
                other => panic!("fast after {received}: {other:?}"),
            }
        }
        received
    });
    // ~14 MB in 20,000 updates (more than the HTTP/2 windows and the queue hold), published from
    // a plain thread as a worker does, paced so that the reading subscriber keeps up.
    let feed = running.feed.clone();
    let publisher = std::thread::spawn(move || {
        for index in 0..UPDATES {
            feed.publish(transaction(1, "buy", index, now()));
            if index % 16 == 15 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    });
    publisher.join().unwrap();
    assert_eq!(fast_reader.await.unwrap(), UPDATES);
    let mut received = 0u32;
    let status = loop {
        match tokio::time::timeout(Duration::from_secs(10), slow.next()).await {
            Ok(Some(Ok(_))) => received += 1,
            Ok(Some(Err(status))) => break status,
            other => panic!("the stalled subscriber was not cut: {other:?}"),
        }
    };
    assert!(received < UPDATES);
    assert_eq!(status.code(), tonic::Code::ResourceExhausted);
    let dropped: u64 = status
        .message()
        .strip_prefix("subscriber lagged: ")
        .and_then(|rest| rest.strip_suffix(" updates dropped"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(dropped > 0);
    assert!(u64::from(received) + dropped <= u64::from(UPDATES));
    let lagged = DisconnectReason::Lagged as usize;
    assert_eq!(
        running.metrics.disconnects[lagged].load(Ordering::Relaxed),
        1
    );
    assert_eq!(
        running.metrics.updates_dropped_lag.load(Ordering::Relaxed),
        dropped
    );
}

/// Shutdown ends every session with UNAVAILABLE: a started one, one whose client half-closed its
/// requests after starting (it still receives until then), and one that never sent a request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_session_with_unavailable() {
    let running = serve(64).await;
    let mut client = client(running.address).await;
    let (started_requests, mut started) = subscribe(&mut client).await;
    started_requests
        .send(request(&[("all", ProgramFilter::default())], Some(1)))
        .await
        .unwrap();
    assert_eq!(next(&mut started).await.update, Some(Update::Pong(1)));
    let (half_closed_requests, mut half_closed) = subscribe(&mut client).await;
    half_closed_requests
        .send(request(&[("all", ProgramFilter::default())], Some(2)))
        .await
        .unwrap();
    assert_eq!(next(&mut half_closed).await.update, Some(Update::Pong(2)));
    drop(half_closed_requests);
    let (_waiting_requests, mut waiting) = subscribe(&mut client).await;

    running.feed.publish(transaction(1, "buy", 1, now()));
    for stream in [&mut started, &mut half_closed] {
        let Some(Update::Transaction(received)) = next(stream).await.update else {
            panic!("not a transaction");
        };
        assert_eq!(received.tx_index, 1);
    }

    running.stop.send(true).unwrap();
    for (name, stream) in [
        ("started", &mut started),
        ("half-closed", &mut half_closed),
        ("waiting", &mut waiting),
    ] {
        let status = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .unwrap_or_else(|_| panic!("{name}: not ended within 10 s"))
            .unwrap_or_else(|| panic!("{name}: ended without a status"))
            .expect_err(name);
        assert_eq!(status.code(), tonic::Code::Unavailable, "{name}");
        assert_eq!(status.message(), "server shutting down", "{name}");
    }
    let shutdown = DisconnectReason::Shutdown as usize;
    assert_eq!(
        running.metrics.disconnects[shutdown].load(Ordering::Relaxed),
        3
    );
}
