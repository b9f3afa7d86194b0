//! Leader public keys from their text or bytes (a leaf: `leader` and `epoch_leaders` both use it).

use ed25519_dalek::VerifyingKey;
use thiserror::Error;

/// A leader public key that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LeaderKeyError {
    #[error("leader key is not base58: {text}")]
    NotBase58 { text: String },
    #[error("leader key has {len} bytes, 32 expected")]
    WrongLength { len: usize },
    #[error("leader key is not a valid ed25519 point")]
    NotOnCurve,
}

/// Parses a base58 public key into a verifying key.
pub fn key_from_base58(text: &str) -> Result<VerifyingKey, LeaderKeyError> {
    let bytes = bs58::decode(text)
        .into_vec()
        .map_err(|_| LeaderKeyError::NotBase58 {
            text: text.to_owned(),
        })?;
    key_from_bytes(&bytes)
}

pub fn key_from_bytes(bytes: &[u8]) -> Result<VerifyingKey, LeaderKeyError> {
    let array: [u8; 32] = bytes
        .try_into()
        .map_err(|_| LeaderKeyError::WrongLength { len: bytes.len() })?;
    VerifyingKey::from_bytes(&array).map_err(|_| LeaderKeyError::NotOnCurve)
}
