//! GAMMA_DBC (dynamic bonding curve) and GAMMA_DAMM_V2 (dynamic AMM): docs/dex-mapping.md, dex
//! §§7–8.

use super::args::{DecodedArgs, DecodedCall};
use super::reader::{Arguments, DexError, discriminator, split_discriminator};

const SWAP: u64 = discriminator("f8c69e91e17587c8");
const SWAP2: u64 = discriminator("414b3f4ceb5b5b88");

const DBC_SWAP2_WITH_TRANSFER_HOOK: u64 = discriminator("b75d992818e6c297");
const DBC_INITIALIZE_SPL: u64 = discriminator("8c55d7b06636684f");
const DBC_INITIALIZE_TOKEN2022: u64 = discriminator("a976334e916edc9b");
const DBC_INITIALIZE_TOKEN2022_HOOK: u64 = discriminator("b60de9b12a918702");
const DBC_MIGRATION_DAMM_V2: u64 = discriminator("9ca9e66735e45040");
const DBC_MIGRATE_METEORA_DAMM: u64 = discriminator("1b013016b43f76d9");

const DAMM_INITIALIZE_POOL: u64 = discriminator("5fb40aac54aee828");
const DAMM_INITIALIZE_CUSTOMIZABLE_POOL: u64 = discriminator("14a1f118bdddb402");
const DAMM_INITIALIZE_POOL_WITH_DYNAMIC_CONFIG: u64 = discriminator("955248c5fdfc440f");
const DAMM_ADD_LIQUIDITY: u64 = discriminator("b59d59438fb63448");
const DAMM_REMOVE_LIQUIDITY: u64 = discriminator("5055d14818ceb16c");
const DAMM_REMOVE_ALL_LIQUIDITY: u64 = discriminator("0a333d2370691855");

/// `BaseFeeParameters { data: [u8; 27] }`.
const BASE_FEE_LEN: usize = 27;
/// `DynamicFeeParameters`: u16 + u128 + 3 × u16 + 2 × u32.
const DYNAMIC_FEE_LEN: usize = 2 + 16 + 3 * 2 + 2 * 4;

#[cfg(test)]
pub(super) const KNOWN: &[(u64, &str, &str)] = &[
    (SWAP, "gamma", "swap"),
    (SWAP2, "gamma", "swap2"),
    (
        DBC_SWAP2_WITH_TRANSFER_HOOK,
        "gamma_dbc",
        "swap2_with_transfer_hook",
    ),
    (
        DBC_INITIALIZE_SPL,
        "gamma_dbc",
        "initialize_virtual_pool_with_spl_token",
    ),
    (
        DBC_INITIALIZE_TOKEN2022,
        "gamma_dbc",
        "initialize_virtual_pool_with_token2022",
    ),
    (
        DBC_INITIALIZE_TOKEN2022_HOOK,
        "gamma_dbc",
        "initialize_virtual_pool_with_token2022_transfer_hook",
    ),
    (DBC_MIGRATION_DAMM_V2, "gamma_dbc", "migration_damm_v2"),
    (
        DBC_MIGRATE_METEORA_DAMM,
        "gamma_dbc",
        "migrate_meteora_damm",
    ),
    (DAMM_INITIALIZE_POOL, "gamma_damm_v2", "initialize_pool"),
    (
        DAMM_INITIALIZE_CUSTOMIZABLE_POOL,
        "gamma_damm_v2",
        "initialize_customizable_pool",
    ),
    (
        DAMM_INITIALIZE_POOL_WITH_DYNAMIC_CONFIG,
        "gamma_damm_v2",
        "initialize_pool_with_dynamic_config",
    ),
    (DAMM_ADD_LIQUIDITY, "gamma_damm_v2", "add_liquidity"),
    (DAMM_REMOVE_LIQUIDITY, "gamma_damm_v2", "remove_liquidity"),
    (
        DAMM_REMOVE_ALL_LIQUIDITY,
        "gamma_damm_v2",
        "remove_all_liquidity",
    ),
];

