//! The HTTP address's frontends: `/health` and `/metrics` (every family of the appliance), the
//! operator console at `GET /` (its stats from [`crate::console`]), the JSON-RPC archive at
//! `POST /` (with `--archive` or `--upstream`) and the insights API under `/v1` (ingesting with
//! `--upstream`), served by one actix server on its own thread.

use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::Context;
use front::auth::TokenSet;
use front::conn_cap::PerIpCap;
use front::http::{HealthFields, HttpMount, HttpOptions, MetricsRenderer};
use front::tls_client::UpstreamTrust;
use tracing::info;

use crate::cluster::TrustStatus;
use crate::cluster::lookup_tables::LookupTables;
use crate::config::Config;
use crate::console::ConsoleSources;
use crate::metrics::Metrics;

/// The running HTTP server and the insights ingest, stopped together.
pub struct Frontends {
    http: JoinHandle<std::io::Result<()>>,
    insights: Option<insights::Insights>,
}

impl Frontends {
    /// Waits for the HTTP server (stopped by the stop signal it was given) and stops the ingest.
    pub fn stop(self) -> anyhow::Result<()> {
        self.http
            .join()
            .map_err(|_| anyhow::anyhow!("HTTP server panicked"))??;
        if let Some(insights) = self.insights {
            insights.stop();
        }
        Ok(())
    }
}

/// What the stream adds to the HTTP address (`/metrics` families, `/health` fields); absent when
/// the appliance serves HTTP only (`[sources] stream`).
#[derive(Clone)]
pub struct StreamParts {
    pub metrics: Arc<Metrics>,
    pub trust: Arc<TrustStatus>,
    /// The lookup-table cache; `None` on a relay (it resolves nothing itself).
    pub lookups: Option<Arc<LookupTables>>,
}

