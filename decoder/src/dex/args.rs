//! The decoded arguments of each logical instruction: one variant per `decoded` oneof member of
//! proto/stream.proto (the per-program messages), with the same field names. Strings and byte
//! strings borrow from the instruction data.

/// Decoded arguments; see `docs/dex-mapping.md` for the source of every field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodedArgs<'a> {
    AlphaFunCreate {
        name: &'a str,
        symbol: &'a str,
        uri: &'a str,
    },
    AlphaFunBuy {
        amount: u64,
        max_sol_cost: u64,
    },
    AlphaFunSell {
        amount: u64,
        min_sol_output: u64,
    },
    AlphaAmmBuy {
        base_amount_out: u64,
        max_quote_amount_in: u64,
    },
    AlphaAmmSell {
        base_amount_in: u64,
        min_quote_amount_out: u64,
    },
    AlphaAmmCreatePool {
        index: u32,
        base_amount: u64,
        quote_amount: u64,
    },
    AlphaAmmDeposit {
        lp_token_amount_out: u64,
        max_base_amount_in: u64,
        max_quote_amount_in: u64,
    },
    AlphaAmmWithdraw {
        lp_token_amount_in: u64,
        min_base_amount_out: u64,
        min_quote_amount_out: u64,
    },
    CpmmSwapBaseInput {
        amount_in: u64,
        minimum_amount_out: u64,
    },
    CpmmSwapBaseOutput {
        max_amount_in: u64,
        amount_out: u64,
    },
    CpmmCreatePool {
        init_amount_0: u64,
        init_amount_1: u64,
        open_time: u64,
    },
    LaunchLabCreate {
        name: &'a str,
        symbol: &'a str,
        uri: &'a str,
        decimals: u32,
        total_supply: u64,
    },
    LaunchLabBuyExactIn {
        amount_in: u64,
        minimum_amount_out: u64,
        share_fee_bps: u64,
    },
    LaunchLabBuyExactOut {
        amount_out: u64,
        maximum_amount_in: u64,
        share_fee_bps: u64,
    },
    LaunchLabSellExactIn {
        amount_in: u64,
        minimum_amount_out: u64,
        share_fee_bps: u64,
    },
    LaunchLabSellExactOut {
        amount_out: u64,
        maximum_amount_in: u64,
        share_fee_bps: u64,
    },
    LaunchLabMigrate,
    DbcSwap {
        amount_in: u64,
        minimum_amount_out: u64,
    },
    DbcInitialize {
        pool_config: &'a [u8],
    },
    DbcMigrate,
    DammV2Swap {
        amount_in: u64,
        minimum_amount_out: u64,
    },
    DammV2CreatePool {
        config: &'a [u8],
    },
    DammV2AddLiquidity {
        max_token_a_amount: u64,
        max_token_b_amount: u64,
        min_lp_amount: u64,
    },
    DammV2RemoveLiquidity {
        lp_amount: u64,
        min_token_a_amount: u64,
        min_token_b_amount: u64,
    },
}

impl DecodedArgs<'_> {
    /// The `decoded` oneof member name of the specification (`alpha_fun_buy` …).
    pub const fn member_name(&self) -> &'static str {
        match self {
            Self::AlphaFunCreate { .. } => "alpha_fun_create",
            Self::AlphaFunBuy { .. } => "alpha_fun_buy",
            Self::AlphaFunSell { .. } => "alpha_fun_sell",
            Self::AlphaAmmBuy { .. } => "alpha_amm_buy",
            Self::AlphaAmmSell { .. } => "alpha_amm_sell",
            Self::AlphaAmmCreatePool { .. } => "alpha_amm_create_pool",
            Self::AlphaAmmDeposit { .. } => "alpha_amm_deposit",
            Self::AlphaAmmWithdraw { .. } => "alpha_amm_withdraw",
            Self::CpmmSwapBaseInput { .. } => "cpmm_swap_base_input",
            Self::CpmmSwapBaseOutput { .. } => "cpmm_swap_base_output",
            Self::CpmmCreatePool { .. } => "cpmm_create_pool",
            Self::LaunchLabCreate { .. } => "launch_lab_create",
            Self::LaunchLabBuyExactIn { .. } => "launch_lab_buy_exact_in",
            Self::LaunchLabBuyExactOut { .. } => "launch_lab_buy_exact_out",
            Self::LaunchLabSellExactIn { .. } => "launch_lab_sell_exact_in",
            Self::LaunchLabSellExactOut { .. } => "launch_lab_sell_exact_out",
            Self::LaunchLabMigrate => "launch_lab_migrate",
            Self::DbcSwap { .. } => "dbc_swap",
            Self::DbcInitialize { .. } => "dbc_initialize",
            Self::DbcMigrate => "dbc_migrate",
            Self::DammV2Swap { .. } => "damm_v2_swap",
            Self::DammV2CreatePool { .. } => "damm_v2_create_pool",
            Self::DammV2AddLiquidity { .. } => "damm_v2_add_liquidity",
            Self::DammV2RemoveLiquidity { .. } => "damm_v2_remove_liquidity",
        }
    }
}

/// One decoded call: the logical name of the specification, the on-chain instruction it came
/// from, and its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedCall<'a> {
    pub instruction_name: &'static str,
    pub onchain_name: &'static str,
    pub args: DecodedArgs<'a>,
}

impl<'a> DecodedCall<'a> {
    pub(crate) const fn new(
        instruction_name: &'static str,
        onchain_name: &'static str,
        args: DecodedArgs<'a>,
    ) -> Self {
        Self {
            instruction_name,
            onchain_name,
            args,
        }
    }
}
