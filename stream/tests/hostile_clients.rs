//! Hostile clients against the real service over real HTTP/2 (issue "Hostile clients and damaged
//! data"): a client that never reads (its stream blocked by flow control, never polled) is cut
//! and counted by the publisher while its memory is freed, and gets RESOURCE_EXHAUSTED once it
//! reads again; the per-address cap refuses one stream too many; a request over the 4 MiB
//! message limit ends with a clear status; cancels are counted as `client_closed`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod service_support;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ::stream::fanout::QueueBounds;
use ::stream::service::{DisconnectReason, Feed};
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{
    DecodedInstruction, DecodedTransaction, ProgramFilter, SubscribeRequest, SubscribeUpdate,
    subscribe_update::Update,
};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;

use service_support::{Running, serve_feed};
use tonic::transport::{Channel, Endpoint};

async fn serve(bounds: QueueBounds, per_ip: usize) -> Running {
    serve_feed(Feed::with_bounds(bounds), Some(per_ip)).await
}

/// A client whose stream window is `window` bytes.
async fn client(address: SocketAddr, window: u32) -> StreamClient<Channel> {
    let channel = Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .initial_stream_window_size(window)
        .initial_connection_window_size(window.max(65_535))
        .connect()
        .await
        .unwrap();
    StreamClient::new(channel)
}

async fn subscribe(
    client: &mut StreamClient<Channel>,
    first: SubscribeRequest,
) -> (mpsc::Sender<SubscribeRequest>, Streaming<SubscribeUpdate>) {
    let (requests, receiver) = mpsc::channel(4);
    requests.send(first).await.unwrap();
    let updates = client
        .subscribe_decoded(ReceiverStream::new(receiver))
        .await
        .unwrap()
        .into_inner();
    (requests, updates)
}

/// Every transaction, answered by a pong first.
fn match_all() -> SubscribeRequest {
    SubscribeRequest {
        subscriptions: [("all".to_owned(), ProgramFilter::default())].into(),
        ping_id: Some(1),
        ..Default::default()
    }
}

