//! Settings of the insights service: the upstream, the store, retention, polling, the window and
//! the congestion limits. Every bound is here, with its default.

use std::path::PathBuf;
use std::time::Duration;

/// Nominal slot duration, used to turn retention durations into slot counts.
pub const NOMINAL_SLOT: Duration = Duration::from_millis(400);

/// Insights configuration.
#[derive(Debug, Clone)]
pub struct InsightsConfig {
    /// Upstream validator JSON-RPC URL (`http://host:port`).
    pub upstream: String,
    /// The store file.
    pub db_path: PathBuf,
    /// How long snapshots (history) are kept, counted in nominal slots behind the newest block.
    pub retention: Duration,
    /// How long full per-block statistics are kept (they hold every signer and writable account:
    /// much larger than snapshots). At least the window is always kept.
    pub block_retention: Duration,
    /// Pause between tip polls once caught up.
    pub poll_interval: Duration,
    /// On a first start (empty store), begin this many slots behind the confirmed tip.
    pub start_lookback_slots: u64,
    /// Most slots asked of one getBlocks call.
    pub blocks_per_request: u64,
    /// Timeout of one upstream request.
    pub request_timeout: Duration,
    /// Largest upstream response accepted (a getBlock result).
    pub max_response_bytes: u64,
    /// Trust for an https upstream (Mozilla's roots plus extra CAs).
    pub upstream_trust: front::tls_client::UpstreamTrust,
    pub limits: Limits,
}

/// Figures' bounds and limits (product decisions §C).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Produced blocks in the window.
    pub window_blocks: usize,
    /// Block compute limit (compute saturation).
    pub block_cu_limit: u64,
    /// Per-writable-account compute limit (write-lock contention).
    pub account_cu_limit: u64,
    /// Most snapshots one history call returns.
    pub max_history: usize,
    /// Most accounts one fee estimate may name.
    pub max_fee_accounts: usize,
    /// Most programs in `top_programs`.
    pub top_programs: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            window_blocks: 50,
            block_cu_limit: 60_000_000,
            account_cu_limit: 12_000_000,
            max_history: 1_000,
            max_fee_accounts: 32,
            top_programs: 10,
        }
    }
}

impl InsightsConfig {
    /// Defaults for `upstream` with the store at `db_path`.
    pub fn new(upstream: impl Into<String>, db_path: impl Into<PathBuf>) -> Self {
        Self {
            upstream: upstream.into(),
            db_path: db_path.into(),
            retention: Duration::from_secs(7 * 24 * 3600),
            block_retention: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(200),
            start_lookback_slots: 100,
            blocks_per_request: 500,
            request_timeout: Duration::from_secs(30),
            max_response_bytes: 64 << 20,
            upstream_trust: front::tls_client::UpstreamTrust::default(),
            limits: Limits::default(),
        }
    }

    /// Snapshot retention in slots.
    pub fn retention_slots(&self) -> u64 {
        duration_slots(self.retention)
    }

    /// Per-block statistics retention in slots (never less than a window's worth of slots).
    pub fn block_retention_slots(&self) -> u64 {
        duration_slots(self.block_retention).max(self.limits.window_blocks as u64 * 4)
    }
}

fn duration_slots(duration: Duration) -> u64 {
    (duration.as_millis() / NOMINAL_SLOT.as_millis()) as u64
}

/// Parses a retention such as `7d`, `12h`, `30m`, `90s` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration such as 7d, 12h, 30m, 90s or 250ms"))?;
    let seconds = match unit {
        "" | "s" => return Ok(Duration::from_secs(number)),
        "ms" => return Ok(Duration::from_millis(number)),
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "`{text}`: unknown unit `{unit}` (use ms, s, m, h or d)"
            ));
        }
    };
    number
        .checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{text}` is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(604_800)));
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("7w").is_err());
        assert!(parse_duration("d").is_err());
    }

    #[test]
    fn retention_in_slots() {
        let config = InsightsConfig::new("http://x", "/tmp/x");
        assert_eq!(config.retention_slots(), 1_512_000);
        assert_eq!(config.block_retention_slots(), 9_000);
    }
}
