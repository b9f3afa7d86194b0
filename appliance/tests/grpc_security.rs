//! The listeners' protections through the real process: access tokens on gRPC (`x-token`
//! metadata) and HTTP (`x-token` or `Authorization: Bearer`), `/health` open; open streams capped
//! per token (`[grpc] max_subscribers_per_token`); gRPC over TLS
//! (a certificate made by the `openssl` CLI, verified by the client against it) with gzip and
//! zstd compressed streams when configured and the client asks for them (uncompressed unless
//! configured), also to `appliance subscribe --tls-ca`; Yellowstone's `geyser.Geyser` and the
//! shredstream proxy's service behind the same token check, and Yellowstone's published client
//! over TLS.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{SubscribeRequest, subscribe_update::Update};
use tokio_stream::StreamExt;
use tonic::codec::CompressionEncoding;
use tonic::transport::{Certificate, Channel, ClientTlsConfig};

use process::{Appliance, free_tcp_address, http_get, metric_value, wait_for_metric};

/// The embedded default (bundled replay looping over loopback) with extra flags.
fn start(grpc: SocketAddr, http: SocketAddr, extra: &[&str]) -> Appliance {
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args([
            "run",
            "--grpc",
            &grpc.to_string(),
            "--http",
            &http.to_string(),
        ])
        .args(["--replay-rate", "20000"])
        .arg("--data-dir")
        .arg(process::scratch_data_dir())
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Appliance { child }
}

/// Waits until the HTTP listener answers `/health`.
fn wait_for_health(http: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(http).is_ok() && http_get(http, "/health", &[]).0 == 200 {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("appliance did not come up on {http}");
}

fn everything() -> SubscribeRequest {
    SubscribeRequest {
        subscriptions: Default::default(),
        ping_id: None,
        ..Default::default()
    }
}

/// Opens a stream with an optional `x-token` and returns the first transaction's slot, or the
/// status the call ended with.
async fn first_transaction(
    mut client: StreamClient<Channel>,
    token: Option<&str>,
) -> Result<(u64, tonic::metadata::MetadataMap), tonic::Status> {
    let mut request = tonic::Request::new(tokio_stream::iter([everything()]));
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("x-token", token.parse().unwrap());
    }
    let response = client.subscribe_decoded(request).await?;
    let headers = response.metadata().clone();
    let mut updates = response.into_inner();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(30), updates.next())
            .await
            .expect("no transaction within 30 s")
            .expect("stream ended")?;
        if let Some(Update::Transaction(transaction)) = next.update {
            return Ok((transaction.slot, headers));
        }
    }
}

