//! Compute-budget rules of one transaction: the price and limit its ComputeBudget instructions
//! ask for, and the runtime's default limit when SetComputeUnitLimit is absent.

use super::programs;

/// The most compute units a transaction may ask for.
pub const MAX_COMPUTE_UNIT_LIMIT: u64 = 1_400_000;
/// Default limit charged per instruction of a builtin program.
pub const BUILTIN_INSTRUCTION_UNITS: u64 = 3_000;
/// Default limit charged per instruction of any other program.
pub const DEFAULT_INSTRUCTION_UNITS: u64 = 200_000;

/// ComputeBudget instruction tags (first data byte).
const SET_COMPUTE_UNIT_LIMIT: u8 = 2;
const SET_COMPUTE_UNIT_PRICE: u8 = 3;

/// What a transaction's top-level ComputeBudget instructions request.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BudgetRequest {
    /// SetComputeUnitPrice, micro-lamports per CU.
    pub unit_price: Option<u64>,
    /// SetComputeUnitLimit.
    pub unit_limit: Option<u32>,
}

impl BudgetRequest {
    /// Notes one ComputeBudget instruction's data. The first instruction of each kind counts
    /// (the runtime fails a transaction that repeats one); malformed data is ignored (the runtime
    /// fails such a transaction too, and it then pays no priority).
    pub fn note(&mut self, data: &[u8]) {
        match data.split_first() {
            Some((&SET_COMPUTE_UNIT_PRICE, rest)) if self.unit_price.is_none() => {
                if let Ok(bytes) = <[u8; 8]>::try_from(rest) {
                    self.unit_price = Some(u64::from_le_bytes(bytes));
                }
            }
            Some((&SET_COMPUTE_UNIT_LIMIT, rest)) if self.unit_limit.is_none() => {
                if let Ok(bytes) = <[u8; 4]>::try_from(rest) {
                    self.unit_limit = Some(u32::from_le_bytes(bytes));
                }
            }
            _ => {}
        }
    }

    /// The priority fee: the compute-unit price, 0 when absent.
    pub fn priority_fee(&self) -> u64 {
        self.unit_price.unwrap_or(0)
    }

    /// The compute-unit limit: the requested one (capped), else the default rule over the
    /// top-level instructions' program ids.
    pub fn unit_limit<'a>(&self, instruction_programs: impl Iterator<Item = &'a str>) -> u64 {
        match self.unit_limit {
            Some(limit) => u64::from(limit).min(MAX_COMPUTE_UNIT_LIMIT),
            None => default_unit_limit(instruction_programs),
        }
    }
}

/// The runtime's default limit: 3,000 per builtin instruction plus 200,000 per other
/// instruction, capped at 1,400,000.
pub fn default_unit_limit<'a>(instruction_programs: impl Iterator<Item = &'a str>) -> u64 {
    instruction_programs
        .map(|program| {
            if programs::is_builtin(program) {
                BUILTIN_INSTRUCTION_UNITS
            } else {
                DEFAULT_INSTRUCTION_UNITS
            }
        })
        .sum::<u64>()
        .min(MAX_COMPUTE_UNIT_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn price_and_limit() {
        let mut request = BudgetRequest::default();
        request.note(&[3, 0x10, 0x27, 0, 0, 0, 0, 0, 0]);
        request.note(&[2, 0x40, 0x0d, 0x03, 0]);
        request.note(&[3, 1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(request.priority_fee(), 10_000);
        assert_eq!(request.unit_limit(std::iter::empty()), 200_000);
    }

    #[test]
    fn malformed_and_absent() {
        let mut request = BudgetRequest::default();
        request.note(&[3, 1, 2]);
        request.note(&[]);
        assert_eq!(request.priority_fee(), 0);
        let programs = [
            programs::COMPUTE_BUDGET_PROGRAM,
            "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        ];
        assert_eq!(request.unit_limit(programs.into_iter()), 203_000);
        let many = std::iter::repeat_n("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", 10);
        assert_eq!(default_unit_limit(many), 1_400_000);
    }

    #[test]
    fn requested_limit_is_capped() {
        let mut request = BudgetRequest::default();
        request.note(&[2, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(request.unit_limit(std::iter::empty()), 1_400_000);
    }
}
