//! Per-block statistics: everything every endpoint needs about one produced block, computed once
//! at ingest (from getBlock JSON or an archive block) so that no request re-reads a block.
//! Vote transactions are counted and otherwise left out.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::programs;

/// One non-vote transaction of a block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxRecord {
    /// Compute-unit price, micro-lamports per CU (0 without SetComputeUnitPrice).
    pub priority_fee: u64,
    /// CU consumed (`computeUnitsConsumed`); the CU limit when the metadata lacks it.
    pub compute_units: u64,
    /// No error.
    pub ok: bool,
    /// Indexes into [`BlockStats::keys`] of the transaction's signers.
    pub signers: Vec<u32>,
    /// Indexes into [`BlockStats::keys`] of the accounts it write-locks.
    pub writable: Vec<u32>,
}

/// How one program was used in a block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramUse {
    pub program_id: String,
    /// Non-vote transactions that invoked it (top level or inner), each counted once.
    pub tx_count: u32,
    /// Sum of those transactions' compute units.
    pub compute_units: u64,
}

/// The statistics of one produced block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockStats {
    pub slot: u64,
    pub parent_slot: u64,
    pub block_time: Option<i64>,
    /// Vote transactions seen (excluded from every figure).
    pub vote_count: u32,
    /// Base58 keys referenced by [`TxRecord::signers`] and [`TxRecord::writable`].
    pub keys: Vec<String>,
    /// Non-vote transactions, in block order.
    pub txs: Vec<TxRecord>,
    /// Programs invoked by non-vote transactions, ComputeBudget excluded, by program id.
    pub programs: Vec<ProgramUse>,
    /// Sum of `costUnits` of the non-vote transactions when every one carries it, else sum of
    /// their compute units.
    pub block_cost: u64,
    /// CU of the busiest writable account: the largest sum, over accounts, of the compute units
    /// of the non-vote transactions that write-lock it.
    pub busiest_account_cu: u64,
    /// Index into `keys` of that account (`None` without non-vote transactions).
    pub busiest_account: Option<u32>,
}

impl BlockStats {
    /// Non-vote transactions that failed.
    pub fn failed_count(&self) -> usize {
        self.txs.iter().filter(|tx| !tx.ok).count()
    }

    /// The index of `key` in [`Self::keys`].
    pub fn key_index(&self, key: &str) -> Option<u32> {
        self.keys
            .iter()
            .position(|known| known == key)
            .map(|index| index as u32)
    }
}

/// What the statistics need from one transaction, whatever its source.
#[derive(Debug, Default)]
pub struct TxFacts<'a> {
    /// A simple vote (validator rule): excluded from every figure.
    pub is_vote: bool,
    pub signers: Vec<&'a str>,
    /// Write-locked accounts: writable static keys (message header) and loaded writable addresses.
    pub writable: Vec<&'a str>,
    /// Distinct programs invoked, top level and inner.
    pub programs: Vec<&'a str>,
    pub priority_fee: u64,
    /// CU limit (requested or the default rule).
    pub unit_limit: u64,
    pub units_consumed: Option<u64>,
    pub cost_units: Option<u64>,
    pub ok: bool,
}

/// Accumulates a block's transactions into its [`BlockStats`].
pub struct BlockStatsBuilder<'a> {
    stats: BlockStats,
    key_index: HashMap<&'a str, u32>,
    programs: HashMap<&'a str, (u32, u64)>,
    account_units: HashMap<u32, u64>,
    cost_sum: u64,
    every_tx_has_cost: bool,
}

impl<'a> BlockStatsBuilder<'a> {
    pub fn new(slot: u64, parent_slot: u64, block_time: Option<i64>) -> Self {
        Self {
            stats: BlockStats {
                slot,
                parent_slot,
                block_time,
                vote_count: 0,
                keys: Vec::new(),
                txs: Vec::new(),
                programs: Vec::new(),
                block_cost: 0,
                busiest_account_cu: 0,
                busiest_account: None,
            },
            key_index: HashMap::new(),
            programs: HashMap::new(),
            account_units: HashMap::new(),
            cost_sum: 0,
            every_tx_has_cost: true,
        }
    }

    fn intern(&mut self, key: &'a str) -> u32 {
        let keys = &mut self.stats.keys;
        *self.key_index.entry(key).or_insert_with(|| {
            keys.push(key.to_owned());
            (keys.len() - 1) as u32
        })
    }

    pub fn push(&mut self, facts: TxFacts<'a>) {
        if facts.is_vote {
            self.stats.vote_count += 1;
            return;
        }
        let compute_units = facts.units_consumed.unwrap_or(facts.unit_limit);
        match facts.cost_units {
            Some(cost) => self.cost_sum += cost,
            None => self.every_tx_has_cost = false,
        }
        let signers: Vec<u32> = facts.signers.iter().map(|&key| self.intern(key)).collect();
        let mut writable: Vec<u32> = facts.writable.iter().map(|&key| self.intern(key)).collect();
        writable.sort_unstable();
        writable.dedup();
        for &account in &writable {
            *self.account_units.entry(account).or_default() += compute_units;
        }
        for program in facts.programs {
            if program == programs::COMPUTE_BUDGET_PROGRAM {
                continue;
            }
            let entry = self.programs.entry(program).or_default();
            entry.0 += 1;
            entry.1 += compute_units;
        }
        self.stats.txs.push(TxRecord {
            priority_fee: facts.priority_fee,
            compute_units,
            ok: facts.ok,
            signers,
            writable,
        });
    }

    pub fn finish(mut self) -> BlockStats {
        let units: u64 = self.stats.txs.iter().map(|tx| tx.compute_units).sum();
        self.stats.block_cost = if self.every_tx_has_cost {
            self.cost_sum
        } else {
            units
        };
        // Busiest account: most CU, ties to the account that appeared first.
        if let Some((&account, &cu)) = self
            .account_units
            .iter()
            .max_by_key(|&(&account, &cu)| (cu, std::cmp::Reverse(account)))
        {
            self.stats.busiest_account = Some(account);
            self.stats.busiest_account_cu = cu;
        }
        let mut programs: Vec<ProgramUse> = self
            .programs
            .into_iter()
            .map(|(program_id, (tx_count, compute_units))| ProgramUse {
                program_id: program_id.to_owned(),
                tx_count,
                compute_units,
            })
            .collect();
        programs.sort_unstable_by(|a, b| a.program_id.cmp(&b.program_id));
        self.stats.programs = programs;
        self.stats
    }
}

/// Pushes `key` onto `list` unless it is there already (lists are short).
pub fn push_distinct<'a>(list: &mut Vec<&'a str>, key: &'a str) {
    if !list.contains(&key) {
        list.push(key);
    }
}

/// Whether static key `index` of a message is writable according to its header: writable
/// signers first, then read-only signers, writable non-signers, read-only non-signers.
pub fn is_writable_static(
    index: usize,
    key_count: usize,
    num_required_signatures: usize,
    num_readonly_signed: usize,
    num_readonly_unsigned: usize,
) -> bool {
    if index < num_required_signatures {
        index < num_required_signatures.saturating_sub(num_readonly_signed)
    } else {
        index < key_count.saturating_sub(num_readonly_unsigned)
    }
}
