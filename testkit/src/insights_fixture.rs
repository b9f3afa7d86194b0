//! The insights fixture chain's archived blocks (`insights/tests/fixtures/insights/archive/
//! <slot>.json`, see its `generate.py`) read into the archive's types: the one reader behind the
//! insights tests' in-memory archive, the backfill test's CAR and the embedded default's insights
//! sample (`appliance/samples/`). A malformed fixture reads as `None`, which the tests turn into a
//! failure.

use std::path::{Path, PathBuf};

use archive::proto::{
    InnerInstruction, InnerInstructions, TransactionError, TransactionStatusMeta,
};
use archive::writer::{
    BlockInput, CarWriter, EntryInput, MetaInput, RootKind, TxInput, WriteError, WriterOptions,
};
use base64::Engine;
use serde_json::Value;

/// One archived transaction: its wire bytes and status metadata.
#[derive(Debug, Clone)]
pub struct FixtureTransaction {
    pub wire: Vec<u8>,
    pub meta: TransactionStatusMeta,
}

/// One archived block of the chain.
#[derive(Debug, Clone)]
pub struct FixtureBlock {
    pub slot: u64,
    pub parent_slot: u64,
    pub blockhash: [u8; 32],
    pub block_time: Option<i64>,
    pub block_height: Option<u64>,
    pub transactions: Vec<FixtureTransaction>,
}

/// The fixture directory (`insights/tests/fixtures/insights`).
pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../insights/tests/fixtures/insights")
}

/// The block of `slot`; `None` for a skipped slot (no file) or a malformed one.
pub fn archived_block(slot: u64) -> Option<FixtureBlock> {
    let path = fixture_dir().join(format!("archive/{slot}.json"));
    let value: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let transactions = value["transactions"]
        .as_array()?
        .iter()
        .map(transaction)
        .collect::<Option<Vec<_>>>()?;
    Some(FixtureBlock {
        slot,
        parent_slot: value["parent_slot"].as_u64()?,
        blockhash: b58(&value["blockhash"])?.try_into().ok()?,
        block_time: value["block_time"].as_i64(),
        block_height: value["block_height"].as_u64(),
        transactions,
    })
}

/// The chain's first and last slot (`chain.json`).
pub fn chain_slots() -> Option<(u64, u64)> {
    let chain: Value =
        serde_json::from_slice(&std::fs::read(fixture_dir().join("chain.json")).ok()?).ok()?;
    Some((chain["first_slot"].as_u64()?, chain["last_slot"].as_u64()?))
}

/// The block of `slot` as the CAR writer's input (one entry holding every transaction); `None`
/// for a skipped slot.
pub fn block_input(slot: u64) -> Option<BlockInput> {
    let block = archived_block(slot)?;
    let transactions = block
        .transactions
        .into_iter()
        .map(|tx| TxInput {
            wire: tx.wire,
            meta: MetaInput::Protobuf(tx.meta),
        })
        .collect();
    Some(BlockInput {
        slot,
        parent_slot: block.parent_slot,
        block_time: block.block_time.unwrap_or(0),
        block_height: block.block_height,
        entries: vec![EntryInput {
            num_hashes: 1,
            hash: block.blockhash,
            transactions,
        }],
        rewards: None,
    })
}

/// The whole chain as the epoch-0 CAR the archive publishes (blocks in slot order, Epoch root);
/// returns the bytes and the number of blocks written.
pub fn chain_car() -> Result<(Vec<u8>, usize), WriteError> {
    let (first, last) = chain_slots().unwrap_or((1, 0));
    let mut writer = CarWriter::new(
        std::io::Cursor::new(Vec::new()),
        RootKind::Epoch(0),
        WriterOptions::default(),
    )?;
    let mut written = 0;
    for block in (first..=last).filter_map(block_input) {
        writer.write_block(&block)?;
        written += 1;
    }
    let (_, out) = writer.finish()?;
    Ok((out.into_inner(), written))
}

fn transaction(tx: &Value) -> Option<FixtureTransaction> {
    let meta = &tx["meta"];
    let inner = meta["inner"]
        .as_array()?
        .iter()
        .map(inner_group)
        .collect::<Option<Vec<_>>>()?;
    let addresses =
        |field: &str| -> Option<Vec<Vec<u8>>> { meta[field].as_array()?.iter().map(b58).collect() };
    let err = match meta["err"].as_str() {
        Some(text) => Some(TransactionError { err: hex(text)? }),
        None => None,
    };
    Some(FixtureTransaction {
        wire: base64::engine::general_purpose::STANDARD
            .decode(tx["wire"].as_str()?)
            .ok()?,
        meta: TransactionStatusMeta {
            err,
            fee: meta["fee"].as_u64()?,
            inner_instructions: inner,
            loaded_writable_addresses: addresses("loaded_writable")?,
            loaded_readonly_addresses: addresses("loaded_readonly")?,
            compute_units_consumed: meta["compute_units_consumed"].as_u64(),
            cost_units: meta["cost_units"].as_u64(),
            ..TransactionStatusMeta::default()
        },
    })
}

fn inner_group(group: &Value) -> Option<InnerInstructions> {
    let instructions = group["instructions"]
        .as_array()?
        .iter()
        .map(|ix| {
            Some(InnerInstruction {
                program_id_index: ix["program_id_index"].as_u64()? as u32,
                accounts: Vec::new(),
                data: Vec::new(),
                stack_height: ix["stack_height"].as_u64().map(|h| h as u32),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(InnerInstructions {
        index: group["index"].as_u64()? as u32,
        instructions,
    })
}

fn hex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn b58(value: &Value) -> Option<Vec<u8>> {
    bs58::decode(value.as_str()?).into_vec().ok()
}
