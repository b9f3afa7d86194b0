//! Base58 (Bitcoin alphabet) encoding for the JSON-RPC renderers: the same text as
//! `bs58::encode(bytes).into_string()`, about ten times fewer multiply steps.
//!
//! Base conversion is quadratic in the input length whichever way it is done; `bs58` converts one
//! input byte at a time into one base-58 digit per output byte. Here the input is consumed four
//! bytes at a time into limbs of base 58^5 (each limb holds five digits in a `u32`), so the inner
//! loop runs (n/4)·(n/7.3) times instead of n·(1.37·n): the difference matters for the hundreds
//! of bytes of event data that DEX programs pass to inner instructions, which the validator's
//! `json` encoding prints in base58. Leading zero bytes become leading `1`s, as in `bs58`.
//!
//! [`decode_fixed`] is the reverse for the keys and signatures of request parameters (the same
//! outcome as `bs58::decode(text).into_vec()` followed by a length check), five digits per step.

const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// 58^5: five base-58 digits per limb (fits a `u32`; limb·2^32 + carry fits a `u64`).
const LIMB: u64 = 58 * 58 * 58 * 58 * 58;
const DIGITS_PER_LIMB: usize = 5;

/// The base58 text of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    with_text(bytes, str::to_owned)
}

/// Appends the base58 text of `bytes` to `out`.
pub fn encode_into(bytes: &[u8], out: &mut String) {
    with_text(bytes, |text| out.push_str(text));
}

/// Longest input converted without a heap allocation (keys, signatures, hashes and most
/// instruction data are shorter).
const STACK_INPUT: usize = 80;
/// Limbs for [`STACK_INPUT`] bytes: 80 · 0.2731, rounded up, plus room for the last carry.
const STACK_LIMBS: usize = 24;
/// Characters for [`STACK_INPUT`] bytes: all zeros (80) or 24 limbs of five digits (120).
const STACK_TEXT: usize = STACK_LIMBS * DIGITS_PER_LIMB;

/// Calls `f` with the base58 text of `bytes` (held on the stack for inputs up to 80 bytes).
pub fn with_text<R>(bytes: &[u8], f: impl FnOnce(&str) -> R) -> R {
    if bytes.len() <= STACK_INPUT {
        let mut limbs = [0u32; STACK_LIMBS];
        let mut text = [0u8; STACK_TEXT];
        let len = convert(bytes, &mut limbs, &mut text);
        f(ascii(&text[..len]))
    } else {
        // log(256)/log(58^5) ≈ 0.2731 limbs per byte.
        let mut limbs = vec![0u32; bytes.len() * 2731 / 10_000 + 2];
        let mut text = vec![0u8; (limbs.len() * DIGITS_PER_LIMB).max(bytes.len())];
        let len = convert(bytes, &mut limbs, &mut text);
        f(ascii(&text[..len]))
    }
}

/// The alphabet is ASCII, so the text is always UTF-8.
fn ascii(text: &[u8]) -> &str {
    std::str::from_utf8(text).unwrap_or_default()
}

/// Writes the base58 text of `bytes` to the front of `text`; returns its length. `limbs` and
/// `text` must be large enough (see [`with_text`]).
fn convert(bytes: &[u8], limbs: &mut [u32], text: &mut [u8]) -> usize {
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    let rest = &bytes[zeros..];
    let head = rest.len() % 4;
    let (first, words) = rest.split_at(head);
    let mut used = 0usize;
    let mut feed = |value: u64, bits: u32| {
        let mut carry = push_word(value, bits, &mut limbs[..used]);
        while let Some(c) = carry {
            // c < 2^32 < 58^6: at most two new limbs.
            let c = u64::from(c);
            limbs[used] = (c % LIMB) as u32;
            used += 1;
            carry = (c >= LIMB).then_some((c / LIMB) as u32);
        }
    };
    if !first.is_empty() {
        let value = first.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        feed(value, 8 * head as u32);
    }
    for word in words.chunks_exact(4) {
        let value = u64::from(u32::from_be_bytes([word[0], word[1], word[2], word[3]]));
        feed(value, 32);
    }
    text[..zeros].fill(b'1');
    let mut len = zeros;
    let mut digits = [0u8; DIGITS_PER_LIMB];
    for (position, &limb) in limbs[..used].iter().rev().enumerate() {
        let mut value = limb;
        for digit in digits.iter_mut().rev() {
            *digit = ALPHABET[(value % 58) as usize];
            value /= 58;
        }
        // The most significant limb prints without its leading zero digits.
        let skip = if position == 0 {
            digits.iter().take_while(|&&d| d == b'1').count()
        } else {
            0
        };
        let part = &digits[skip..];
        text[len..len + part.len()].copy_from_slice(part);
        len += part.len();
    }
    len
}

