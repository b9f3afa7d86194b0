//! The JSON-RPC 2.0 envelope as the validator's library (jsonrpc-core) reads and writes it
//! (docs/archive-rpc.md §1): one request object or a batch array, calls, notifications and
//! invalid entries, and the response text with keys in `jsonrpc`, `result`/`error`, `id` order.
//!
//! Classification of one request object:
//! - **call**: keys only among `jsonrpc`, `method`, `params`, `id`; `method` a string; `id` null,
//!   an unsigned integer or a string; `params` absent, null, an array or an object; `jsonrpc`
//!   absent or `"2.0"`. Without `jsonrpc` the call is answered with -32600 "Unsupported JSON-RPC
//!   protocol version" and the response carries no `jsonrpc` key (the library's v1 rule).
//! - **notification**: the same without `id`; it gets no response entry.
//! - **invalid**: any other object (-32600 "Invalid request", echoing a usable `id`).
//!
//! Bodies that are not JSON, and single objects whose `id` has an unusable type, are -32700
//! "Parse error" with `id: null`. An empty batch `[]` is one -32600 error (JSON-RPC 2.0 text; the
//! validator's library reads `[]` as an invalid single call too). A batch entry that is not an
//! object is -32600 with `id: null` (JSON-RPC 2.0; the library would reject the whole batch).

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::RpcError;

/// A parsed request body.
#[derive(Debug)]
pub enum Body<'a> {
    Single(Entry<'a>),
    Batch(Vec<Entry<'a>>),
}

/// One request object of a body.
#[derive(Debug)]
pub enum Entry<'a> {
    Call(Call<'a>),
    /// No `id`: processed for nothing, answered with nothing.
    Notification,
    /// Not a request: answered -32600 with this id.
    Invalid {
        id: Value,
    },
}

/// One method call.
#[derive(Debug)]
pub struct Call<'a> {
    /// `"jsonrpc":"2.0"` was given (else the call is refused and the response omits `jsonrpc`).
    pub v2: bool,
    pub id: Value,
    pub method: String,
    pub params: Params,
    /// The call's own JSON text, forwarded unchanged when it is proxied.
    pub raw: &'a RawValue,
}

/// The `params` member.
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    None,
    Array(Vec<Value>),
    Map(Map<String, Value>),
}

/// Parses a body; `Err` is the whole-body answer (-32700, or -32600 for an empty batch).
pub fn parse_body(body: &[u8]) -> Result<Body<'_>, RpcError> {
    let raw: &RawValue = serde_json::from_slice(body).map_err(|_| RpcError::parse_error())?;
    let text = raw.get();
    if text.starts_with('[') {
        let items: Vec<&RawValue> =
            serde_json::from_str(text).map_err(|_| RpcError::parse_error())?;
        if items.is_empty() {
            return Err(RpcError::invalid_request());
        }
        let entries = items
            .into_iter()
            .map(|item| classify(item).unwrap_or(Entry::Invalid { id: Value::Null }))
            .collect();
        Ok(Body::Batch(entries))
    } else {
        classify(raw).map(Body::Single)
    }
}

/// Classifies one request object (see the module docs). `Err` only for a single object whose
/// `id` cannot be read (the library's parse failure).
fn classify(raw: &RawValue) -> Result<Entry<'_>, RpcError> {
    let value: Value = serde_json::from_str(raw.get()).map_err(|_| RpcError::parse_error())?;
    let Value::Object(mut object) = value else {
        return Err(RpcError::parse_error());
    };
    let id = object.get("id").cloned();
    let id_ok = id.as_ref().is_none_or(usable_id);
    let keys_ok = object
        .keys()
        .all(|key| matches!(key.as_str(), "jsonrpc" | "method" | "params" | "id"));
    let version = match object.get("jsonrpc") {
        None | Some(Value::Null) => Some(false),
        Some(Value::String(text)) if text == "2.0" => Some(true),
        Some(_) => None,
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Some(Params::None),
        Some(Value::Array(items)) => Some(Params::Array(items)),
        Some(Value::Object(map)) => Some(Params::Map(map)),
        Some(_) => None,
    };
    let method = match object.remove("method") {
        Some(Value::String(method)) => Some(method),
        _ => None,
    };
    match (keys_ok && id_ok, version, params, method) {
        (true, Some(v2), Some(params), Some(method)) => match id {
            Some(id) => Ok(Entry::Call(Call {
                v2,
                id,
                method,
                params,
                raw,
            })),
            None => Ok(Entry::Notification),
        },
        _ if id_ok => Ok(Entry::Invalid {
            id: id.unwrap_or(Value::Null),
        }),
        _ => Err(RpcError::parse_error()),
    }
}

