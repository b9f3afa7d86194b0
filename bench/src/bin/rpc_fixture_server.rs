//! Serves the JSON-RPC archive over the fixture archive (`rpc/tests/fixtures/rpc`: real mainnet
//! transactions in an in-memory store) on a loopback address: the target of the client tests
//! (`scripts/rpc-client-test.sh`) and of `rpc_load` when no CAR archive is at hand.
//!
//! `rpc_fixture_server [--listen ADDR] [--fixtures DIR | --archive DIR | --archive-http URL [--http-cache-mb N]
//! --epochs N[,N..] [--http-client fast|ureq]] [--workers N] [--upstream URL] [--rate-limit off]` (off: for load tests from
//! one address); prints `listening on ADDR` once bound and serves until killed. `--archive DIR`
//! serves the epoch CARs and indexes of a local directory (a `LocalArchive`) instead of the
//! fixtures, `--archive-http` the same epochs behind an HTTP base address (`<N>/epoch-<N>.car`
//! and its indexes next to it, as the public file host lays them out; `--http-client ureq` reads
//! every range with ureq instead of the keep-alive client of `archive::rangeclient`, for
//! comparisons).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use archive::ArchiveStore;
use front::http::{HttpOptions, MetricsRenderer};
use rpc::{Rpc, RpcConfig, UpstreamConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut listen: SocketAddr = "127.0.0.1:8899".parse()?;
    let mut fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rpc/tests/fixtures/rpc");
    let mut workers = 1;
    let mut upstream = None;
    let mut rate_limit = rpc::RateLimitConfig::default();
    let mut archive_dir = None;
    let mut archive_http = None;
    let mut epochs: Vec<u64> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--listen" => listen = value.parse()?,
            "--fixtures" => fixtures = PathBuf::from(value),
            "--workers" => workers = value.parse()?,
            "--archive" => archive_dir = Some(PathBuf::from(value)),
            "--archive-http" => archive_http = Some(value),
            "--http-cache-mb" => {
                archive::rangecache::configure(value.parse::<u64>()? << 20);
            }
            "--http-client" => match value.as_str() {
                "fast" => archive::rangeclient::set_enabled(true),
                "ureq" => archive::rangeclient::set_enabled(false),
                _ => return Err("--http-client takes `fast` or `ureq`".into()),
            },
            "--epochs" => epochs = value.split(',').map(str::parse).collect::<Result<_, _>>()?,
            "--upstream" => upstream = Some(UpstreamConfig::new(&value)?),
            "--rate-limit" if value == "off" => rate_limit = rpc::RateLimitConfig::unlimited(),
            "--rate-limit" => return Err("--rate-limit takes `off`".into()),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let store: Arc<dyn ArchiveStore> = match (archive_dir, archive_http) {
        (Some(dir), None) => Arc::new(archive::LocalArchive::open(&dir)?),
        (None, Some(base)) if !epochs.is_empty() => {
            Arc::new(archive::EpochArchive::open_http(&base, &epochs)?)
        }
        (None, Some(_)) => return Err("--archive-http needs --epochs".into()),
        (Some(_), Some(_)) => return Err("give --archive or --archive-http, not both".into()),
        (None, None) => Arc::new(testkit::rpc_fixture::load(&fixtures)?),
    };
    let rpc = Rpc::new(
        RpcConfig {
            upstream,
            rate_limit,
            ..RpcConfig::default()
        },
        store,
    );
    let render: MetricsRenderer = {
        let rpc = rpc.clone();
        Arc::new(move || {
            let mut out = String::new();
            rpc.render_metrics(&mut out);
            out
        })
    };
    let options = HttpOptions {
        mounts: vec![rpc.mount()],
        workers,
        ..HttpOptions::default()
    };
    let thread = front::http::serve(listen, render, options, std::future::pending())?;
    println!("listening on {listen}");
    thread.join().map_err(|_| "HTTP thread panicked")??;
    Ok(())
}
