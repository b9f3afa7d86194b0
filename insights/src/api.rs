//! The `/v1` HTTP routes (actix-web): handlers read the published window (pre-serialised
//! bodies) or the store (history); per-account fee estimates and wallet comparisons are computed
//! from the window's per-block statistics on request. Errors are JSON
//! `{"error":{"code","message"}}`: 400 naming the parameter, 404, 405, 503.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};

use super::figures::{FEE_LEVELS, fee_levels, fees_writing, wallet_figures};
use super::live::{Live, Shared};
use super::query::{BadParameter, Query, canonical_key};
use super::responses::{Comparison, FeeEstimate, error_body};
use front::http::HttpMount;

/// The OpenAPI document of these routes.
pub const OPENAPI: &str = include_str!("openapi.json");

/// What the handlers see: the shared state, or `None` when insights are disabled (no upstream).
#[derive(Clone)]
struct ApiState {
    shared: Option<Arc<Shared>>,
}

/// Registers `/v1` routes serving `shared`, or answering 503 when it is `None`.
pub fn mount(shared: Option<Arc<Shared>>) -> HttpMount {
    Arc::new(move |config: &mut web::ServiceConfig| {
        let state = ApiState {
            shared: shared.clone(),
        };
        config.service(
            web::scope("/v1")
                .app_data(web::Data::new(state))
                .service(get("/block50", block50))
                .service(get("/block50/history", history))
                .service(get("/block50/compare", compare))
                .service(get("/network/congestion", congestion))
                .service(get("/fees/estimate", fees))
                .service(get("/openapi.json", openapi))
                .default_service(web::to(not_found)),
        );
    })
}

fn get<F, Args>(path: &str, handler: F) -> actix_web::Resource
where
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    web::resource(path)
        .route(web::get().to(handler))
        .default_service(web::to(method_not_allowed))
}

fn json(status: StatusCode, body: impl Into<Bytes>) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("application/json")
        .body(body.into())
}

fn error(status: StatusCode, code: &str, message: &str) -> HttpResponse {
    json(status, error_body(code, message))
}

fn bad_parameter(code: &str, bad: &BadParameter) -> HttpResponse {
    error(StatusCode::BAD_REQUEST, code, &bad.message())
}

async fn not_found() -> HttpResponse {
    error(StatusCode::NOT_FOUND, "not_found", "no such path")
}

async fn method_not_allowed() -> HttpResponse {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "only GET is supported",
    )
}

async fn openapi() -> HttpResponse {
    json(StatusCode::OK, OPENAPI)
}

/// A request refused before any work: becomes an error response.
struct Refusal {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Refusal {
    fn respond(self) -> HttpResponse {
        error(self.status, self.code, &self.message)
    }
}

/// The shared state, or the 503 answer when insights are off.
fn enabled(state: &ApiState) -> Result<&Arc<Shared>, Refusal> {
    state.shared.as_ref().ok_or_else(|| Refusal {
        status: StatusCode::SERVICE_UNAVAILABLE,
        code: "insights_disabled",
        message: "insights are disabled: start `appliance run` with --upstream <URL>".into(),
    })
}

/// The full window, or the 503 answer while it is filling.
fn live(state: &ApiState) -> Result<Arc<Live>, Refusal> {
    let shared = enabled(state)?;
    shared.live().ok_or_else(|| Refusal {
        status: StatusCode::SERVICE_UNAVAILABLE,
        code: "window_not_full",
        message: format!(
            "the {}-block window is not filled yet; retry shortly",
            shared.limits.window_blocks
        ),
    })
}

fn parse(request: &HttpRequest, code: &'static str) -> Result<Query, Refusal> {
    Query::parse(request.query_string()).map_err(|bad| Refusal {
        status: StatusCode::BAD_REQUEST,
        code,
        message: bad.message(),
    })
}

async fn block50(state: web::Data<ApiState>) -> HttpResponse {
    match live(&state) {
        Ok(live) => json(StatusCode::OK, live.snapshot.clone()),
        Err(refusal) => refusal.respond(),
    }
}

async fn congestion(state: web::Data<ApiState>) -> HttpResponse {
    match live(&state) {
        Ok(live) => json(StatusCode::OK, live.congestion.clone()),
        Err(refusal) => refusal.respond(),
    }
}

async fn history(state: web::Data<ApiState>, request: HttpRequest) -> HttpResponse {
    let shared = match enabled(&state) {
        Ok(shared) => Arc::clone(shared),
        Err(refusal) => return refusal.respond(),
    };
    let code = "invalid_range";
    let query = match parse(&request, code) {
        Ok(query) => query,
        Err(refusal) => return refusal.respond(),
    };
    let (from, to) = match (query.u64("from"), query.u64("to")) {
        (Ok(from), Ok(to)) => (from, to),
        (Err(bad), _) | (_, Err(bad)) => return bad_parameter(code, &bad),
    };
    if from > to {
        return bad_parameter(
            code,
            &BadParameter::new("from", format!("{from} is greater than `to` ({to})")),
        );
    }
    let max = shared.limits.max_history;
    let found = web::block(move || shared.store.snapshots(from, to, max)).await;
    match found {
        Ok(Ok(Ok(snapshots))) => {
            let mut body =
                Vec::with_capacity(2 + snapshots.iter().map(|s| s.len() + 1).sum::<usize>());
            body.push(b'[');
            for (index, snapshot) in snapshots.iter().enumerate() {
                if index > 0 {
                    body.push(b',');
                }
                body.extend_from_slice(snapshot);
            }
            body.push(b']');
            json(StatusCode::OK, body)
        }
        Ok(Ok(Err(_))) => bad_parameter(
            code,
            &BadParameter::new(
                "to",
                format!("the range holds more than {max} snapshots; narrow it"),
            ),
        ),
        Ok(Err(failure)) => {
            tracing::warn!(error = %failure, "insights history read failed");
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "store_error",
                "the history store could not be read",
            )
        }
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "store_error",
            "the history read was cancelled",
        ),
    }
}

