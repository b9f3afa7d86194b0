//! `appliance decode-tx`: base64 wire transactions on standard input, one per line; for each, one
//! JSON line on standard output: the array of `SubscribeUpdate` messages an empty-map subscriber
//! would receive, in canonical proto3 JSON (`[]` outside the stream's universe). `serverTiming` is
//! omitted and `slot` / `txIndex` are unset (0, so omitted), as a lone transaction has neither.
//!
//! `--program-id NAME=BASE58` (repeatable) and `--aggregator-id BASE58` replace the mainnet ids
//! of the registry (a fork, a devnet deployment). Blank lines are skipped. A line that is not base64 of a well-formed transaction prints `[]`, so
//! output lines stay aligned with input lines, and the reason goes to standard error with the line
//! number; the exit status stays 0 (decode failures of single instructions are not errors either:
//! the instruction is simply not listed).

use std::io::{BufRead, Write};

use anyhow::Context;
use base64::Engine;
use decoder::dex::ProgramRegistry;
use decoder::transaction::parse_transaction_exact;
use server::updates::{DecodeStats, Placement, transaction_updates};

pub fn run(
    registry: &ProgramRegistry,
    input: impl BufRead,
    out: &mut impl Write,
    errors: &mut impl Write,
) -> anyhow::Result<()> {
    let mut stats = DecodeStats::default();
    for (line_index, line) in input.lines().enumerate() {
        let line = line.context("reading standard input")?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let updates = match base64::engine::general_purpose::STANDARD.decode(text) {
            Err(error) => {
                writeln!(errors, "line {}: not base64: {error}", line_index + 1)?;
                Vec::new()
            }
            Ok(wire) => match parse_transaction_exact(&wire) {
                Err(error) => {
                    writeln!(
                        errors,
                        "line {}: not a transaction: {error}",
                        line_index + 1
                    )?;
                    Vec::new()
                }
                Ok(transaction) => {
                    transaction_updates(&transaction, registry, Placement::default(), &mut stats)
                }
            },
        };
        serde_json::to_writer(&mut *out, &updates)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}
