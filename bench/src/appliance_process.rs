//! A release `appliance run` under a bench tool's control: started on free loopback addresses
//! with its own data directory, killed when dropped; its `/metrics` read over plain HTTP/1.1;
//! latencies its clients measured, summarised.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The appliance under test; killed when dropped.
pub struct Appliance {
    pub child: Child,
    pub grpc: SocketAddr,
    pub http: SocketAddr,
    _data: tempfile::TempDir,
}

impl Drop for Appliance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback address nobody listens on (yet).
pub fn free_address() -> anyhow::Result<SocketAddr> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
}

/// `binary run` with `extra` flags on free addresses; returns once `/metrics` answers.
pub fn start(binary: &str, extra: &[&str]) -> anyhow::Result<Appliance> {
    let (grpc, http) = (free_address()?, free_address()?);
    let data = tempfile::tempdir()?;
    let child = Command::new(binary)
        .args([
            "run",
            "--grpc",
            &grpc.to_string(),
            "--http",
            &http.to_string(),
        ])
        .args(extra)
        .args(["--data-dir", &data.path().display().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {binary}"))?;
    let appliance = Appliance {
        child,
        grpc,
        http,
        _data: data,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while metrics(appliance.http).is_err() {
        if Instant::now() > deadline {
            bail!("the appliance did not answer /metrics");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(appliance)
}

/// `/metrics` over a plain HTTP/1.1 GET.
pub fn metrics(http: SocketAddr) -> anyhow::Result<String> {
    let mut stream = TcpStream::connect(http)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    if !text.starts_with("HTTP/1.1 200") {
        bail!("/metrics answered {}", text.lines().next().unwrap_or(""));
    }
    Ok(text)
}

/// The sum of every `/metrics` sample whose line starts with `prefix` (0 when unreachable).
pub fn metric(http: SocketAddr, prefix: &str) -> u64 {
    let Ok(text) = metrics(http) else {
        return 0;
    };
    text.lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// "n … p50 … p99 … max …" of latencies in µs.
pub fn quantiles(values: impl IntoIterator<Item = u64>) -> anyhow::Result<String> {
    let mut histogram = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 600_000_000, 3)?;
    for value in values {
        histogram.saturating_record(value.max(1));
    }
    Ok(format!(
        "n {:>7}  p50 {:>6} µs  p99 {:>7} µs  max {:>8} µs",
        histogram.len(),
        histogram.value_at_quantile(0.5),
        histogram.value_at_quantile(0.99),
        histogram.max()
    ))
}
