//! `wake_floor`: the latency floor this machine's scheduler puts under the stream's path, with
//! no decoding at all. The appliance hands a FEC set from the kernel to the receive thread
//! (blocked in `recvmmsg`), from it to a worker (parked) and from the worker to a gRPC runtime
//! thread (parked), so `first_read → subscriber_recv` holds at least three wake-ups. This tool
//! times them alone, into HDR histograms:
//!
//! - `kernel → receiver`: the datagram's kernel receive time (`SO_TIMESTAMPNS`) to the receiving
//!   thread back from its blocking `recvmsg`;
//! - `receiver → worker` and `worker → runtime`: a store and `Thread::unpark` to the parked
//!   thread running;
//! - `kernel → runtime`: the three in a row.
//!
//! A sender thread paces one datagram every `--interval-us` on loopback. `--fifo N` puts the
//! three receiving threads under `SCHED_FIFO` at N (as `appliance run --realtime-priority`).
//! `target/release/wake_floor --seconds 10 --fifo 10`; numbers in README.md ("The machine's
//! wake-up floor").

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{self, Thread};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use clap::Parser;
use hdrhistogram::Histogram;

use appliance::receive::sockopt::{self, SCM_TIMESTAMPNS, SO_TIMESTAMPNS};

#[derive(Parser, Debug)]
#[command(
    about = "Times the wake-ups under the stream's path: kernel → receiver → worker → runtime"
)]
struct Args {
    /// Seconds to measure.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Microseconds between datagrams.
    #[arg(long, default_value_t = 200)]
    interval_us: u64,
    /// SCHED_FIFO priority of the three woken threads (0: ordinary scheduling).
    #[arg(long, default_value_t = 0)]
    fifo: i32,
}

fn realtime_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

fn set_fifo(priority: i32) -> Result<()> {
    if priority == 0 {
        return Ok(());
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param; 0 is the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc != 0 {
        bail!("SCHED_FIFO {priority}: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// One hand-off between two threads: the stamp of the send and a sequence number.
#[derive(Default)]
struct Handoff {
    seq: AtomicU64,
    stamp: AtomicU64,
    origin: AtomicU64,
}

impl Handoff {
    fn pass(&self, origin: u64, to: &Thread) {
        self.origin.store(origin, Ordering::Relaxed);
        self.stamp.store(realtime_nanos(), Ordering::Relaxed);
        self.seq.fetch_add(1, Ordering::Release);
        to.unpark();
    }

    /// Parks until a new hand-off (or `stop`); returns (origin, stamp).
    fn wait(&self, seen: &mut u64, stop: &AtomicBool) -> Option<(u64, u64)> {
        loop {
            let seq = self.seq.load(Ordering::Acquire);
            if seq != *seen {
                *seen = seq;
                return Some((
                    self.origin.load(Ordering::Relaxed),
                    self.stamp.load(Ordering::Relaxed),
                ));
            }
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            thread::park_timeout(Duration::from_millis(50));
        }
    }
}

/// Receives one datagram; returns its kernel receive time (ns since the Unix epoch).
fn recv_stamped(socket: &UdpSocket, buffer: &mut [u8]) -> Option<u64> {
    let mut control = [0u64; 16];
    let mut iov = libc::iovec {
        iov_base: buffer.as_mut_ptr().cast(),
        iov_len: buffer.len(),
    };
    // SAFETY: zeroed msghdr is valid; the pointers below outlive the call.
    let mut header: libc::msghdr = unsafe { std::mem::zeroed() };
    header.msg_iov = &mut iov;
    header.msg_iovlen = 1;
    header.msg_control = control.as_mut_ptr().cast();
    header.msg_controllen = std::mem::size_of_val(&control);
    // SAFETY: the socket is open and `header` points at live buffers.
    let read = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut header, 0) };
    if read < 0 {
        return None;
    }
    // SAFETY: walking the control messages the kernel wrote into `control`.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&header);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == SCM_TIMESTAMPNS {
                let stamp: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                return Some(stamp.tv_sec as u64 * 1_000_000_000 + stamp.tv_nsec as u64);
            }
            cmsg = libc::CMSG_NXTHDR(&header, cmsg);
        }
    }
    None
}

fn histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).context("histogram")
}

fn print(name: &str, histogram: &Histogram<u64>) {
    let us = |quantile: f64| histogram.value_at_quantile(quantile) as f64 / 1_000.0;
    println!(
        "{name:<20} {:>8} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
        histogram.len(),
        us(0.5),
        us(0.99),
        us(0.999),
        histogram.max() as f64 / 1_000.0
    );
}

type Joined<T> = thread::JoinHandle<Result<T>>;