/// A byte string that serializes as its base58 text, without a `String` per value.
#[derive(Debug, Clone, Copy)]
pub struct Base58<'a>(pub &'a [u8]);

impl serde::Serialize for Base58<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        with_text(self.0, |text| serializer.serialize_str(text))
    }
}

/// Why a text is not the base58 form of exactly `N` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// A character outside the alphabet.
    Invalid,
    /// Valid base58 of another length.
    WrongSize,
}

/// The value of each ASCII character in the alphabet, or 255.
const DIGIT_OF: [u8; 128] = {
    let mut table = [255u8; 128];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Decodes base58 `text` that must stand for exactly `N` bytes (leading `1`s are zero bytes).
/// An invalid character is reported before a wrong length, as `bs58` does.
pub fn decode_fixed<const N: usize>(text: &str) -> Result<[u8; N], DecodeError> {
    let mut heap = Vec::new();
    let mut stack = [0u8; 128];
    let digits: &mut [u8] = if text.len() <= stack.len() {
        &mut stack[..text.len()]
    } else {
        heap.resize(text.len(), 0);
        &mut heap
    };
    for (digit, &c) in digits.iter_mut().zip(text.as_bytes()) {
        *digit = *DIGIT_OF.get(usize::from(c)).ok_or(DecodeError::Invalid)?;
        if *digit == 255 {
            return Err(DecodeError::Invalid);
        }
    }
    let ones = digits.iter().take_while(|&&d| d == 0).count();
    if ones > N {
        return Err(DecodeError::WrongSize);
    }
    // Base 2^32 limbs, least significant first; room for N bytes and one limb of slack: a
    // number that needs more limbs is too long anyway.
    let mut limbs = [0u32; 64];
    let capacity = (N / 4 + 2).min(limbs.len());
    let mut used = 0usize;
    for chunk in digits[ones..].chunks(5) {
        let mut value = 0u64;
        let mut scale = 1u64;
        for &digit in chunk {
            value = value * 58 + u64::from(digit);
            scale *= 58;
        }
        let mut carry = value;
        for limb in &mut limbs[..used] {
            // limb < 2^32, scale ≤ 58^5 < 2^30, carry < 2^30: no overflow.
            let t = u64::from(*limb) * scale + carry;
            *limb = t as u32;
            carry = t >> 32;
        }
        while carry > 0 {
            if used == capacity {
                return Err(DecodeError::WrongSize);
            }
            limbs[used] = carry as u32;
            used += 1;
            carry >>= 32;
        }
    }
    let mut number = [0u8; 256];
    let width = used * 4;
    for (i, limb) in limbs[..used].iter().rev().enumerate() {
        number[i * 4..i * 4 + 4].copy_from_slice(&limb.to_be_bytes());
    }
    let significant = &number[..width];
    let lead = significant.iter().take_while(|&&b| b == 0).count();
    let significant = &significant[lead..];
    if ones + significant.len() != N {
        return Err(DecodeError::WrongSize);
    }
    let mut out = [0u8; N];
    out[ones..].copy_from_slice(significant);
    Ok(out)
}

/// Multiplies the number in `limbs` by 2^`bits` and adds `value` (< 2^`bits`); returns the
/// carry out of the top limb (< 2^32), if any.
#[inline]
fn push_word(value: u64, bits: u32, limbs: &mut [u32]) -> Option<u32> {
    let mut carry = value;
    for limb in limbs.iter_mut() {
        // limb < 58^5 < 2^30 and carry < 2^32: t < 58^5 · 2^32 < 2^62.
        let t = (u64::from(*limb) << bits) + carry;
        *limb = (t % LIMB) as u32;
        carry = t / LIMB;
    }
    (carry > 0).then_some(carry as u32)
}

/// The base58 text of `bytes` as `bs58` writes it (the parsers' and block fields' form).
pub fn b58(bytes: &[u8]) -> String {
    bs58::encode(bytes).into_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        assert_eq!(encode(&[]), "");
        assert_eq!(encode(&[0]), "1");
        assert_eq!(encode(&[0, 0, 1]), "112");
        assert_eq!(encode(&[57]), "z");
        assert_eq!(encode(&[58]), "21");
        assert_eq!(encode(b"hello world"), "StV1DL6CwTryKyV");
        assert_eq!(encode(&[0; 32]), "11111111111111111111111111111111");
        assert_eq!(
            encode(&[255; 32]),
            "JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFG"
        );
    }

    #[test]
    fn serializes_as_a_json_string() {
        let bytes = [7u8; 100];
        assert_eq!(
            serde_json::to_string(&Base58(&bytes)).unwrap(),
            format!("\"{}\"", bs58::encode(bytes).into_string())
        );
    }

    #[test]
    fn every_length_up_to_600_matches_bs58() {
        let mut rng = testkit::synth::Rng::new(3);
        for len in 0..600 {
            for zeros in [0, 1, 3] {
                let mut bytes = vec![0u8; len];
                rng.fill(&mut bytes);
                for b in bytes.iter_mut().take(zeros) {
                    *b = 0;
                }
                assert_eq!(
                    encode(&bytes),
                    bs58::encode(&bytes).into_string(),
                    "{len} bytes"
                );
            }
        }
    }

    fn decode_like_bs58<const N: usize>(text: &str) -> Result<[u8; N], DecodeError> {
        let bytes = bs58::decode(text)
            .into_vec()
            .map_err(|_| DecodeError::Invalid)?;
        bytes.try_into().map_err(|_| DecodeError::WrongSize)
    }

    #[test]
    fn decode_known_values() {
        assert_eq!(decode_fixed::<32>(&"1".repeat(32)), Ok([0; 32]));
        assert_eq!(decode_fixed::<32>("0OIl"), Err(DecodeError::Invalid));
        assert_eq!(decode_fixed::<32>("abc"), Err(DecodeError::WrongSize));
        assert_eq!(
            decode_fixed::<32>(&"1".repeat(45)),
            Err(DecodeError::WrongSize)
        );
        assert_eq!(decode_fixed::<64>("é"), Err(DecodeError::Invalid));
        assert_eq!(
            decode_fixed::<64>(&"z".repeat(300)),
            Err(DecodeError::WrongSize)
        );
        let key = [255u8; 32];
        assert_eq!(decode_fixed::<32>(&encode(&key)), Ok(key));
    }

    #[test]
    fn decode_every_shape_like_bs58() {
        let mut rng = testkit::synth::Rng::new(9);
        for len in 0..100 {
            for zeros in [0, 1, 5] {
                let mut bytes = vec![0u8; len];
                rng.fill(&mut bytes);
                for b in bytes.iter_mut().take(zeros) {
                    *b = 0;
                }
                let text = encode(&bytes);
                assert_eq!(
                    decode_fixed::<32>(&text),
                    decode_like_bs58::<32>(&text),
                    "{text}"
                );
                assert_eq!(
                    decode_fixed::<64>(&text),
                    decode_like_bs58::<64>(&text),
                    "{text}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn decode_matches_bs58(text in "[1-9A-HJ-NP-Za-km-z0OIl]{0,100}") {
            prop_assert_eq!(decode_fixed::<64>(&text), decode_like_bs58::<64>(&text));
            prop_assert_eq!(decode_fixed::<32>(&text), decode_like_bs58::<32>(&text));
        }

        #[test]
        fn decode_matches_bs58_near_the_sizes(bytes in proptest::collection::vec(any::<u8>(), 28..70)) {
            let text = encode(&bytes);
            prop_assert_eq!(decode_fixed::<64>(&text), decode_like_bs58::<64>(&text));
            prop_assert_eq!(decode_fixed::<32>(&text), decode_like_bs58::<32>(&text));
        }

        #[test]
        fn matches_bs58(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(encode(&bytes), bs58::encode(&bytes).into_string());
        }

        #[test]
        fn matches_bs58_with_small_values(
            zeros in 0usize..40,
            tail in proptest::collection::vec(0u8..3, 0..40),
        ) {
            let mut bytes = vec![0u8; zeros];
            bytes.extend(tail);
            prop_assert_eq!(encode(&bytes), bs58::encode(&bytes).into_string());
        }
    }
}
