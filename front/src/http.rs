//! The HTTP frontend (actix-web) on the appliance's HTTP address: `/health` and `/metrics`, the
//! operator console (`GET /`, [`crate::console`]), plus the frontends mounted on it (the JSON-RPC
//! archive at `POST /`, the insights API under `/v1`).
//!
//! actix runs its own single-threaded system on a dedicated thread, apart from the tonic runtime;
//! the server stops when `shutdown` resolves. Metrics are rendered by a callback the appliance
//! provides, so this crate does not depend on the pipeline's types. The archive and insights
//! frontends plug in as [`HttpMount`]s: each registers its own routes on every worker's `App`.
//! Every route answers cross-origin requests as [`crate::cors`] says.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, middleware, web};

use actix_web::dev::{Extensions, Service};
use tracing::debug;

use crate::auth::{self, TokenSet};
use crate::body_deadline::DeadlinePayload;
use crate::conn_cap::PerIpCap;
use crate::console::{self, StatsRenderer};
use crate::cors::{self, CorsPolicy};

/// Renders the Prometheus text exposition of every metric.
pub type MetricsRenderer = Arc<dyn Fn() -> String + Send + Sync>;

/// Extra fields of the `/health` object, rendered per request: empty, or `,"name":value...`
/// (the appliance adds its trust mode and leader schedule).
pub type HealthFields = Arc<dyn Fn() -> String + Send + Sync>;

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
    /// Extra `/health` fields; none = `{"status":"ok"}` alone.
    pub health: Option<HealthFields>,
    /// Connection deadlines and the shutdown deadline.
    pub deadlines: HttpDeadlines,
    /// Origins allowed to call from a browser (default any, as a validator's RPC).
    pub cors: CorsPolicy,
    /// Open connections per remote address (their gauges for `/metrics`).
    pub connections: Arc<PerIpCap>,
    /// Most connections open from one address; one more is closed at connect.
    pub max_connections_per_ip: usize,
    /// The console's stats document; none = no console (`GET /` is left to the mounts).
    pub console: Option<StatsRenderer>,
}

/// `[http] max_connections_per_ip` unless configured.
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 200;

/// How long a client may take (issue "Hostile clients and damaged data": a stalled client
/// holds a descriptor and delays shutdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpDeadlines {
    /// From the connection's start to the end of the request headers.
    pub request_headers: Duration,
    /// From the end of the headers to the end of the body.
    pub request_body: Duration,
    /// For the client to close after the response on a closing connection.
    pub client_disconnect: Duration,
    /// An idle kept-alive connection is closed after this.
    pub keep_alive: Duration,
    /// After the stop signal, requests still running are dropped after this.
    pub shutdown: Duration,
}

impl Default for HttpDeadlines {
    fn default() -> Self {
        Self {
            request_headers: Duration::from_secs(5),
            request_body: Duration::from_secs(10),
            client_disconnect: Duration::from_secs(1),
            keep_alive: Duration::from_secs(30),
            shutdown: Duration::from_secs(10),
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            mounts: Vec::new(),
            workers: 1,
            tokens: Arc::new(TokenSet::default()),
            health: None,
            deadlines: HttpDeadlines::default(),
            cors: CorsPolicy::default(),
            connections: Arc::default(),
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
            console: None,
        }
    }
}

#[derive(Clone)]
struct State {
    render: MetricsRenderer,
    health: Option<HealthFields>,
}

async fn health(state: web::Data<State>) -> HttpResponse {
    let extra = state
        .health
        .as_ref()
        .map(|fields| fields())
        .unwrap_or_default();
    HttpResponse::Ok()
        .content_type("application/json")
        .body(format!("{{\"status\":\"ok\"{extra}}}"))
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

/// Gives a new connection its place under the per-address cap (kept in the connection's data,
/// given back when the connection ends), or closes it at once when its address is at the cap.
fn admit(connections: &Arc<PerIpCap>, cap: usize, connection: &dyn Any, data: &mut Extensions) {
    let Some(tcp) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() else {
        return;
    };
    let Ok(peer) = tcp.peer_addr() else {
        return;
    };
    match connections.try_take(peer.ip(), cap) {
        Some(slot) => {
            data.insert(slot);
        }
        None => {
            // The server then reads end-of-stream and drops the connection.
            let _ = socket2::SockRef::from(tcp).shutdown(std::net::Shutdown::Both);
            debug!(peer = %peer.ip(), "HTTP connection over the per-address cap closed");
        }
    }
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
                let state = State {
                    render,
                    health: options.health,
                };
                let mounts = options.mounts;
                let console = options.console;
                let tokens = options.tokens;
                let deadlines = options.deadlines;
                let cors = Arc::new(options.cors);
                let (connections, cap) = (options.connections, options.max_connections_per_ip);
                let server = HttpServer::new(move || {
                    let mut app = App::new()
                        .app_data(web::Data::new(state.clone()))
                        .app_data(web::Data::new(Arc::clone(&tokens)))
                        .app_data(web::Data::new(Arc::clone(&cors)))
                        .route("/health", web::get().to(health))
                        .route("/metrics", web::get().to(metrics));
                    if let Some(stats) = &console {
                        // Before the mounts: `GET /` is the page, `POST /` falls through to them.
                        let stats = Arc::clone(stats);
                        app = app.configure(move |config| console::configure(config, stats));
                    }
                    for mount in &mounts {
                        app = app.configure(|config| mount(config));
                    }
                    app.default_service(web::to(not_found))
                        .wrap(middleware::from_fn(auth::http_middleware))
                        .wrap_fn(move |mut request, service| {
                            DeadlinePayload::wrap(&mut request, deadlines.request_body);
                            service.call(request)
                        })
                        // Outermost: a preflight is answered before authentication.
                        .wrap(middleware::from_fn(cors::http_middleware))
                })
                .on_connect(move |connection, data| admit(&connections, cap, connection, data))
                .workers(options.workers.max(1))
                .client_request_timeout(deadlines.request_headers)
                .client_disconnect_timeout(deadlines.client_disconnect)
                .keep_alive(deadlines.keep_alive)
                .shutdown_timeout(deadlines.shutdown.as_secs().max(1))
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