async fn plain_channel(grpc: SocketAddr) -> Channel {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Channel::from_shared(format!("http://{grpc}"))
            .unwrap()
            .connect()
            .await
        {
            Ok(channel) => return channel,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(error) => panic!("no gRPC server on {grpc}: {error}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_guard_grpc_and_http_but_not_health() {
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let _appliance = start(
        grpc,
        http,
        &["--auth-token", "s3cret-A", "--auth-token", "s3cret-B"],
    );
    wait_for_health(http);
    let channel = plain_channel(grpc).await;

    for token in [None, Some("wrong"), Some("s3cret-A ")] {
        let status = first_transaction(StreamClient::new(channel.clone()), token)
            .await
            .expect_err("a stream without a valid token must be refused");
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{token:?}");
        assert!(status.message().contains("x-token"), "{status:?}");
    }
    for token in ["s3cret-A", "s3cret-B"] {
        first_transaction(StreamClient::new(channel.clone()), Some(token))
            .await
            .expect("a valid token streams");
    }
    // Not configured to compress: a client accepting zstd still gets the stream uncompressed.
    let accepting = StreamClient::new(channel.clone()).accept_compressed(CompressionEncoding::Zstd);
    let (_, headers) = first_transaction(accepting, Some("s3cret-A"))
        .await
        .unwrap();
    assert!(headers.get("grpc-encoding").is_none(), "{headers:?}");

    assert_eq!(http_get(http, "/health", &[]).0, 200);
    let (status, body) = http_get(http, "/metrics", &[]);
    assert_eq!(status, 401);
    assert!(body.contains("\"unauthenticated\""), "{body}");
    assert_eq!(http_get(http, "/metrics", &[("x-token", "nope")]).0, 401);
    assert_eq!(
        http_get(http, "/metrics", &[("Authorization", "Bearer nope")]).0,
        401
    );
    assert_eq!(
        http_get(http, "/metrics", &[("x-token", "s3cret-B")]).0,
        200
    );
    let (status, body) = http_get(http, "/metrics", &[("Authorization", "Bearer s3cret-A")]);
    assert_eq!(status, 200);
    assert!(body.contains("appliance_"), "{body}");
    // Three refused streams, three refused HTTP requests so far.
    assert!(body.contains("appliance_auth_rejected_total 6\n"), "{body}");
    // Unknown paths are refused before routing: no information without a token.
    assert_eq!(http_get(http, "/nowhere", &[]).0, 401);
    assert_eq!(
        http_get(http, "/nowhere", &[("x-token", "s3cret-A")]).0,
        404
    );
    drop_in_services_need_the_token(&channel).await;
}

/// Yellowstone's `geyser.Geyser` and the shredstream proxy's service sit behind the same check.
async fn drop_in_services_need_the_token(channel: &Channel) {
    use stream_proto::shredstream::SubscribeEntriesRequest;
    use stream_proto::shredstream::shredstream_proxy_client::ShredstreamProxyClient;
    use yellowstone_grpc_proto::geyser::PingRequest;
    use yellowstone_grpc_proto::geyser::geyser_client::GeyserClient;
    let with_token = |count| {
        let mut request = tonic::Request::new(PingRequest { count });
        request
            .metadata_mut()
            .insert("x-token", "s3cret-B".parse().unwrap());
        request
    };
    let mut geyser = GeyserClient::new(channel.clone());
    let refused = geyser.ping(PingRequest { count: 1 }).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
    assert_eq!(
        geyser.ping(with_token(2)).await.unwrap().into_inner().count,
        2
    );
    let refused = ShredstreamProxyClient::new(channel.clone())
        .subscribe_entries(SubscribeEntriesRequest {})
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
}

/// An open stream: its updates and the sender of its requests (dropping both cancels it).
type HeldStream = (
    tonic::Streaming<stream_proto::stream::SubscribeUpdate>,
    tokio::sync::mpsc::Sender<SubscribeRequest>,
);

/// Opens a stream with `token` and waits for its first update: the place is held until the
/// returned stream is dropped.
async fn hold_stream(channel: &Channel, token: &str) -> Result<HeldStream, tonic::Status> {
    let (requests, outbound) = tokio::sync::mpsc::channel(1);
    requests.send(everything()).await.unwrap();
    let mut request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(outbound));
    request
        .metadata_mut()
        .insert("x-token", token.parse().unwrap());
    let mut updates = StreamClient::new(channel.clone())
        .subscribe_decoded(request)
        .await?
        .into_inner();
    let first = tokio::time::timeout(Duration::from_secs(30), updates.next()).await;
    first
        .expect("no update within 30 s")
        .expect("stream ended")?;
    Ok((updates, requests))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_per_token_are_capped_and_given_back() {
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("appliance.toml");
    std::fs::write(&config, "[grpc]\nmax_subscribers_per_token = 2\n").unwrap();
    let config = config.display().to_string();
    let tokens = ["--auth-token", "s3cret-A", "--auth-token", "s3cret-B"];
    let _appliance = start(grpc, http, &[&tokens[..], &["--config", &config]].concat());
    wait_for_health(http);
    let channel = plain_channel(grpc).await;

    let first = hold_stream(&channel, "s3cret-A").await.unwrap();
    let _second = hold_stream(&channel, "s3cret-A").await.unwrap();
    let refused = hold_stream(&channel, "s3cret-A").await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    assert!(
        refused.message().contains("max_subscribers_per_token")
            && !refused.message().contains("s3cret"),
        "{refused:?}"
    );
    // Another token is not affected; a place given back is taken again.
    let _other = hold_stream(&channel, "s3cret-B").await.unwrap();
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    while hold_stream(&channel, "s3cret-A").await.is_err() {
        assert!(
            Instant::now() < deadline,
            "the token's place did not come back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, body) = http_get(http, "/metrics", &[("x-token", "s3cret-B")]);
    assert!(
        body.contains("appliance_stream_sessions_refused_total "),
        "{body}"
    );
}

/// A test CA and a `localhost` server certificate signed by it, made by the openssl CLI:
/// (CA certificate, server certificate, server key).
fn make_certificates(directory: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let path = |name: &str| directory.join(name);
    let openssl = |args: &[&str]| {
        let status = Command::new("openssl")
            .args(args)
            .current_dir(directory)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("the openssl CLI is needed to make test certificates");
        assert!(status.success(), "openssl {args:?}");
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &["-days", "2", "-subj", "/CN=test CA"],
            &["-keyout", "ca.key", "-out", "ca.pem"],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &["-subj", "/CN=localhost", "-keyout", "server.key"],
            &["-out", "server.csr"],
        ]
        .concat(),
    );
    std::fs::write(
        path("server.ext"),
        "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        "-out",
        "server.pem",
    ]);
    (path("ca.pem"), path("server.pem"), path("server.key"))
}

/// The embedded default with a TLS listener (certificates made in a fresh directory
/// `{name}-{pid}` of the temp dir) and `extra` flags: (directory, CA file, gRPC address, HTTP
/// address, the process).
fn start_tls(name: &str, extra: &[&str]) -> (PathBuf, PathBuf, SocketAddr, SocketAddr, Appliance) {
    let directory = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let (ca, cert, key) = make_certificates(&directory);
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let tls = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let flags: Vec<&str> = tls.iter().chain(extra).copied().collect();
    let appliance = start(grpc, http, &flags);
    (directory, ca, grpc, http, appliance)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_listener_streams_compressed_when_asked() {
    let (directory, ca, grpc, http, _appliance) = start_tls(
        "appliance-tls",
        &["--grpc-compression", "gzip", "--grpc-compression", "zstd"],
    );
    wait_for_health(http);
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(std::fs::read(&ca).unwrap()))
        .domain_name("localhost");
    let channel = Channel::from_shared(format!("https://localhost:{}", grpc.port()))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .expect("TLS handshake with the appliance's certificate");

    let (_, headers) = first_transaction(StreamClient::new(channel.clone()), None)
        .await
        .unwrap();
    assert!(
        headers.get("grpc-encoding").is_none(),
        "uncompressed unless asked"
    );
    for (encoding, name) in [
        (CompressionEncoding::Gzip, "gzip"),
        (CompressionEncoding::Zstd, "zstd"),
    ] {
        let client = StreamClient::new(channel.clone()).accept_compressed(encoding);
        let (_, headers) = first_transaction(client, None).await.unwrap();
        assert_eq!(
            headers.get("grpc-encoding").map(|v| v.to_str().unwrap()),
            Some(name)
        );
    }

    yellowstone_over_tls(grpc, &ca).await;

    // A plaintext client cannot talk to the TLS listener.
    let plaintext = Channel::from_shared(format!("http://{grpc}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(5))
        .connect()
        .await;
    if let Ok(channel) = plaintext {
        assert!(
            first_transaction(StreamClient::new(channel), None)
                .await
                .is_err()
        );
    }
    // `appliance subscribe` over TLS, trusting the CA.
    let endpoint = format!("https://localhost:{}", grpc.port());
    let subscribed = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args([
            "subscribe",
            "--endpoint",
            &endpoint,
            "--compact",
            "--count",
            "2",
        ])
        .arg("--tls-ca")
        .arg(&ca)
        .output()
        .unwrap();
    assert!(subscribed.status.success(), "{subscribed:?}");
    let printed = String::from_utf8(subscribed.stdout).unwrap();
    assert_eq!(
        printed.lines().filter(|l| l.starts_with("slot ")).count(),
        2
    );
    let _ = std::fs::remove_dir_all(&directory);
}

/// Yellowstone's published client over TLS, trusting the CA, asking for zstd: a transaction.
async fn yellowstone_over_tls(grpc: SocketAddr, ca: &Path) {
    use yellowstone_grpc_client::{ClientTlsConfig, GeyserGrpcClient};
    use yellowstone_grpc_proto::geyser::SubscribeDeshredRequest;
    use yellowstone_grpc_proto::geyser::subscribe_update_deshred::UpdateOneof;
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(std::fs::read(ca).unwrap()))
        .domain_name("localhost");
    let mut client =
        GeyserGrpcClient::build_from_shared(format!("https://localhost:{}", grpc.port()))
            .unwrap()
            .tls_config(tls)
            .unwrap()
            .accept_compressed(CompressionEncoding::Zstd)
            .connect()
            .await
            .expect("TLS handshake with the appliance's certificate");
    let request = SubscribeDeshredRequest {
        deshred_transactions: [("all".to_owned(), Default::default())]
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let mut stream = client.subscribe_deshred_once(request).await.unwrap();
    loop {
        let update = tokio::time::timeout(Duration::from_secs(30), stream.next())
            .await
            .expect("no deshred transaction within 30 s")
            .expect("stream ended")
            .unwrap();
        if let Some(UpdateOneof::DeshredTransaction(_)) = update.update_oneof {
            assert_eq!(update.filters, ["all"]);
            break;
        }
    }
}

/// `run --relay` to an origin that requires TLS and a token: with `--relay-tls-ca` and the
/// right `--relay-token` it relays (and its subscriber gets transactions); with a wrong token it
/// relays nothing and counts the refusals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_reaches_a_tls_origin_with_its_token() {
    let (directory, ca, grpc, _, _origin) =
        start_tls("appliance-relay", &["--auth-token", "origin-secret"]);
    let origin = format!("https://localhost:{}", grpc.port());
    let relay = |token: &str| {
        let (relay_grpc, relay_http) = (free_tcp_address(), free_tcp_address());
        let child = start(
            relay_grpc,
            relay_http,
            &[
                "--relay",
                &origin,
                "--relay-token",
                token,
                "--relay-tls-ca",
                ca.to_str().unwrap(),
            ],
        );
        (child, relay_grpc, relay_http)
    };
    let (_good, good_grpc, good_http) = relay("origin-secret");
    let (_bad, _, bad_http) = relay("wrong");

    wait_for_metric(good_http, "appliance_relay_published_total", |n| n > 0);
    let (slot, _) = first_transaction(StreamClient::new(plain_channel(good_grpc).await), None)
        .await
        .expect("the relay's subscriber gets transactions");
    assert!(slot > 0);
    wait_for_metric(
        bad_http,
        "appliance_relay_link_errors_total{reason=\"status\"}",
        |n| n > 0,
    );
    assert_eq!(
        metric_value(bad_http, "appliance_relay_published_total"),
        Some(0)
    );
    assert_eq!(metric_value(bad_http, "appliance_relay_connected"), Some(0));
    // /health names the mode and the link.
    let (_, health) = http_get(good_http, "/health", &[]);
    assert!(
        health.contains("\"trust_mode\":\"relayed\"")
            && health.contains("\"relay\":{\"connected\":true,\"last_slot\":"),
        "{health}"
    );
    let (_, health) = http_get(bad_http, "/health", &[]);
    assert!(health.contains("\"connected\":false"), "{health}");
    let _ = std::fs::remove_dir_all(&directory);
}
