//! SIGTERM with hostile connections open (issue "Hostile clients and damaged data"): an idle TCP
//! connection to the gRPC port that never sends the HTTP/2 preface and an HTTP POST whose body
//! never finishes do not hold the process: it exits 0 within `[grpc] shutdown_timeout_secs`
//! (+ 2 s).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod process;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use process::{Appliance, free_tcp_address};

fn wait_listening(address: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(address).is_err() {
        assert!(Instant::now() < deadline, "{address} not listening");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_exits_within_the_deadline_with_stalled_connections_open() {
    const DEADLINE_SECS: u64 = 2;
    let config =
        std::env::temp_dir().join(format!("shutdown-deadline-{}.toml", std::process::id()));
    std::fs::write(
        &config,
        format!("[grpc]\nshutdown_timeout_secs = {DEADLINE_SECS}\n"),
    )
    .unwrap();
    let (grpc, http) = (free_tcp_address(), free_tcp_address());
    let child = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args(["run", "--config", config.to_str().unwrap()])
        .args(["--grpc", &grpc.to_string(), "--http", &http.to_string()])
        .arg("--data-dir")
        .arg(process::scratch_data_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut appliance = Appliance { child };
    wait_listening(grpc);
    wait_listening(http);

    // No HTTP/2 preface, ever.
    let _idle = TcpStream::connect(grpc).unwrap();
    // Headers announce a megabyte; ten bytes come.
    let mut stalled = TcpStream::connect(http).unwrap();
    stalled
        .write_all(
            b"POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
              Content-Length: 1000000\r\n\r\n{\"jsonrpc\"",
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));

    let pid = appliance.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let signalled = Instant::now();
    let limit = Duration::from_secs(DEADLINE_SECS + 2);
    let status = loop {
        if let Some(status) = appliance.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            signalled.elapsed() < limit,
            "still running {limit:?} after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status}");
    let _ = std::fs::remove_file(&config);
}
