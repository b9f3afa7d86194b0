//! `POST /` when the appliance serves no JSON-RPC archive (neither `--archive` nor `--upstream`):
//! every call is answered with a JSON-RPC error object (-32601, saying why), one per call of a
//! batch with the call's id, so that a JSON-RPC client reports a JSON-RPC error instead of
//! choking on an HTTP 404 body.

use std::sync::Arc;

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use front::http::HttpMount;
use serde_json::Value;

use super::envelope::{self, Body, Entry};
use super::error::{METHOD_NOT_FOUND, RpcError};
use super::service::MAX_BODY_BYTES;

/// What every call gets.
pub fn no_archive() -> RpcError {
    RpcError::new(
        METHOD_NOT_FOUND,
        "Method not found: this appliance serves no JSON-RPC archive (start it with --archive or --upstream)",
    )
}

/// Registers `POST /` (and 405 for other verbs on `/`) answering [`no_archive`].
pub fn mount() -> HttpMount {
    Arc::new(|config: &mut web::ServiceConfig| {
        config
            .app_data(web::PayloadConfig::new(MAX_BODY_BYTES))
            .service(
                web::resource("/")
                    .route(web::post().to(handle))
                    .default_service(web::to(super::service::method_not_allowed)),
            );
    })
}

async fn handle(body: web::Bytes) -> HttpResponse {
    let mut out = Vec::with_capacity(192);
    match envelope::parse_body(&body) {
        Err(error) => envelope::write_error(&mut out, &error, &Value::Null, true),
        Ok(Body::Single(entry)) => {
            if let Some(id) = id_of(entry) {
                envelope::write_error(&mut out, &no_archive(), &id, true);
            }
        }
        Ok(Body::Batch(entries)) => {
            for id in entries.into_iter().filter_map(id_of) {
                out.push(if out.is_empty() { b'[' } else { b',' });
                envelope::write_error(&mut out, &no_archive(), &id, true);
            }
            if !out.is_empty() {
                out.push(b']');
            }
        }
    }
    if out.is_empty() {
        // Only notifications: no response entries, no body.
        return HttpResponse::Ok().finish();
    }
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "application/json; charset=utf-8"))
        .body(out)
}

/// The id to answer with; none for a notification.
fn id_of(entry: Entry<'_>) -> Option<Value> {
    match entry {
        Entry::Notification => None,
        Entry::Invalid { id } => Some(id),
        Entry::Call(call) => Some(call.id),
    }
}
