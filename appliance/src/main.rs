//! The `appliance` binary: parses the command line (`appliance::cli`) and runs it; the command
//! line is a contract relied on by operators and acceptance checks (README, docs/decisions.md).

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc malloc: a worker allocates per published update (the prost message
/// and its encoding), and malloc/free took ~15 % of a worker core with glibc
/// (`cargo bench -p bench --bench pipeline_steady`, bench/README.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match appliance::cli::execute(appliance::cli::Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("appliance: {error:#}");
            ExitCode::FAILURE
        }
    }
}