fn transaction(tx_index: u32) -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Transaction(DecodedTransaction {
            slot: 42,
            tx_index,
            signature: vec![7; 64],
            account_keys: vec![vec![1; 32]],
            decoded_instructions: vec![DecodedInstruction {
                program: 1,
                instruction_name: "buy".to_owned(),
                raw_data: vec![0; 1_000],
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    }
}

async fn until(what: &str, condition: impl Fn() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not within 5 s: {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_is_cut_by_the_publisher_and_its_queue_freed() {
    // Bounded in bytes far below the updates bound: 256 KiB, about 240 updates.
    let bounds = QueueBounds {
        updates: 1_000_000,
        bytes: 256 << 10,
        max_age: Duration::from_secs(30),
    };
    let running = serve(bounds, 100).await;
    let mut client = client(running.address, 1_024).await;
    let (_requests, mut updates) = subscribe(&mut client, match_all()).await;
    let pong = updates.next().await.unwrap().unwrap();
    assert_eq!(pong.update, Some(Update::Pong(1)));
    until("session started", || running.feed.subscriber_count() == 1).await;

    // The client reads nothing more: its 1 KiB window fills and the session is not polled.
    for n in 0..2_000 {
        running.feed.publish(transaction(n));
        tokio::task::yield_now().await;
    }
    let metrics = &running.metrics;
    // Cut by the publisher itself: counted, out of the hub, while the stream is still open.
    assert_eq!(metrics.disconnects(DisconnectReason::Lagged), 1);
    assert_eq!(running.feed.subscriber_count(), 0);
    let dropped = metrics.updates_dropped_lag.load(Ordering::Relaxed);
    // Everything queued when the bound was crossed (about 256 KiB of 1.1 KB updates) and the
    // update that crossed it.
    assert!((200..=260).contains(&dropped), "dropped {dropped}");
    // The stream itself ends when its session next runs: tonic's encoder may poll it before the
    // client reads again (it then ends with its status at once), so it is open or just closed,
    // never more. The status the client gets is checked below either way.
    assert!(metrics.open_streams.load(Ordering::Relaxed) <= 1);
    // Later updates go nowhere (the session left the hub).
    running.feed.publish(transaction(9_999));
    assert_eq!(metrics.updates_dropped_lag.load(Ordering::Relaxed), dropped);

    // Reading again, the client gets what was in flight, then the documented status.
    let mut received = 0u64;
    let status = loop {
        match tokio::time::timeout(Duration::from_secs(10), updates.next())
            .await
            .expect("no end within 10 s")
        {
            Some(Ok(_)) => received += 1,
            Some(Err(status)) => break status,
            None => panic!("stream ended with OK after {received} updates"),
        }
    };
    assert_eq!(status.code(), tonic::Code::ResourceExhausted);
    assert!(status.message().contains("subscriber lagged"), "{status:?}");
    // Only what had left the queue before the cut (in tonic's and h2's buffers) arrives.
    assert!(received < 200, "received {received}");
    until("stream closed", || {
        metrics.open_streams.load(Ordering::Relaxed) == 0
    })
    .await;
    // Counted once.
    assert_eq!(metrics.disconnects(DisconnectReason::Lagged), 1);
    assert_eq!(metrics.disconnects(DisconnectReason::ClientClosed), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_per_address_are_capped_and_cancels_are_counted() {
    let running = serve(QueueBounds::updates(64), 2).await;
    let mut client = client(running.address, 65_535).await;
    let (_first, mut first) = subscribe(&mut client, match_all()).await;
    let (second_requests, second) = subscribe(&mut client, match_all()).await;
    assert_eq!(
        first.next().await.unwrap().unwrap().update,
        Some(Update::Pong(1))
    );
    let (_, receiver) = mpsc::channel(1);
    let refused = client
        .subscribe_decoded(ReceiverStream::new(receiver))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    assert!(
        refused.message().contains("max_subscribers_per_ip"),
        "{refused:?}"
    );
    assert_eq!(running.metrics.sessions_refused.load(Ordering::Relaxed), 1);

    // A cancel (the client drops its call: RST_STREAM) is counted as client_closed and gives
    // the place back.
    drop(second_requests);
    drop(second);
    until("cancel counted", || {
        running.metrics.disconnects(DisconnectReason::ClientClosed) == 1
    })
    .await;
    until("place given back", || {
        running.metrics.open_streams.load(Ordering::Relaxed) == 1
    })
    .await;
    let (_third, mut third) = subscribe(&mut client, match_all()).await;
    assert_eq!(
        third.next().await.unwrap().unwrap().update,
        Some(Update::Pong(1))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_message_limit_ends_with_a_clear_status() {
    let running = serve(QueueBounds::updates(64), 100).await;
    let mut client = client(running.address, 65_535).await;
    let (requests, mut updates) = subscribe(&mut client, match_all()).await;
    assert_eq!(
        updates.next().await.unwrap().unwrap().update,
        Some(Update::Pong(1))
    );
    let huge = SubscribeRequest {
        subscriptions: [("x".repeat(5 << 20), ProgramFilter::default())].into(),
        ping_id: None,
        ..Default::default()
    };
    requests.send(huge).await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), updates.next())
        .await
        .expect("no answer within 10 s")
        .expect("stream ended with OK")
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("request refused"), "{status:?}");
    until("counted", || {
        running
            .metrics
            .disconnects(DisconnectReason::InvalidRequest)
            == 1
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_filter_id_is_invalid_argument() {
    let running = serve(QueueBounds::updates(64), 100).await;
    let mut client = client(running.address, 65_535).await;
    let request = SubscribeRequest {
        subscriptions: [("y".repeat(1 << 20), ProgramFilter::default())].into(),
        ping_id: None,
        ..Default::default()
    };
    let (_requests, mut updates) = subscribe(&mut client, request).await;
    let status = updates.next().await.unwrap().unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("1048576 bytes"), "{status:?}");
    assert!(status.message().len() < 200);
    assert_eq!(
        running.metrics.disconnects(DisconnectReason::InvalidFilter),
        1
    );
}
