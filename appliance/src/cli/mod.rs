//! The command line: one module per subcommand (`run`, `decode`, `decode-tx`, `archive index`,
//! `insights backfill`, `subscribe`), the parser of the contract operators and acceptance checks rely on, and
//! the logging set-up.

pub mod archive_index;
pub mod decode;
pub mod decode_tx;
pub mod decode_tx_lookups;
pub mod insights_backfill;
pub mod run;
pub mod subscribe;
pub mod subscribe_filter;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::Config;

#[derive(Parser)]
#[command(name = "appliance", version, about = "Solana shred appliance")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the appliance: receive shreds, decode, and serve subscribers.
    Run(Box<crate::config::flags::RunArgs>),
    /// Decode a shred capture (length-prefixed, pcap or ar) to JSON lines.
    Decode {
        /// The capture file.
        file: PathBuf,
        /// Verify every FEC set's signature against this leader (base58 public key).
        #[arg(long)]
        leader: Option<String>,
        /// Accept only shreds of this shred version.
        #[arg(long = "shred-version")]
        shred_version: Option<u16>,
        /// Also accept the obsolete unchained Merkle variants (0x4_, 0x8_).
        #[arg(long = "allow-unchained")]
        allow_unchained: bool,
    },
    /// Decode base64 wire transactions from standard input, one per line.
    DecodeTx {
        /// Override a program id: NAME=BASE58 (NAME as in the specification, e.g. ALPHA_FUN).
        #[arg(long = "program-id", value_name = "NAME=BASE58")]
        program_ids: Vec<String>,
        /// Override the aggregator's program id.
        #[arg(long = "aggregator-id", value_name = "BASE58")]
        aggregator_id: Option<String>,
        /// Resolve address-table lookups through these tables: JSON {"<table>": ["<address>", …]}
        /// (base58).
        #[arg(long = "lookup-tables", value_name = "FILE")]
        lookup_tables: Option<std::path::PathBuf>,
        /// Fetch the lookup tables not in --lookup-tables from this cluster JSON-RPC
        /// (getMultipleAccounts).
        #[arg(long = "rpc", value_name = "URL")]
        rpc: Option<String>,
    },
    /// Watch an appliance's stream: updates as JSON lines (or compact lines) on standard output.
    Subscribe {
        /// The appliance's gRPC address (https:// with --tls-ca).
        #[arg(long, default_value = "http://127.0.0.1:9000")]
        endpoint: String,
        /// Access token (sent as x-token).
        #[arg(long)]
        token: Option<String>,
        /// CA certificate (PEM) the server's TLS certificate must chain to.
        #[arg(long = "tls-ca", value_name = "PEM")]
        tls_ca: Option<PathBuf>,
        /// A named filter: NAME:programs=ALPHA_FUN+BETA_CPMM,instructions=buy+sell,accounts=KEY,
        /// exclude=KEY,required=KEY+KEY (repeat for several; none = everything).
        #[arg(long = "filter", value_name = "NAME:KEY=VALUE,…")]
        filters: Vec<String>,
        /// Each update as canonical proto3 JSON (the default).
        #[arg(long, conflicts_with = "compact")]
        json: bool,
        /// One line per transaction: slot, signature, program:instruction….
        #[arg(long)]
        compact: bool,
        /// Stop after this many transactions.
        #[arg(long)]
        count: Option<u64>,
        /// Resume: first the server's kept updates of slots from this one (docs/resume.md).
        #[arg(long = "from-slot")]
        from_slot: Option<u64>,
        /// A summary per second on standard error: rates and latency from the server's stamps.
        #[arg(long)]
        stats: bool,
    },
    /// Archive maintenance.
    Archive {
        #[command(subcommand)]
        command: ArchiveCommand,
    },
    /// Insights store maintenance.
    Insights {
        #[command(subcommand)]
        command: InsightsCommand,
    },
}

