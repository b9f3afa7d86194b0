//! Query-string parsing for the insights endpoints: percent-decoding, and typed parameters whose
//! errors name the parameter (`400 {"error":{"code","message"}}`).

/// A rejected parameter: which one and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadParameter {
    pub name: &'static str,
    pub reason: String,
}

impl BadParameter {
    pub fn new(name: &'static str, reason: impl Into<String>) -> Self {
        Self {
            name,
            reason: reason.into(),
        }
    }

    pub fn message(&self) -> String {
        format!("parameter `{}`: {}", self.name, self.reason)
    }
}

/// Most bytes of a query string considered.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;

/// The decoded `name=value` pairs of a query string, in order.
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    pub fn parse(query: &str) -> Result<Self, BadParameter> {
        if query.len() > MAX_QUERY_BYTES {
            return Err(BadParameter::new(
                "query",
                format!("longer than {MAX_QUERY_BYTES} bytes"),
            ));
        }
        let mut pairs = Vec::new();
        for part in query.split('&').filter(|part| !part.is_empty()) {
            let (name, value) = part.split_once('=').unwrap_or((part, ""));
            pairs.push((percent_decode(name), percent_decode(value)));
        }
        Ok(Self { pairs })
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// A required unsigned integer.
    pub fn u64(&self, name: &'static str) -> Result<u64, BadParameter> {
        let value = self
            .get(name)
            .ok_or_else(|| BadParameter::new(name, "required (an integer slot)"))?;
        value.parse().map_err(|_| {
            BadParameter::new(
                name,
                format!("`{}` is not an unsigned integer", shorten(value)),
            )
        })
    }

    /// A required base58 public key, returned in canonical form.
    pub fn key(&self, name: &'static str) -> Result<String, BadParameter> {
        let value = self
            .get(name)
            .ok_or_else(|| BadParameter::new(name, "required (a base58 public key)"))?;
        canonical_key(value).ok_or_else(|| {
            BadParameter::new(
                name,
                format!("`{}` is not a base58 32-byte public key", shorten(value)),
            )
        })
    }
}

/// `value` as canonical base58 of exactly 32 bytes, if it is one.
pub fn canonical_key(value: &str) -> Option<String> {
    if value.is_empty() || value.len() > 44 {
        return None;
    }
    let mut bytes = [0u8; 32];
    match bs58::decode(value).onto(&mut bytes[..]) {
        Ok(32) => Some(bs58::encode(bytes).into_string()),
        _ => None,
    }
}

/// At most 64 characters of `value` for an error message.
fn shorten(value: &str) -> String {
    let short: String = value.chars().take(64).collect();
    if short.len() < value.len() {
        format!("{short}…")
    } else {
        short
    }
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte; invalid escapes
/// stay as they are; invalid UTF-8 is replaced.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' if index + 2 < bytes.len() => {
                let hex = |byte: u8| (byte as char).to_digit(16);
                match (hex(bytes[index + 1]), hex(bytes[index + 2])) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        index += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("a%2Cb+c"), "a,b c");
        assert_eq!(percent_decode("%"), "%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%41"), "A");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("%ff"), "\u{fffd}");
    }

    #[test]
    fn parameters() {
        let query =
            Query::parse("from=5&to=x&wallet=11111111111111111111111111111111&from=9").unwrap();
        assert_eq!(query.u64("from"), Ok(5));
        assert_eq!(query.u64("to").unwrap_err().name, "to");
        assert_eq!(query.u64("missing").unwrap_err().name, "missing");
        assert_eq!(
            query.key("wallet").unwrap(),
            "11111111111111111111111111111111"
        );
        assert!(canonical_key("1111111111111111111111111111111").is_none());
        assert!(canonical_key("0OIl").is_none());
    }

    proptest! {
        #[test]
        fn never_panics(text in ".{0,200}") {
            if let Ok(query) = Query::parse(&text) {
                let _ = query.u64("from");
                let _ = query.key("wallet");
            }
        }

        #[test]
        fn decode_inverts_encode(text in "[ -~]{0,64}") {
            let encoded: String = text.bytes().map(|byte| format!("%{byte:02X}")).collect();
            prop_assert_eq!(percent_decode(&encoded), text);
        }
    }
}
