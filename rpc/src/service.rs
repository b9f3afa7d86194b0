//! The HTTP side of the JSON-RPC archive: `POST /` takes a JSON-RPC body (one call or a batch),
//! charges the client's token bucket one token per call, answers archive calls locally and routes
//! the rest to the upstream validator (docs/decisions.md §B):
//!
//! ```text
//! body ─ envelope::parse_body ─► calls ─ rate limit (1 token per call) ─┐
//!   getBlock/getBlockTime: slot held? ─ yes ─► archive   no ─► upstream │
//!   getTransaction: archive (newest epoch first) ─ miss ─► upstream     │
//!   getSignaturesForAddress: upstream (newest) then archive, merged     │
//!     (the archive part stops at an epoch without an address index)    │
//!   getSlot: the archive's newest slot                                  │
//!   any other method ─► upstream, untouched                             │
//! ```
//! A single call, or a batch, that goes to the upstream as a whole is forwarded byte for byte and
//! its answer (status, content type, body) returned byte for byte. In a mixed batch each
//! forwarded call's own text is posted and its answer spliced in at its place.
//!
//! Transport rules: bodies over 50 KiB get HTTP 413, other verbs 405, a non-JSON content type 415;
//! over the rate limit HTTP 429 with `Retry-After` (whole seconds, at least 1) and the -32429
//! JSON-RPC error. A batch is always answered as an array: the calls the bucket pays for are
//! served in order, each of the rest gets the -32429 error object (HTTP 200 when any was served,
//! 429 when none was; `Retry-After` either way).
//!
//! The merged getSignaturesForAddress (upstream rows, then the archive's continuation) is in
//! [`merged`].

mod merged;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Instant;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use archive::ArchiveStore;
use bytes::Bytes;
use serde_json::Value;

use super::envelope::{self, Body, Call, Entry};
use super::error::{self, RpcError};
use super::methods::{self, BlockLookup, MethodSettings, NotHere, Outcome};
use super::metrics::{CallOutcome, RpcMetrics};
use super::params::{self, GetBlock};
use super::rate_limit::{RateLimiter, Verdict};
use super::upstream::{Upstream, UpstreamConfig, UpstreamResponse};

/// Largest request body (the validator's limit).
pub const MAX_BODY_BYTES: usize = 50 * 1024;

/// What the frontend shares across workers.
pub struct Shared {
    pub store: Arc<dyn ArchiveStore>,
    pub limiter: RateLimiter,
    pub metrics: RpcMetrics,
    pub settings: MethodSettings,
}

/// One worker's state: the shared part and this worker's upstream client.
pub struct Frontend {
    shared: Arc<Shared>,
    upstream: Option<Upstream>,
}

impl Frontend {
    pub fn new(shared: Arc<Shared>, upstream: Option<&UpstreamConfig>) -> Self {
        Self {
            shared,
            upstream: upstream.cloned().map(Upstream::new),
        }
    }
}

/// Registers `POST /` (and 405 for other verbs on `/`).
pub fn configure(config: &mut web::ServiceConfig, frontend: Frontend) {
    config
        .app_data(web::Data::new(frontend))
        .app_data(web::PayloadConfig::new(MAX_BODY_BYTES))
        .service(
            web::resource("/")
                .route(web::post().to(handle))
                .default_service(web::to(method_not_allowed)),
        );
}

pub(crate) async fn method_not_allowed() -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, "POST"))
        .content_type("application/json")
        .body(r#"{"error":{"code":"method_not_allowed","message":"the JSON-RPC endpoint takes POST"}}"#)
}

fn json_response(status: StatusCode, body: Vec<u8>) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("application/json; charset=utf-8")
        .body(body)
}

fn single_error(error: &RpcError) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    envelope::write_error(&mut out, error, &Value::Null, true);
    out
}

/// `POST /`: counts the request and its latency around [`answer`].
async fn handle(
    request: HttpRequest,
    body: web::Bytes,
    frontend: web::Data<Frontend>,
) -> HttpResponse {
    let started = Instant::now();
    frontend.shared.metrics.count_http_request();
    let response = answer(&request, &body, &frontend).await;
    frontend.shared.metrics.latency.record(started.elapsed());
    response
}

