//! Closed-loop load generator for the JSON-RPC archive: N keep-alive HTTP/1.1 connections, each
//! with one request in flight, for a fixed time; reports requests/s and the latency distribution
//! (hdrhistogram, microsecond resolution). Every answer is checked to be HTTP 200 with a `result`
//! member (errors are counted and fail the run).
//!
//! ```text
//! rpc_load --url http://127.0.0.1:8899 --method getTransaction|getBlock
//!          [--connections 32] [--seconds 10] [--threads 1] [--address BASE58]
//!          [--targets 64] [--signatures FILE] [--server-pid PID]
//! ```
//! Targets (signatures or slots) are discovered from the server itself: with `--address A`, the
//! signatures (and their slots) getSignaturesForAddress returns for A; otherwise getSlot, then
//! getBlock with `transactionDetails: signatures` walking back from the newest slot until
//! `--targets` signatures (getTransaction) or produced slots (getBlock) are found; with
//! `--signatures FILE`, the base58 signatures listed in FILE (one a line); the requests
//! cycle through them in a shuffled order. With `--server-pid`, the server's CPU time (utime +
//! stime from `/proc/PID/stat`) over the run is divided by the requests served and printed as
//! CPU µs per request. The rate limit (100/s per IP) must be lifted on the target,
//! or all but the first hundred calls of each second get 429: run `rpc_fixture_server
//! --rate-limit off`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

struct Options {
    url: hyper::Uri,
    method: String,
    connections: usize,
    seconds: u64,
    threads: usize,
    /// Discover targets from this address's signatures instead of walking back from getSlot.
    address: Option<String>,
    /// How many distinct signatures or slots to cycle through.
    targets: usize,
    /// The server's process id, to report its CPU time per request.
    server_pid: Option<u32>,
    /// A file of base58 signatures to request (getTransaction).
    signatures: Option<String>,
}

fn options() -> Result<Options, Box<dyn std::error::Error>> {
    let mut options = Options {
        url: "http://127.0.0.1:8899".parse()?,
        method: "getTransaction".into(),
        connections: 32,
        seconds: 10,
        threads: 1,
        address: None,
        targets: 64,
        server_pid: None,
        signatures: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--url" => options.url = value.parse()?,
            "--method" => options.method = value,
            "--connections" => options.connections = value.parse()?,
            "--seconds" => options.seconds = value.parse()?,
            "--threads" => options.threads = value.parse()?,
            "--address" => options.address = Some(value),
            "--targets" => options.targets = value.parse()?,
            "--server-pid" => options.server_pid = Some(value.parse()?),
            "--signatures" => options.signatures = Some(value),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    Ok(options)
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(url: &hyper::Uri) -> Result<Sender, Box<dyn std::error::Error>> {
    let host = url.host().ok_or("URL without host")?;
    let port = url.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((host, port)).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

async fn post(sender: &mut Sender, url: &hyper::Uri, body: Bytes) -> Result<(u16, Bytes), String> {
    let request = Request::post(url.path())
        .header("host", url.host().unwrap_or("localhost"))
        .header("content-type", "application/json")
        .body(Full::new(body))
        .map_err(|e| e.to_string())?;
    sender.ready().await.map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, body))
}

async fn call(
    sender: &mut Sender,
    url: &hyper::Uri,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    let body = json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}).to_string();
    let (_, body) = post(sender, url, Bytes::from(body)).await?;
    let value: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
    value
        .get("result")
        .cloned()
        .ok_or(format!("{method}: {value}"))
}

