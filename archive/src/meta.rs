//! Transaction metadata and rewards payloads (format §2.5–2.6): zstd decompression with a size cap,
//! then the validator's protobuf `TransactionStatusMeta` / `Rewards` or the legacy bincode forms
//! (`StoredTransactionStatusMeta`, `Vec<StoredExtendedReward>`), converted to the protobuf types.
//! Empty metadata is "no metadata".

use std::cell::RefCell;
use std::io::Read;

use prost::Message;
use serde::{Deserialize, Deserializer};

use crate::error::FormatError;
use crate::proto;
use crate::txerror::TransactionError;

/// Largest decompressed payload accepted (beyond any real metadata or rewards blob).
pub const MAX_DECOMPRESSED: usize = 256 << 20;
/// The zstd frame magic.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

thread_local! {
    /// One decompression and one compression context per thread: creating a zstd context per
    /// payload costs more than decompressing a typical metadata blob.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
}

/// Decompresses `payload` if it is a zstd frame; other bytes are returned as they are (old
/// writers stored some blobs uncompressed).
pub fn decompress(payload: &[u8]) -> Result<Vec<u8>, FormatError> {
    if !payload.starts_with(&ZSTD_MAGIC) {
        return Ok(payload.to_vec());
    }
    // Fast path: the frame declares its size; a reused context decompresses in one call.
    if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(payload)
        && size <= MAX_DECOMPRESSED as u64
    {
        let fast = DECOMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = zstd::bulk::Decompressor::new().ok();
            }
            slot.as_mut()
                .and_then(|d| d.decompress(payload, size as usize).ok())
        });
        if let Some(out) = fast.filter(|out| out.len() as u64 == size) {
            return Ok(out);
        }
    }
    let decoder =
        zstd::stream::read::Decoder::new(payload).map_err(|e| FormatError::Zstd(e.to_string()))?;
    let mut out = Vec::with_capacity(payload.len().saturating_mul(4).min(1 << 20));
    decoder
        .take(MAX_DECOMPRESSED as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| FormatError::Zstd(e.to_string()))?;
    if out.len() > MAX_DECOMPRESSED {
        return Err(FormatError::TooLarge(MAX_DECOMPRESSED));
    }
    Ok(out)
}

/// Compresses a payload the way the archive writer does (zstd, fastest level).
pub fn compress(payload: &[u8]) -> Result<Vec<u8>, FormatError> {
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot =
                Some(zstd::bulk::Compressor::new(1).map_err(|e| FormatError::Zstd(e.to_string()))?);
        }
        match slot.as_mut() {
            Some(c) => c
                .compress(payload)
                .map_err(|e| FormatError::Zstd(e.to_string())),
            None => zstd::bulk::compress(payload, 1).map_err(|e| FormatError::Zstd(e.to_string())),
        }
    })
}

/// Decodes a reassembled metadata payload: `None` for an empty payload.
pub fn decode_metadata(
    payload: &[u8],
) -> Result<Option<proto::TransactionStatusMeta>, FormatError> {
    if payload.is_empty() {
        return Ok(None);
    }
    let raw = decompress(payload)?;
    decode_status_meta(&raw).map(Some)
}

/// Decodes decompressed metadata bytes, sniffing protobuf against legacy bincode (a bincode blob
/// starts with the status tag 0 or 1; a protobuf field tag byte never is 0 or 1).
pub fn decode_status_meta(raw: &[u8]) -> Result<proto::TransactionStatusMeta, FormatError> {
    let bincode_first = raw.first().is_some_and(|&b| b <= 1);
    let protobuf = || proto::TransactionStatusMeta::decode(raw).map_err(|e| e.to_string());
    let legacy = || decode_legacy_meta(raw);
    let first = if bincode_first { legacy() } else { protobuf() };
    match first {
        Ok(meta) => Ok(meta),
        Err(first_error) => {
            let fallback = if bincode_first { protobuf() } else { legacy() };
            fallback.map_err(|second_error| {
                FormatError::Metadata(format!("{first_error}; {second_error}"))
            })
        }
    }
}

