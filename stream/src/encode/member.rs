//! The `decoded` oneof member of decoded arguments: one step per program (`DexProgram`), chosen
//! by an exhaustive match over the variants (a new variant must be given its program's step).

use decoder::dex::DecodedArgs;
use stream_proto::stream::{self, decoded_instruction::Decoded};

/// The `decoded` oneof member of decoded arguments (always `Some`: each program's step covers
/// every variant the match gives it).
pub fn decoded_member(args: &DecodedArgs<'_>) -> Option<Decoded> {
    match args {
        DecodedArgs::AlphaFunCreate { .. }
        | DecodedArgs::AlphaFunBuy { .. }
        | DecodedArgs::AlphaFunSell { .. } => alpha_fun_member(args),
        DecodedArgs::AlphaAmmBuy { .. }
        | DecodedArgs::AlphaAmmSell { .. }
        | DecodedArgs::AlphaAmmCreatePool { .. }
        | DecodedArgs::AlphaAmmDeposit { .. }
        | DecodedArgs::AlphaAmmWithdraw { .. } => alpha_amm_member(args),
        DecodedArgs::CpmmSwapBaseInput { .. }
        | DecodedArgs::CpmmSwapBaseOutput { .. }
        | DecodedArgs::CpmmCreatePool { .. } => cpmm_member(args),
        DecodedArgs::LaunchLabCreate { .. }
        | DecodedArgs::LaunchLabBuyExactIn { .. }
        | DecodedArgs::LaunchLabBuyExactOut { .. }
        | DecodedArgs::LaunchLabSellExactIn { .. }
        | DecodedArgs::LaunchLabSellExactOut { .. }
        | DecodedArgs::LaunchLabMigrate { .. } => launch_lab_member(args),
        DecodedArgs::DbcSwap { .. }
        | DecodedArgs::DbcInitialize { .. }
        | DecodedArgs::DbcMigrate { .. } => dbc_member(args),
        DecodedArgs::DammV2Swap { .. }
        | DecodedArgs::DammV2CreatePool { .. }
        | DecodedArgs::DammV2AddLiquidity { .. }
        | DecodedArgs::DammV2RemoveLiquidity { .. } => damm_v2_member(args),
    }
}

/// The members of `DexProgram::AlphaFun`.
fn alpha_fun_member(args: &DecodedArgs<'_>) -> Option<Decoded> {
    let member = match *args {
        DecodedArgs::AlphaFunCreate { name, symbol, uri } => {
            Decoded::AlphaFunCreate(stream::AlphaFunCreate {
                name: name.to_owned(),
                symbol: symbol.to_owned(),
                uri: uri.to_owned(),
            })
        }
        DecodedArgs::AlphaFunBuy {
            amount,
            max_sol_cost,
        } => Decoded::AlphaFunBuy(stream::AlphaFunBuy {
            amount,
            max_sol_cost,
        }),
        DecodedArgs::AlphaFunSell {
            amount,
            min_sol_output,
        } => Decoded::AlphaFunSell(stream::AlphaFunSell {
            amount,
            min_sol_output,
        }),
        _ => return None,
    };
    Some(member)
}

/// The members of `DexProgram::AlphaAmm`.
fn alpha_amm_member(args: &DecodedArgs<'_>) -> Option<Decoded> {
    let member = match *args {
        DecodedArgs::AlphaAmmBuy {
            base_amount_out,
            max_quote_amount_in,
        } => Decoded::AlphaAmmBuy(stream::AlphaAmmBuy {
            base_amount_out,
            max_quote_amount_in,
        }),
        DecodedArgs::AlphaAmmSell {
            base_amount_in,
            min_quote_amount_out,
        } => Decoded::AlphaAmmSell(stream::AlphaAmmSell {
            base_amount_in,
            min_quote_amount_out,
        }),
        DecodedArgs::AlphaAmmCreatePool {
            index,
            base_amount,
            quote_amount,
        } => Decoded::AlphaAmmCreatePool(stream::AlphaAmmCreatePool {
            index,
            base_amount,
            quote_amount,
        }),
        DecodedArgs::AlphaAmmDeposit {
            lp_token_amount_out,
            max_base_amount_in,
            max_quote_amount_in,
        } => Decoded::AlphaAmmDeposit(stream::AlphaAmmDeposit {
            lp_token_amount_out,
            max_base_amount_in,
            max_quote_amount_in,
        }),
        DecodedArgs::AlphaAmmWithdraw {
            lp_token_amount_in,
            min_base_amount_out,
            min_quote_amount_out,
        } => Decoded::AlphaAmmWithdraw(stream::AlphaAmmWithdraw {
            lp_token_amount_in,
            min_base_amount_out,
            min_quote_amount_out,
        }),
        _ => return None,
    };
    Some(member)
}