/// Starts the HTTP server with the archive and insights mounted; it stops when `stopped` turns.
pub fn start_http(
    config: &Config,
    stream: Option<StreamParts>,
    tokens: &Arc<TokenSet>,
    stopped: &tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<Frontends> {
    let trust = UpstreamTrust::load(config.archive.upstream_ca.as_deref())?;
    // Before any source is opened: remote files take the shared range cache at open.
    archive::rangecache::configure((config.archive.http_cache_mb as u64) << 20);
    archive::slotmemo::configure(config.archive.slot_memo_entries);
    let rpc = rpc::from_flags(
        &config.archive.sources,
        config.archive.upstream.as_deref(),
        &trust,
    )?;
    if let Some(catalog) = rpc.as_ref().and_then(|rpc| rpc.catalog()) {
        let interval = config.archive.catalog_interval()?;
        catalog.spawn_checks(interval)?;
        info!(?interval, "archive catalog checks scheduled");
    }
    let mut options = HttpOptions {
        workers: config.http.workers,
        tokens: Arc::clone(tokens),
        health: Some(health_fields(stream.as_ref())),
        deadlines: front::http::HttpDeadlines {
            shutdown: std::time::Duration::from_secs(config.grpc.shutdown_timeout_secs),
            request_body: std::time::Duration::from_secs(config.http.body_timeout_secs),
            ..front::http::HttpDeadlines::default()
        },
        cors: front::cors::CorsPolicy::from_origins(&config.http.cors_origins),
        max_connections_per_ip: config.http.max_connections_per_ip,
        ..HttpOptions::default()
    };
    if rpc.is_none() {
        // JSON-RPC clients get a JSON-RPC error saying why, not an HTTP 404 body.
        options.mounts.push(rpc::absent::mount());
    }
    if let Some(rpc) = &rpc {
        options.mounts.push(rpc.mount());
        let archives: Vec<String> = config
            .archive
            .sources
            .iter()
            .map(|source| front::redact::redact_url(source))
            .collect();
        let upstream = config
            .archive
            .upstream
            .as_deref()
            .map(front::redact::redact_url);
        info!(
            ?archives,
            ?upstream,
            "serving the JSON-RPC archive at POST /"
        );
    }
    let (insights_mount, insights) = start_insights(config, &trust)?;
    options.mounts.push(insights_mount);
    options.console = Some(crate::console::renderer(ConsoleSources {
        stream: stream.as_ref().map(|stream| Arc::clone(&stream.metrics)),
        archive: rpc.clone(),
        insights: insights
            .as_ref()
            .map(|insights| Arc::clone(insights.shared())),
    }));
    let connections = Arc::clone(&options.connections);
    let render = metrics_renderer(stream, (tokens, connections), rpc);
    let address = config.http.address;
    let http = front::http::serve(
        address,
        render,
        options,
        crate::grpc::wait_for_stop(stopped.clone()),
    )
    .with_context(|| format!("HTTP server on {address}"))?;
    info!(%address, "serving /health and /metrics");
    Ok(Frontends { http, insights })
}

/// `/metrics`: the pipeline's and stream's families, then the tokens', the HTTP listener's and
/// the archive's.
fn metrics_renderer(
    stream: Option<StreamParts>,
    (tokens, connections): (&Arc<TokenSet>, Arc<PerIpCap>),
    rpc: Option<rpc::Rpc>,
) -> MetricsRenderer {
    let tokens = Arc::clone(tokens);
    Arc::new(move || {
        let mut text = String::with_capacity(16 * 1024);
        if let Some(stream) = &stream {
            text.push_str(&stream.metrics.render());
            stream.trust.render_metrics(&mut text);
            if let Some(lookups) = &stream.lookups {
                lookups.render_metrics(&mut text);
            }
        }
        text.push_str(&tokens.render_metrics());
        connections.render_http_metrics(&mut text);
        if let Some(rpc) = &rpc {
            rpc.render_metrics(&mut text);
        }
        text
    })
}

/// `/health`'s trust mode and leader schedule age (and a relay's link), or `"stream":"off"` when serving HTTP only.
fn health_fields(stream: Option<&StreamParts>) -> HealthFields {
    match stream {
        Some(stream) => {
            let trust = Arc::clone(&stream.trust);
            let metrics = Arc::clone(&stream.metrics);
            Arc::new(move || {
                let mut fields = trust.health_fields();
                if let Some(relay) = metrics.relay.get() {
                    fields.push_str(&relay.health_fields());
                }
                fields
            })
        }
        None => Arc::new(|| ",\"stream\":\"off\"".to_owned()),
    }
}

/// Starts the insights ingest when `archive.upstream` is set; without one, serves the existing
/// store named by `[insights] db` as it is (a backfilled store, the embedded default's sample);
/// the `/v1` routes either way (503 with neither).
fn start_insights(
    config: &Config,
    trust: &UpstreamTrust,
) -> anyhow::Result<(HttpMount, Option<insights::Insights>)> {
    let Some(upstream) = config.archive.upstream.as_deref() else {
        // Only an existing store: none is created without an upstream to fill it.
        let Some(store) = config.insights.db.as_ref().filter(|store| store.exists()) else {
            return Ok((insights::disabled_mount(), None));
        };
        let insights = insights::Insights::serve_stored(store, insights::Limits::default())
            .with_context(|| format!("serving the insights store {}", store.display()))?;
        info!(store = %store.display(), "insights served from the store (no upstream)");
        return Ok((insights.mount(), Some(insights)));
    };
    let store = config.insights.store_path(&config.data);
    let durations = config.insights.durations()?;
    let mut settings = insights::InsightsConfig::new(upstream, &store);
    settings.retention = durations.retention;
    settings.block_retention = durations.block_retention;
    settings.poll_interval = durations.poll;
    settings.upstream_trust = trust.clone();
    let insights = insights::Insights::start(settings)
        .with_context(|| format!("starting insights (store {})", store.display()))?;
    info!(%upstream, store = %store.display(), "insights ingest started");
    Ok((insights.mount(), Some(insights)))
}