async fn answer(request: &HttpRequest, body: &web::Bytes, frontend: &Frontend) -> HttpResponse {
    let shared = &frontend.shared;
    if !is_json(request) {
        return HttpResponse::UnsupportedMediaType()
            .content_type("application/json")
            .body(r#"{"error":{"code":"unsupported_media_type","message":"Content-Type must be application/json"}}"#);
    }
    let client = request
        .peer_addr()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |address| address.ip());
    let parsed = envelope::parse_body(body);
    let now = Instant::now();
    let entries = match parsed {
        Ok(Body::Batch(entries)) => entries,
        Ok(Body::Single(entry)) => {
            return match shared.limiter.check(client, 1, now) {
                Verdict::Allowed => frontend.single(entry, body).await,
                verdict => rate_limited(retry_after_secs(verdict)),
            };
        }
        Err(error) => {
            return match shared.limiter.check(client, 1, now) {
                Verdict::Allowed => json_response(StatusCode::OK, single_error(&error)),
                verdict => rate_limited(retry_after_secs(verdict)),
            };
        }
    };
    let cost = u32::try_from(entries.len()).unwrap_or(u32::MAX);
    let grant = shared.limiter.take_up_to(client, cost, now);
    let refused = match grant.verdict {
        Verdict::Allowed => None,
        verdict => Some(retry_after_secs(verdict)),
    };
    frontend
        .batch(entries, grant.granted as usize, refused, body)
        .await
}

/// `Retry-After` for a refusal: whole seconds, at least 1.
fn retry_after_secs(verdict: Verdict) -> u64 {
    match verdict {
        Verdict::Limited { retry_after } => retry_after.as_secs_f64().ceil().max(1.0) as u64,
        Verdict::Allowed | Verdict::TableFull => 1,
    }
}

fn rate_limited(retry_after_secs: u64) -> HttpResponse {
    HttpResponse::TooManyRequests()
        .insert_header((header::RETRY_AFTER, retry_after_secs.to_string()))
        .content_type("application/json; charset=utf-8")
        .body(single_error(&RpcError::rate_limited()))
}

fn is_json(request: &HttpRequest) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// Where one entry's answer comes from.
enum Answer {
    /// A complete response object (our own or the upstream's text).
    Text(Vec<u8>),
    /// Forward this call's text to the upstream.
    Forward,
    /// No response (a notification).
    Nothing,
}

fn upstream_response(response: UpstreamResponse) -> HttpResponse {
    let mut builder = HttpResponse::build(
        StatusCode::from_u16(response.status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY),
    );
    if let Some(value) = response
        .content_type
        .and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok())
    {
        builder.insert_header((header::CONTENT_TYPE, value));
    }
    builder.body(response.body)
}

impl Frontend {
    async fn single(&self, entry: Entry<'_>, body: &Bytes) -> HttpResponse {
        match self.answer(entry).await {
            Answer::Text(text) => json_response(StatusCode::OK, text),
            Answer::Nothing => HttpResponse::Ok().finish(),
            Answer::Forward => match &self.upstream {
                Some(upstream) => match upstream.post(body.clone()).await {
                    Ok(response) => upstream_response(response),
                    Err(error) => {
                        self.shared.metrics.count_upstream_failure();
                        tracing::warn!(%error, label = error.label(), "upstream call failed");
                        json_response(
                            StatusCode::BAD_GATEWAY,
                            single_error(&RpcError::upstream_failed(&error.to_string())),
                        )
                    }
                },
                None => json_response(StatusCode::OK, single_error(&RpcError::internal())),
            },
        }
    }

