//! `parse_entry_batch` on arbitrary bytes: an accepted batch iterates to exactly the entry and
//! transaction counts it reports, with every transaction valid and inside the input
//! (`decoder_fuzz::check_entry_batch`).
#![no_main]

use decoder::entry::parse_entry_batch;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(batch) = parse_entry_batch(bytes) {
        decoder_fuzz::check_entry_batch(bytes, &batch);
    }
});
