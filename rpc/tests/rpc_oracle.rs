//! TransactionError JSON checked against the Solana SDK as an oracle: every bincode encoding the
//! SDK's `TransactionError` accepts (each variant, each nested `InstructionError`, sample payloads,
//! and random bytes) must print exactly as serde_json prints the SDK value (which is what the
//! validator's `UiTransactionError` prints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use rpc::tx_error;
use solana_transaction_error::TransactionError;

/// Our JSON for `bytes`, and the oracle's when the SDK decodes them.
fn both(bytes: &[u8]) -> Option<(String, String)> {
    let oracle: TransactionError = bincode::deserialize(bytes).ok()?;
    // The SDK reads trailing bytes silently; so do we. Compare only exact-length encodings.
    if bincode::serialize(&oracle).ok()?.len() != bytes.len() {
        return None;
    }
    let ours = tx_error::decode(bytes).expect("the SDK decoded these bytes");
    Some((
        serde_json::to_string(&ours).unwrap(),
        serde_json::to_string(&oracle).unwrap(),
    ))
}

fn encode(tag: u32, payload: &[u8]) -> Vec<u8> {
    let mut bytes = tag.to_le_bytes().to_vec();
    bytes.extend_from_slice(payload);
    bytes
}

#[test]
fn every_transaction_error_variant_prints_like_the_sdk() {
    let mut compared = 0;
    for tag in 0..64u32 {
        for payload in [&[][..], &[7][..]] {
            if let Some((ours, oracle)) = both(&encode(tag, payload)) {
                assert_eq!(ours, oracle, "tag {tag}");
                compared += 1;
            }
        }
    }
    // 40 variants: 36 without payload, 3 with a u8 (InstructionError needs more, below).
    assert_eq!(compared, 39, "variants the SDK and we both know");
}

#[test]
fn every_instruction_error_variant_prints_like_the_sdk() {
    let mut compared = 0;
    for inner in 0..80u32 {
        let mut payload = vec![3u8];
        payload.extend_from_slice(&inner.to_le_bytes());
        if inner == 25 {
            payload.extend_from_slice(&6001u32.to_le_bytes());
        }
        if let Some((ours, oracle)) = both(&encode(8, &payload)) {
            assert_eq!(ours, oracle, "instruction error {inner}");
            compared += 1;
        }
    }
    assert_eq!(compared, 55, "InstructionError variants");
}

#[test]
fn known_tags_outside_the_sdk_are_printed_not_rejected() {
    // One past the SDK's last variant: the SDK refuses it, we print a generic form.
    assert!(bincode::deserialize::<TransactionError>(&encode(40, &[])).is_err());
    assert_eq!(
        serde_json::to_string(&tx_error::decode(&encode(40, &[])).unwrap()).unwrap(),
        r#"{"UnknownTransactionError":40}"#
    );
}

proptest! {
    #[test]
    fn random_error_bytes_never_panic_and_agree_with_the_sdk(
        tag in 0u32..45,
        body in proptest::collection::vec(any::<u8>(), 0..12),
    ) {
        let bytes = encode(tag, &body);
        let _ = tx_error::decode(&bytes);
        if let Some((ours, oracle)) = both(&bytes) {
            prop_assert_eq!(ours, oracle);
        }
    }
}
