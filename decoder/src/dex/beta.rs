//! BETA_CPMM (constant-product AMM) and BETA_LAUNCH_LAB (launchpad): docs/dex-mapping.md, dex
//! §§5–6.

use super::args::{DecodedArgs, DecodedCall};
use super::reader::{Arguments, DexError, discriminator, split_discriminator};

const CPMM_SWAP_BASE_INPUT: u64 = discriminator("8fbe5adac41e33de");
const CPMM_SWAP_BASE_OUTPUT: u64 = discriminator("37d96256a34ab4ad");
const CPMM_INITIALIZE: u64 = discriminator("afaf6d1f0d989bed");
/// Newer program versions; not in the stored IDL (dex §5).
const CPMM_INITIALIZE_WITH_PERMISSION: u64 = discriminator("3f37fe4131b25979");

const LAB_INITIALIZE: u64 = discriminator("afaf6d1f0d989bed");
const LAB_INITIALIZE_V2: u64 = discriminator("4399af27da102620");
const LAB_INITIALIZE_WITH_TOKEN_2022: u64 = discriminator("25be7ede2c9aab11");
const LAB_BUY_EXACT_IN: u64 = discriminator("faea0d7bd59c13ec");
const LAB_BUY_EXACT_OUT: u64 = discriminator("18d3742869039938");
const LAB_SELL_EXACT_IN: u64 = discriminator("9527de9bd37c981a");
const LAB_SELL_EXACT_OUT: u64 = discriminator("5fc8472208090ba6");
const LAB_MIGRATE_TO_AMM: u64 = discriminator("cf52c091fecf91df");
const LAB_MIGRATE_TO_CPSWAP: u64 = discriminator("885cc8671cda908c");

/// `CurveParams` variants: Constant, Fixed, Linear; each starts with `supply: u64`.
const CURVE_VARIANTS: u8 = 3;

#[cfg(test)]
pub(super) const KNOWN: &[(u64, &str, &str)] = &[
    (CPMM_SWAP_BASE_INPUT, "beta_cpmm", "swap_base_input"),
    (CPMM_SWAP_BASE_OUTPUT, "beta_cpmm", "swap_base_output"),
    (CPMM_INITIALIZE, "beta_cpmm", "initialize"),
    (
        CPMM_INITIALIZE_WITH_PERMISSION,
        "beta_cpmm",
        "initialize_with_permission",
    ),
    (LAB_INITIALIZE, "beta_launch_lab", "initialize"),
    (LAB_INITIALIZE_V2, "beta_launch_lab", "initialize_v2"),
    (
        LAB_INITIALIZE_WITH_TOKEN_2022,
        "beta_launch_lab",
        "initialize_with_token_2022",
    ),
    (LAB_BUY_EXACT_IN, "beta_launch_lab", "buy_exact_in"),
    (LAB_BUY_EXACT_OUT, "beta_launch_lab", "buy_exact_out"),
    (LAB_SELL_EXACT_IN, "beta_launch_lab", "sell_exact_in"),
    (LAB_SELL_EXACT_OUT, "beta_launch_lab", "sell_exact_out"),
    (LAB_MIGRATE_TO_AMM, "beta_launch_lab", "migrate_to_amm"),
    (
        LAB_MIGRATE_TO_CPSWAP,
        "beta_launch_lab",
        "migrate_to_cpswap",
    ),
];

pub(super) fn decode_beta_cpmm(data: &[u8]) -> Result<DecodedCall<'_>, DexError> {
    let (discriminator, bytes) = split_discriminator(data)?;
    let mut arguments = Arguments::new(bytes);
    let call = match discriminator {
        CPMM_SWAP_BASE_INPUT => {
            let amount_in = arguments.u64("amount_in")?;
            let minimum_amount_out = arguments.u64("minimum_amount_out")?;
            let args = DecodedArgs::CpmmSwapBaseInput {
                amount_in,
                minimum_amount_out,
            };
            DecodedCall::new("swap_base_input", "swap_base_input", args)
        }
        CPMM_SWAP_BASE_OUTPUT => {
            // The wire order is max_amount_in, then amount_out.
            let max_amount_in = arguments.u64("max_amount_in")?;
            let amount_out = arguments.u64("amount_out")?;
            let args = DecodedArgs::CpmmSwapBaseOutput {
                max_amount_in,
                amount_out,
            };
            DecodedCall::new("swap_base_output", "swap_base_output", args)
        }
        CPMM_INITIALIZE | CPMM_INITIALIZE_WITH_PERMISSION => {
            let onchain = if discriminator == CPMM_INITIALIZE {
                "initialize"
            } else {
                "initialize_with_permission"
            };
            let args = DecodedArgs::CpmmCreatePool {
                init_amount_0: arguments.u64("init_amount_0")?,
                init_amount_1: arguments.u64("init_amount_1")?,
                open_time: arguments.u64("open_time")?,
            };
            DecodedCall::new("create_pool", onchain, args)
        }
        discriminator => return Err(DexError::UnknownDiscriminator { discriminator }),
    };
    Ok(call)
}

