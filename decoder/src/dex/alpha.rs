//! ALPHA_FUN (launchpad bonding curve) and ALPHA_AMM (its AMM): docs/dex-mapping.md, dex §§3–4.
//! Both append `OptionBool` / `OptionU64` arguments over time; nothing after the last carried
//! argument is read.

use super::args::{DecodedArgs, DecodedCall};
use super::reader::{Arguments, DexError, discriminator, split_discriminator};

const FUN_CREATE: u64 = discriminator("181ec828051c0777");
const FUN_CREATE_V2: u64 = discriminator("d6904cec5f8b31b4");
const FUN_BUY: u64 = discriminator("66063d1201daebea");
const FUN_BUY_EXACT_SOL_IN: u64 = discriminator("38fc74089edfcd5f");
const FUN_BUY_V2: u64 = discriminator("b817ee6167c5d33d");
const FUN_BUY_EXACT_QUOTE_IN_V2: u64 = discriminator("c2ab1c46684d5b2f");
const FUN_SELL: u64 = discriminator("33e685a4017f83ad");
const FUN_SELL_V2: u64 = discriminator("5df6823ce7e940b2");

const AMM_BUY: u64 = discriminator("66063d1201daebea");
const AMM_BUY_EXACT_QUOTE_IN: u64 = discriminator("c62e1552b4d9e870");
const AMM_SELL: u64 = discriminator("33e685a4017f83ad");
const AMM_CREATE_POOL: u64 = discriminator("e992d18ecf6840bc");
const AMM_DEPOSIT: u64 = discriminator("f223c68952e1f2b6");
const AMM_WITHDRAW: u64 = discriminator("b712469c946da122");

/// Every discriminator this module decodes, with its on-chain name (for tests).
#[cfg(test)]
pub(super) const KNOWN: &[(u64, &str, &str)] = &[
    (FUN_CREATE, "alpha_fun", "create"),
    (FUN_CREATE_V2, "alpha_fun", "create_v2"),
    (FUN_BUY, "alpha_fun", "buy"),
    (FUN_BUY_EXACT_SOL_IN, "alpha_fun", "buy_exact_sol_in"),
    (FUN_BUY_V2, "alpha_fun", "buy_v2"),
    (
        FUN_BUY_EXACT_QUOTE_IN_V2,
        "alpha_fun",
        "buy_exact_quote_in_v2",
    ),
    (FUN_SELL, "alpha_fun", "sell"),
    (FUN_SELL_V2, "alpha_fun", "sell_v2"),
    (AMM_BUY_EXACT_QUOTE_IN, "alpha_amm", "buy_exact_quote_in"),
    (AMM_CREATE_POOL, "alpha_amm", "create_pool"),
    (AMM_DEPOSIT, "alpha_amm", "deposit"),
    (AMM_WITHDRAW, "alpha_amm", "withdraw"),
];