async fn fees(state: web::Data<ApiState>, request: HttpRequest) -> HttpResponse {
    let code = "invalid_parameter";
    let query = match parse(&request, code) {
        Ok(query) => query,
        Err(refusal) => return refusal.respond(),
    };
    let allowed = || FEE_LEVELS.map(|(name, _, _)| name).join(", ");
    let level_index = match query.get("level") {
        None => {
            return bad_parameter(
                code,
                &BadParameter::new("level", format!("required (one of {})", allowed())),
            );
        }
        Some(level) => match FEE_LEVELS.iter().position(|(name, _, _)| *name == level) {
            Some(index) => index,
            None => {
                return bad_parameter(
                    code,
                    &BadParameter::new("level", format!("must be one of {}", allowed())),
                );
            }
        },
    };
    let accounts = match query
        .get("accounts")
        .map(|list| parse_accounts(list, state.shared.as_ref()))
    {
        None => None,
        Some(Ok(accounts)) => Some(accounts),
        Some(Err(bad)) => return bad_parameter(code, &bad),
    };
    let live = match live(&state) {
        Ok(live) => live,
        Err(refusal) => return refusal.respond(),
    };
    let Some(accounts) = accounts else {
        return json(StatusCode::OK, live.fees[level_index].clone());
    };
    let sorted = fees_writing(&live.blocks, &accounts);
    let estimate = FeeEstimate::new(
        FEE_LEVELS[level_index].0,
        fee_levels(&sorted),
        sorted.len() as u64,
        live.figures.slot_range,
        &live.updated_at,
    );
    match estimate.and_then(|estimate| serde_json::to_vec(&estimate).ok()) {
        Some(body) => json(StatusCode::OK, body),
        None => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "fee estimate failed",
        ),
    }
}

fn parse_accounts(list: &str, shared: Option<&Arc<Shared>>) -> Result<Vec<String>, BadParameter> {
    let max = shared.map_or(32, |shared| shared.limits.max_fee_accounts);
    let mut accounts = Vec::new();
    for item in list.split(',') {
        if accounts.len() == max {
            return Err(BadParameter::new(
                "accounts",
                format!("at most {max} accounts"),
            ));
        }
        let key = canonical_key(item.trim()).ok_or_else(|| {
            BadParameter::new(
                "accounts",
                "a comma-separated list of base58 32-byte public keys",
            )
        })?;
        if !accounts.contains(&key) {
            accounts.push(key);
        }
    }
    Ok(accounts)
}

async fn compare(state: web::Data<ApiState>, request: HttpRequest) -> HttpResponse {
    let code = "invalid_parameter";
    let query = match parse(&request, code) {
        Ok(query) => query,
        Err(refusal) => return refusal.respond(),
    };
    let (wallet, against) = match (query.key("wallet"), query.key("against")) {
        (Ok(wallet), Ok(against)) => (wallet, against),
        (Err(bad), _) | (_, Err(bad)) => return bad_parameter(code, &bad),
    };
    let live = match live(&state) {
        Ok(live) => live,
        Err(refusal) => return refusal.respond(),
    };
    let comparison = Comparison {
        wallet: wallet_figures(&live.blocks, &wallet),
        against: wallet_figures(&live.blocks, &against),
        slot_range: live.figures.slot_range,
        updated_at: &live.updated_at,
    };
    match serde_json::to_vec(&comparison) {
        Ok(body) => json(StatusCode::OK, body),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "comparison failed",
        ),
    }
}
