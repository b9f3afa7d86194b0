//! Token amounts as decimal strings (the validator's `real_number_string_trimmed`), shared by
//! the metadata's token balances (`encode`) and the token parsers' `tokenAmount` (`parsed`).

/// `amount / 10^decimals` as a decimal string without trailing zeros or a trailing dot.
pub fn real_number_string_trimmed(amount: u64, decimals: u8) -> String {
    let digits = amount.to_string();
    let decimals = usize::from(decimals);
    if decimals == 0 {
        return digits;
    }
    let padded = if digits.len() <= decimals {
        format!("{}{digits}", "0".repeat(decimals + 1 - digits.len()))
    } else {
        digits
    };
    let (whole, fraction) = padded.split_at(padded.len() - decimals);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_amount_strings() {
        assert_eq!(real_number_string_trimmed(1_500_000, 6), "1.5");
        assert_eq!(real_number_string_trimmed(0, 6), "0");
        assert_eq!(real_number_string_trimmed(0, 0), "0");
        assert_eq!(real_number_string_trimmed(42, 0), "42");
        assert_eq!(real_number_string_trimmed(5, 3), "0.005");
        assert_eq!(real_number_string_trimmed(1_000, 3), "1");
        assert_eq!(real_number_string_trimmed(123_456_789, 4), "12345.6789");
    }
}