/// `(amount_in, minimum_amount_out)` of the two swap forms shared by both programs.
fn swap_amounts(discriminator: u64, arguments: &mut Arguments<'_>) -> Result<(u64, u64), DexError> {
    if discriminator == SWAP {
        let amount_in = arguments.u64("params.amount_in")?;
        let minimum_amount_out = arguments.u64("params.minimum_amount_out")?;
        return Ok((amount_in, minimum_amount_out));
    }
    let amount_0 = arguments.u64("params.amount_0")?;
    let amount_1 = arguments.u64("params.amount_1")?;
    match arguments.u8("params.swap_mode")? {
        // Exact in and partial fill: amount_0 is the input, amount_1 the minimum output.
        0 | 1 => Ok((amount_0, amount_1)),
        // Exact out: amount_0 is the output and amount_1 a maximum input, which the message's
        // fields cannot express; both stay unset and `raw_data` carries the amounts.
        2 => Ok((0, 0)),
        mode => Err(DexError::InvalidSwapMode { mode }),
    }
}

pub(super) fn decode_gamma_dbc(data: &[u8]) -> Result<DecodedCall<'_>, DexError> {
    let (discriminator, bytes) = split_discriminator(data)?;
    let mut arguments = Arguments::new(bytes);
    let call = match discriminator {
        SWAP | SWAP2 | DBC_SWAP2_WITH_TRANSFER_HOOK => {
            let onchain = match discriminator {
                SWAP => "swap",
                SWAP2 => "swap2",
                _ => "swap2_with_transfer_hook",
            };
            let kind = if discriminator == DBC_SWAP2_WITH_TRANSFER_HOOK {
                SWAP2
            } else {
                discriminator
            };
            let (amount_in, minimum_amount_out) = swap_amounts(kind, &mut arguments)?;
            DecodedCall::new(
                "swap",
                onchain,
                DecodedArgs::DbcSwap {
                    amount_in,
                    minimum_amount_out,
                },
            )
        }
        DBC_INITIALIZE_SPL | DBC_INITIALIZE_TOKEN2022 | DBC_INITIALIZE_TOKEN2022_HOOK => {
            let onchain = match discriminator {
                DBC_INITIALIZE_SPL => "initialize_virtual_pool_with_spl_token",
                DBC_INITIALIZE_TOKEN2022 => "initialize_virtual_pool_with_token2022",
                _ => "initialize_virtual_pool_with_token2022_transfer_hook",
            };
            // `InitializePoolParameters { name, symbol, uri }`: carried as its Borsh bytes.
            arguments.string("params.name")?;
            arguments.string("params.symbol")?;
            arguments.string("params.uri")?;
            let pool_config = arguments.consumed();
            DecodedCall::new(
                "initialize",
                onchain,
                DecodedArgs::DbcInitialize { pool_config },
            )
        }
        DBC_MIGRATION_DAMM_V2 => {
            DecodedCall::new("migrate", "migration_damm_v2", DecodedArgs::DbcMigrate)
        }
        DBC_MIGRATE_METEORA_DAMM => {
            return Err(DexError::Unmapped {
                instruction: "migrate_meteora_damm",
            });
        }
        discriminator => return Err(DexError::UnknownDiscriminator { discriminator }),
    };
    Ok(call)
}

