//! The `appliance` binary: command-line contract relied on by operators and acceptance checks.
//!
//! - `appliance run`: the service (receive → decode → publish), see [`run`].
//! - `appliance decode FILE`: decodes a shred capture to JSON lines, see [`decode_file`].
//! - `appliance decode-tx`: decodes base64 wire transactions, see [`decode_tx`].
//! - `appliance archive index CAR...`: builds archive indexes (issue 7).

// Unsafe code lives only in the receive backends (`receive::{sockopt, udp, xdp}`), the lock-free
// worker ring (`ring`), the replay's sendmmsg (`replay_send`) and `sched_setscheduler` (`sched`), which allow it module by module
// with a `// SAFETY:` note on every block.
#![deny(unsafe_code)]

mod archive_index;
mod config;
mod decode_file;
mod decode_tx;
mod insights_backfill;
mod metrics;
mod programs;
mod receive;
#[allow(unsafe_code)]
mod replay_send;
#[allow(unsafe_code)]
mod ring;

mod run;
#[allow(unsafe_code)]
mod sched;
mod security;
mod wake;
mod workers;

use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc instead of glibc malloc: a worker allocates per published update (the prost message
/// and its encoding), and malloc/free took ~15 % of a worker core with glibc
/// (`cargo bench -p bench --bench pipeline_steady`, docs/workers.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "appliance", version, about = "Solana shred appliance")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the appliance: receive shreds, decode, and serve subscribers.
    Run(Box<run::RunArgs>),
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
enum InsightsCommand {
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
enum ArchiveCommand {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Decode {
            file,
            leader,
            shred_version,
            allow_unchained,
        } => {
            let options = decode_file::DecodeOptions {
                path: &file,
                leader: leader.as_deref(),
                shred_version,
                allow_unchained,
            };
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            decode_file::run(&options, &mut out)
        }
        Command::DecodeTx {
            program_ids,
            aggregator_id,
        } => programs::registry(&program_ids, aggregator_id.as_deref()).and_then(|registry| {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            decode_tx::run(
                &registry,
                std::io::stdin().lock(),
                &mut out,
                &mut std::io::stderr(),
            )
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("appliance: {error:#}");
            ExitCode::FAILURE
        }
    }
}