pub(super) fn decode_alpha_fun(data: &[u8]) -> Result<DecodedCall<'_>, DexError> {
    let (discriminator, bytes) = split_discriminator(data)?;
    let mut arguments = Arguments::new(bytes);
    let call = match discriminator {
        FUN_CREATE | FUN_CREATE_V2 => {
            let onchain = if discriminator == FUN_CREATE {
                "create"
            } else {
                "create_v2"
            };
            let name = arguments.string("name")?;
            let symbol = arguments.string("symbol")?;
            let uri = arguments.string("uri")?;
            DecodedCall::new(
                "create",
                onchain,
                DecodedArgs::AlphaFunCreate { name, symbol, uri },
            )
        }
        FUN_BUY | FUN_BUY_V2 => {
            let onchain = if discriminator == FUN_BUY {
                "buy"
            } else {
                "buy_v2"
            };
            let amount = arguments.u64("amount")?;
            let max_sol_cost = arguments.u64("max_sol_cost")?;
            DecodedCall::new(
                "buy",
                onchain,
                DecodedArgs::AlphaFunBuy {
                    amount,
                    max_sol_cost,
                },
            )
        }
        FUN_BUY_EXACT_SOL_IN | FUN_BUY_EXACT_QUOTE_IN_V2 => {
            let (onchain, spendable) = if discriminator == FUN_BUY_EXACT_SOL_IN {
                ("buy_exact_sol_in", "spendable_sol_in")
            } else {
                ("buy_exact_quote_in_v2", "spendable_quote_in")
            };
            let max_sol_cost = arguments.u64(spendable)?;
            let amount = arguments.u64("min_tokens_out")?;
            DecodedCall::new(
                "buy",
                onchain,
                DecodedArgs::AlphaFunBuy {
                    amount,
                    max_sol_cost,
                },
            )
        }
        FUN_SELL | FUN_SELL_V2 => {
            let onchain = if discriminator == FUN_SELL {
                "sell"
            } else {
                "sell_v2"
            };
            let amount = arguments.u64("amount")?;
            let min_sol_output = arguments.u64("min_sol_output")?;
            DecodedCall::new(
                "sell",
                onchain,
                DecodedArgs::AlphaFunSell {
                    amount,
                    min_sol_output,
                },
            )
        }
        discriminator => return Err(DexError::UnknownDiscriminator { discriminator }),
    };
    Ok(call)
}

pub(super) fn decode_alpha_amm(data: &[u8]) -> Result<DecodedCall<'_>, DexError> {
    let (discriminator, bytes) = split_discriminator(data)?;
    let mut arguments = Arguments::new(bytes);
    let call = match discriminator {
        AMM_BUY => {
            let base_amount_out = arguments.u64("base_amount_out")?;
            let max_quote_amount_in = arguments.u64("max_quote_amount_in")?;
            let args = DecodedArgs::AlphaAmmBuy {
                base_amount_out,
                max_quote_amount_in,
            };
            DecodedCall::new("buy", "buy", args)
        }
        AMM_BUY_EXACT_QUOTE_IN => {
            let max_quote_amount_in = arguments.u64("spendable_quote_in")?;
            let base_amount_out = arguments.u64("min_base_amount_out")?;
            let args = DecodedArgs::AlphaAmmBuy {
                base_amount_out,
                max_quote_amount_in,
            };
            DecodedCall::new("buy", "buy_exact_quote_in", args)
        }
        AMM_SELL => {
            let base_amount_in = arguments.u64("base_amount_in")?;
            let min_quote_amount_out = arguments.u64("min_quote_amount_out")?;
            let args = DecodedArgs::AlphaAmmSell {
                base_amount_in,
                min_quote_amount_out,
            };
            DecodedCall::new("sell", "sell", args)
        }
        AMM_CREATE_POOL => {
            let index = u32::from(arguments.u16("index")?);
            let base_amount = arguments.u64("base_amount_in")?;
            let quote_amount = arguments.u64("quote_amount_in")?;
            let args = DecodedArgs::AlphaAmmCreatePool {
                index,
                base_amount,
                quote_amount,
            };
            DecodedCall::new("create_pool", "create_pool", args)
        }
        AMM_DEPOSIT => {
            let args = DecodedArgs::AlphaAmmDeposit {
                lp_token_amount_out: arguments.u64("lp_token_amount_out")?,
                max_base_amount_in: arguments.u64("max_base_amount_in")?,
                max_quote_amount_in: arguments.u64("max_quote_amount_in")?,
            };
            DecodedCall::new("deposit", "deposit", args)
        }
        AMM_WITHDRAW => {
            let args = DecodedArgs::AlphaAmmWithdraw {
                lp_token_amount_in: arguments.u64("lp_token_amount_in")?,
                min_base_amount_out: arguments.u64("min_base_amount_out")?,
                min_quote_amount_out: arguments.u64("min_quote_amount_out")?,
            };
            DecodedCall::new("withdraw", "withdraw", args)
        }
        discriminator => return Err(DexError::UnknownDiscriminator { discriminator }),
    };
    Ok(call)
}
