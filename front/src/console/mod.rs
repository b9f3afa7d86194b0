//! The operator console: `GET /` serves a page whose HTML, JavaScript and CSS are compiled into
//! the binary (no CDN, the host may be offline); the page polls [`STATS_PATH`] once a second and
//! draws its charts on canvases from the differences between two answers.
//!
//! The page and its two assets carry no data and are public (a browser cannot add `x-token` to a
//! navigation); the stats, like `/metrics`, need a token when tokens are configured, and the
//! page asks for one on a 401. `POST /` stays the JSON-RPC archive's: the console's `/` route
//! only matches `GET` and `HEAD` (a resource guard, so other methods fall through to the
//! resources the frontends mount).

pub mod quantile;

use std::sync::{Arc, OnceLock};

use actix_web::http::{Method, header};
use actix_web::{HttpRequest, HttpResponse, guard, web};

/// Renders the stats document (a JSON object) per request.
pub type StatsRenderer = Arc<dyn Fn() -> String + Send + Sync>;

/// Where the page reads the appliance's counters.
pub const STATS_PATH: &str = "/console/stats";

/// One compiled-in file of the page.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: [Asset; 3] = [
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_str!("assets/index.html"),
    },
    Asset {
        path: "/console/console.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/console.js"),
    },
    Asset {
        path: "/console/console.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("assets/console.css"),
    },
];

/// The page may load only its own files and call only its own address.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// True for the requests the token check lets through: the page and its assets (`GET`/`HEAD`).
pub fn is_public(method: &Method, path: &str) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && ASSETS.iter().any(|asset| asset.path == path)
}

/// Registers the page, its assets and [`STATS_PATH`]; call before the frontends' mounts so that
/// `GET /` reaches the page.
pub fn configure(config: &mut web::ServiceConfig, stats: StatsRenderer) {
    for (index, asset) in ASSETS.iter().enumerate() {
        config.service(
            web::resource(asset.path)
                .guard(guard::Any(guard::Get()).or(guard::Head()))
                .to(move |request: HttpRequest| async move { serve_asset(index, &request) }),
        );
    }
    config.app_data(web::Data::new(Stats(stats))).service(
        web::resource(STATS_PATH)
            .route(web::get().to(serve_stats))
            .default_service(web::to(method_not_allowed)),
    );
}

/// An asset with its entity tag; `304` when the browser already holds this version.
fn serve_asset(index: usize, request: &HttpRequest) -> HttpResponse {
    let asset = &ASSETS[index];
    let tag = etags()[index].as_str();
    let fresh = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(',').any(|candidate| candidate.trim() == tag));
    let mut response = if fresh {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::ETAG, tag))
        // Revalidate on every load: a new binary may carry a new page under the same URL.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY));
    if fresh {
        return response.finish();
    }
    response.content_type(asset.content_type).body(asset.body)
}

/// The assets' entity tags (FNV-1a of the content), in [`ASSETS`] order, computed once.
fn etags() -> &'static [String; 3] {
    static TAGS: OnceLock<[String; 3]> = OnceLock::new();
    TAGS.get_or_init(|| ASSETS.map(|asset| format!("\"{:016x}\"", fnv1a(asset.body.as_bytes()))))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The stats callback as app data (its own type: other callbacks share `StatsRenderer`'s).
struct Stats(StatsRenderer);

async fn serve_stats(stats: web::Data<Stats>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body((stats.0)())
}

async fn method_not_allowed() -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, "GET"))
        .content_type("application/json")
        .body(r#"{"error":{"code":"method_not_allowed","message":"the console's stats take GET"}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_page_and_its_assets_are_public() {
        assert!(is_public(&Method::GET, "/"));
        assert!(is_public(&Method::HEAD, "/console/console.js"));
        assert!(is_public(&Method::GET, "/console/console.css"));
        assert!(!is_public(&Method::POST, "/"));
        assert!(!is_public(&Method::GET, STATS_PATH));
        assert!(!is_public(&Method::GET, "/metrics"));
    }

    #[test]
    fn assets_name_no_other_origin() {
        for asset in &ASSETS {
            for scheme in ["http://", "https://", "//"] {
                assert!(
                    !asset.body.contains(&format!("src=\"{scheme}"))
                        && !asset.body.contains(&format!("href=\"{scheme}"))
                        && !asset.body.contains("url(http"),
                    "{} loads from another origin",
                    asset.path
                );
            }
        }
    }

    #[test]
    fn etags_differ_per_asset() {
        let tags = etags();
        assert_ne!(tags[0], tags[1]);
        assert_ne!(tags[1], tags[2]);
    }
}
