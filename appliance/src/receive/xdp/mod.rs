//! The AF_XDP receive path: build the XDP program ([`xdp_bpf`]), create the XSKMAP, open one
//! AF_XDP socket per receive queue of the interface (zero-copy where the driver supports it,
//! copy otherwise), enter each in the map, and attach the program with a BPF link.
//!
//! Order matters: sockets are bound and in the map before the program is attached, so no
//! datagram for a configured port is redirected to an empty slot (which would pass it to the
//! kernel stack, where nothing listens). The [`XdpAttachment`] owns the link; dropping it (on
//! shutdown) closes the link's fd, which detaches the program. If the process dies instead
//! (SIGKILL, `panic = "abort"`), the kernel closes the fd and detaches it all the same: a BPF
//! link, unlike a netlink attachment, never outlives its last fd.

pub mod bpf;
pub mod ring;
pub mod socket;

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use tracing::{info, warn};
use xdp_bpf::{ProgramError, ProgramSpec, XDP_PASS};

pub use socket::{BindMode, XskSocket};

use crate::config::{AttachMode, BindPreference};

/// Why the AF_XDP path could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum XdpError {
    #[error("no interface named {0:?}")]
    Interface(String),
    #[error("reading the receive queues of {iface}: {error}")]
    Queues { iface: String, error: io::Error },
    #[error("building the XDP program: {0}")]
    Program(#[from] ProgramError),
    #[error("creating the XSKMAP: {0}")]
    MapCreate(io::Error),
    #[error("setting an XSKMAP entry: {0}")]
    MapUpdate(io::Error),
    #[error("loading the XDP program: {error}; verifier log:\n{verifier_log}")]
    ProgramLoad {
        error: io::Error,
        verifier_log: String,
    },
    #[error("attaching the XDP program to {iface} ({mode}): {error}")]
    Attach {
        iface: String,
        mode: &'static str,
        error: io::Error,
    },
    #[error("creating the AF_XDP socket: {0}")]
    Socket(io::Error),
    #[error("mapping the UMEM: {0}")]
    Umem(io::Error),
    #[error(
        "registering the UMEM (needs CAP_IPC_LOCK or a memlock limit above 8 MiB per queue): {0}"
    )]
    UmemRegister(io::Error),
    #[error("creating the {ring} ring: {error}")]
    RingSetup {
        ring: &'static str,
        error: io::Error,
    },
    #[error("reading the ring offsets: {0}")]
    MmapOffsets(io::Error),
    #[error("mapping a ring: {0}")]
    RingMap(io::Error),
    #[error("binding queue {queue} in {mode} mode: {error}")]
    Bind {
        mode: &'static str,
        queue: u32,
        error: io::Error,
    },
}

impl XdpError {
    /// A short stable name of the reason.
    pub fn label(&self) -> &'static str {
        match self {
            XdpError::Interface(_) => "interface",
            XdpError::Queues { .. } => "queues",
            XdpError::Program(error) => error.label(),
            XdpError::MapCreate(_) => "map_create",
            XdpError::MapUpdate(_) => "map_update",
            XdpError::ProgramLoad { .. } => "program_load",
            XdpError::Attach { .. } => "attach",
            XdpError::Socket(_) => "socket",
            XdpError::Umem(_) => "umem",
            XdpError::UmemRegister(_) => "umem_register",
            XdpError::RingSetup { .. } => "ring_setup",
            XdpError::MmapOffsets(_) => "mmap_offsets",
            XdpError::RingMap(_) => "ring_map",
            XdpError::Bind { .. } => "bind",
        }
    }
}

/// What to receive on one interface.
#[derive(Debug, Clone)]
pub struct XdpSpec {
    pub iface: String,
    pub ports: Vec<u16>,
    pub attach: AttachMode,
    pub bind: BindPreference,
    pub busy_poll: bool,
}

/// The program attached to one interface. Dropping it detaches the program.
pub struct XdpAttachment {
    // Drop order: the link first (detach), then the program and the map.
    _link: OwnedFd,
    _program: OwnedFd,
    _map: OwnedFd,
    pub iface: String,
    /// `native` or `skb`.
    pub attach: &'static str,
}

impl Drop for XdpAttachment {
    fn drop(&mut self) {
        info!(iface = %self.iface, "detaching the XDP program");
    }
}

