//! Shared parts of the netns tests: a sender namespace and a receiver namespace joined by a veth
//! pair (one queue on each end, which native XDP on veth needs), the appliance started in the
//! receiver namespace with `ip netns exec`, and helpers that run code inside a namespace
//! (`setns` on a fresh thread). Every name carries the test's tag and the process id, so tests
//! run in parallel; the namespaces (and with them the veth pair) are deleted on drop, also when
//! a test fails. Needs root: without it each test prints a loud SKIPPED line and returns.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The sender's and the appliance's addresses on the veth (RFC 2544 benchmark range).
pub const SENDER_IP: [u8; 4] = [198, 18, 0, 1];
pub const RECEIVER_IP: [u8; 4] = [198, 18, 0, 2];

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        // Written to the stderr handle, not with eprintln!, so libtest's capture does not hide it.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "*** SKIPPED: netns/veth/AF_XDP tests need root (CI runs them as root) ***"
        );
    }
    root
}

fn ip(args: &[&str]) {
    let output = Command::new("ip").args(args).output().expect("running ip");
    assert!(
        output.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A named network namespace, deleted on drop.
pub struct Netns {
    pub name: String,
}

impl Netns {
    fn create(name: String) -> Self {
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        ip(&["netns", "add", &name]);
        ip(&["-n", &name, "link", "set", "lo", "up"]);
        Self { name }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// Two namespaces and the veth pair between them.
pub struct VethPair {
    pub sender_iface: String,
    pub receiver_iface: String,
    // Dropped last: deleting a namespace removes its end of the pair, and with it the peer.
    pub sender: Netns,
    pub receiver: Netns,
}

impl VethPair {
    /// Creates `<tag>s<pid>` / `<tag>r<pid>` namespaces and `<tag>a<pid>` / `<tag>b<pid>`
    /// interfaces (`tag` at most 4 characters), addressed and up, with a static neighbour
    /// entry on the sender so no datagram waits for ARP.
    pub fn create(tag: &str) -> Self {
        assert!(tag.len() <= 4);
        let id = std::process::id() % 100_000;
        let sender = Netns::create(format!("{tag}s{id}"));
        let receiver = Netns::create(format!("{tag}r{id}"));
        let sender_iface = format!("{tag}a{id}");
        let receiver_iface = format!("{tag}b{id}");
        ip(&[
            "link",
            "add",
            &sender_iface,
            "numtxqueues",
            "1",
            "numrxqueues",
            "1",
            "netns",
            &sender.name,
            "type",
            "veth",
            "peer",
            "name",
            &receiver_iface,
            "numtxqueues",
            "1",
            "numrxqueues",
            "1",
            "netns",
            &receiver.name,
        ]);
        let mac = "02:00:c6:12:00:02";
        ip(&[
            "-n",
            &receiver.name,
            "link",
            "set",
            &receiver_iface,
            "address",
            mac,
        ]);
        for (ns, iface, address) in [
            (&sender.name, &sender_iface, "198.18.0.1/24"),
            (&receiver.name, &receiver_iface, "198.18.0.2/24"),
        ] {
            ip(&["-n", ns, "addr", "add", address, "dev", iface]);
            ip(&["-n", ns, "link", "set", iface, "up"]);
        }
        ip(&[
            "-n",
            &sender.name,
            "neigh",
            "add",
            "198.18.0.2",
            "lladdr",
            mac,
            "dev",
            &sender_iface,
            "nud",
            "permanent",
        ]);
        Self {
            sender_iface,
            receiver_iface,
            sender,
            receiver,
        }
    }

    /// `ip link show` of the receiving interface.
    pub fn receiver_link(&self) -> String {
        let output = Command::new("ip")
            .args([
                "-n",
                &self.receiver.name,
                "link",
                "show",
                &self.receiver_iface,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

/// Runs `work` on a new thread that has entered namespace `ns` (sockets it creates live there).
pub fn in_netns<T: Send + 'static>(ns: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let path = format!("/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: setns on a namespace fd we hold open; it only changes this thread's network
        // namespace (CLONE_NEWNET is per thread), and the thread ends with `work`.
        let entered = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(
            entered,
            0,
            "setns {path}: {}",
            std::io::Error::last_os_error()
        );
        work()
    })
    .join()
    .unwrap()
}

/// The appliance running in a namespace; killed on drop.
pub struct Appliance {
    pub child: Child,
    pub ns: String,
    pub http_port: u16,
}

impl Appliance {
    /// Starts `appliance run ARGS --grpc 127.0.0.1:P --http 127.0.0.1:Q` in `ns`, and waits
    /// until `/metrics` answers.
    pub fn start(ns: &str, args: &[&str]) -> Self {
        let http_port = 18_000 + (std::process::id() % 1000) as u16;
        let grpc = "127.0.0.1:19000".to_string();
        let http = format!("127.0.0.1:{http_port}");
        let log = std::env::temp_dir().join(format!("{ns}.log"));
        let child = Command::new("ip")
            .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_appliance"), "run"])
            .args(args)
            .args(["--grpc", &grpc, "--http", &http])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut appliance = Self {
            child,
            ns: ns.to_owned(),
            http_port,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while appliance.try_metrics().is_none() {
            if let Ok(Some(status)) = appliance.child.try_wait() {
                panic!(
                    "appliance exited with {status}: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "no /metrics from the appliance");
            std::thread::sleep(Duration::from_millis(100));
        }
        appliance
    }

    fn try_metrics(&self) -> Option<String> {
        let port = self.http_port;
        in_netns(&self.ns, move || {
            use std::io::{Read, Write};
            let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
            write!(
                stream,
                "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
            )
            .ok()?;
            let mut response = String::new();
            stream.read_to_string(&mut response).ok()?;
            Some(response.split_once("\r\n\r\n")?.1.to_owned())
        })
    }

    pub fn metrics(&self) -> String {
        self.try_metrics().expect("/metrics")
    }

    /// VmRSS of the appliance process in KiB (`ip netns exec` execs it: same pid).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(&mut self) -> ExitStatus {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "no exit 20 s after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Appliance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of the sample `name` (with its labels, as rendered) in a `/metrics` text.
pub fn metric(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

/// The sum of every sample whose line starts with `prefix`.
pub fn metric_sum(text: &str, prefix: &str) -> u64 {
    text.lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| line.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum()
}

/// The project's bundled captures (u16-LE length-prefixed shreds of two complete slots).
pub fn capture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("replay")
        .join(name)
}

/// The records of a capture, via the decoder's framing reader.
pub fn records(path: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    capture::framing::records(&bytes)
        .map(|record| record.unwrap().payload.to_vec())
        .collect()
}

/// Totals of `appliance decode FILE` (its per-slot summary lines): batches, entries,
/// transactions. This is the file path of the decoder, independent of any receive path.
pub fn decode_totals(path: &Path) -> [u64; 3] {
    let output = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .arg("decode")
        .arg(path)
        .output()
        .unwrap();
    assert!(output.status.success());
    let mut totals = [0u64; 3];
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(summary) = value.get("summary") {
            for (total, key) in totals
                .iter_mut()
                .zip(["batches", "entries", "transactions"])
            {
                *total += summary[key].as_u64().unwrap();
            }
        }
    }
    totals
}

/// The same three totals from the appliance's `/metrics`.
pub fn served_totals(text: &str) -> [u64; 3] {
    [
        metric(text, "appliance_entry_batches_total{outcome=\"emitted\"}").unwrap_or(0),
        metric(text, "appliance_entries_total").unwrap_or(0),
        metric(text, "appliance_transactions_total").unwrap_or(0),
    ]
}

/// Sends `datagrams` from the sender namespace to `target`, paced at `rate` per second.
pub fn send_paced(ns: &str, target: SocketAddr, datagrams: Vec<Vec<u8>>, rate: u64) {
    in_netns(ns, move || {
        let socket = UdpSocket::bind("198.18.0.1:0").unwrap();
        socket.connect(target).unwrap();
        let started = Instant::now();
        for (index, datagram) in datagrams.iter().enumerate() {
            let due = Duration::from_nanos(index as u64 * 1_000_000_000 / rate);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                std::thread::sleep(wait);
            }
            socket.send(datagram).unwrap();
        }
    });
}

/// Polls `/metrics` until `done` holds for it (or 30 s pass); returns the last text.
pub fn wait_for_metrics(appliance: &Appliance, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = appliance.metrics();
        if done(&text) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