/// Request bodies to cycle through.
async fn targets(options: &Options) -> Result<Vec<Bytes>, Box<dyn std::error::Error>> {
    let mut sender = connect(&options.url).await?;
    let newest = call(&mut sender, &options.url, "getSlot", json!([])).await?;
    let mut slot = newest.as_u64().ok_or("getSlot did not return a number")?;
    let mut signatures = Vec::new();
    let mut slots = Vec::new();
    let mut probes = 0;
    if let Some(file) = &options.signatures {
        let text = std::fs::read_to_string(file)?;
        signatures.extend(
            text.split_whitespace()
                .map(|signature| Value::String(signature.to_string())),
        );
        probes = usize::MAX;
    }
    if let Some(address) = &options.address {
        let rows = call(
            &mut sender,
            &options.url,
            "getSignaturesForAddress",
            json!([address]),
        )
        .await?;
        for row in rows.as_array().into_iter().flatten() {
            signatures.push(row["signature"].clone());
            if let Some(slot) = row["slot"].as_u64().filter(|s| !slots.contains(s)) {
                slots.push(slot);
            }
        }
        probes = usize::MAX;
    }
    let wanted = options.targets.max(1);
    let enough = |signatures: &Vec<Value>, slots: &Vec<u64>| match options.method.as_str() {
        "getBlock" => slots.len() >= wanted,
        _ => signatures.len() >= wanted,
    };
    while !enough(&signatures, &slots) && probes < 1_000_000 {
        probes += 1;
        let block = call(
            &mut sender,
            &options.url,
            "getBlock",
            json!([slot, {"transactionDetails": "signatures", "rewards": false}]),
        )
        .await;
        if let Ok(block) = block {
            slots.push(slot);
            for signature in block["signatures"].as_array().into_iter().flatten() {
                signatures.push(signature.clone());
            }
            if let Some(parent) = block["parentSlot"].as_u64() {
                if parent == slot {
                    break;
                }
                slot = parent;
                continue;
            }
        }
        if slot == 0 {
            break;
        }
        slot -= 1;
    }
    signatures.truncate(wanted);
    slots.truncate(wanted);
    let mut bodies: Vec<Bytes> = match options.method.as_str() {
        "getTransaction" => signatures
            .iter()
            .map(|s| json!({"jsonrpc":"2.0","id":1,"method":"getTransaction","params":[s, {"encoding":"json","maxSupportedTransactionVersion":0}]}))
            .map(|v| Bytes::from(v.to_string()))
            .collect(),
        "getBlock" => slots
            .iter()
            .map(|s| json!({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[s, {"encoding":"json","maxSupportedTransactionVersion":0}]}))
            .map(|v| Bytes::from(v.to_string()))
            .collect(),
        other => return Err(format!("unsupported --method {other}").into()),
    };
    if bodies.is_empty() {
        return Err("the server holds no targets for this method".into());
    }
    // A fixed shuffle: consecutive requests do not walk the archive in file order.
    let mut rng = testkit::synth::Rng::new(42);
    for i in (1..bodies.len()).rev() {
        bodies.swap(i, rng.below(i as u64 + 1) as usize);
    }
    eprintln!(
        "{} targets ({} signatures over {} slots)",
        bodies.len(),
        signatures.len(),
        slots.len()
    );
    Ok(bodies)
}

/// User + system CPU ticks of a process (`/proc/PID/stat`, fields 14 and 15).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Clock ticks per second of `/proc/PID/stat` (USER_HZ).
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { hz as f64 } else { 100.0 }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Arc::new(options()?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.threads.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let bodies = Arc::new(targets(&options).await?);
        let stop = Arc::new(AtomicBool::new(false));
        let errors = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for connection in 0..options.connections {
            let (options, bodies, stop, errors) = (
                Arc::clone(&options),
                Arc::clone(&bodies),
                Arc::clone(&stop),
                Arc::clone(&errors),
            );
            tasks.push(tokio::spawn(async move {
                let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)
                    .map_err(|e| e.to_string())?;
                let mut sender = connect(&options.url).await.map_err(|e| e.to_string())?;
                let mut next = connection;
                while !stop.load(Ordering::Relaxed) {
                    let body = bodies[next % bodies.len()].clone();
                    next += 1;
                    let start = Instant::now();
                    let (status, reply) = post(&mut sender, &options.url, body).await?;
                    let micros = start.elapsed().as_micros() as u64;
                    if status != 200 || !reply.starts_with(br#"{"jsonrpc":"2.0","result""#) {
                        errors.fetch_add(1, Ordering::Relaxed);
                        if errors.load(Ordering::Relaxed) == 1 {
                            eprintln!("bad answer: HTTP {status} {}", String::from_utf8_lossy(&reply[..reply.len().min(300)]));
                        }
                    }
                    histogram.record(micros.max(1)).map_err(|e| e.to_string())?;
                }
                Ok::<_, String>(histogram)
            }));
        }
        let cpu_before = options.server_pid.and_then(cpu_ticks);
        let started = Instant::now();
        tokio::time::sleep(Duration::from_secs(options.seconds)).await;
        stop.store(true, Ordering::Relaxed);
        let mut total = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)?;
        for task in tasks {
            total.add(task.await??)?;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let count = total.len();
        let cpu_after = options.server_pid.and_then(cpu_ticks);
        let server_cpu = match (cpu_before, cpu_after) {
            (Some(before), Some(after)) if count > 0 => format!(
                ", server CPU {:.1} us per request",
                (after - before) as f64 / ticks_per_second() * 1e6 / count as f64
            ),
            _ => String::new(),
        };
        println!(
            "{} x{} connections, {:.1}s: {} requests, {:.0} req/s, p50 {} us, p90 {} us, p99 {} us, p99.9 {} us, max {} us, errors {}{}, load average {}",
            options.method,
            options.connections,
            elapsed,
            count,
            count as f64 / elapsed,
            total.value_at_quantile(0.50),
            total.value_at_quantile(0.90),
            total.value_at_quantile(0.99),
            total.value_at_quantile(0.999),
            total.max(),
            errors.load(Ordering::Relaxed),
            server_cpu,
            load_average()
        );
        if errors.load(Ordering::Relaxed) > 0 {
            return Err("some answers were errors".into());
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
