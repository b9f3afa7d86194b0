//! The HTTP frontend (actix-web) on the appliance's HTTP address: `/health` and `/metrics` today;
//! the JSON-RPC archive (`POST /`) and the insights API (`/v1`) join it with their issues.
//!
//! actix runs its own single-threaded system on a dedicated thread, apart from the tonic runtime;
//! the server stops when `shutdown` resolves. Metrics are rendered by a callback the appliance
//! provides, so this crate does not depend on the pipeline's types. The archive and insights
//! frontends plug in as [`HttpMount`]s: each registers its own routes on every worker's `App`.

use std::net::SocketAddr;
use std::sync::Arc;

use actix_web::{App, HttpResponse, HttpServer, middleware, web};

use crate::auth::{self, TokenSet};

/// Renders the Prometheus text exposition of every metric.
pub type MetricsRenderer = Arc<dyn Fn() -> String + Send + Sync>;

/// Registers one frontend's routes (and its `app_data`) on an actix `App`; called once per worker.
pub type HttpMount = Arc<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;

/// What the HTTP server serves besides `/health` and `/metrics`, and with how many workers.
#[derive(Clone)]
pub struct HttpOptions {
    pub mounts: Vec<HttpMount>,
    /// actix worker threads (each runs its own single-threaded runtime).
    pub workers: usize,
    /// Accepted tokens (`x-token` or `Authorization: Bearer`); empty means no authentication.
    pub tokens: Arc<TokenSet>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            mounts: Vec::new(),
            workers: 1,
            tokens: Arc::new(TokenSet::default()),
        }
    }
}

#[derive(Clone)]
struct State {
    render: MetricsRenderer,
}

async fn health() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body("{\"status\":\"ok\"}")
}

async fn metrics(state: web::Data<State>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body((state.render)())
}

async fn not_found() -> HttpResponse {
    HttpResponse::NotFound()
        .content_type("application/json")
        .body("{\"error\":{\"code\":\"not_found\",\"message\":\"no such path\"}}")
}

/// Serves until `shutdown` resolves. Binds before returning, so an address error surfaces at once.
pub fn serve(
    address: SocketAddr,
    render: MetricsRenderer,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<std::io::Result<()>>> {
    let listener = std::net::TcpListener::bind(address)?;
    std::thread::Builder::new()
        .name("http".into())
        .spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let state = State { render };
                let mounts = options.mounts;
                let tokens = options.tokens;
                let server = HttpServer::new(move || {
                    let mut app = App::new()
                        .app_data(web::Data::new(state.clone()))
                        .app_data(web::Data::new(Arc::clone(&tokens)))
                        .route("/health", web::get().to(health))
                        .route("/metrics", web::get().to(metrics));
                    for mount in &mounts {
                        app = app.configure(|config| mount(config));
                    }
                    app.default_service(web::to(not_found))
                        .wrap(middleware::from_fn(auth::http_middleware))
                })
                .workers(options.workers.max(1))
                .disable_signals()
                .listen(listener)?
                .run();
                let handle = server.handle();
                actix_web::rt::spawn(async move {
                    shutdown.await;
                    handle.stop(true).await;
                });
                server.await
            })
        })
}
