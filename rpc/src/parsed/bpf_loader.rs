//! BPF loader instructions as the validator parses them: the v2 loader (`BPFLoader2111…`; the
//! validator does not parse the deprecated v1 loader) and the upgradeable loader (v3). Bincode
//! data: a `u32` variant tag, then the fields; trailing bytes are ignored. Written bytes print
//! in base64.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use super::reader::{Accounts, Reader};
use super::typed as ix;

/// A bincode `Vec<u8>`: u64 length, bytes.
fn bytes(r: &mut Reader<'_>) -> Option<String> {
    let len = usize::try_from(r.u64()?).ok()?;
    if len > r.0.len() {
        return None;
    }
    let (bytes, tail) = r.0.split_at(len);
    r.0 = tail;
    Some(BASE64.encode(bytes))
}

/// Parses a v2 loader instruction, or `None` (printed partially decoded).
pub fn parse_v2(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let mut r = Reader(data);
    let tag = r.u32()?;
    let write = match tag {
        0 => Some((r.u32()?, bytes(&mut r)?)),
        1 => None,
        _ => return None,
    };
    let account = accounts.get(0)?;
    Some(match write {
        Some((offset, bytes)) => ix(
            "write",
            json!({"offset": offset, "bytes": bytes, "account": account}),
        ),
        None => {
            accounts.need(2)?;
            ix("finalize", json!({"account": account}))
        }
    })
}

/// Parses an upgradeable loader instruction, or `None` (printed partially decoded).
pub fn parse_upgradeable(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let mut r = Reader(data);
    let tag = r.u32()?;
    // Decode the fields first: the validator refuses bad data before looking at the accounts.
    let (write, max_data_len, additional_bytes) = match tag {
        1 => (Some((r.u32()?, bytes(&mut r)?)), 0, 0),
        2 => (None, r.u64()?, 0),
        6 => (None, 0, r.u32()?),
        0 | 3 | 4 | 5 | 7 => (None, 0, 0),
        _ => return None,
    };
    if accounts.is_empty() {
        return None;
    }
    let a = |i: usize| accounts.get(i);
    let optional = |i: usize| json!(a(i));
    Some(match tag {
        0 => {
            let mut info = json!({"account": a(0)?});
            if let Some(authority) = a(1) {
                info.as_object_mut()?
                    .insert("authority".to_string(), json!(authority));
            }
            ix("initializeBuffer", info)
        }
        1 => {
            accounts.need(2)?;
            let (offset, bytes) = write?;
            ix(
                "write",
                json!({"offset": offset, "bytes": bytes, "account": a(0)?, "authority": a(1)?}),
            )
        }
        2 => {
            accounts.need(8)?;
            ix(
                "deployWithMaxDataLen",
                json!({"maxDataLen": max_data_len, "payerAccount": a(0)?,
                       "programDataAccount": a(1)?, "programAccount": a(2)?,
                       "bufferAccount": a(3)?, "rentSysvar": a(4)?, "clockSysvar": a(5)?,
                       "systemProgram": a(6)?, "authority": a(7)?}),
            )
        }
        3 => {
            accounts.need(7)?;
            ix(
                "upgrade",
                json!({"programDataAccount": a(0)?, "programAccount": a(1)?,
                       "bufferAccount": a(2)?, "spillAccount": a(3)?, "rentSysvar": a(4)?,
                       "clockSysvar": a(5)?, "authority": a(6)?}),
            )
        }
        4 => {
            accounts.need(2)?;
            ix(
                "setAuthority",
                json!({"account": a(0)?, "authority": a(1)?, "newAuthority": optional(2)}),
            )
        }
        5 => {
            accounts.need(3)?;
            ix(
                "close",
                json!({"account": a(0)?, "recipient": a(1)?, "authority": a(2)?,
                       "programAccount": optional(3)}),
            )
        }
        6 => {
            accounts.need(2)?;
            ix(
                "extendProgram",
                json!({"additionalBytes": additional_bytes, "programDataAccount": a(0)?,
                       "programAccount": a(1)?, "systemProgram": optional(2),
                       "payerAccount": optional(3)}),
            )
        }
        _ => {
            accounts.need(3)?;
            ix(
                "setAuthorityChecked",
                json!({"account": a(0)?, "authority": a(1)?, "newAuthority": a(2)?}),
            )
        }
    })
}
