//! Helpers shared by the tests that run the real `appliance` process: a guard that kills it when
//! the test ends, free loopback addresses for its listeners, `appliance run` on them (on a UDP
//! port, or on the embedded replay), paced UDP sending (of datagrams or a capture file), a plain
//! HTTP/1.1 GET against its HTTP address, one `/metrics` sample, and one JSON-RPC call.

#![allow(dead_code)] // Each test crate uses its own subset.

pub mod servers;

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A data directory of its own for one `appliance run` (`--data-dir`), under cargo's scratch
/// directory for integration tests (`target/tmp`): never the checkout's `data/`, which
/// processes running at once would share (the stores in it are locked by one process).
pub fn scratch_data_dir() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("data-{}-{n}", std::process::id()))
}

/// A loopback TCP address no listener holds now (for `--grpc`, `--http`).
pub fn free_tcp_address() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// A loopback UDP address no socket holds now (for `--udp`). Probed on UDP, not TCP: the
/// appliance binds with `SO_REUSEPORT`, so a port taken from a TCP probe could be another test's
/// live UDP port, which would then silently share its datagrams.
pub fn free_udp_address() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// Kills (and reaps) the appliance process when dropped, also when the test panics.
pub struct Appliance {
    pub child: Child,
}

impl Drop for Appliance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running `appliance run` and the addresses it listens on.
pub struct Running {
    pub appliance: Appliance,
    pub udp: SocketAddr,
    pub grpc: SocketAddr,
    pub http: SocketAddr,
}

/// `appliance run` on free loopback addresses, keeping its data in `data_dir` (never the
/// checkout's `data/`), with `extra` flags.
pub fn start_appliance(extra: &[&str], data_dir: &Path) -> Running {
    let udp = free_udp_address();
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let child = run_command(grpc, http, data_dir)
        .args(["--udp", &udp.to_string()])
        .args(extra)
        .spawn()
        .unwrap();
    Running {
        appliance: Appliance { child },
        udp,
        grpc,
        http,
    }
}

/// `appliance run` with no shred source (the embedded default: the bundled replay, looping, unless
/// `extra` makes it HTTP only) on free loopback addresses, its data in `data_dir`, with `extra`
/// flags; returns it with its gRPC and HTTP addresses.
pub fn start_replay(extra: &[&str], data_dir: &Path) -> (Appliance, SocketAddr, SocketAddr) {
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let child = run_command(grpc, http, data_dir)
        .args(extra)
        .spawn()
        .unwrap();
    (Appliance { child }, grpc, http)
}

/// `appliance run` on the given gRPC and HTTP addresses (to restart a process on the same ones),
/// its data in `data_dir`, with `extra` flags.
pub fn start_on(grpc: SocketAddr, http: SocketAddr, extra: &[&str], data_dir: &Path) -> Appliance {
    let child = run_command(grpc, http, data_dir)
        .args(extra)
        .spawn()
        .unwrap();
    Appliance { child }
}

/// `appliance run` on `grpc` and `http` with its data in `data_dir`, output discarded.
fn run_command(grpc: SocketAddr, http: SocketAddr, data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_appliance"));
    command
        .args([
            "run",
            "--grpc",
            &grpc.to_string(),
            "--http",
            &http.to_string(),
        ])
        .arg("--data-dir")
        .arg(data_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Sends every record of the capture file at `path` (any framing `capture` reads) to `target`,
/// 100 µs apart.
pub fn send_capture(target: SocketAddr, path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let datagrams: Vec<Vec<u8>> = capture::framing::records(&bytes)
        .map(|record| record.unwrap().payload.to_vec())
        .collect();
    send_paced(target, &datagrams);
}

/// The value of the `/metrics` sample `name` (labels included, e.g. `x_total{key="a"}`) on
/// `http`; `None` while nothing listens there or the sample is absent.
pub fn metric_value(http: SocketAddr, name: &str) -> Option<u64> {
    std::net::TcpStream::connect(http).ok()?;
    let (_, body) = http_get(http, "/metrics", &[]);
    body.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
}

/// Waits up to 30 s for the `/metrics` sample `name` on `http` to pass `ready`; its value.
pub fn wait_for_metric(http: SocketAddr, name: &str, ready: impl Fn(u64) -> bool) -> u64 {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let value = metric_value(http, name);
        if let Some(value) = value.filter(|value| ready(*value)) {
            return value;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{name} stayed at {value:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Sends `datagrams` to `target` from one socket, 100 µs apart (so the loopback socket buffer
/// never overflows).
pub fn send_paced(target: SocketAddr, datagrams: &[Vec<u8>]) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    for datagram in datagrams {
        socket.send_to(datagram, target).unwrap();
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// A plain HTTP/1.1 GET with extra headers: status and body.
pub fn http_get(address: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).unwrap().parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// One JSON-RPC call to `POST /` on `http`: the HTTP status and the parsed answer (`Null` when
/// the body is not JSON).
pub fn rpc_call(
    http: SocketAddr,
    method: &str,
    params: serde_json::Value,
) -> (u16, serde_json::Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut response = agent
        .post(&format!("http://{http}/"))
        .header("Content-Type", "application/json")
        .send(body.to_string().as_bytes())
        .unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}