pub(super) fn decode_beta_launch_lab(data: &[u8]) -> Result<DecodedCall<'_>, DexError> {
    let (discriminator, bytes) = split_discriminator(data)?;
    let mut arguments = Arguments::new(bytes);
    let call = match discriminator {
        LAB_INITIALIZE | LAB_INITIALIZE_V2 | LAB_INITIALIZE_WITH_TOKEN_2022 => {
            let onchain = match discriminator {
                LAB_INITIALIZE => "initialize",
                LAB_INITIALIZE_V2 => "initialize_v2",
                _ => "initialize_with_token_2022",
            };
            DecodedCall::new("create", onchain, decode_create(&mut arguments)?)
        }
        LAB_BUY_EXACT_IN | LAB_SELL_EXACT_IN => {
            let amount_in = arguments.u64("amount_in")?;
            let minimum_amount_out = arguments.u64("minimum_amount_out")?;
            let share_fee_bps = arguments.u64("share_fee_rate")?;
            if discriminator == LAB_BUY_EXACT_IN {
                let args = DecodedArgs::LaunchLabBuyExactIn {
                    amount_in,
                    minimum_amount_out,
                    share_fee_bps,
                };
                DecodedCall::new("buy_exact_in", "buy_exact_in", args)
            } else {
                let args = DecodedArgs::LaunchLabSellExactIn {
                    amount_in,
                    minimum_amount_out,
                    share_fee_bps,
                };
                DecodedCall::new("sell_exact_in", "sell_exact_in", args)
            }
        }
        LAB_BUY_EXACT_OUT | LAB_SELL_EXACT_OUT => {
            let amount_out = arguments.u64("amount_out")?;
            let maximum_amount_in = arguments.u64("maximum_amount_in")?;
            let share_fee_bps = arguments.u64("share_fee_rate")?;
            if discriminator == LAB_BUY_EXACT_OUT {
                let args = DecodedArgs::LaunchLabBuyExactOut {
                    amount_out,
                    maximum_amount_in,
                    share_fee_bps,
                };
                DecodedCall::new("buy_exact_out", "buy_exact_out", args)
            } else {
                let args = DecodedArgs::LaunchLabSellExactOut {
                    amount_out,
                    maximum_amount_in,
                    share_fee_bps,
                };
                DecodedCall::new("sell_exact_out", "sell_exact_out", args)
            }
        }
        LAB_MIGRATE_TO_AMM => {
            DecodedCall::new("migrate", "migrate_to_amm", DecodedArgs::LaunchLabMigrate)
        }
        LAB_MIGRATE_TO_CPSWAP => DecodedCall::new(
            "migrate",
            "migrate_to_cpswap",
            DecodedArgs::LaunchLabMigrate,
        ),
        discriminator => return Err(DexError::UnknownDiscriminator { discriminator }),
    };
    Ok(call)
}

/// `MintParams { decimals, name, symbol, uri }`, then the `CurveParams` variant index and its
/// first field, `supply`. Vesting and the later arguments are not read.
fn decode_create<'a>(arguments: &mut Arguments<'a>) -> Result<DecodedArgs<'a>, DexError> {
    let decimals = u32::from(arguments.u8("base_mint_param.decimals")?);
    let name = arguments.string("base_mint_param.name")?;
    let symbol = arguments.string("base_mint_param.symbol")?;
    let uri = arguments.string("base_mint_param.uri")?;
    arguments.variant("curve_param", CURVE_VARIANTS)?;
    let total_supply = arguments.u64("curve_param.supply")?;
    Ok(DecodedArgs::LaunchLabCreate {
        name,
        symbol,
        uri,
        decimals,
        total_supply,
    })
}