/// Sets up the interface: returns the attachment and one bound socket per receive queue (in
/// queue order).
pub fn start(spec: &XdpSpec) -> Result<(XdpAttachment, Vec<XskSocket>), XdpError> {
    let ifindex = interface_index(&spec.iface)?;
    let queues = receive_queues(&spec.iface)?;
    let map = bpf::create_xskmap(queues)?;
    let program = xdp_bpf::build(&ProgramSpec {
        ports: spec.ports.clone(),
        xskmap_fd: map.as_raw_fd(),
        fallback: XDP_PASS,
    })?;
    let program = bpf::load_xdp(&program)?;
    let mut sockets = Vec::with_capacity(queues as usize);
    for queue in 0..queues {
        let socket = open_socket(ifindex, queue, spec)?;
        bpf::update_map(&map, queue, socket.raw_fd() as u32)?;
        sockets.push(socket);
    }
    let (link, attach) = attach(&program, ifindex, spec)?;
    info!(
        iface = %spec.iface,
        queues,
        attach,
        bind = sockets.first().map_or("none", |socket| socket.mode().label()),
        ports = ?spec.ports,
        "XDP program attached; AF_XDP sockets receiving"
    );
    Ok((
        XdpAttachment {
            _link: link,
            _program: program,
            _map: map,
            iface: spec.iface.clone(),
            attach,
        },
        sockets,
    ))
}

/// Opens a queue's socket per the bind preference; zero-copy falls back to copy mode when the
/// driver does not support it (EOPNOTSUPP), on a fresh socket.
fn open_socket(ifindex: u32, queue: u32, spec: &XdpSpec) -> Result<XskSocket, XdpError> {
    let open = |mode| XskSocket::open(ifindex, queue, mode, spec.busy_poll);
    match spec.bind {
        BindPreference::Copy => open(BindMode::Copy),
        BindPreference::Zerocopy => open(BindMode::ZeroCopy),
        BindPreference::Auto => match open(BindMode::ZeroCopy) {
            Err(XdpError::Bind { error, .. }) if error.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                info!(iface = %spec.iface, queue, "zero-copy not supported by the driver; copy mode");
                open(BindMode::Copy)
            }
            other => other,
        },
    }
}

/// Attaches with a link in the requested mode; `Auto` tries native first.
fn attach(
    program: &OwnedFd,
    ifindex: u32,
    spec: &XdpSpec,
) -> Result<(OwnedFd, &'static str), XdpError> {
    let try_mode = |flags, mode: &'static str| {
        bpf::attach_xdp_link(program, ifindex, flags)
            .map(|link| (link, mode))
            .map_err(|error| XdpError::Attach {
                iface: spec.iface.clone(),
                mode,
                error,
            })
    };
    match spec.attach {
        AttachMode::Native => try_mode(bpf::XDP_FLAGS_DRV_MODE, "native"),
        AttachMode::Skb => try_mode(bpf::XDP_FLAGS_SKB_MODE, "skb"),
        AttachMode::Auto => try_mode(bpf::XDP_FLAGS_DRV_MODE, "native").or_else(|error| {
            warn!(%error, "native XDP refused; attaching in generic (skb) mode");
            try_mode(bpf::XDP_FLAGS_SKB_MODE, "skb")
        }),
    }
}

/// The interface's index (`if_nametoindex`).
fn interface_index(iface: &str) -> Result<u32, XdpError> {
    let name = CString::new(iface).map_err(|_| XdpError::Interface(iface.to_owned()))?;
    // SAFETY: `name` is a valid NUL-terminated string for the duration of the call.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if index == 0 {
        Err(XdpError::Interface(iface.to_owned()))
    } else {
        Ok(index)
    }
}

/// Receive queues of the interface: the `rx-N` entries of `/sys/class/net/IFACE/queues` (the
/// netns's own sysfs under `ip netns exec`).
fn receive_queues(iface: &str) -> Result<u32, XdpError> {
    let error = |error| XdpError::Queues {
        iface: iface.to_owned(),
        error,
    };
    let entries = std::fs::read_dir(format!("/sys/class/net/{iface}/queues")).map_err(error)?;
    let mut queues = 0u32;
    for entry in entries {
        let entry = entry.map_err(error)?;
        if entry.file_name().to_string_lossy().starts_with("rx-") {
            queues += 1;
        }
    }
    if queues == 0 {
        return Err(error(io::Error::other("no rx queues")));
    }
    Ok(queues)
}

#[cfg(test)]
mod tests;
