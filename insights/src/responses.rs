//! The JSON bodies of the insights API (docs/insights.md; product decisions §C), field order as
//! documented, and the UTC timestamp format of `updated_at`.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub use super::figure_types::{CongestionFactors, FeeLevels, SlotRange, TopProgram, WalletFigures};
use super::figure_types::{FEE_LEVELS, WindowFigures};

/// `GET /v1/block50`.
#[derive(Debug, Serialize)]
pub struct Snapshot<'a> {
    pub slot_range: SlotRange,
    pub avg_compute_units: f64,
    pub avg_priority_fee: f64,
    pub median_priority_fee: u64,
    pub p75_priority_fee: u64,
    pub p90_priority_fee: u64,
    pub p99_priority_fee: u64,
    pub tx_count: u64,
    pub success_rate: f64,
    pub congestion_score: f64,
    pub top_programs: &'a [TopProgram],
    pub updated_at: &'a str,
}

impl<'a> Snapshot<'a> {
    pub fn new(figures: &'a WindowFigures, updated_at: &'a str) -> Self {
        Self {
            slot_range: figures.slot_range,
            avg_compute_units: figures.avg_compute_units,
            avg_priority_fee: figures.avg_priority_fee,
            median_priority_fee: figures.median_priority_fee,
            p75_priority_fee: figures.p75_priority_fee,
            p90_priority_fee: figures.p90_priority_fee,
            p99_priority_fee: figures.p99_priority_fee,
            tx_count: figures.tx_count,
            success_rate: figures.success_rate,
            congestion_score: figures.congestion_score,
            top_programs: &figures.top_programs,
            updated_at,
        }
    }
}

/// `GET /v1/network/congestion`.
#[derive(Debug, Serialize)]
pub struct Congestion<'a> {
    pub score: f64,
    pub level: &'a str,
    pub factors: CongestionFactors,
    pub updated_at: &'a str,
}

/// `GET /v1/fees/estimate`.
#[derive(Debug, Serialize)]
pub struct FeeEstimate<'a> {
    pub level: &'a str,
    pub priority_fee: u64,
    pub landing_probability: f64,
    pub sample_size: u64,
    pub slot_range: SlotRange,
    pub levels: FeeLevels,
    pub updated_at: &'a str,
}

impl<'a> FeeEstimate<'a> {
    /// The estimate for `level` (one of [`FEE_LEVELS`]) from `levels` over `sample_size` fees.
    pub fn new(
        level: &'a str,
        levels: FeeLevels,
        sample_size: u64,
        slot_range: SlotRange,
        updated_at: &'a str,
    ) -> Option<Self> {
        let (_, _, probability) = FEE_LEVELS.iter().find(|(name, _, _)| *name == level)?;
        Some(Self {
            level,
            priority_fee: levels.get(level)?,
            landing_probability: *probability,
            sample_size,
            slot_range,
            levels,
            updated_at,
        })
    }
}

/// `GET /v1/block50/compare`.
#[derive(Debug, Serialize)]
pub struct Comparison<'a> {
    pub wallet: WalletFigures,
    pub against: WalletFigures,
    pub slot_range: SlotRange,
    pub updated_at: &'a str,
}

/// The error body `{"error":{"code","message"}}`.
pub fn error_body(code: &str, message: &str) -> String {
    serde_json::json!({"error": {"code": code, "message": message}}).to_string()
}

/// `time` as ISO 8601 UTC with milliseconds: `2026-11-22T13:05:09.123Z`.
pub fn iso8601(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T12:34:56.789Z (leap day).
        let time = UNIX_EPOCH + Duration::from_millis(1_709_210_096_789);
        assert_eq!(iso8601(time), "2024-02-29T12:34:56.789Z");
        let time = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso8601(time), "2000-02-29T00:00:00.000Z");
    }
}