    /// Answers a batch whose first `granted` entries the rate limit paid for; the rest each get
    /// the -32429 error object. `refused` is the `Retry-After` when any entry was refused.
    async fn batch(
        &self,
        entries: Vec<Entry<'_>>,
        granted: usize,
        refused: Option<u64>,
        body: &Bytes,
    ) -> HttpResponse {
        let mut answers = Vec::with_capacity(entries.len());
        let mut forwards = Vec::new();
        for (index, entry) in entries.into_iter().enumerate() {
            if index >= granted {
                answers.push(rate_limited_entry(entry));
                continue;
            }
            let raw = match &entry {
                Entry::Call(call) => Some((call.raw.get().to_string(), call.id.clone())),
                _ => None,
            };
            let answer = self.answer(entry).await;
            if let (Answer::Forward, Some(raw)) = (&answer, raw) {
                forwards.push((answers.len(), raw));
            }
            answers.push(answer);
        }
        let forwarded_all = refused.is_none()
            && !forwards.is_empty()
            && answers
                .iter()
                .all(|a| matches!(a, Answer::Forward | Answer::Nothing));
        if let (true, Some(upstream)) = (forwarded_all, &self.upstream) {
            // The whole batch is the upstream's: pass it through untouched.
            return match upstream.post(body.clone()).await {
                Ok(response) => upstream_response(response),
                Err(error) => {
                    self.shared.metrics.count_upstream_failure();
                    json_response(
                        StatusCode::BAD_GATEWAY,
                        single_error(&RpcError::upstream_failed(&error.to_string())),
                    )
                }
            };
        }
        let replies = futures_util::future::join_all(
            forwards
                .iter()
                .map(|(_, (raw, id))| self.forward_call(raw, id)),
        )
        .await;
        for ((index, _), reply) in forwards.iter().zip(replies) {
            answers[*index] = Answer::Text(reply);
        }
        let mut out = Vec::with_capacity(256);
        out.push(b'[');
        let mut first = true;
        for answer in answers {
            if let Answer::Text(text) = answer {
                if !first {
                    out.push(b',');
                }
                first = false;
                out.extend_from_slice(&text);
            }
        }
        out.push(b']');
        if first {
            // Only notifications: no response entries, no body.
            return HttpResponse::Ok().finish();
        }
        match refused {
            None => json_response(StatusCode::OK, out),
            Some(retry_after) => {
                // Nothing served: the client should wait (HTTP 429); something served: the
                // answers are good (HTTP 200), the refused calls say so each.
                let status = if granted == 0 {
                    StatusCode::TOO_MANY_REQUESTS
                } else {
                    StatusCode::OK
                };
                let mut response = json_response(status, out);
                if let Ok(value) = HeaderValue::from_str(&retry_after.to_string()) {
                    response.headers_mut().insert(header::RETRY_AFTER, value);
                }
                response
            }
        }
    }

    /// Posts one call's text upstream; the answer's text, or an error object with the call's id.
    async fn forward_call(&self, raw: &str, id: &Value) -> Vec<u8> {
        let Some(upstream) = &self.upstream else {
            let mut out = Vec::new();
            envelope::write_error(&mut out, &RpcError::internal(), id, true);
            return out;
        };
        match upstream.post(Bytes::copy_from_slice(raw.as_bytes())).await {
            Ok(response)
                if serde_json::from_slice::<&serde_json::value::RawValue>(&response.body)
                    .is_ok() =>
            {
                response.body.to_vec()
            }
            Ok(response) => {
                self.shared.metrics.count_upstream_failure();
                let mut out = Vec::new();
                let reason = format!("HTTP {} without a JSON body", response.status);
                envelope::write_error(&mut out, &RpcError::upstream_failed(&reason), id, true);
                out
            }
            Err(error) => {
                self.shared.metrics.count_upstream_failure();
                let mut out = Vec::new();
                envelope::write_error(
                    &mut out,
                    &RpcError::upstream_failed(&error.to_string()),
                    id,
                    true,
                );
                out
            }
        }
    }

    /// Answers one entry of a body.
    async fn answer(&self, entry: Entry<'_>) -> Answer {
        let call = match entry {
            Entry::Notification => return Answer::Nothing,
            Entry::Invalid { id } => {
                self.shared
                    .metrics
                    .count_call("other", CallOutcome::Rejected);
                let mut out = Vec::new();
                envelope::write_error(&mut out, &RpcError::invalid_request(), &id, true);
                return Answer::Text(out);
            }
            Entry::Call(call) => call,
        };
        if !call.v2 {
            self.shared
                .metrics
                .count_call(&call.method, CallOutcome::Rejected);
            let mut out = Vec::new();
            envelope::write_error(&mut out, &RpcError::unsupported_version(), &call.id, false);
            return Answer::Text(out);
        }
        let outcome = self.dispatch(&call).await;
        let metrics = &self.shared.metrics;
        let mut out = Vec::with_capacity(512);
        match outcome {
            Dispatched::Local(Outcome::Result(result)) => {
                metrics.count_call(&call.method, CallOutcome::Local);
                envelope::write_result(&mut out, &result, &call.id);
            }
            Dispatched::Local(Outcome::Error(error)) => {
                metrics.count_call(&call.method, CallOutcome::Local);
                if error.code == error::LONG_TERM_STORAGE_UNREACHABLE {
                    metrics.count_store_error();
                }
                envelope::write_error(&mut out, &error, &call.id, true);
            }
            Dispatched::Local(Outcome::Upstream(not_here)) => match self.upstream {
                Some(_) => {
                    metrics.count_call(&call.method, CallOutcome::Proxied);
                    return Answer::Forward;
                }
                None => {
                    metrics.count_call(&call.method, CallOutcome::Local);
                    return answer_not_here(not_here, &call);
                }
            },
            Dispatched::Rejected(error) => {
                metrics.count_call(&call.method, CallOutcome::Rejected);
                envelope::write_error(&mut out, &error, &call.id, true);
            }
            Dispatched::Forward => {
                metrics.count_call(&call.method, CallOutcome::Proxied);
                return Answer::Forward;
            }
            Dispatched::Merged(text) => {
                metrics.count_call(&call.method, CallOutcome::Proxied);
                return Answer::Text(text);
            }
        }
        Answer::Text(out)
    }

