//! The token-group and token-metadata interface instructions, which the validator tries on
//! token-program data that does not unpack as a token instruction. Both start with an 8-byte
//! discriminator (the first bytes of the SHA-256 of a fixed name); group payloads are fixed-size,
//! metadata payloads Borsh and must be consumed exactly.

use serde_json::{Value, json};

use super::reader::{Accounts, Reader};
use super::token_info::insert;
use super::typed as ix;

const INITIALIZE_GROUP: [u8; 8] = [121, 113, 108, 39, 54, 51, 0, 4];
const UPDATE_GROUP_MAX_SIZE: [u8; 8] = [108, 37, 171, 143, 248, 30, 18, 110];
const UPDATE_GROUP_AUTHORITY: [u8; 8] = [161, 105, 88, 1, 237, 221, 216, 203];
const INITIALIZE_MEMBER: [u8; 8] = [152, 32, 222, 176, 223, 237, 116, 134];
const INITIALIZE_METADATA: [u8; 8] = [210, 225, 30, 162, 88, 184, 77, 141];
const UPDATE_METADATA_FIELD: [u8; 8] = [221, 233, 49, 45, 181, 202, 220, 200];
const REMOVE_METADATA_KEY: [u8; 8] = [234, 18, 32, 56, 89, 141, 37, 181];
const UPDATE_METADATA_AUTHORITY: [u8; 8] = [215, 228, 166, 228, 84, 100, 86, 123];
const EMIT_METADATA: [u8; 8] = [250, 166, 180, 250, 13, 12, 184, 70];

/// A token-group instruction, or `None`.
pub fn group(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let (discriminator, rest) = data.split_first_chunk::<8>()?;
    let a = |i: usize| accounts.get(i);
    let mut r = Reader(rest);
    match *discriminator {
        INITIALIZE_GROUP if rest.len() == 40 => {
            let (update_authority, max_size) = (r.maybe_null_key()?, r.u64()?);
            accounts.need(3)?;
            Some(ix(
                "initializeTokenGroup",
                json!({"group": a(0)?, "maxSize": max_size, "mint": a(1)?,
                       "mintAuthority": a(2)?, "updateAuthority": update_authority}),
            ))
        }
        UPDATE_GROUP_MAX_SIZE if rest.len() == 8 => {
            let max_size = r.u64()?;
            accounts.need(2)?;
            Some(ix(
                "updateTokenGroupMaxSize",
                json!({"group": a(0)?, "maxSize": max_size, "updateAuthority": a(1)?}),
            ))
        }
        UPDATE_GROUP_AUTHORITY if rest.len() == 32 => {
            let new_authority = r.maybe_null_key()?;
            accounts.need(2)?;
            Some(ix(
                "updateTokenGroupAuthority",
                json!({"group": a(0)?, "updateAuthority": a(1)?,
                       "newAuthority": new_authority}),
            ))
        }
        INITIALIZE_MEMBER if rest.is_empty() => {
            accounts.need(5)?;
            Some(ix(
                "initializeTokenGroupMember",
                json!({"member": a(0)?, "memberMint": a(1)?, "memberMintAuthority": a(2)?,
                       "group": a(3)?, "groupUpdateAuthority": a(4)?}),
            ))
        }
        _ => None,
    }
}

/// A token-metadata instruction, or `None`.
pub fn metadata(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let (discriminator, rest) = data.split_first_chunk::<8>()?;
    let a = |i: usize| accounts.get(i);
    let mut r = Reader(rest);
    let parsed = match *discriminator {
        INITIALIZE_METADATA => {
            let (name, symbol, uri) = (r.borsh_string()?, r.borsh_string()?, r.borsh_string()?);
            r.finished()?;
            accounts.need(4)?;
            ix(
                "initializeTokenMetadata",
                json!({"metadata": a(0)?, "updateAuthority": a(1)?, "mint": a(2)?,
                       "mintAuthority": a(3)?, "name": name, "symbol": symbol, "uri": uri}),
            )
        }
        UPDATE_METADATA_FIELD => {
            let field = match r.u8()? {
                0 => "name".to_string(),
                1 => "symbol".to_string(),
                2 => "uri".to_string(),
                3 => r.borsh_string()?,
                _ => return None,
            };
            let value = r.borsh_string()?;
            r.finished()?;
            accounts.need(2)?;
            ix(
                "updateTokenMetadataField",
                json!({"metadata": a(0)?, "updateAuthority": a(1)?, "field": field,
                       "value": value}),
            )
        }
        REMOVE_METADATA_KEY => {
            let idempotent = r.bool()?;
            let key = r.borsh_string()?;
            r.finished()?;
            accounts.need(2)?;
            ix(
                "removeTokenMetadataKey",
                json!({"metadata": a(0)?, "updateAuthority": a(1)?, "key": key,
                       "idempotent": idempotent}),
            )
        }
        UPDATE_METADATA_AUTHORITY => {
            let new_authority = r.maybe_null_key()?;
            r.finished()?;
            accounts.need(2)?;
            ix(
                "updateTokenMetadataAuthority",
                json!({"metadata": a(0)?, "updateAuthority": a(1)?,
                       "newAuthority": new_authority}),
            )
        }
        EMIT_METADATA => {
            let (start, end) = (r.option_u64()?, r.option_u64()?);
            r.finished()?;
            accounts.need(1)?;
            let mut info = json!({"metadata": a(0)?});
            if let Some(start) = start {
                insert(&mut info, "start", json!(start));
            }
            if let Some(end) = end {
                insert(&mut info, "end", json!(end));
            }
            ix("emitTokenMetadata", info)
        }
        _ => return None,
    };
    Some(parsed)
}
