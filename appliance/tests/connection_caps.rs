//! The gRPC and HTTP listeners under connection floods (issue "Hostile clients and damaged data"),
//! against the real process: idle TCP connections that never send a byte to the gRPC port are
//! closed after `[grpc] first_bytes_timeout_secs`; connections beyond `max_connections_per_ip`
//! from one address are closed at accept, on either port (`[grpc]`, `[http]`), while other
//! addresses are served; with the descriptor limit exhausted (`ulimit -n` lowered) accept errors
//! are counted and survived, and the stream serves again once the flood is gone. Each outcome is
//! visible in `/metrics`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stream_proto::stream::SubscribeRequest;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::subscribe_update::Update;
use tokio_stream::StreamExt;

use process::{Appliance, free_tcp_address, http_get};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

struct Running {
    _appliance: Appliance,
    grpc: SocketAddr,
    http: SocketAddr,
}

/// `appliance run` (embedded replay) with `[grpc]` settings `grpc_toml`, under `ulimit -n
/// nofile` when given.
fn start(dir: &Path, grpc_toml: &str, nofile: Option<u32>) -> Running {
    start_with(dir, &format!("[grpc]\n{grpc_toml}\n"), nofile)
}

/// `appliance run` (embedded replay) with the configuration `toml`.
fn start_with(dir: &Path, toml: &str, nofile: Option<u32>) -> Running {
    let config = dir.join("appliance.toml");
    std::fs::write(&config, toml).unwrap();
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let binary = env!("CARGO_BIN_EXE_appliance");
    let limit = nofile.map_or(String::new(), |n| format!("ulimit -n {n} && "));
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("{limit}exec \"$0\" \"$@\""))
        .arg(binary)
        .args(["run", "--config", config.to_str().unwrap()])
        .args(["--grpc", &grpc.to_string(), "--http", &http.to_string()])
        .arg("--data-dir")
        .arg(dir.join("data"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let running = Running {
        _appliance: Appliance { child },
        grpc,
        http,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(http).is_err() {
        assert!(Instant::now() < deadline, "HTTP not listening");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Probes that send the preface and close: they hold no slot once the server saw them go.
    while TcpStream::connect(grpc)
        .and_then(|mut probe| probe.write_all(PREFACE))
        .is_err()
    {
        assert!(Instant::now() < deadline, "gRPC not listening");
        std::thread::sleep(Duration::from_millis(50));
    }
    while metric(http, "appliance_grpc_connections_open ") != 0 {
        assert!(Instant::now() < deadline, "the probes were not released");
        std::thread::sleep(Duration::from_millis(50));
    }
    running
}

/// The value of the `/metrics` line starting with `prefix` (0 when absent).
fn metric(http: SocketAddr, prefix: &str) -> u64 {
    let (_, text) = http_get(http, "/metrics", &[]);
    text.lines()
        .find(|line| line.starts_with(prefix))
        .map_or(0, |line| line.rsplit(' ').next().unwrap().parse().unwrap())
}

/// Whether the server closed `stream` (a read returns end of file or a reset) within `within`.
fn closed_by_server(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // the server's SETTINGS after a preface
            Err(error) => {
                return !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
            }
        }
    }
}

/// A subscriber receives a transaction from the embedded replay.
async fn stream_serves(grpc: SocketAddr) {
    let mut client = StreamClient::connect(format!("http://{grpc}"))
        .await
        .unwrap();
    let request = SubscribeRequest {
        subscriptions: Default::default(),
        ping_id: None,
        ..Default::default()
    };
    let mut updates = client
        .subscribe_decoded(tokio_stream::iter([request]).chain(tokio_stream::pending()))
        .await
        .unwrap()
        .into_inner();
    let deadline = Duration::from_secs(30);
    loop {
        let update = tokio::time::timeout(deadline, updates.next()).await;
        let update = update.unwrap().unwrap().unwrap();
        if let Some(Update::Transaction(_)) = update.update {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_after_the_first_bytes_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(dir.path(), "first_bytes_timeout_secs = 1", None);
    let opened = Instant::now();
    let mut idle: Vec<TcpStream> = (0..5)
        .map(|_| TcpStream::connect(running.grpc).unwrap())
        .collect();
    for stream in &mut idle {
        assert!(closed_by_server(stream, Duration::from_secs(10)));
    }
    assert!(opened.elapsed() >= Duration::from_millis(900));
    let refused = "appliance_grpc_connections_refused_total{reason=\"first_bytes_timeout\"} ";
    assert_eq!(metric(running.http, refused), 5);
    stream_serves(running.grpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_per_ip_cap_are_closed_at_accept() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(dir.path(), "max_connections_per_ip = 8", None);
    let mut held: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut stream = TcpStream::connect(running.grpc).unwrap();
            stream.write_all(PREFACE).unwrap();
            stream
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric(running.http, "appliance_grpc_connections_open ") < 8 {
        assert!(
            Instant::now() < deadline,
            "the 8 connections were not all taken"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut ninth = TcpStream::connect(running.grpc).unwrap();
    assert!(closed_by_server(&mut ninth, Duration::from_secs(5)));
    assert!(!closed_by_server(&mut held[0], Duration::from_millis(200)));
    let refused = "appliance_grpc_connections_refused_total{reason=\"per_ip\"} ";
    assert_eq!(metric(running.http, refused), 1);
    drop(held);
    stream_serves(running.grpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_descriptor_limit_is_survived_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let grpc = "max_connections_per_ip = 10000\nfirst_bytes_timeout_secs = 60";
    let running = start(dir.path(), grpc, Some(256));
    assert_eq!(metric(running.http, "appliance_fd_limit "), 256);
    // More connections than the process has descriptors: the kernel completes them (backlog),
    // the appliance's accepts fail with EMFILE (its HTTP port cannot accept either meanwhile).
    // A full backlog drops SYNs: each connect waits at most 200 ms.
    let flood: Vec<TcpStream> = (0..400)
        .filter_map(|_| TcpStream::connect_timeout(&running.grpc, Duration::from_millis(200)).ok())
        .collect();
    assert!(flood.len() > 256, "{} connections", flood.len());
    std::thread::sleep(Duration::from_millis(500));
    drop(flood);
    // The loop backs off at most 1 s; then the stream serves again, and the errors were counted.
    stream_serves(running.grpc).await;
    assert!(metric(running.http, "appliance_grpc_accept_errors_total ") > 0);
}

/// A TCP connection to `to` from the loopback address `from` (another client address).
fn connect_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    socket.connect(&to.into()).unwrap();
    socket.into()
}

/// One keep-alive `GET /health` on `stream`: whether a `200` came back.
fn health_ok(stream: &mut TcpStream) -> bool {
    let request = b"GET /health HTTP/1.1\r\nHost: test\r\n\r\n";
    if stream.write_all(request).is_err() {
        return false;
    }
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 512];
    matches!(stream.read(&mut buf), Ok(n) if buf[..n].starts_with(b"HTTP/1.1 200"))
}

#[test]
fn http_connections_beyond_the_per_ip_cap_are_closed_at_accept() {
    let dir = tempfile::tempdir().unwrap();
    let running = start_with(dir.path(), "[http]\nmax_connections_per_ip = 8\n", None);
    let client = [127, 0, 0, 2];
    // Eight kept-alive connections from one address, each served once and held open.
    let mut held: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut stream = connect_from(client, running.http);
            assert!(health_ok(&mut stream));
            stream
        })
        .collect();
    let mut ninth = connect_from(client, running.http);
    assert!(!health_ok(&mut ninth), "the ninth connection was served");
    assert!(closed_by_server(&mut ninth, Duration::from_secs(5)));
    // The held ones and other addresses are still served; the refusal was counted.
    assert!(health_ok(&mut held[0]));
    let refused = "appliance_http_connections_refused_total{reason=\"per_ip\"} ";
    assert_eq!(metric(running.http, refused), 1);
    assert!(metric(running.http, "appliance_http_connections_open ") >= 8);
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut again = connect_from(client, running.http);
        if health_ok(&mut again) {
            break;
        }
        assert!(Instant::now() < deadline, "the address stayed refused");
        std::thread::sleep(Duration::from_millis(50));
    }
}