pub(super) fn decode_gamma_damm_v2(data: &[u8]) -> Result<DecodedCall<'_>, DexError> {
    let (discriminator, bytes) = split_discriminator(data)?;
    let mut arguments = Arguments::new(bytes);
    let call = match discriminator {
        SWAP | SWAP2 => {
            let onchain = if discriminator == SWAP {
                "swap"
            } else {
                "swap2"
            };
            let (amount_in, minimum_amount_out) = swap_amounts(discriminator, &mut arguments)?;
            let args = DecodedArgs::DammV2Swap {
                amount_in,
                minimum_amount_out,
            };
            DecodedCall::new("swap", onchain, args)
        }
        DAMM_INITIALIZE_POOL => {
            arguments.u128("params.liquidity")?;
            arguments.u128("params.sqrt_price")?;
            optional_u64(&mut arguments, "params.activation_point")?;
            let config = arguments.consumed();
            DecodedCall::new(
                "create_pool",
                "initialize_pool",
                DecodedArgs::DammV2CreatePool { config },
            )
        }
        DAMM_INITIALIZE_CUSTOMIZABLE_POOL | DAMM_INITIALIZE_POOL_WITH_DYNAMIC_CONFIG => {
            let onchain = if discriminator == DAMM_INITIALIZE_CUSTOMIZABLE_POOL {
                "initialize_customizable_pool"
            } else {
                "initialize_pool_with_dynamic_config"
            };
            skip_customizable_pool_parameters(&mut arguments)?;
            let config = arguments.consumed();
            DecodedCall::new(
                "create_pool",
                onchain,
                DecodedArgs::DammV2CreatePool { config },
            )
        }
        DAMM_ADD_LIQUIDITY => {
            let liquidity_delta = arguments.u128("params.liquidity_delta")?;
            let args = DecodedArgs::DammV2AddLiquidity {
                min_lp_amount: saturate(liquidity_delta),
                max_token_a_amount: arguments.u64("params.token_a_amount_threshold")?,
                max_token_b_amount: arguments.u64("params.token_b_amount_threshold")?,
            };
            DecodedCall::new("add_liquidity", "add_liquidity", args)
        }
        DAMM_REMOVE_LIQUIDITY => {
            let liquidity_delta = arguments.u128("params.liquidity_delta")?;
            let args = DecodedArgs::DammV2RemoveLiquidity {
                lp_amount: saturate(liquidity_delta),
                min_token_a_amount: arguments.u64("params.token_a_amount_threshold")?,
                min_token_b_amount: arguments.u64("params.token_b_amount_threshold")?,
            };
            DecodedCall::new("remove_liquidity", "remove_liquidity", args)
        }
        DAMM_REMOVE_ALL_LIQUIDITY => {
            let args = DecodedArgs::DammV2RemoveLiquidity {
                lp_amount: 0,
                min_token_a_amount: arguments.u64("token_a_amount_threshold")?,
                min_token_b_amount: arguments.u64("token_b_amount_threshold")?,
            };
            DecodedCall::new("remove_liquidity", "remove_all_liquidity", args)
        }
        discriminator => return Err(DexError::UnknownDiscriminator { discriminator }),
    };
    Ok(call)
}

/// Walks `InitializeCustomizablePoolParameters`, checking every tag.
fn skip_customizable_pool_parameters(arguments: &mut Arguments<'_>) -> Result<(), DexError> {
    arguments.skip(BASE_FEE_LEN, "params.pool_fees.base_fee")?;
    arguments.u16("params.pool_fees.compounding_fee_bps")?;
    arguments.u8("params.pool_fees.padding")?;
    if arguments.option_tag("params.pool_fees.dynamic_fee")? {
        arguments.skip(DYNAMIC_FEE_LEN, "params.pool_fees.dynamic_fee")?;
    }
    arguments.u128("params.sqrt_min_price")?;
    arguments.u128("params.sqrt_max_price")?;
    arguments.bool("params.has_alpha_vault")?;
    arguments.u128("params.liquidity")?;
    arguments.u128("params.sqrt_price")?;
    arguments.u8("params.activation_type")?;
    arguments.u8("params.collect_fee_mode")?;
    optional_u64(arguments, "params.activation_point")?;
    Ok(())
}

fn optional_u64(arguments: &mut Arguments<'_>, argument: &'static str) -> Result<(), DexError> {
    if arguments.option_tag(argument)? {
        arguments.u64(argument)?;
    }
    Ok(())
}

/// Liquidity is a Q64 `u128`; the message field is `uint64`, so larger values saturate.
fn saturate(value: u128) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}
