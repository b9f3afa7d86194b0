//! Token authentication (product decisions §A "Auth"): off when no token is configured; with
//! tokens, gRPC calls need metadata `x-token` and HTTP requests need header `x-token` or
//! `Authorization: Bearer <token>`; anything else gets `UNAUTHENTICATED` / HTTP 401.
//!
//! `/health` stays open so that load balancers and systemd probes need no secret; it reveals
//! nothing but liveness. So do the console's page and assets (`crate::console::is_public`: static
//! files, no data); its stats need a token like `/metrics`. Tokens are compared in constant time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{HttpResponse, web};

/// The accepted tokens; empty means authentication is off.
#[derive(Debug, Default)]
pub struct TokenSet {
    tokens: Vec<Vec<u8>>,
    /// Requests refused for a missing or wrong token (gRPC and HTTP).
    pub rejected: AtomicU64,
}

impl TokenSet {
    pub fn new(tokens: impl IntoIterator<Item = String>) -> Self {
        Self {
            tokens: tokens
                .into_iter()
                .map(String::into_bytes)
                .filter(|token| !token.is_empty())
                .collect(),
            rejected: AtomicU64::new(0),
        }
    }

    /// True when tokens are configured.
    pub fn enabled(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// Whether `presented` may pass (always, when authentication is off).
    pub fn admits(&self, presented: Option<&[u8]>) -> bool {
        if !self.enabled() {
            return true;
        }
        let admitted = presented.is_some_and(|presented| {
            // Compare against every token, without an early exit on the first match.
            self.tokens.iter().fold(false, |found, token| {
                found | constant_time_eq(token, presented)
            })
        });
        if !admitted {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
        admitted
    }

    /// The gRPC check: an interceptor for `tonic::service::InterceptorLayer`.
    pub fn grpc_interceptor(
        self: &Arc<Self>,
    ) -> impl FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Clone + use<>
    {
        let tokens = Arc::clone(self);
        move |request: tonic::Request<()>| {
            let presented = request
                .metadata()
                .get("x-token")
                .map(|value| value.as_bytes());
            if tokens.admits(presented) {
                Ok(request)
            } else {
                Err(tonic::Status::unauthenticated(
                    "missing or invalid x-token metadata",
                ))
            }
        }
    }
}

impl TokenSet {
    /// Prometheus text of the refusal counter.
    pub fn render_metrics(&self) -> String {
        let mut out = String::new();
        crate::exposition::single(
            &mut out,
            "appliance_auth_rejected_total",
            crate::exposition::Kind::Counter,
            Some("Requests refused for a missing or invalid token (gRPC and HTTP)."),
            self.rejected.load(Ordering::Relaxed),
        );
        out
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// The token an HTTP request presents: `x-token`, else `Authorization: Bearer <token>`.
fn presented_http_token(request: &ServiceRequest) -> Option<&[u8]> {
    let headers = request.headers();
    if let Some(token) = headers.get("x-token") {
        return Some(token.as_bytes());
    }
    headers
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|value| value.as_bytes().strip_prefix(b"Bearer "))
}

/// actix middleware (`middleware::from_fn`): 401 with a JSON body unless the request carries an
/// accepted token or asks for `/health` or the console's page.
pub async fn http_middleware(
    request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let admitted = request.path() == "/health"
        || crate::console::is_public(request.method(), request.path())
        || request
            .app_data::<web::Data<Arc<TokenSet>>>()
            .is_none_or(|tokens| tokens.admits(presented_http_token(&request)));
    if admitted {
        return Ok(next.call(request).await?.map_into_boxed_body());
    }
    let response = HttpResponse::Unauthorized()
        .content_type("application/json")
        .insert_header(("WWW-Authenticate", "Bearer"))
        .body(
            "{\"error\":{\"code\":\"unauthenticated\",\"message\":\"missing or invalid token: send header x-token or Authorization: Bearer <token>\"}}",
        );
    Ok(request.into_response(response))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_without_tokens() {
        let tokens = TokenSet::new(Vec::new());
        assert!(tokens.admits(None));
        assert!(tokens.admits(Some(b"anything")));
    }

    #[test]
    fn admits_only_configured_tokens() {
        let tokens = TokenSet::new(["alpha".to_owned(), "beta-token".to_owned()]);
        assert!(tokens.admits(Some(b"alpha")));
        assert!(tokens.admits(Some(b"beta-token")));
        assert!(!tokens.admits(Some(b"alph")));
        assert!(!tokens.admits(Some(b"alphaa")));
        assert!(!tokens.admits(Some(b"")));
        assert!(!tokens.admits(None));
        assert_eq!(tokens.rejected.load(Ordering::Relaxed), 4);
    }
}