/// The metadata fields the address index needs: the error and the loaded addresses.
#[derive(Clone, PartialEq, prost::Message)]
pub struct IndexFields {
    #[prost(message, optional, tag = "1")]
    pub err: Option<proto::TransactionError>,
    #[prost(bytes = "vec", repeated, tag = "12")]
    pub loaded_writable_addresses: Vec<Vec<u8>>,
    #[prost(bytes = "vec", repeated, tag = "13")]
    pub loaded_readonly_addresses: Vec<Vec<u8>>,
}

/// Decodes only [`IndexFields`] of a reassembled metadata payload (protobuf fields not needed are
/// skipped without allocation; legacy bincode is decoded fully). `None` for empty metadata.
pub fn decode_index_fields(payload: &[u8]) -> Result<Option<IndexFields>, FormatError> {
    if payload.is_empty() {
        return Ok(None);
    }
    let raw = decompress(payload)?;
    let bincode_first = raw.first().is_some_and(|&b| b <= 1);
    if !bincode_first && let Ok(fields) = IndexFields::decode(raw.as_slice()) {
        return Ok(Some(fields));
    }
    let meta = decode_status_meta(&raw)?;
    Ok(Some(IndexFields {
        err: meta.err,
        loaded_writable_addresses: meta.loaded_writable_addresses,
        loaded_readonly_addresses: meta.loaded_readonly_addresses,
    }))
}

/// Decodes a reassembled rewards payload (empty = no rewards).
pub fn decode_rewards(payload: &[u8]) -> Result<proto::Rewards, FormatError> {
    if payload.is_empty() {
        return Ok(proto::Rewards::default());
    }
    let raw = decompress(payload)?;
    if let Ok(rewards) = proto::Rewards::decode(raw.as_slice()) {
        return Ok(rewards);
    }
    if let Ok(stored) = bincode_options_deserialize::<Vec<StoredExtendedReward>>(&raw) {
        return Ok(proto::Rewards {
            rewards: stored.into_iter().map(Into::into).collect(),
            num_partitions: None,
        });
    }
    let oldest: Vec<OldestReward> =
        bincode_options_deserialize(&raw).map_err(|e| FormatError::Rewards(e.to_string()))?;
    Ok(proto::Rewards {
        rewards: oldest
            .into_iter()
            .map(|r| proto::Reward {
                pubkey: r.pubkey,
                lamports: r.lamports,
                ..proto::Reward::default()
            })
            .collect(),
        num_partitions: None,
    })
}

fn bincode_options_deserialize<T: for<'de> Deserialize<'de>>(
    raw: &[u8],
) -> Result<T, bincode::Error> {
    use bincode::Options;
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .allow_trailing_bytes()
        .with_limit(raw.len() as u64 * 8 + 4096)
        .deserialize(raw)
}

/// Decodes legacy bincode `StoredTransactionStatusMeta`.
pub fn decode_legacy_meta(raw: &[u8]) -> Result<proto::TransactionStatusMeta, String> {
    let stored: StoredTransactionStatusMeta =
        bincode_options_deserialize(raw).map_err(|e| format!("bincode: {e}"))?;
    Ok(stored.into())
}

/// Encodes legacy bincode metadata (for tests and for the writer's legacy mode).
pub fn encode_legacy_meta(meta: &StoredTransactionStatusMeta) -> Vec<u8> {
    bincode::serialize(meta).unwrap_or_default()
}

// ------------------------------------------------------------------------------------------------
// Legacy bincode shapes (field order = the validator's stored structs).
// ------------------------------------------------------------------------------------------------

/// A trailing field missing at the end of the blob takes its default (validator behaviour).
fn default_on_eof<'de, T, D>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    match T::deserialize(d) {
        Err(err) if err.to_string().contains("unexpected end of file") => Ok(T::default()),
        other => other,
    }
}

