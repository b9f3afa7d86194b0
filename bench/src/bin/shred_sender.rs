//! `shred_sender`: the load generator of the receive paths. Plays shred captures (any framing
//! `appliance decode` reads: u16-length-prefixed, pcap, ar; read with `capture::framing`) to a
//! UDP target with `sendmmsg(2)`, from several threads (each with its own socket, so its own
//! source port, which spreads flows over NIC queues by RSS), at a target rate or as fast as it
//! can, optionally mixed with junk datagrams (random bytes of shred size, which the decoder
//! rejects). Prints one JSON summary line.
//!
//! ```text
//! shred_sender --target 198.18.0.2:8001 --file slot.bin [--file ...] [--rate PPS] [--threads N]
//!              [--duration SECS | --loops N] [--junk FRACTION] [--batch 64] [--bind ADDR]
//! ```
//! Run it from the sender namespace of a veth pair (`ip netns exec A shred_sender ...`); see
//! `docs/receive.md` for the benchmark procedure.
#![deny(unsafe_op_in_unsafe_fn)]

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;

/// Bytes of a junk datagram: the size of a data shred on the wire.
const JUNK_BYTES: usize = 1228;
/// Distinct junk datagrams generated (cycled).
const JUNK_VARIANTS: usize = 64;
/// Largest `sendmmsg` vector.
const BATCH_MAX: usize = 1024;

