//! `dex::decode_call` on arbitrary instruction data for every supported program (the first byte
//! picks the program): decoding never panics, a decoded call's logical name is one the program
//! lists for filters, its strings and byte strings are views into the data, and the same data
//! decodes the same way twice.
#![no_main]

use decoder::dex::{DecodedArgs, DexProgram, decode_call};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Some((&selector, data)) = bytes.split_first() else { return };
    let program = DexProgram::ALL[usize::from(selector) % DexProgram::ALL.len()];
    let result = decode_call(program, data);
    assert_eq!(result, decode_call(program, data));
    let Ok(call) = result else { return };
    assert!(program.logical_names().contains(&call.instruction_name));
    match call.args {
        DecodedArgs::AlphaFunCreate { name, symbol, uri }
        | DecodedArgs::LaunchLabCreate { name, symbol, uri, .. } => {
            for text in [name, symbol, uri] {
                decoder_fuzz::span_within(data, text.as_bytes());
            }
        }
        DecodedArgs::DbcInitialize { pool_config: params }
        | DecodedArgs::DammV2CreatePool { config: params } => {
            // The parameters start right after the 8-byte discriminator.
            assert_eq!(decoder_fuzz::span_within(data, params).start, 8);
        }
        _ => {}
    }
});