#[derive(Subcommand)]
pub enum InsightsCommand {
    /// Fill the insights store with the blocks and window snapshots of a slot range read from the
    /// epoch archive (run it while no appliance holds the store open).
    Backfill {
        /// Epoch archive: a local directory (`*.car` with their indexes, see `archive index`) or an
        /// http(s) base URL laid out like the public file host; repeat for several, in priority order.
        #[arg(long, required = true)]
        archive: Vec<String>,
        /// First slot of the range.
        #[arg(long)]
        from: u64,
        /// Last slot of the range (inclusive).
        #[arg(long)]
        to: u64,
        /// Insights store file (as `run --insights-db`).
        #[arg(long = "insights-db", default_value = "data/insights.redb")]
        insights_db: PathBuf,
        /// Do not draw a progress bar.
        #[arg(long)]
        no_progress: bool,
    },
}

#[derive(Subcommand)]
pub enum ArchiveCommand {
    /// Build the indexes of the given CAR files next to them.
    Index {
        /// CAR files (whole epochs or pieces).
        #[arg(required = true)]
        cars: Vec<PathBuf>,
        /// Do not draw a progress bar.
        #[arg(long)]
        no_progress: bool,
    },
}

/// Runs one parsed command line.
pub fn execute(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Decode {
            file,
            leader,
            shred_version,
            allow_unchained,
        } => {
            let options = decode::DecodeOptions {
                path: &file,
                leader: leader.as_deref(),
                shred_version,
                allow_unchained,
            };
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            decode::run(&options, &mut out)
        }
        Command::DecodeTx {
            program_ids,
            aggregator_id,
            lookup_tables,
            rpc,
        } => crate::config::programs::registry(&program_ids, aggregator_id.as_deref()).and_then(
            |registry| {
                let mut lookups =
                    decode_tx_lookups::TxLookups::new(lookup_tables.as_deref(), rpc.as_deref())?;
                let stdout = std::io::stdout();
                let mut out = std::io::BufWriter::new(stdout.lock());
                decode_tx::run(
                    &registry,
                    &mut lookups,
                    std::io::stdin().lock(),
                    &mut out,
                    &mut std::io::stderr(),
                )
            },
        ),
        Command::Subscribe {
            endpoint,
            token,
            tls_ca,
            filters,
            json: _,
            compact,
            count,
            from_slot,
            stats,
        } => subscribe::run(&subscribe::SubscribeArgs {
            endpoint,
            token,
            tls_ca,
            filters,
            compact,
            count,
            from_slot,
            stats,
        }),
        Command::Archive {
            command: ArchiveCommand::Index { cars, no_progress },
        } => archive_index::run(&cars, !no_progress, &mut std::io::stdout()),
        Command::Insights {
            command:
                InsightsCommand::Backfill {
                    archive,
                    from,
                    to,
                    insights_db,
                    no_progress,
                },
        } => insights_backfill::run(
            &insights_backfill::BackfillArgs {
                archives: &archive,
                store: &insights_db,
                from,
                to,
                progress: !no_progress,
            },
            &mut std::io::stdout(),
        ),
    }
}

/// What `--check-config` checks beyond the configuration's own bounds, with the same code and
/// errors as a start: the program ids, the token file, the gRPC TLS files, the upstream's CA
/// file and each `--archive` value (a directory must exist; URLs are not fetched).
pub fn check_config(config: &Config) -> anyhow::Result<()> {
    crate::config::programs::from_config(config)?;
    crate::security::tokens(config)?;
    crate::security::grpc_tls(config)?;
    front::tls_client::UpstreamTrust::load(config.archive.upstream_ca.as_deref())?;
    for source in &config.archive.sources {
        archive::catalog::SourceSpec::parse(source)?;
    }
    Ok(())
}

/// Logs to standard error, filtered by `RUST_LOG` (default `info`): text lines, coloured only
/// when standard error is a terminal (not under journald or into a file), or one JSON object per
/// line (`[log] format = "json"`).
pub fn init_logging(format: crate::config::LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        crate::config::LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        crate::config::LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .init(),
    }
}
