//! `delta::parse_route` on arbitrary instruction data: parsing never panics; the steps it yields
//! are exactly `parsed_step_count`, never more than declared, each a view inside the data whose
//! payload fields render; the plan bytes are inside the data; an error is reported exactly when
//! fewer steps than declared were parsed or an argument after the plan was unreadable.
#![no_main]

use decoder::delta::parse_route;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(route) = parse_route(data) else { return };
    assert!(route.parsed_step_count <= route.declared_step_count);
    if route.parsed_step_count < route.declared_step_count {
        assert!(route.error.is_some());
    }
    decoder_fuzz::span_within(data, route.plan_bytes);
    let mut count = 0;
    for step in route.steps() {
        assert_eq!(step.step_index, count);
        decoder_fuzz::span_within(data, step.bytes);
        decoder_fuzz::span_within(data, step.payload);
        for (_, value) in step.variant.fields(step.payload) {
            let _ = value.to_string();
        }
        count += 1;
    }
    assert_eq!(count, route.parsed_step_count);
    let _ = route.single_hop_amounts();
});