/// The validator's legacy stored status meta.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct StoredTransactionStatusMeta {
    pub status: Result<(), TransactionError>,
    pub fee: u64,
    pub pre_balances: Vec<u64>,
    pub post_balances: Vec<u64>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub inner_instructions: Option<Vec<StoredInnerInstructions>>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub log_messages: Option<Vec<String>>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub pre_token_balances: Option<Vec<StoredTokenBalance>>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub post_token_balances: Option<Vec<StoredTokenBalance>>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub rewards: Option<Vec<StoredExtendedReward>>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub return_data: Option<StoredReturnData>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub compute_units_consumed: Option<u64>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub cost_units: Option<u64>,
}

/// Inner instructions of one top-level instruction (pre-stack-height form).
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct StoredInnerInstructions {
    pub index: u8,
    pub instructions: Vec<StoredCompiledInstruction>,
}

/// `CompiledInstruction` (its byte lists use the compact-u16 "short_vec" length).
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct StoredCompiledInstruction {
    pub program_id_index: u8,
    #[serde(with = "short_vec")]
    pub accounts: Vec<u8>,
    #[serde(with = "short_vec")]
    pub data: Vec<u8>,
}

/// `StoredTransactionTokenBalance`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct StoredTokenBalance {
    pub account_index: u8,
    pub mint: String,
    pub ui_token_amount: StoredTokenAmount,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub owner: String,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub program_id: String,
}

/// `StoredTokenAmount`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct StoredTokenAmount {
    pub ui_amount: f64,
    pub decimals: u8,
    pub amount: String,
}

/// `StoredExtendedReward`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct StoredExtendedReward {
    pub pubkey: String,
    pub lamports: i64,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub post_balance: u64,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub reward_type: Option<StoredRewardType>,
    #[serde(deserialize_with = "default_on_eof", default)]
    pub commission: Option<u8>,
}

/// `RewardType` (bincode index 0 = Fee).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
pub enum StoredRewardType {
    Fee,
    Rent,
    Staking,
    Voting,
}

/// `TransactionReturnData`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct StoredReturnData {
    pub program_id: [u8; 32],
    pub data: Vec<u8>,
}

#[derive(Deserialize)]
struct OldestReward {
    pubkey: String,
    lamports: i64,
}

impl From<StoredExtendedReward> for proto::Reward {
    fn from(r: StoredExtendedReward) -> Self {
        let reward_type = match r.reward_type {
            None => proto::RewardType::Unspecified,
            Some(StoredRewardType::Fee) => proto::RewardType::Fee,
            Some(StoredRewardType::Rent) => proto::RewardType::Rent,
            Some(StoredRewardType::Staking) => proto::RewardType::Staking,
            Some(StoredRewardType::Voting) => proto::RewardType::Voting,
        };
        proto::Reward {
            pubkey: r.pubkey,
            lamports: r.lamports,
            post_balance: r.post_balance,
            reward_type: reward_type as i32,
            commission: r.commission.map(|c| c.to_string()).unwrap_or_default(),
        }
    }
}

