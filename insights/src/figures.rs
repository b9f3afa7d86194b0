//! The figures of a window of per-block statistics (product decisions §C): the snapshot, the
//! congestion breakdown, fee levels (optionally restricted to accounts) and the wallet
//! comparison. Pure functions of the blocks; the JSON shapes live in `responses`.

use std::collections::HashMap;
use std::sync::Arc;

use super::block_stats::BlockStats;
use super::config::Limits;
use super::figure_types::{CongestionFactors, FeeLevels, SlotRange, TopProgram, WalletFigures};
pub use super::figure_types::{FEE_LEVELS, WindowFigures};
use super::programs;

/// Nearest-rank percentile `p` (0 < p <= 100) of ascending `sorted`: the value at rank
/// ceil(p·n/100), counting from 1; 0 for an empty list.
pub fn nearest_rank(sorted: &[u64], p: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as u64).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

/// `part / whole`, 0 when `whole` is 0.
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The congestion level of a score.
pub fn congestion_level(score: f64) -> &'static str {
    if score < 0.30 {
        "low"
    } else if score < 0.60 {
        "moderate"
    } else if score < 0.85 {
        "high"
    } else {
        "extreme"
    }
}

/// Fee levels over ascending fees.
pub fn fee_levels(sorted: &[u64]) -> FeeLevels {
    FeeLevels {
        low: nearest_rank(sorted, FEE_LEVELS[0].1),
        medium: nearest_rank(sorted, FEE_LEVELS[1].1),
        high: nearest_rank(sorted, FEE_LEVELS[2].1),
        very_high: nearest_rank(sorted, FEE_LEVELS[3].1),
    }
}

/// The figures of `blocks` (oldest first, non-empty).
pub fn window_figures(blocks: &[Arc<BlockStats>], limits: &Limits) -> Option<WindowFigures> {
    let first = blocks.first()?;
    let last = blocks.last()?;
    let mut fees = Vec::with_capacity(blocks.iter().map(|block| block.txs.len()).sum());
    let (mut units, mut succeeded) = (0u64, 0u64);
    let mut programs: HashMap<&str, (u64, u64)> = HashMap::new();
    let (mut saturation, mut contention) = (0.0f64, 0.0f64);
    for block in blocks {
        for tx in &block.txs {
            fees.push(tx.priority_fee);
            units += tx.compute_units;
            succeeded += u64::from(tx.ok);
        }
        for program in &block.programs {
            let entry = programs.entry(program.program_id.as_str()).or_default();
            entry.0 += u64::from(program.tx_count);
            entry.1 += program.compute_units;
        }
        saturation += (block.block_cost as f64 / limits.block_cu_limit as f64).min(1.0);
        contention += (block.busiest_account_cu as f64 / limits.account_cu_limit as f64).min(1.0);
    }
    fees.sort_unstable();
    let count = fees.len() as u64;
    let fee_sum: u128 = fees.iter().map(|&fee| u128::from(fee)).sum();
    let mut top: Vec<(&str, u64, u64)> = programs
        .into_iter()
        .filter(|(id, _)| *id != programs::COMPUTE_BUDGET_PROGRAM)
        .map(|(id, (txs, cu))| (id, txs, cu))
        .collect();
    top.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    top.truncate(limits.top_programs);
    let factors = CongestionFactors {
        compute_saturation: saturation / blocks.len() as f64,
        write_lock_contention: contention / blocks.len() as f64,
        tx_drop_rate: share(count - succeeded, count),
    };
    let score = (0.5 * factors.compute_saturation
        + 0.3 * factors.write_lock_contention
        + 0.2 * factors.tx_drop_rate)
        .clamp(0.0, 1.0);
    Some(WindowFigures {
        slot_range: SlotRange {
            start: first.slot,
            end: last.slot,
        },
        tx_count: count,
        avg_compute_units: share(units, count),
        avg_priority_fee: if count == 0 {
            0.0
        } else {
            fee_sum as f64 / count as f64
        },
        median_priority_fee: nearest_rank(&fees, 50),
        p75_priority_fee: nearest_rank(&fees, 75),
        p90_priority_fee: nearest_rank(&fees, 90),
        p99_priority_fee: nearest_rank(&fees, 99),
        success_rate: share(succeeded, count),
        top_programs: top
            .into_iter()
            .map(|(id, txs, cu)| TopProgram {
                program_id: id.to_owned(),
                name: programs::program_name(id).to_owned(),
                tx_count: txs,
                avg_cu: share(cu, txs),
            })
            .collect(),
        congestion_score: score,
        congestion_level: congestion_level(score),
        factors,
        fee_levels: fee_levels(&fees),
    })
}

/// Ascending priority fees of the window's transactions that write-lock any of `accounts`.
pub fn fees_writing(blocks: &[Arc<BlockStats>], accounts: &[String]) -> Vec<u64> {
    let mut fees = Vec::new();
    for block in blocks {
        let wanted: Vec<u32> = accounts
            .iter()
            .filter_map(|account| block.key_index(account))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        fees.extend(
            block
                .txs
                .iter()
                .filter(|tx| tx.writable.iter().any(|key| wanted.contains(key)))
                .map(|tx| tx.priority_fee),
        );
    }
    fees.sort_unstable();
    fees
}

/// The comparison figures of `address` over the window.
pub fn wallet_figures(blocks: &[Arc<BlockStats>], address: &str) -> WalletFigures {
    let (mut txs, mut landed, mut included, mut units) = (0u64, 0u64, 0u64, 0u64);
    let mut fees: u128 = 0;
    for block in blocks {
        let Some(key) = block.key_index(address) else {
            continue;
        };
        let before = txs;
        for tx in block.txs.iter().filter(|tx| tx.signers.contains(&key)) {
            txs += 1;
            landed += u64::from(tx.ok);
            units += tx.compute_units;
            fees += u128::from(tx.priority_fee);
        }
        included += u64::from(txs > before);
    }
    let average = |sum: f64| (txs > 0).then(|| sum / txs as f64);
    WalletFigures {
        address: address.to_owned(),
        tx_count: txs,
        landed_count: landed,
        landing_rate: (txs > 0).then(|| landed as f64 / txs as f64),
        blocks_included: included,
        block_inclusion_rate: share(included, blocks.len() as u64),
        avg_compute_units: average(units as f64),
        avg_priority_fee: average(fees as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_by_hand() {
        let values: Vec<u64> = (1..=10).collect();
        assert_eq!(nearest_rank(&values, 50), 5);
        assert_eq!(nearest_rank(&values, 75), 8);
        assert_eq!(nearest_rank(&values, 99), 10);
        assert_eq!(nearest_rank(&values, 1), 1);
        assert_eq!(nearest_rank(&[7], 60), 7);
        assert_eq!(nearest_rank(&[], 60), 0);
    }

    #[test]
    fn levels() {
        assert_eq!(congestion_level(0.0), "low");
        assert_eq!(congestion_level(0.3), "moderate");
        assert_eq!(congestion_level(0.6), "high");
        assert_eq!(congestion_level(0.85), "extreme");
    }
}
