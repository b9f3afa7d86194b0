//! Program ids from the command line: `--program-id NAME=BASE58` (repeatable) and
//! `--aggregator-id BASE58` replace the registry's mainnet ids (a fork, a devnet deployment), for
//! `appliance run` and `appliance decode-tx` alike.

use anyhow::{Context, bail};
use decoder::dex::{DexProgram, ProgramRegistry};

/// The registry with `--program-id NAME=BASE58` and `--aggregator-id` overrides applied.
pub fn registry(
    program_ids: &[String],
    aggregator_id: Option<&str>,
) -> anyhow::Result<ProgramRegistry> {
    let mut registry = ProgramRegistry::default();
    for pair in program_ids {
        let Some((name, id)) = pair.split_once('=') else {
            bail!("--program-id {pair:?}: expected NAME=BASE58");
        };
        let Some(program) = DexProgram::from_name(name) else {
            let names: Vec<&str> = DexProgram::ALL.iter().map(|p| p.name()).collect();
            bail!(
                "--program-id {pair:?}: unknown program {name:?} (one of {})",
                names.join(", ")
            );
        };
        registry = registry
            .with_program_id(program, id)
            .with_context(|| format!("--program-id {pair:?}"))?;
    }
    if let Some(id) = aggregator_id {
        registry = registry.with_aggregator_id(id).context("--aggregator-id")?;
    }
    Ok(registry)
}
