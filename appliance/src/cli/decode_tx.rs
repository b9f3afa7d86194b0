//! `appliance decode-tx`: base64 wire transactions on standard input, one per line; for each, one
//! JSON line on standard output: the array of `SubscribeUpdate` messages an empty-map subscriber
//! would receive, in canonical proto3 JSON (`[]` outside the stream's universe). `serverTiming` is
//! omitted and `slot` / `txIndex` are unset (0, so omitted), as a lone transaction has neither.
//!
//! `--program-id NAME=BASE58` (repeatable) and `--aggregator-id BASE58` replace the mainnet ids
//! of the registry (a fork, a devnet deployment). Blank lines are skipped. A line that is not base64 of a well-formed transaction prints `[]`, so
//! output lines stay aligned with input lines, and the reason goes to standard error with the line
//! number; every line is still processed, and the command then fails (non-zero exit) saying how
//! many lines were invalid. Decode failures of single instructions are not errors: the
//! instruction is simply not listed.
//!
//! `--lookup-tables FILE` and `--rpc URL` resolve address-table lookups as the stream does
//! (`decode_tx_lookups`): the updates then carry `loadedWritableAddresses`,
//! `loadedReadonlyAddresses` and `lookupStatus`; without them a transaction with lookups is
//! `LOOKUP_STATUS_UNRESOLVED`.

use std::io::{BufRead, Write};

use anyhow::{Context, bail};
use base64::Engine;
use decoder::dex::ProgramRegistry;
use decoder::transaction::parse_transaction_exact;
use stream::encode::{DecodeStats, Placement, encode_resolved};

use super::decode_tx_lookups::TxLookups;

pub fn run(
    registry: &ProgramRegistry,
    lookups: &mut TxLookups,
    input: impl BufRead,
    out: &mut impl Write,
    errors: &mut impl Write,
) -> anyhow::Result<()> {
    let mut stats = DecodeStats::default();
    let mut invalid = 0usize;
    for (line_index, line) in input.lines().enumerate() {
        let line = line.context("reading standard input")?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let updates = match base64::engine::general_purpose::STANDARD.decode(text) {
            Err(error) => {
                writeln!(errors, "line {}: not base64: {error}", line_index + 1)?;
                invalid += 1;
                Vec::new()
            }
            Ok(wire) => match parse_transaction_exact(&wire) {
                Err(error) => {
                    writeln!(
                        errors,
                        "line {}: not a transaction: {error}",
                        line_index + 1
                    )?;
                    invalid += 1;
                    Vec::new()
                }
                Ok(transaction) => {
                    let decoded = decoder::decode_transaction(&transaction, registry, &mut stats);
                    let loaded = if decoded.is_empty() {
                        None
                    } else {
                        lookups.resolve(&transaction, line_index + 1, &mut *errors)?
                    };
                    encode_resolved(&transaction, &decoded, Placement::default(), loaded)
                }
            },
        };
        serde_json::to_writer(&mut *out, &updates)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    if invalid > 0 {
        bail!("{invalid} input line(s) were not base64 wire transactions (their output is [])");
    }
    Ok(())
}
