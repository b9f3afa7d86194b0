//! `appliance run`: the service loop. First cut: a replay source sends a shred capture over UDP
//! (by default the bundled capture, to itself over loopback), one receive thread feeds a
//! `ShredDecoder`, and decoded batches are counted and logged. The pinned AF_XDP receive threads,
//! rings, worker pool, broadcast, gRPC and HTTP servers of the agreed architecture replace these
//! pieces in the pipeline and frontend issues; the flags they need are already parsed.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use decoder::decoder::ShredOutcome;
use decoder::{DecoderConfig, LeaderSchedule, ShredDecoder, framing};
use tracing::{info, warn};

/// The capture replayed when no source is given: two slots of the reference fixtures.
const BUNDLED_CAPTURE: &[&[u8]] = &[
    include_bytes!("../replay/slot-361200000.bin"),
    include_bytes!("../replay/slot-361200002.bin"),
];

/// Arguments of `appliance run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Configuration file (TOML); flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Receive shreds on this UDP address (repeatable).
    #[arg(long = "udp")]
    udp: Vec<SocketAddr>,
    /// Receive shreds over AF_XDP on IFACE:PORT (repeatable).
    #[arg(long = "xdp")]
    xdp: Vec<String>,
    /// Replay this shred capture (length-prefixed, pcap or ar).
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Replay rate in shreds per second.
    #[arg(long = "replay-rate", default_value_t = 5_000)]
    replay_rate: u64,
    /// Loop the replay forever.
    #[arg(long = "replay-loop")]
    replay_loop: bool,
    /// gRPC listen address.
    #[arg(long, default_value = "127.0.0.1:9000")]
    grpc: SocketAddr,
    /// HTTP listen address (/health, /metrics, archive, insights).
    #[arg(long, default_value = "127.0.0.1:8080")]
    http: SocketAddr,
    /// Archive source directories or URLs (repeatable).
    #[arg(long)]
    archive: Vec<String>,
    /// Upstream validator JSON-RPC URL.
    #[arg(long)]
    upstream: Option<String>,
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let unsupported = [
        (args.config.is_some(), "--config"),
        (!args.xdp.is_empty(), "--xdp"),
        (args.replay_loop, "--replay-loop"),
        (!args.archive.is_empty(), "--archive"),
        (args.upstream.is_some(), "--upstream"),
    ];
    if let Some((_, flag)) = unsupported.iter().find(|(given, _)| *given) {
        bail!("{flag} is not supported by this build yet");
    }
    if args.replay_rate == 0 {
        bail!("--replay-rate must be positive");
    }
    warn!(grpc = %args.grpc, http = %args.http, "gRPC and HTTP servers are not part of this build yet");
    let listen = args
        .udp
        .first()
        .copied()
        .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)));
    let socket = bind_receiver(listen)?;
    socket.set_read_timeout(Some(Duration::from_millis(200)))?;
    let local = socket.local_addr()?;
    info!(%local, "receiving shreds over UDP");
    let replaying = args.replay.is_some() || args.udp.is_empty();
    let capture = match &args.replay {
        Some(path) => {
            vec![std::fs::read(path).with_context(|| format!("reading {}", path.display()))?]
        }
        None if replaying => BUNDLED_CAPTURE.iter().map(|bytes| bytes.to_vec()).collect(),
        None => Vec::new(),
    };
    let sender_done = Arc::new(AtomicBool::new(!replaying));
    let sender = replaying.then(|| {
        let done = Arc::clone(&sender_done);
        let rate = args.replay_rate;
        std::thread::spawn(move || {
            let result = replay(&capture, local, rate);
            done.store(true, Ordering::Release);
            result
        })
    });
    receive(&socket, &sender_done)?;
    if let Some(sender) = sender {
        let sent = sender
            .join()
            .map_err(|_| anyhow::anyhow!("replay thread panicked"))??;
        info!(sent, "replay finished");
    }
    Ok(())
}

/// Binds the receive socket asking for a 64 MiB kernel buffer, so bursts are absorbed while the
/// decoder works. The kernel caps the request at `net.core.rmem_max` (`docs/deploy.md` raises it;
/// the pipeline's receive module will use SO_RCVBUFFORCE where it runs with CAP_NET_ADMIN).
fn bind_receiver(listen: SocketAddr) -> anyhow::Result<UdpSocket> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(listen),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )?;
    const RECEIVE_BUFFER_BYTES: usize = 64 << 20;
    socket.set_recv_buffer_size(RECEIVE_BUFFER_BYTES)?;
    socket
        .bind(&listen.into())
        .with_context(|| format!("binding UDP {listen}"))?;
    Ok(socket.into())
}

/// Sends every record of the captures to `target`, paced at `rate` shreds per second.
fn replay(captures: &[Vec<u8>], target: SocketAddr, rate: u64) -> anyhow::Result<u64> {
    let socket = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let started = Instant::now();
    let mut sent: u64 = 0;
    for capture in captures {
        for record in framing::records(capture) {
            let record = record.context("malformed replay capture")?;
            let due = Duration::from_nanos(sent.saturating_mul(1_000_000_000) / rate);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                std::thread::sleep(wait);
            }
            socket.send_to(record.payload, target)?;
            sent += 1;
        }
    }
    Ok(sent)
}

/// Receives datagrams into a decoder until the replay is done and the socket went quiet.
fn receive(socket: &UdpSocket, sender_done: &AtomicBool) -> anyhow::Result<()> {
    let mut decoder = ShredDecoder::new(DecoderConfig::default(), LeaderSchedule::Unchecked);
    let mut buffer = [0u8; 2048];
    let (mut datagrams, mut rejected, mut batches, mut transactions) = (0u64, 0u64, 0u64, 0u64);
    let mut last_report = Instant::now();
    loop {
        let len = match socket.recv(&mut buffer) {
            Ok(len) => len,
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if sender_done.load(Ordering::Acquire) {
                    break;
                }
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        datagrams += 1;
        if let ShredOutcome::Rejected { .. } = decoder.ingest(&buffer[..len], unix_nanos()) {
            rejected += 1;
        }
        while let Some(batch) = decoder.next_batch() {
            batches += 1;
            transactions += batch.entries.transaction_count();
            info!(
                slot = batch.span.slot,
                batch_start = batch.span.start_index,
                entries = batch.entries.entry_count(),
                transactions = batch.entries.transaction_count(),
                "batch decoded"
            );
        }
        if last_report.elapsed() >= Duration::from_secs(1) {
            info!(datagrams, rejected, batches, transactions, "receive totals");
            last_report = Instant::now();
        }
    }
    info!(datagrams, rejected, batches, transactions, "receive totals");
    Ok(())
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}
