//! `framing::records` over arbitrary bytes: the iteration ends within a bound set by the input
//! length (every record consumes at least two bytes), records come in input order without
//! overlapping, each payload lies inside the input, and nothing follows an error.
#![no_main]

use capture::framing::{Framing, detect, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let mut iter = records(bytes);
    assert_eq!(iter.framing(), detect(bytes));
    let is_pcap = matches!(iter.framing(), Framing::Pcap { .. });
    let mut previous_end = 0;
    for _ in 0..bytes.len() / 2 + 1 {
        match iter.next() {
            Some(Ok(record)) => {
                let range = decoder_fuzz::span_within(bytes, record.payload);
                assert!(
                    range.start >= previous_end,
                    "records overlap or go backwards"
                );
                previous_end = range.end;
                assert_eq!(record.timestamp_ns.is_some(), is_pcap);
            }
            Some(Err(_)) => break,
            None => return,
        }
    }
    assert_eq!(
        iter.next(),
        None,
        "records went on past the bound, or past an error"
    );
});
