//! The counters every streaming method's sessions keep: started, refused, open, sent, lagged, and
//! each end by its [`DisconnectReason`] (the metric label).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Why a session ended: one variant per reason, the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisconnectReason {
    ClientClosed,
    InvalidFilter,
    /// A request that could not be decoded (e.g. over the message size limit).
    InvalidRequest,
    Lagged,
    Shutdown,
    /// `from_slot` older than the recent-slot buffer (or resuming is off).
    ResumeRefused,
}

impl DisconnectReason {
    pub const ALL: [DisconnectReason; 6] = [
        Self::ClientClosed,
        Self::InvalidFilter,
        Self::InvalidRequest,
        Self::Lagged,
        Self::Shutdown,
        Self::ResumeRefused,
    ];

    pub const fn label(self) -> &'static str {
        match self {
            Self::ClientClosed => "client_closed",
            Self::InvalidFilter => "invalid_filter",
            Self::InvalidRequest => "invalid_request",
            Self::Lagged => "lagged",
            Self::Shutdown => "shutdown",
            Self::ResumeRefused => "resume_refused",
        }
    }
}

/// Session counters (exported by the appliance's metrics endpoint).
#[derive(Debug, Default)]
pub struct StreamMetrics {
    pub sessions_started: AtomicU64,
    /// Calls refused because `max_sessions` streams were open.
    pub sessions_refused: AtomicU64,
    /// Streams open now (started or still waiting for their first request).
    pub open_streams: AtomicUsize,
    pub updates_sent: AtomicU64,
    pub updates_dropped_lag: AtomicU64,
    pub disconnects: [AtomicU64; DisconnectReason::ALL.len()],
}

impl StreamMetrics {
    pub(crate) fn disconnected(&self, reason: DisconnectReason) {
        self.disconnects[reason as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Streams ended for this reason so far.
    pub fn disconnects(&self, reason: DisconnectReason) -> u64 {
        self.disconnects[reason as usize].load(Ordering::Relaxed)
    }
}
