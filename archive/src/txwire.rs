//! What the archive needs from a transaction's wire bytes: the first signature (the key of every
//! signature index), the static account keys, and the memo as the validator renders it for
//! getSignaturesForAddress. Parsing is the decoder crate's sanitizing parser; transactions it does
//! not accept (future formats) still yield their first signature.

use std::sync::LazyLock;

use decoder::program_ids;
use decoder::transaction::parse_transaction_exact;

use crate::error::FormatError;

/// The SPL Memo program ids whose top-level instructions form the `memo` field (v1, then v2/v3).
pub const MEMO_PROGRAM_IDS: [&str; 2] = [program_ids::MEMO_V1, program_ids::MEMO_V3];

fn decode_ids<const N: usize>(ids: [&str; N]) -> Vec<[u8; 32]> {
    ids.iter()
        .filter_map(|id| bs58::decode(id).into_vec().ok()?.try_into().ok())
        .collect()
}

static MEMO_KEYS: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_ids(MEMO_PROGRAM_IDS));
/// Sysvar accounts: the validator's long-term address index skips them.
static SYSVAR_KEYS: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| decode_ids(program_ids::SYSVARS));

/// Whether `key` is a sysvar account.
pub fn is_sysvar(key: &[u8; 32]) -> bool {
    SYSVAR_KEYS.contains(key)
}

/// The parts of a transaction the archive indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxSummary {
    pub first_signature: [u8; 64],
    /// Static account keys (empty when the message format is not understood).
    pub static_keys: Vec<[u8; 32]>,
    /// The validator's memo rendering, when a top-level instruction calls the Memo program.
    pub memo: Option<String>,
}

/// Reads only the first signature: compact-u16 count (at least 1), then 64 bytes.
pub fn first_signature(wire: &[u8]) -> Result<[u8; 64], FormatError> {
    let mut count: u32 = 0;
    let mut pos = 0;
    for i in 0..3 {
        let byte = *wire
            .get(i)
            .ok_or_else(|| FormatError::Transaction("empty signature count".into()))?;
        count |= u32::from(byte & 0x7f) << (7 * i);
        pos = i + 1;
        if byte & 0x80 == 0 {
            break;
        }
    }
    if count == 0 {
        return Err(FormatError::Transaction("no signatures".into()));
    }
    wire.get(pos..pos + 64)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| FormatError::Transaction("truncated signature".into()))
}

/// Summarises a transaction.
pub fn summarize(wire: &[u8]) -> Result<TxSummary, FormatError> {
    match parse_transaction_exact(wire) {
        Ok(view) => {
            let keys = view.static_account_keys();
            let mut memos: Vec<String> = Vec::new();
            for ix in view.instructions() {
                let Some(program) = keys.get(usize::from(ix.program_id_index)) else {
                    continue;
                };
                if MEMO_KEYS.contains(program) {
                    memos.push(render_memo(ix.data));
                }
            }
            Ok(TxSummary {
                first_signature: *view.first_signature(),
                static_keys: keys.to_vec(),
                memo: (!memos.is_empty()).then(|| memos.join("; ")),
            })
        }
        Err(_) => Ok(TxSummary {
            first_signature: first_signature(wire)?,
            static_keys: Vec::new(),
            memo: None,
        }),
    }
}

/// One memo as the validator renders it: `[<byte length>] <UTF-8 text>` or `(unparseable)`.
pub fn render_memo(data: &[u8]) -> String {
    match std::str::from_utf8(data) {
        Ok(text) => format!("[{}] {text}", data.len()),
        Err(_) => format!("[{}] (unparseable)", data.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_tables_decode() {
        assert_eq!(MEMO_KEYS.len(), 2);
        assert_eq!(SYSVAR_KEYS.len(), 12);
    }

    #[test]
    fn memo_rendering() {
        assert_eq!(render_memo(b"hi"), "[2] hi");
        assert_eq!(render_memo(&[0xff, 0xfe]), "[2] (unparseable)");
    }

    #[test]
    fn first_signature_of_garbage_is_an_error() {
        assert!(first_signature(&[]).is_err());
        assert!(first_signature(&[0]).is_err());
        assert!(first_signature(&[1, 2, 3]).is_err());
    }
}