/// The validator's `real_number_string_trimmed`: `amount / 10^decimals` without trailing zeros.
pub fn ui_amount_string(amount: &str, decimals: u8) -> String {
    let raw: u64 = amount.parse().unwrap_or(0);
    let decimals = usize::from(decimals);
    if decimals == 0 {
        return raw.to_string();
    }
    let digits = format!("{raw:0>width$}", width = decimals + 1);
    let (int, frac) = digits.split_at(digits.len() - decimals);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

impl From<StoredTokenBalance> for proto::TokenBalance {
    fn from(b: StoredTokenBalance) -> Self {
        let ui_amount_string =
            ui_amount_string(&b.ui_token_amount.amount, b.ui_token_amount.decimals);
        proto::TokenBalance {
            account_index: u32::from(b.account_index),
            mint: b.mint,
            ui_token_amount: Some(proto::UiTokenAmount {
                ui_amount: b.ui_token_amount.ui_amount,
                decimals: u32::from(b.ui_token_amount.decimals),
                amount: b.ui_token_amount.amount,
                ui_amount_string,
            }),
            owner: b.owner,
            program_id: b.program_id,
        }
    }
}

impl From<StoredTransactionStatusMeta> for proto::TransactionStatusMeta {
    fn from(m: StoredTransactionStatusMeta) -> Self {
        let err = m.status.err().map(|e| proto::TransactionError {
            err: e.to_bincode(),
        });
        let inner_instructions_none = m.inner_instructions.is_none();
        let log_messages_none = m.log_messages.is_none();
        let return_data_none = m.return_data.is_none();
        proto::TransactionStatusMeta {
            err,
            fee: m.fee,
            pre_balances: m.pre_balances,
            post_balances: m.post_balances,
            inner_instructions: m
                .inner_instructions
                .unwrap_or_default()
                .into_iter()
                .map(|inner| proto::InnerInstructions {
                    index: u32::from(inner.index),
                    instructions: inner
                        .instructions
                        .into_iter()
                        .map(|ix| proto::InnerInstruction {
                            program_id_index: u32::from(ix.program_id_index),
                            accounts: ix.accounts,
                            data: ix.data,
                            stack_height: None,
                        })
                        .collect(),
                })
                .collect(),
            inner_instructions_none,
            log_messages: m.log_messages.unwrap_or_default(),
            log_messages_none,
            pre_token_balances: m
                .pre_token_balances
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            post_token_balances: m
                .post_token_balances
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            rewards: m
                .rewards
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            loaded_writable_addresses: Vec::new(),
            loaded_readonly_addresses: Vec::new(),
            return_data: m.return_data.map(|r| proto::ReturnData {
                program_id: r.program_id.to_vec(),
                data: r.data,
            }),
            return_data_none,
            compute_units_consumed: m.compute_units_consumed,
            cost_units: m.cost_units,
        }
    }
}

/// serde adapter for the compact-u16 length prefix of `short_vec` byte lists.
mod short_vec {
    use std::fmt;

    use serde::de::{self, SeqAccess, Visitor};
    use serde::ser::SerializeTuple;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let len = u16::try_from(bytes.len())
            .map_err(|_| serde::ser::Error::custom("short_vec too long"))?;
        let mut prefix = Vec::with_capacity(3);
        let mut rem = len;
        loop {
            let mut byte = (rem & 0x7f) as u8;
            rem >>= 7;
            if rem != 0 {
                byte |= 0x80;
            }
            prefix.push(byte);
            if rem == 0 {
                break;
            }
        }
        let mut tuple = s.serialize_tuple(prefix.len() + bytes.len())?;
        for b in prefix.iter().chain(bytes) {
            tuple.serialize_element(b)?;
        }
        tuple.end()
    }

    struct ShortVecVisitor;

    impl<'de> Visitor<'de> for ShortVecVisitor {
        type Value = Vec<u8>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a compact-u16 length and bytes")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            let mut len: usize = 0;
            for i in 0..3 {
                let byte: u8 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::custom("short_vec length"))?;
                len |= usize::from(byte & 0x7f) << (7 * i);
                if byte & 0x80 == 0 {
                    break;
                }
                if i == 2 {
                    return Err(de::Error::custom("short_vec length too long"));
                }
            }
            let mut out = Vec::with_capacity(len.min(4096));
            for _ in 0..len {
                out.push(
                    seq.next_element()?
                        .ok_or_else(|| de::Error::custom("short_vec body"))?,
                );
            }
            Ok(out)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_tuple(usize::MAX, ShortVecVisitor)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::txerror::InstructionError;

    #[test]
    fn ui_amount_strings() {
        assert_eq!(ui_amount_string("1500000", 6), "1.5");
        assert_eq!(ui_amount_string("5", 9), "0.000000005");
        assert_eq!(ui_amount_string("1000", 3), "1");
        assert_eq!(ui_amount_string("42", 0), "42");
    }

    #[test]
    fn legacy_bincode_meta_by_hand() {
        // Err(InstructionError(0, Custom(1))), fee 5000, pre [10], post [9], then EOF: every
        // trailing field takes its default. Bytes laid out by hand per format §2.5.
        let mut raw = vec![1, 0, 0, 0, 8, 0, 0, 0, 0, 25, 0, 0, 0, 1, 0, 0, 0];
        raw.extend_from_slice(&5000u64.to_le_bytes());
        raw.extend_from_slice(&1u64.to_le_bytes());
        raw.extend_from_slice(&10u64.to_le_bytes());
        raw.extend_from_slice(&1u64.to_le_bytes());
        raw.extend_from_slice(&9u64.to_le_bytes());
        let meta = decode_status_meta(&raw).unwrap();
        assert_eq!(meta.fee, 5000);
        assert_eq!(meta.pre_balances, vec![10]);
        assert_eq!(meta.post_balances, vec![9]);
        let err = TransactionError::from_bincode(&meta.err.unwrap().err).unwrap();
        assert_eq!(
            err,
            TransactionError::InstructionError(0, InstructionError::Custom(1))
        );
        assert!(meta.log_messages_none && meta.inner_instructions_none);
        // With log messages present: Some(["hi"]).
        raw.push(0); // inner_instructions: None
        raw.push(1);
        raw.extend_from_slice(&1u64.to_le_bytes());
        raw.extend_from_slice(&2u64.to_le_bytes());
        raw.extend_from_slice(b"hi");
        let meta = decode_metadata(&compress(&raw).unwrap()).unwrap().unwrap();
        assert_eq!(meta.log_messages, vec!["hi".to_string()]);
        assert!(!meta.log_messages_none && meta.inner_instructions_none);
    }

    #[test]
    fn protobuf_meta_and_empty() {
        let meta = proto::TransactionStatusMeta {
            fee: 5000,
            log_messages: vec!["Program log: x".into()],
            ..Default::default()
        };
        let payload = compress(&meta.encode_to_vec()).unwrap();
        assert_eq!(decode_metadata(&payload).unwrap(), Some(meta));
        assert_eq!(decode_metadata(&[]).unwrap(), None);
    }

    #[test]
    fn index_fields_match_the_full_decode() {
        let meta = proto::TransactionStatusMeta {
            err: Some(proto::TransactionError {
                err: vec![7, 0, 0, 0],
            }),
            fee: 5000,
            log_messages: vec!["Program log: x".into()],
            loaded_writable_addresses: vec![vec![1; 32]],
            loaded_readonly_addresses: vec![vec![2; 32], vec![3; 32]],
            ..Default::default()
        };
        let payload = compress(&meta.encode_to_vec()).unwrap();
        let fields = decode_index_fields(&payload).unwrap().unwrap();
        assert_eq!(fields.err, meta.err);
        assert_eq!(
            fields.loaded_writable_addresses,
            meta.loaded_writable_addresses
        );
        assert_eq!(
            fields.loaded_readonly_addresses,
            meta.loaded_readonly_addresses
        );
        assert_eq!(decode_index_fields(&[]).unwrap(), None);
        // Legacy bincode (Ok status, fee 1, no balances) goes through the full decoder.
        let mut raw = vec![0, 0, 0, 0];
        raw.extend_from_slice(&1u64.to_le_bytes());
        raw.extend_from_slice(&[0; 16]);
        let fields = decode_index_fields(&compress(&raw).unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(fields.err, None);
    }

    #[test]
    fn compiled_instruction_short_vec() {
        let ix = StoredCompiledInstruction {
            program_id_index: 2,
            accounts: vec![0, 1],
            data: vec![7; 200],
        };
        let bytes = bincode::serialize(&ix).unwrap();
        // u8 index, compact-u16 2, two bytes, compact-u16 200 = c8 01, 200 bytes.
        assert_eq!(&bytes[..6], &[2, 2, 0, 1, 0xc8, 0x01]);
        assert_eq!(bytes.len(), 6 + 200);
        let back: StoredCompiledInstruction = bincode::deserialize(&bytes).unwrap();
        assert_eq!(back, ix);
    }
}