/// The runtime thread: the last hop; records its own hop and the whole kernel → runtime time.
fn spawn_runtime(
    fifo: i32,
    stop: Arc<AtomicBool>,
    to_runtime: Arc<Handoff>,
) -> Result<Joined<(Histogram<u64>, Histogram<u64>)>> {
    let spawned = thread::Builder::new()
        .name("runtime".into())
        .spawn(move || {
            set_fifo(fifo)?;
            let (mut hop, mut total) = (histogram()?, histogram()?);
            let mut seen = 0;
            while let Some((origin, stamp)) = to_runtime.wait(&mut seen, &stop) {
                let now = realtime_nanos();
                hop.saturating_record(now.saturating_sub(stamp).max(1));
                total.saturating_record(now.saturating_sub(origin).max(1));
            }
            Ok((hop, total))
        })?;
    Ok(spawned)
}

/// The worker thread: woken by the receiver, wakes the runtime.
fn spawn_worker(
    fifo: i32,
    stop: Arc<AtomicBool>,
    to_worker: Arc<Handoff>,
    to_runtime: Arc<Handoff>,
    runtime_thread: thread::Thread,
) -> Result<Joined<Histogram<u64>>> {
    let spawned = thread::Builder::new()
        .name("worker".into())
        .spawn(move || {
            set_fifo(fifo)?;
            let mut hop = histogram()?;
            let mut seen = 0;
            while let Some((origin, stamp)) = to_worker.wait(&mut seen, &stop) {
                hop.saturating_record(realtime_nanos().saturating_sub(stamp).max(1));
                to_runtime.pass(origin, &runtime_thread);
            }
            Ok(hop)
        })?;
    Ok(spawned)
}

/// The receive thread: reads kernel-stamped datagrams and wakes the worker.
fn spawn_receiver(
    fifo: i32,
    receiver: UdpSocket,
    stop: Arc<AtomicBool>,
    to_worker: Arc<Handoff>,
    worker_thread: thread::Thread,
) -> Result<Joined<Histogram<u64>>> {
    let spawned = thread::Builder::new().name("rx".into()).spawn(move || {
        set_fifo(fifo)?;
        let mut hop = histogram()?;
        let mut buffer = [0u8; 2048];
        while !stop.load(Ordering::Relaxed) {
            if let Some(kernel) = recv_stamped(&receiver, &mut buffer) {
                hop.saturating_record(realtime_nanos().saturating_sub(kernel).max(1));
                to_worker.pass(kernel, &worker_thread);
            }
        }
        Ok(hop)
    })?;
    Ok(spawned)
}

/// Sends one 1,228-byte datagram every `interval_us` to `target` for `seconds`.
fn send_paced(args: &Args, target: std::net::SocketAddr) -> Result<()> {
    let sender = UdpSocket::bind("127.0.0.1:0").context("bind sender")?;
    let interval = Duration::from_micros(args.interval_us.max(1));
    let started = Instant::now();
    let mut next = started;
    let payload = [0u8; 1_228];
    while started.elapsed() < Duration::from_secs(args.seconds) {
        next += interval;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        sender.send_to(&payload, target).context("send")?;
    }
    Ok(())
}

fn joined<T>(handle: Joined<T>, name: &str) -> Result<T> {
    handle
        .join()
        .map_err(|_| anyhow::anyhow!("{name} panicked"))?
}

fn main() -> Result<()> {
    let args = Args::parse();
    let receiver = UdpSocket::bind("127.0.0.1:0").context("bind")?;
    sockopt::set(receiver.as_raw_fd(), libc::SOL_SOCKET, SO_TIMESTAMPNS, &1)
        .context("SO_TIMESTAMPNS")?;
    receiver
        .set_read_timeout(Some(Duration::from_millis(100)))
        .context("read timeout")?;
    let target = receiver.local_addr().context("local address")?;
    let stop = Arc::new(AtomicBool::new(false));
    let to_worker = Arc::new(Handoff::default());
    let to_runtime = Arc::new(Handoff::default());
    let fifo = args.fifo;

    let runtime = spawn_runtime(fifo, Arc::clone(&stop), Arc::clone(&to_runtime))?;
    let worker = spawn_worker(
        fifo,
        Arc::clone(&stop),
        Arc::clone(&to_worker),
        Arc::clone(&to_runtime),
        runtime.thread().clone(),
    )?;
    let rx = spawn_receiver(
        fifo,
        receiver,
        Arc::clone(&stop),
        Arc::clone(&to_worker),
        worker.thread().clone(),
    )?;

    send_paced(&args, target)?;
    thread::sleep(Duration::from_millis(20));
    stop.store(true, Ordering::Relaxed);
    let kernel_rx = joined(rx, "rx")?;
    let rx_worker = joined(worker, "worker")?;
    let (worker_runtime, total) = joined(runtime, "runtime")?;

    println!(
        "{:<20} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "µs", "count", "p50", "p99", "p99.9", "max"
    );
    print("kernel → receiver", &kernel_rx);
    print("receiver → worker", &rx_worker);
    print("worker → runtime", &worker_runtime);
    print("kernel → runtime", &total);
    Ok(())
}
