//! Words of the operator's vocabulary that other rooms act on: how the XDP program attaches and
//! its sockets bind (`receive::xdp`), and the highest real-time priority (`handoff::sched`).

/// Highest `SCHED_FIFO` priority Linux accepts.
pub const MAX_PRIORITY: u8 = 99;

/// How to attach the XDP program.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum AttachMode {
    /// Driver (native) mode if the driver accepts it, else generic (SKB) mode.
    Auto,
    /// Driver mode only: the program runs before the kernel allocates an skb.
    Native,
    /// Generic mode only: works on any interface, after skb allocation.
    Skb,
}

/// How to bind the AF_XDP sockets.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum BindPreference {
    /// Zero-copy, falling back to copy mode where the driver refuses it (EOPNOTSUPP).
    Auto,
    /// Zero-copy only.
    Zerocopy,
    /// Copy mode only.
    Copy,
}
