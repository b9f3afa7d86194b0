//! Comparing JSON answers with expected figures: every expected field present and agreeing,
//! numbers to a relative 1e-9.

use serde_json::Value;

/// Asserts two JSON numbers agree to 1e-9 (relative), or two other values are equal.
pub fn assert_close(actual: &Value, expected: &Value, what: &str) {
    match (actual.as_f64(), expected.as_f64()) {
        (Some(a), Some(e)) => {
            let tolerance = 1e-9 * e.abs().max(1.0);
            assert!((a - e).abs() <= tolerance, "{what}: {a} != {e}");
        }
        _ => assert_eq!(actual, expected, "{what}"),
    }
}

/// Asserts every field of `expected` (recursively) is present in `actual` and agrees, numbers by
/// [`assert_close`]; arrays must have the same length.
pub fn assert_matches(actual: &Value, expected: &Value, what: &str) {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            for (key, value) in e {
                let inner = a
                    .get(key)
                    .unwrap_or_else(|| panic!("{what}: missing `{key}` in {actual}"));
                assert_matches(inner, value, &format!("{what}.{key}"));
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(a.len(), e.len(), "{what}: lengths differ");
            for (index, (a, e)) in a.iter().zip(e).enumerate() {
                assert_matches(a, e, &format!("{what}[{index}]"));
            }
        }
        _ => assert_close(actual, expected, what),
    }
}
