//! Cross-origin requests (CORS) on the HTTP address, so that a web page on another origin can
//! call the JSON-RPC archive and the insights API as it can call a validator's RPC (which allows
//! any origin). A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an
//! allowed origin is answered here with 204, before authentication (browsers send no token on a
//! preflight); every other response to an allowed origin gets `Access-Control-Allow-Origin`.
//! A request from an origin not allowed passes on without CORS headers, so the browser refuses
//! to hand the answer to the page.

use std::sync::Arc;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpResponse, web};

/// The methods a preflight may ask for.
const ALLOWED_METHODS: &str = "GET, POST, OPTIONS";
/// Headers a page may send when the preflight does not list any.
const DEFAULT_ALLOWED_HEADERS: &str = "content-type, authorization, x-token";
/// How long a browser may cache a preflight's answer (seconds).
const PREFLIGHT_MAX_AGE: &str = "86400";

/// Which origins may call: any (`*`, the default), a list, or none (CORS off).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CorsPolicy {
    #[default]
    Any,
    /// Exact origins (`scheme://host[:port]`), compared ignoring ASCII case; empty = off.
    Only(Vec<String>),
}

impl CorsPolicy {
    /// From the configured list: `["*"]` is any origin, `[]` none.
    pub fn from_origins(origins: &[String]) -> Self {
        if origins.iter().any(|origin| origin == "*") {
            Self::Any
        } else {
            Self::Only(origins.to_vec())
        }
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, if it may call.
    fn allow(&self, origin: &HeaderValue) -> Option<HeaderValue> {
        match self {
            Self::Any => Some(HeaderValue::from_static("*")),
            Self::Only(list) => {
                let text = origin.to_str().ok()?;
                list.iter()
                    .any(|allowed| allowed.eq_ignore_ascii_case(text))
                    .then(|| origin.clone())
            }
        }
    }
}

/// Whether `request` is a CORS preflight.
fn is_preflight(request: &ServiceRequest) -> bool {
    request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// The 204 answer to an allowed preflight.
fn preflight(allow_origin: HeaderValue, request_headers: &HeaderMap) -> HttpResponse {
    let allowed_headers = request_headers
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or_else(|| HeaderValue::from_static(DEFAULT_ALLOWED_HEADERS));
    let mut response = HttpResponse::NoContent()
        .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, ALLOWED_METHODS))
        .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, allowed_headers))
        .insert_header((header::ACCESS_CONTROL_MAX_AGE, PREFLIGHT_MAX_AGE))
        .finish();
    stamp(response.headers_mut(), allow_origin);
    response
}

/// Writes the allow-origin header (and `Vary: Origin` when it depends on the origin).
fn stamp(headers: &mut HeaderMap, allow_origin: HeaderValue) {
    if allow_origin != "*" {
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow_origin);
    // A page may read the wait of a rate-limited answer.
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("retry-after"),
    );
}

/// actix middleware (`middleware::from_fn`), wrapped outside authentication; the policy is the
/// app's `web::Data<Arc<CorsPolicy>>` (none registered = CORS off).
pub async fn http_middleware(
    request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let allow_origin = request
        .headers()
        .get(header::ORIGIN)
        .zip(request.app_data::<web::Data<Arc<CorsPolicy>>>())
        .and_then(|(origin, policy)| policy.allow(origin));
    let Some(allow_origin) = allow_origin else {
        return Ok(next.call(request).await?.map_into_boxed_body());
    };
    if is_preflight(&request) {
        let response = preflight(allow_origin, request.headers());
        return Ok(request.into_response(response));
    }
    let mut response = next.call(request).await?.map_into_boxed_body();
    stamp(response.headers_mut(), allow_origin);
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_answers_star_and_a_list_echoes_its_members() {
        let origin = HeaderValue::from_static("https://app.example");
        assert_eq!(CorsPolicy::Any.allow(&origin).unwrap(), "*");
        let only = CorsPolicy::from_origins(&["HTTPS://app.example".to_owned()]);
        assert_eq!(only.allow(&origin).unwrap(), "https://app.example");
        let other = HeaderValue::from_static("https://evil.example");
        assert!(only.allow(&other).is_none());
        assert!(CorsPolicy::from_origins(&[]).allow(&origin).is_none());
        assert_eq!(CorsPolicy::from_origins(&["*".to_owned()]), CorsPolicy::Any);
    }
}
