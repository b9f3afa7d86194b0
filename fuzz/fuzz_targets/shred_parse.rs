//! `parse_shred` on arbitrary datagrams under both parse options: every accessor of an accepted
//! shred stays inside the input (`decoder_fuzz::check_shred`), and allowing unchained variants
//! changes nothing but the acceptance of unchained variants.
#![no_main]

use decoder::shred::{ParseOptions, ShredError, parse_shred};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let strict = parse_shred(
        bytes,
        ParseOptions {
            allow_unchained: false,
        },
    );
    let lenient = parse_shred(
        bytes,
        ParseOptions {
            allow_unchained: true,
        },
    );
    if let Ok(shred) = &lenient {
        decoder_fuzz::check_shred(bytes, shred);
    }
    match (strict, lenient) {
        (Ok(strict), Ok(lenient)) => {
            assert!(strict.variant().chained);
            assert_eq!(strict.payload(), lenient.payload());
            assert_eq!(strict.kind_header(), lenient.kind_header());
        }
        (Ok(_), Err(error)) => panic!("allowing unchained variants rejected a shred: {error}"),
        (Err(error), Ok(shred)) => {
            assert!(
                matches!(error, ShredError::UnchainedVariant { .. }),
                "{error}"
            );
            assert!(!shred.variant().chained);
        }
        (Err(strict), Err(lenient)) => {
            assert!(strict == lenient || matches!(strict, ShredError::UnchainedVariant { .. }));
        }
    }
});
