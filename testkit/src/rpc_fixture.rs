//! Loads a fixture archive (a `blocks.json` describing blocks around real wire transactions and
//! their metadata) into a [`MemoryStore`]: the data of the JSON-RPC tests, the load benchmark and
//! the client tests (`rpc/tests/fixtures/rpc/`, see its SOURCES.md). Not a production format.
//!
//! Metadata comes either from a yellowstone `txupdate` JSON rendering (real mainnet metadata) or
//! from an inline object using the stored (protobuf) field names.

use std::path::{Path, PathBuf};

use archive::proto;
use base64::Engine;
use serde_json::Value;

use rpc::memory_store::MemoryStore;

/// Why a fixture archive did not load.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("reading {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Format { path: PathBuf, reason: String },
}

impl FixtureError {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Io { .. } => "io",
            Self::Format { .. } => "format",
        }
    }
}

struct Loader<'a> {
    dir: &'a Path,
    path: PathBuf,
}

impl Loader<'_> {
    fn bad(&self, reason: impl Into<String>) -> FixtureError {
        FixtureError::Format {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    fn read(&self, relative: &str) -> Result<Vec<u8>, FixtureError> {
        let path = self.dir.join(relative);
        std::fs::read(&path).map_err(|source| FixtureError::Io { path, source })
    }

    fn u64(&self, value: &Value, key: &str) -> Result<u64, FixtureError> {
        value
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| self.bad(format!("`{key}` must be an unsigned integer")))
    }

    fn hash(&self, value: &Value, key: &str) -> Result<Option<[u8; 32]>, FixtureError> {
        match value.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => rpc::error::parse_pubkey(text)
                .map(Some)
                .map_err(|_| self.bad(format!("`{key}` is not a base58 hash"))),
            Some(_) => Err(self.bad(format!("`{key}` must be a string or null"))),
        }
    }

    /// A key given as base58 text or as a byte array.
    fn key_bytes(&self, value: &Value) -> Result<Vec<u8>, FixtureError> {
        match value {
            Value::String(text) => bs58::decode(text)
                .into_vec()
                .map_err(|_| self.bad(format!("{text:?} is not base58"))),
            Value::Array(_) => self.byte_array(value),
            _ => Err(self.bad("a key must be base58 text or a byte array")),
        }
    }

    fn byte_array(&self, value: &Value) -> Result<Vec<u8>, FixtureError> {
        value
            .as_array()
            .ok_or_else(|| self.bad("expected a byte array"))?
            .iter()
            .map(|byte| {
                byte.as_u64()
                    .and_then(|b| u8::try_from(b).ok())
                    .ok_or_else(|| self.bad("byte out of range"))
            })
            .collect()
    }

    fn u64_list(&self, value: Option<&Value>) -> Result<Vec<u64>, FixtureError> {
        match value {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_u64()
                        .ok_or_else(|| self.bad("expected unsigned integers"))
                })
                .collect(),
            Some(_) => Err(self.bad("expected an array of integers")),
        }
    }

    fn strings(value: Option<&Value>) -> Vec<String> {
        value
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn rewards(&self, value: Option<&Value>) -> Result<Vec<proto::Reward>, FixtureError> {
        let Some(items) = value.and_then(Value::as_array) else {
            return Ok(Vec::new());
        };
        items
            .iter()
            .map(|reward| {
                Ok(proto::Reward {
                    pubkey: reward["pubkey"].as_str().unwrap_or_default().to_string(),
                    lamports: reward["lamports"]
                        .as_i64()
                        .ok_or_else(|| self.bad("reward lamports"))?,
                    post_balance: self.u64(reward, "post_balance")?,
                    reward_type: reward["reward_type"].as_i64().unwrap_or(0) as i32,
                    commission: reward["commission"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                })
            })
            .collect()
    }

    /// Token balances from either form (`txupdate` camelCase or inline snake_case).
    fn token_balances(&self, value: Option<&Value>) -> Vec<proto::TokenBalance> {
        let Some(items) = value.and_then(Value::as_array) else {
            return Vec::new();
        };
        let text = |v: &Value, a: &str, b: &str| {
            v.get(a)
                .or_else(|| v.get(b))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        items
            .iter()
            .map(|balance| {
                let amount = balance.get("uiTokenAmount").unwrap_or(balance);
                proto::TokenBalance {
                    account_index: balance
                        .get("accountIndex")
                        .or_else(|| balance.get("account_index"))
                        .and_then(Value::as_u64)
                        .unwrap_or(0) as u32,
                    mint: text(balance, "mint", "mint"),
                    owner: text(balance, "owner", "owner"),
                    program_id: text(balance, "programId", "program_id"),
                    ui_token_amount: Some(proto::UiTokenAmount {
                        ui_amount: amount
                            .get("uiAmount")
                            .or_else(|| amount.get("ui_amount"))
                            .and_then(Value::as_f64)
                            .unwrap_or(0.0),
                        decimals: amount.get("decimals").and_then(Value::as_u64).unwrap_or(0)
                            as u32,
                        amount: text(amount, "amount", "amount"),
                        ui_amount_string: text(amount, "uiAmountString", "ui_amount_string"),
                    }),
                }
            })
            .collect()
    }

    fn inner_instructions(
        &self,
        value: Option<&Value>,
    ) -> Result<Vec<proto::InnerInstructions>, FixtureError> {
        let Some(items) = value.and_then(Value::as_array) else {
            return Ok(Vec::new());
        };
        items
            .iter()
            .map(|inner| {
                let instructions = inner["instructions"]
                    .as_array()
                    .ok_or_else(|| self.bad("inner instructions"))?
                    .iter()
                    .map(|ix| {
                        Ok(proto::InnerInstruction {
                            program_id_index: self.u64(ix, "programIdIndex")? as u32,
                            accounts: self.byte_array(&ix["accounts"])?,
                            data: self.byte_array(&ix["data"])?,
                            stack_height: ix["stackHeight"].as_u64().map(|h| h as u32),
                        })
                    })
                    .collect::<Result<_, FixtureError>>()?;
                Ok(proto::InnerInstructions {
                    index: self.u64(inner, "index")? as u32,
                    instructions,
                })
            })
            .collect()
    }

    /// Metadata from a yellowstone `txupdate` JSON file.
    fn txupdate_meta(&self, relative: &str) -> Result<proto::TransactionStatusMeta, FixtureError> {
        let bytes = self.read(relative)?;
        let doc: Value = serde_json::from_slice(&bytes).map_err(|e| self.bad(e.to_string()))?;
        let meta = &doc["transaction"]["meta"];
        if !meta["err"].is_null() {
            return Err(self.bad("txupdate errors are not supported; use an inline meta"));
        }
        let keys = |key: &str| -> Result<Vec<Vec<u8>>, FixtureError> {
            meta[key]
                .as_array()
                .map(|items| items.iter().map(|k| self.key_bytes(k)).collect())
                .unwrap_or(Ok(Vec::new()))
        };
        Ok(proto::TransactionStatusMeta {
            err: None,
            fee: self.u64(meta, "fee")?,
            pre_balances: self.u64_list(meta.get("preBalances"))?,
            post_balances: self.u64_list(meta.get("postBalances"))?,
            inner_instructions: self.inner_instructions(meta.get("innerInstructions"))?,
            inner_instructions_none: meta["innerInstructions"].is_null(),
            log_messages: Self::strings(meta.get("logMessages")),
            log_messages_none: meta["logMessages"].is_null(),
            pre_token_balances: self.token_balances(meta.get("preTokenBalances")),
            post_token_balances: self.token_balances(meta.get("postTokenBalances")),
            rewards: Vec::new(),
            loaded_writable_addresses: keys("loadedWritableAddresses")?,
            loaded_readonly_addresses: keys("loadedReadonlyAddresses")?,
            return_data: None,
            return_data_none: meta["returnData"].is_null(),
            compute_units_consumed: meta["computeUnitsConsumed"].as_u64(),
            cost_units: meta["costUnits"].as_u64(),
        })
    }

    /// Metadata given inline with the stored field names.
    fn inline_meta(&self, meta: &Value) -> Result<proto::TransactionStatusMeta, FixtureError> {
        let keys = |key: &str| -> Result<Vec<Vec<u8>>, FixtureError> {
            meta.get(key)
                .and_then(Value::as_array)
                .map(|items| items.iter().map(|k| self.key_bytes(k)).collect())
                .unwrap_or(Ok(Vec::new()))
        };
        let err = match meta.get("err").and_then(Value::as_str) {
            None => None,
            Some(hex) => Some(proto::TransactionError {
                err: decode_hex(hex).ok_or_else(|| self.bad("`err` must be hex"))?,
            }),
        };
        let flag = |key: &str| meta.get(key).and_then(Value::as_bool).unwrap_or(false);
        let return_data = match meta.get("return_data") {
            Some(data) if !data.is_null() => Some(proto::ReturnData {
                program_id: self.key_bytes(&data["program_id"])?,
                data: base64::engine::general_purpose::STANDARD
                    .decode(data["data"].as_str().unwrap_or_default())
                    .map_err(|_| self.bad("return data must be base64"))?,
            }),
            _ => None,
        };
        Ok(proto::TransactionStatusMeta {
            err,
            fee: self.u64(meta, "fee")?,
            pre_balances: self.u64_list(meta.get("pre_balances"))?,
            post_balances: self.u64_list(meta.get("post_balances"))?,
            inner_instructions: self.inner_instructions(meta.get("inner_instructions"))?,
            inner_instructions_none: flag("inner_instructions_none"),
            log_messages: Self::strings(meta.get("log_messages")),
            log_messages_none: flag("log_messages_none"),
            pre_token_balances: self.token_balances(meta.get("pre_token_balances")),
            post_token_balances: self.token_balances(meta.get("post_token_balances")),
            rewards: self.rewards(meta.get("rewards"))?,
            loaded_writable_addresses: keys("loaded_writable")?,
            loaded_readonly_addresses: keys("loaded_readonly")?,
            return_data,
            return_data_none: flag("return_data_none"),
            compute_units_consumed: meta.get("compute_units_consumed").and_then(Value::as_u64),
            cost_units: meta.get("cost_units").and_then(Value::as_u64),
        })
    }

    fn transaction(
        &self,
        slot: u64,
        index: u32,
        spec: &Value,
    ) -> Result<archive::Transaction, FixtureError> {
        let wire_path = spec["wire"]
            .as_str()
            .ok_or_else(|| self.bad("transaction without `wire`"))?;
        let text = self.read(wire_path)?;
        let wire = base64::engine::general_purpose::STANDARD
            .decode(text.trim_ascii())
            .map_err(|_| self.bad(format!("{wire_path} is not base64")))?;
        let meta = match &spec["meta"] {
            Value::Null => None,
            meta => Some(match (meta.get("txupdate"), meta.get("inline")) {
                (Some(Value::String(path)), _) => self.txupdate_meta(path)?,
                (_, Some(inline)) => self.inline_meta(inline)?,
                _ => return Err(self.bad("`meta` needs `txupdate` or `inline`")),
            }),
        };
        Ok(archive::Transaction {
            slot,
            index,
            wire,
            meta,
        })
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Loads `dir/blocks.json` and the files it names.
pub fn load(dir: &Path) -> Result<MemoryStore, FixtureError> {
    let loader = Loader {
        dir,
        path: dir.join("blocks.json"),
    };
    let bytes = loader.read("blocks.json")?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| loader.bad(e.to_string()))?;
    let epochs = loader.u64_list(doc.get("epochs"))?;
    let mut blocks = Vec::new();
    for spec in doc["blocks"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let slot = loader.u64(spec, "slot")?;
        let transactions = spec["transactions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(index, tx)| loader.transaction(slot, index as u32, tx))
            .collect::<Result<_, _>>()?;
        blocks.push(archive::Block {
            slot,
            parent_slot: loader.u64(spec, "parent_slot")?,
            blockhash: loader
                .hash(spec, "blockhash")?
                .ok_or_else(|| loader.bad("block without blockhash"))?,
            previous_blockhash: loader.hash(spec, "previous_blockhash")?,
            block_time: spec["block_time"].as_i64(),
            block_height: spec["block_height"].as_u64(),
            rewards: loader.rewards(spec.get("rewards"))?,
            num_partitions: spec["num_partitions"].as_u64(),
            transactions,
        });
    }
    Ok(MemoryStore::new(epochs, blocks))
}