/// Ids the library accepts: null, an unsigned integer, a string.
fn usable_id(id: &Value) -> bool {
    match id {
        Value::Null | Value::String(_) => true,
        Value::Number(number) => number.is_u64(),
        _ => false,
    }
}

/// Appends a success response: `{"jsonrpc":"2.0","result":<result>,"id":<id>}`.
pub fn write_result(out: &mut Vec<u8>, result: &[u8], id: &Value) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","result":"#);
    out.extend_from_slice(result);
    out.extend_from_slice(br#","id":"#);
    write_value(out, id);
    out.push(b'}');
}

/// Appends an error response; `v2: false` omits the `jsonrpc` key (answer to a v1-style call).
pub fn write_error(out: &mut Vec<u8>, error: &RpcError, id: &Value, v2: bool) {
    out.extend_from_slice(if v2 {
        br#"{"jsonrpc":"2.0","error":"#.as_slice()
    } else {
        br#"{"error":"#.as_slice()
    });
    // Serializing plain data into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, error);
    out.extend_from_slice(br#","id":"#);
    write_value(out, id);
    out.push(b'}');
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    let _ = serde_json::to_writer(&mut *out, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(body: &str) -> Entry<'_> {
        match parse_body(body.as_bytes()) {
            Ok(Body::Single(entry)) => entry,
            other => panic!("not a single entry: {other:?}"),
        }
    }

    #[test]
    fn a_call_keeps_its_id_params_and_raw_text() {
        let body =
            r#"{"jsonrpc":"2.0","id":7,"method":"getSlot","params":[{"commitment":"confirmed"}]}"#;
        let Entry::Call(call) = single(body) else {
            panic!("not a call")
        };
        assert!(call.v2);
        assert_eq!(call.id, Value::from(7));
        assert_eq!(call.method, "getSlot");
        assert_eq!(call.raw.get(), body);
        assert!(matches!(call.params, Params::Array(ref items) if items.len() == 1));
    }

    #[test]
    fn requests_that_are_not_calls() {
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","method":"getSlot"}"#),
            Entry::Notification
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":"a","method":"getSlot","extra":1}"#),
            Entry::Invalid { id } if id == "a"
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"1.0","id":3,"method":"getSlot"}"#),
            Entry::Invalid { id } if id == 3
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":3,"method":"getSlot","params":"x"}"#),
            Entry::Invalid { .. }
        ));
        let Entry::Call(call) = single(r#"{"id":1,"method":"getSlot"}"#) else {
            panic!("not a call")
        };
        assert!(!call.v2);
    }

    #[test]
    fn whole_body_errors() {
        let code = |body: &str| parse_body(body.as_bytes()).map(|_| ()).unwrap_err().code;
        assert_eq!(code("{"), -32700);
        assert_eq!(code("1"), -32700);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":-1,"method":"getSlot"}"#),
            -32700
        );
        assert_eq!(code("[]"), -32600);
    }

    #[test]
    fn batch_entries_are_classified_one_by_one() {
        let Ok(Body::Batch(entries)) = parse_body(
            br#"[{"jsonrpc":"2.0","id":1,"method":"getSlot"},5,{"jsonrpc":"2.0","method":"x"}]"#,
        ) else {
            panic!("not a batch")
        };
        assert!(matches!(entries[0], Entry::Call(_)));
        assert!(matches!(entries[1], Entry::Invalid { ref id } if id.is_null()));
        assert!(matches!(entries[2], Entry::Notification));
    }

    #[test]
    fn responses_keep_the_envelope_key_order() {
        let mut out = Vec::new();
        write_result(&mut out, b"42", &Value::from(1));
        assert_eq!(out, br#"{"jsonrpc":"2.0","result":42,"id":1}"#);
        out.clear();
        write_error(
            &mut out,
            &RpcError::method_not_found(),
            &Value::from("x"),
            true,
        );
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"x"}"#
        );
        out.clear();
        write_error(
            &mut out,
            &RpcError::unsupported_version(),
            &Value::Null,
            false,
        );
        assert_eq!(
            out,
            br#"{"error":{"code":-32600,"message":"Unsupported JSON-RPC protocol version"},"id":null}"#
        );
    }
}
