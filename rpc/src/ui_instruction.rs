//! The instruction shapes of the validator's JSON (compiled, parsed, partially decoded), shared
//! by `encode` (which prints them) and `parsed` (which builds them).

use serde::Serialize;
use serde_json::Value;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCompiledInstruction {
    pub accounts: Vec<u8>,
    pub data: String,
    pub program_id_index: u8,
    pub stack_height: Option<u32>,
}

/// An instruction in the `jsonParsed` view, or a compiled one (inner instructions of the other
/// encodings share this type).
#[derive(Serialize)]
#[serde(untagged)]
pub enum UiInstruction {
    Compiled(UiCompiledInstruction),
    Parsed(ParsedInstruction),
    PartiallyDecoded(PartiallyDecodedInstruction),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParsedInstruction {
    pub parsed: Value,
    pub program: &'static str,
    pub program_id: String,
    pub stack_height: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartiallyDecodedInstruction {
    pub accounts: Vec<String>,
    pub data: String,
    pub program_id: String,
    pub stack_height: Option<u32>,
}