#[derive(Parser, Debug)]
#[command(
    name = "shred_sender",
    about = "Plays shred captures over UDP with sendmmsg"
)]
struct Args {
    /// Destination address.
    #[arg(long)]
    target: SocketAddr,
    /// Capture files (length-prefixed, pcap or ar; repeatable). None: junk only.
    #[arg(long = "file")]
    files: Vec<PathBuf>,
    /// Total datagrams per second over all threads; 0 sends as fast as possible.
    #[arg(long, default_value_t = 0)]
    rate: u64,
    /// Sending threads, each with its own socket.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Send for this many seconds, looping over the captures (overrides --loops).
    #[arg(long)]
    duration: Option<f64>,
    /// Passes over the captures per thread when no --duration is given.
    #[arg(long, default_value_t = 1)]
    loops: u64,
    /// Fraction of datagrams that are junk, 0.0..=1.0.
    #[arg(long, default_value_t = 0.0)]
    junk: f64,
    /// Datagrams per sendmmsg call.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Local address to send from (default: any).
    #[arg(long)]
    bind: Option<SocketAddr>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !(0.0..=1.0).contains(&args.junk) {
        bail!("--junk must be between 0 and 1");
    }
    if args.threads == 0 || !(1..=BATCH_MAX).contains(&args.batch) {
        bail!("--threads must be positive and --batch in 1..={BATCH_MAX}");
    }
    let playlist = Arc::new(playlist(&args.files, args.junk)?);
    let junk_count = playlist.iter().filter(|item| item.junk).count();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut threads = Vec::with_capacity(args.threads);
    for thread in 0..args.threads {
        let playlist = Arc::clone(&playlist);
        let stop = Arc::clone(&stop);
        let plan = ThreadPlan {
            target: args.target,
            bind: args.bind,
            rate: args.rate / args.threads as u64,
            batch: args.batch,
            start: thread * playlist.len() / args.threads,
            total: match args.duration {
                Some(_) => u64::MAX,
                None => args.loops * playlist.len() as u64,
            },
        };
        threads.push(std::thread::spawn(move || {
            send_loop(&plan, &playlist, &stop)
        }));
    }
    if let Some(seconds) = args.duration {
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Release);
    }
    let mut sent = 0u64;
    let mut errors = 0u64;
    for thread in threads {
        let (thread_sent, thread_errors) = thread
            .join()
            .map_err(|_| anyhow::anyhow!("sender thread panicked"))??;
        sent += thread_sent;
        errors += thread_errors;
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{{\"sent\":{sent},\"send_errors\":{errors},\"elapsed_s\":{elapsed:.3},\"pps\":{:.0},\
         \"threads\":{},\"playlist\":{},\"junk_in_playlist\":{junk_count}}}",
        sent as f64 / elapsed,
        args.threads,
        playlist.len()
    );
    Ok(())
}

/// One datagram of the playlist.
struct Item {
    bytes: Vec<u8>,
    junk: bool,
}

/// The captures' records with junk interleaved evenly at the requested fraction.
fn playlist(files: &[PathBuf], junk: f64) -> anyhow::Result<Vec<Item>> {
    let mut real = Vec::new();
    for path in files {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        for record in capture::framing::records(&bytes) {
            let record = record.with_context(|| format!("malformed capture {}", path.display()))?;
            real.push(record.payload.to_vec());
        }
    }
    if real.is_empty() && junk < 1.0 {
        bail!("no shreds to send: give --file, or --junk 1");
    }
    let mut generator = XorShift(0x9e37_79b9_7f4a_7c15);
    let junk_datagrams: Vec<Vec<u8>> = (0..JUNK_VARIANTS)
        .map(|_| (0..JUNK_BYTES).map(|_| generator.next() as u8).collect())
        .collect();
    if real.is_empty() || junk >= 1.0 {
        return Ok(junk_datagrams
            .into_iter()
            .map(|bytes| Item { bytes, junk: true })
            .collect());
    }
    // junk / (real + junk) = fraction  =>  junk per real = fraction / (1 - fraction).
    let per_real = if junk >= 1.0 {
        0.0
    } else {
        junk / (1.0 - junk)
    };
    let mut items = Vec::new();
    let mut owed = 0.0;
    let mut next_junk = 0;
    for bytes in real {
        items.push(Item { bytes, junk: false });
        owed += per_real;
        while owed >= 1.0 {
            items.push(Item {
                bytes: junk_datagrams[next_junk % JUNK_VARIANTS].clone(),
                junk: true,
            });
            next_junk += 1;
            owed -= 1.0;
        }
    }
    Ok(items)
}

/// A small deterministic generator for junk bytes (xorshift64).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

struct ThreadPlan {
    target: SocketAddr,
    bind: Option<SocketAddr>,
    /// Datagrams per second for this thread; 0 = unpaced.
    rate: u64,
    batch: usize,
    /// Playlist index to start at (threads start at different points).
    start: usize,
    /// Datagrams to send (u64::MAX: until stopped).
    total: u64,
}

/// Sends the playlist round-robin from `plan.start` in `sendmmsg` batches; returns datagrams
/// sent and failed calls.
fn send_loop(
    plan: &ThreadPlan,
    playlist: &[Item],
    stop: &AtomicBool,
) -> anyhow::Result<(u64, u64)> {
    let local = plan.bind.unwrap_or_else(|| match plan.target {
        SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
        SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
    });
    let socket = UdpSocket::bind(local).context("binding the sender socket")?;
    socket.connect(plan.target).context("connecting")?;
    let started = Instant::now();
    let mut sent = 0u64;
    let mut errors = 0u64;
    let mut next = plan.start % playlist.len();
    let mut vectors = Vectors::new(plan.batch);
    while sent < plan.total && !stop.load(Ordering::Relaxed) {
        if let Some(due) = sent.saturating_mul(1_000_000_000).checked_div(plan.rate)
            && let Some(wait) = Duration::from_nanos(due).checked_sub(started.elapsed())
        {
            std::thread::sleep(wait);
        }
        let count = (plan.total - sent).min(plan.batch as u64) as usize;
        let batch =
            (0..count).map(|offset| playlist[(next + offset) % playlist.len()].bytes.as_slice());
        match sendmmsg(&socket, batch, &mut vectors) {
            Ok(done) => {
                sent += done as u64;
                next = (next + done) % playlist.len();
            }
            Err(error) if error.raw_os_error() == Some(libc::ENOBUFS) => {
                errors += 1;
                std::hint::spin_loop();
            }
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionRefused => errors += 1,
            Err(error) => return Err(error).context("sendmmsg"),
        }
    }
    Ok((sent, errors))
}

/// The `sendmmsg` argument arrays, allocated once per thread.
struct Vectors {
    iovecs: Vec<libc::iovec>,
    headers: Vec<libc::mmsghdr>,
}

impl Vectors {
    fn new(capacity: usize) -> Self {
        // SAFETY: iovec and mmsghdr are plain C structs for which all-zero is a valid value
        // (null pointers, zero lengths).
        let (iovec, header) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
        Self {
            iovecs: vec![iovec; capacity],
            headers: vec![header; capacity],
        }
    }
}

/// One `sendmmsg` call on a connected socket: returns how many datagrams went out.
fn sendmmsg<'a>(
    socket: &UdpSocket,
    datagrams: impl Iterator<Item = &'a [u8]>,
    vectors: &mut Vectors,
) -> std::io::Result<usize> {
    let mut count = 0;
    for (index, datagram) in datagrams.take(vectors.iovecs.len()).enumerate() {
        vectors.iovecs[index] = libc::iovec {
            iov_base: datagram.as_ptr().cast_mut().cast(),
            iov_len: datagram.len(),
        };
        let header = &mut vectors.headers[index].msg_hdr;
        header.msg_iov = &raw mut vectors.iovecs[index];
        header.msg_iovlen = 1;
        count += 1;
    }
    // SAFETY: headers[..count] each point at one iovec describing a live datagram (borrowed
    // from the playlist for 'a) that the kernel only reads; no address (the socket is
    // connected) and no control data. All outlive the call.
    let result = unsafe {
        libc::sendmmsg(
            socket.as_raw_fd(),
            vectors.headers.as_mut_ptr(),
            count as libc::c_uint,
            0,
        )
    };
    if result < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(result as usize)
    }
}