    async fn dispatch(&self, call: &Call<'_>) -> Dispatched {
        let store = &*self.shared.store;
        let settings = &self.shared.settings;
        let local = |outcome: Result<Outcome, RpcError>| match outcome {
            Ok(outcome) => Dispatched::Local(outcome),
            Err(error) => Dispatched::Rejected(error),
        };
        match call.method.as_str() {
            "getTransaction" => local(
                params::get_transaction(&call.params).map(|r| methods::get_transaction(store, &r)),
            ),
            "getBlock" => match params::get_block(&call.params) {
                Ok(request) => Dispatched::Local(self.get_block(&request).await),
                Err(error) => Dispatched::Rejected(error),
            },
            "getBlockTime" => local(
                params::get_block_time(&call.params)
                    .map(|slot| methods::get_block_time(store, slot, settings)),
            ),
            "getSlot" => {
                local(params::get_slot(&call.params).map(|r| methods::get_slot(store, &r)))
            }
            "getSignaturesForAddress" => match params::get_signatures_for_address(&call.params) {
                Err(error) => Dispatched::Rejected(error),
                Ok(request) => match &self.upstream {
                    None => Dispatched::Local(methods::get_signatures_for_address(store, &request)),
                    Some(upstream) => self.merged_signatures(upstream, call, &request).await,
                },
            },
            _ if self.upstream.is_some() => Dispatched::Forward,
            _ => Dispatched::Rejected(RpcError::method_not_found()),
        }
    }

    async fn get_block(&self, request: &GetBlock) -> Outcome {
        let store = &*self.shared.store;
        let block = match methods::find_block(store, request.slot) {
            BlockLookup::Found(block) => block,
            BlockLookup::Answer(outcome) => return outcome,
        };
        let mut previous = None;
        if block.previous_blockhash.is_none() && block.slot != 0 {
            previous = self.upstream_blockhash(block.parent_slot).await;
        }
        methods::render_block(&block, request, &self.shared.settings, previous)
    }

    /// The blockhash of `slot` from the upstream (for a parent in an epoch not held here).
    async fn upstream_blockhash(&self, slot: u64) -> Option<[u8; 32]> {
        let upstream = self.upstream.as_ref()?;
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "getBlock",
            "params": [slot, {"transactionDetails": "none", "rewards": false,
                              "maxSupportedTransactionVersion": 0}],
        });
        let response = upstream.post(Bytes::from(body.to_string())).await.ok()?;
        let value: Value = serde_json::from_slice(&response.body).ok()?;
        let text = value.get("result")?.get("blockhash")?.as_str()?;
        error::parse_pubkey(text).ok()
    }
}

/// The answer to a batch entry the rate limit did not pay for (nothing for a notification).
fn rate_limited_entry(entry: Entry<'_>) -> Answer {
    let id = match entry {
        Entry::Notification => return Answer::Nothing,
        Entry::Invalid { id } => id,
        Entry::Call(call) => call.id,
    };
    let mut out = Vec::with_capacity(128);
    envelope::write_error(&mut out, &RpcError::rate_limited(), &id, true);
    Answer::Text(out)
}

/// The answer to a call that is not held here, when there is no upstream to ask.
fn answer_not_here(not_here: NotHere, call: &Call<'_>) -> Answer {
    let mut out = Vec::new();
    match not_here.answer() {
        Outcome::Result(result) => envelope::write_result(&mut out, &result, &call.id),
        Outcome::Error(error) => envelope::write_error(&mut out, &error, &call.id, true),
        Outcome::Upstream(_) => {
            envelope::write_error(&mut out, &RpcError::internal(), &call.id, true)
        }
    }
    Answer::Text(out)
}

/// How a call was routed.
enum Dispatched {
    Local(Outcome),
    Rejected(RpcError),
    /// Forward the call unchanged.
    Forward,
    /// A complete response object built from the upstream's and the archive's parts.
    Merged(Vec<u8>),
}
