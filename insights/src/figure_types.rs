//! The value types of a window's figures, shared by `figures` (which computes them) and
//! `responses` (which prints them): the fee levels table, slot range, top programs, congestion
//! factors, fee levels, wallet figures and the window's figures as a whole.

use serde::Serialize;

/// Fee levels: name, percentile, landing probability.
pub const FEE_LEVELS: [(&str, u64, f64); 4] = [
    ("low", 60, 0.60),
    ("medium", 80, 0.80),
    ("high", 95, 0.95),
    ("very_high", 99, 0.99),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SlotRange {
    pub start: u64,
    pub end: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopProgram {
    pub program_id: String,
    pub name: String,
    pub tx_count: u64,
    pub avg_cu: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CongestionFactors {
    pub compute_saturation: f64,
    pub write_lock_contention: f64,
    pub tx_drop_rate: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FeeLevels {
    pub low: u64,
    pub medium: u64,
    pub high: u64,
    pub very_high: u64,
}

impl FeeLevels {
    pub fn get(&self, level: &str) -> Option<u64> {
        match level {
            "low" => Some(self.low),
            "medium" => Some(self.medium),
            "high" => Some(self.high),
            "very_high" => Some(self.very_high),
            _ => None,
        }
    }
}

/// One side of `GET /v1/block50/compare`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WalletFigures {
    pub address: String,
    pub tx_count: u64,
    pub landed_count: u64,
    /// `null` when the address signed nothing in the window.
    pub landing_rate: Option<f64>,
    pub blocks_included: u64,
    pub block_inclusion_rate: f64,
    pub avg_compute_units: Option<f64>,
    pub avg_priority_fee: Option<f64>,
}

/// Everything the live endpoints serve about one window (except per-account and per-wallet
/// queries, answered from the blocks on request).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFigures {
    pub slot_range: SlotRange,
    pub tx_count: u64,
    pub avg_compute_units: f64,
    pub avg_priority_fee: f64,
    pub median_priority_fee: u64,
    pub p75_priority_fee: u64,
    pub p90_priority_fee: u64,
    pub p99_priority_fee: u64,
    pub success_rate: f64,
    pub top_programs: Vec<TopProgram>,
    pub congestion_score: f64,
    pub congestion_level: &'static str,
    pub factors: CongestionFactors,
    pub fee_levels: FeeLevels,
}
