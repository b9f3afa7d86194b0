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
    let mut pairs = Vec::with_capacity(program_ids.len());
    for pair in program_ids {
        let Some((name, id)) = pair.split_once('=') else {
            bail!("--program-id {pair:?}: expected NAME=BASE58");
        };
        pairs.push((name, id, format!("--program-id {pair:?}")));
    }
    let aggregator = aggregator_id.map(|id| (id, "--aggregator-id".to_owned()));
    overrides(&pairs, aggregator)
}

/// The registry of the configuration's `[programs]` overrides, errors named as in the file
/// (`[programs.ids] NAME`, `[programs] aggregator`). The flags were merged into these fields
/// after [`registry`] had checked them under their own names (`config::flags`).
pub fn from_config(config: &super::Config) -> anyhow::Result<ProgramRegistry> {
    let pairs: Vec<(&str, &str, String)> = config
        .programs
        .ids
        .iter()
        .map(|(name, id)| {
            (
                name.as_str(),
                id.as_str(),
                format!("[programs.ids] {name} = {id:?}"),
            )
        })
        .collect();
    let aggregator = config
        .programs
        .aggregator
        .as_deref()
        .map(|id| (id, "[programs] aggregator".to_owned()));
    overrides(&pairs, aggregator)
}

/// The mainnet registry with `(name, id, how the override was written)` applied.
fn overrides(
    pairs: &[(&str, &str, String)],
    aggregator: Option<(&str, String)>,
) -> anyhow::Result<ProgramRegistry> {
    let mut registry = ProgramRegistry::default();
    for (name, id, written) in pairs {
        let Some(program) = DexProgram::from_name(name) else {
            let names: Vec<&str> = DexProgram::ALL.iter().map(|p| p.name()).collect();
            bail!(
                "{written}: unknown program {name:?} (one of {})",
                names.join(", ")
            );
        };
        registry = registry
            .with_program_id(program, id)
            .with_context(|| written.clone())?;
    }
    if let Some((id, written)) = aggregator {
        registry = registry.with_aggregator_id(id).context(written)?;
    }
    Ok(registry)
}
