//! `parse_transaction` on arbitrary bytes: an accepted transaction is a prefix of the input that
//! passes every sanitize rule (`decoder_fuzz::check_transaction`), the cursor moves exactly past
//! it, a rejection leaves the cursor where it was, and `parse_transaction_exact` agrees.
#![no_main]

use decoder::cursor::Cursor;
use decoder::transaction::{TransactionError, parse_transaction, parse_transaction_exact};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let mut cursor = Cursor::new(bytes);
    let exact = parse_transaction_exact(bytes);
    match parse_transaction(&mut cursor) {
        Ok(transaction) => {
            decoder_fuzz::check_transaction(bytes, &transaction);
            assert_eq!(
                decoder_fuzz::span_within(bytes, transaction.bytes()).start,
                0
            );
            assert_eq!(cursor.position(), transaction.bytes().len());
            let trailing = cursor.remaining();
            match exact {
                Ok(exact) => assert!(trailing == 0 && exact.bytes() == bytes),
                Err(error) => {
                    assert_eq!(error, TransactionError::TrailingBytes { count: trailing })
                }
            }
        }
        Err(error) => {
            assert_eq!(
                cursor.position(),
                0,
                "a rejected transaction moved the cursor"
            );
            assert_eq!(exact.map(|view| view.bytes()), Err(error));
        }
    }
});