/// The members of `DexProgram::BetaCpmm`.
fn cpmm_member(args: &DecodedArgs<'_>) -> Option<Decoded> {
    let member = match *args {
        DecodedArgs::CpmmSwapBaseInput {
            amount_in,
            minimum_amount_out,
        } => Decoded::CpmmSwapBaseInput(stream::CpmmSwapBaseInput {
            amount_in,
            minimum_amount_out,
        }),
        DecodedArgs::CpmmSwapBaseOutput {
            max_amount_in,
            amount_out,
        } => Decoded::CpmmSwapBaseOutput(stream::CpmmSwapBaseOutput {
            max_amount_in,
            amount_out,
        }),
        DecodedArgs::CpmmCreatePool {
            init_amount_0,
            init_amount_1,
            open_time,
        } => Decoded::CpmmCreatePool(stream::CpmmCreatePool {
            init_amount_0,
            init_amount_1,
            open_time,
        }),
        _ => return None,
    };
    Some(member)
}

/// The members of `DexProgram::BetaLaunchLab`.
fn launch_lab_member(args: &DecodedArgs<'_>) -> Option<Decoded> {
    let member = match *args {
        DecodedArgs::LaunchLabCreate {
            name,
            symbol,
            uri,
            decimals,
            total_supply,
        } => Decoded::LaunchLabCreate(stream::LaunchLabCreatePool {
            name: name.to_owned(),
            symbol: symbol.to_owned(),
            uri: uri.to_owned(),
            decimals,
            total_supply,
        }),
        DecodedArgs::LaunchLabBuyExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        } => Decoded::LaunchLabBuyExactIn(stream::LaunchLabBuyExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        }),
        DecodedArgs::LaunchLabBuyExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        } => Decoded::LaunchLabBuyExactOut(stream::LaunchLabBuyExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        }),
        DecodedArgs::LaunchLabSellExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        } => Decoded::LaunchLabSellExactIn(stream::LaunchLabSellExactIn {
            amount_in,
            minimum_amount_out,
            share_fee_bps,
        }),
        DecodedArgs::LaunchLabSellExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        } => Decoded::LaunchLabSellExactOut(stream::LaunchLabSellExactOut {
            amount_out,
            maximum_amount_in,
            share_fee_bps,
        }),
        DecodedArgs::LaunchLabMigrate => Decoded::LaunchLabMigrate(stream::LaunchLabMigrate {}),
        _ => return None,
    };
    Some(member)
}

/// The members of `DexProgram::GammaDbc`.
fn dbc_member(args: &DecodedArgs<'_>) -> Option<Decoded> {
    let member = match *args {
        DecodedArgs::DbcSwap {
            amount_in,
            minimum_amount_out,
        } => Decoded::DbcSwap(stream::DbcSwap {
            amount_in,
            minimum_amount_out,
        }),
        DecodedArgs::DbcInitialize { pool_config } => {
            Decoded::DbcInitialize(stream::DbcInitializeVirtualPool {
                pool_config: pool_config.to_vec(),
            })
        }
        DecodedArgs::DbcMigrate => Decoded::DbcMigrate(stream::DbcMigrateToDammV2 {}),
        _ => return None,
    };
    Some(member)
}

/// The members of `DexProgram::GammaDammV2`.
fn damm_v2_member(args: &DecodedArgs<'_>) -> Option<Decoded> {
    let member = match *args {
        DecodedArgs::DammV2Swap {
            amount_in,
            minimum_amount_out,
        } => Decoded::DammV2Swap(stream::DammV2Swap {
            amount_in,
            minimum_amount_out,
        }),
        DecodedArgs::DammV2CreatePool { config } => {
            Decoded::DammV2CreatePool(stream::DammV2CreatePool {
                config: config.to_vec(),
            })
        }
        DecodedArgs::DammV2AddLiquidity {
            max_token_a_amount,
            max_token_b_amount,
            min_lp_amount,
        } => Decoded::DammV2AddLiquidity(stream::DammV2AddLiquidity {
            max_token_a_amount,
            max_token_b_amount,
            min_lp_amount,
        }),
        DecodedArgs::DammV2RemoveLiquidity {
            lp_amount,
            min_token_a_amount,
            min_token_b_amount,
        } => Decoded::DammV2RemoveLiquidity(stream::DammV2RemoveLiquidity {
            lp_amount,
            min_token_a_amount,
            min_token_b_amount,
        }),
        _ => return None,
    };
    Some(member)
}
