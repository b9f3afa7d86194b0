//! Unit and property tests for the transaction parser.

use proptest::collection::vec;
use proptest::prelude::*;

use super::test_wire::{
    InstructionSpec, LookupSpec, TransactionSpec, legacy_spec, minimal_spec, push_compact_u16,
    v0_spec, valid_spec,
};
use super::*;
use crate::cursor::CursorError;

/// Asserts that `view` shows exactly what `spec` describes, field by field.
fn assert_matches_spec(view: &TransactionView<'_>, spec: &TransactionSpec) {
    let wire = spec.encode();
    assert_eq!(view.bytes(), &wire[..]);
    assert_eq!(view.message_bytes(), &spec.message()[..]);
    assert_eq!(view.signatures(), &spec.signatures[..]);
    assert_eq!(view.signature_count(), spec.signatures.len());
    assert_eq!(view.first_signature(), &spec.signatures[0]);
    assert_eq!(view.signature(spec.signatures.len()), None);
    let expected_version = match spec.version {
        None => MessageVersion::Legacy,
        Some(_) => MessageVersion::V0,
    };
    assert_eq!(view.version(), expected_version);
    let header = view.header();
    assert_eq!(
        [
            header.num_required_signatures,
            header.num_readonly_signed_accounts,
            header.num_readonly_unsigned_accounts
        ],
        spec.header
    );
    assert_eq!(view.static_account_count(), spec.keys.len());
    assert_eq!(view.static_account_keys(), &spec.keys[..]);
    for (index, key) in spec.keys.iter().enumerate() {
        assert_eq!(view.static_account_key(index), Some(key));
    }
    assert_eq!(view.static_account_key(spec.keys.len()), None);
    assert_eq!(view.fee_payer(), &spec.keys[0]);
    assert_eq!(view.recent_blockhash(), &spec.recent_blockhash);

    assert_eq!(view.instruction_count(), spec.instructions.len());
    assert_eq!(view.instructions().len(), spec.instructions.len());
    let instructions: Vec<InstructionSpec> = view
        .instructions()
        .map(|i| InstructionSpec {
            program_id_index: i.program_id_index,
            accounts: i.account_indices.to_vec(),
            data: i.data.to_vec(),
        })
        .collect();
    assert_eq!(instructions, spec.instructions);

    assert_eq!(view.address_table_lookup_count(), spec.lookups.len());
    assert_eq!(view.uses_lookup_tables(), !spec.lookups.is_empty());
    let lookups: Vec<LookupSpec> = view
        .address_table_lookups()
        .map(|l| LookupSpec {
            table: *l.table,
            writable: l.writable_indices.to_vec(),
            readonly: l.readonly_indices.to_vec(),
        })
        .collect();
    assert_eq!(lookups, spec.lookups);
    let writable: usize = spec.lookups.iter().map(|l| l.writable.len()).sum();
    let readonly: usize = spec.lookups.iter().map(|l| l.readonly.len()).sum();
    assert_eq!(view.loaded_writable_count(), writable);
    assert_eq!(view.loaded_readonly_count(), readonly);
    assert_eq!(view.account_count(), spec.keys.len() + writable + readonly);
}

fn parse_spec(spec: &TransactionSpec) -> Result<(), TransactionError> {
    parse_transaction_exact(&spec.encode()).map(|_| ())
}

#[test]
fn legacy_transaction_round_trips() {
    let spec = legacy_spec();
    let wire = spec.encode();
    let view = parse_transaction_exact(&wire).unwrap();
    assert_matches_spec(&view, &spec);
}

#[test]
fn v0_transaction_with_lookups_round_trips() {
    let spec = v0_spec();
    let wire = spec.encode();
    let view = parse_transaction_exact(&wire).unwrap();
    assert_eq!(view.version(), MessageVersion::V0);
    assert!(view.uses_lookup_tables());
    assert_matches_spec(&view, &spec);
}

#[test]
fn v0_transaction_without_lookups_parses() {
    let mut spec = v0_spec();
    spec.lookups.clear();
    spec.instructions[0].accounts = vec![0, 1, 2];
    let wire = spec.encode();
    let view = parse_transaction_exact(&wire).unwrap();
    assert!(!view.uses_lookup_tables());
    assert_matches_spec(&view, &spec);
}

#[test]
fn minimal_transaction_has_the_documented_minimum_length() {
    let spec = minimal_spec();
    let wire = spec.encode();
    assert_eq!(wire.len(), TRANSACTION_LEN_BYTES_MIN);
    let view = parse_transaction_exact(&wire).unwrap();
    assert_matches_spec(&view, &spec);
}

#[test]
fn parse_transaction_advances_only_past_one_transaction() {
    let first = legacy_spec().encode();
    let second = v0_spec().encode();
    let joined = [first.clone(), second.clone()].concat();
    let mut cursor = Cursor::new(&joined);
    assert_eq!(parse_transaction(&mut cursor).unwrap().bytes(), &first[..]);
    assert_eq!(cursor.position(), first.len());
    assert_eq!(parse_transaction(&mut cursor).unwrap().bytes(), &second[..]);
    assert!(cursor.is_empty());
}

#[test]
fn failed_parse_leaves_the_cursor_where_it_was() {
    let mut wire = vec![0xEE];
    let mut spec = legacy_spec();
    spec.header[1] = 2;
    wire.extend_from_slice(&spec.encode());
    let mut cursor = Cursor::new(&wire);
    cursor.take_u8("lead").unwrap();
    assert!(parse_transaction(&mut cursor).is_err());
    assert_eq!(cursor.position(), 1);
}

#[test]
fn trailing_bytes_are_rejected_by_exact_parse() {
    let mut wire = legacy_spec().encode();
    wire.extend_from_slice(&[0, 0, 0]);
    let error = parse_transaction_exact(&wire).unwrap_err();
    assert_eq!(error, TransactionError::TrailingBytes { count: 3 });
    assert_eq!(error.label(), "trailing_bytes");
}

#[test]
fn every_truncation_is_an_error() {
    for spec in [legacy_spec(), v0_spec(), minimal_spec()] {
        let wire = spec.encode();
        for len in 0..wire.len() {
            let error = parse_transaction_exact(&wire[..len]).unwrap_err();
            assert_eq!(error.label(), "truncated", "length {len}: {error}");
        }
    }
}

#[test]
fn non_minimal_compact_u16_is_rejected() {
    let mut wire = vec![0x81, 0x00];
    wire.extend_from_slice(&legacy_spec().encode()[1..]);
    let error = parse_transaction_exact(&wire).unwrap_err();
    assert_eq!(
        error,
        TransactionError::Malformed(CursorError::BadCompactU16 {
            field: "signature count"
        })
    );
    assert_eq!(error.label(), "bad_compact_u16");
}

#[test]
fn huge_declared_counts_fail_fast() {
    // 0xFFFF signatures, instructions and lookups declared with almost nothing behind them.
    let mut wire = Vec::new();
    push_compact_u16(&mut wire, 0xFFFF);
    wire.extend_from_slice(&[0; 64]);
    let error = parse_transaction_exact(&wire).unwrap_err();
    assert!(matches!(
        error,
        TransactionError::Malformed(CursorError::Truncated { .. })
    ));

    let mut spec = minimal_spec();
    spec.instructions.clear();
    let mut wire = spec.encode();
    wire.pop();
    push_compact_u16(&mut wire, 0xFFFF);
    wire.extend_from_slice(&[1, 0, 0]);
    assert_eq!(
        parse_transaction_exact(&wire).unwrap_err(),
        TransactionError::Malformed(CursorError::Truncated {
            field: "instructions",
            needed: 3 * 0xFFFF,
            available: 3
        })
    );

    let mut spec = v0_spec();
    spec.lookups.clear();
    let mut wire = spec.encode();
    wire.pop();
    push_compact_u16(&mut wire, 0xFFFF);
    let error = parse_transaction_exact(&wire).unwrap_err();
    assert!(matches!(
        error,
        TransactionError::Malformed(CursorError::Truncated {
            field: "address table lookups",
            ..
        })
    ));
}

#[test]
fn versions_other_than_zero_are_rejected() {
    for version in [1u8, 2, 0x7E, 0x7F] {
        let mut spec = v0_spec();
        spec.version = Some(version);
        let error = parse_spec(&spec).unwrap_err();
        assert_eq!(error, TransactionError::UnsupportedVersion { version });
        assert_eq!(error.label(), "unsupported_version");
    }
}

#[test]
fn rule_1_header_must_fit_static_keys() {
    let mut spec = legacy_spec();
    spec.header[2] = 3; // 2 signers + 3 read-only unsigned > 4 keys
    let error = parse_spec(&spec).unwrap_err();
    assert_eq!(
        error,
        TransactionError::HeaderExceedsStaticKeys {
            needed: 5,
            static_account_count: 4
        }
    );
    assert_eq!(error.label(), "header_exceeds_static_keys");

    // More signers than keys, with signatures to match: rule 1 fires before rule 7 would.
    let mut spec = minimal_spec();
    spec.header[0] = 2;
    spec.signatures.push([0; 64]);
    assert_eq!(
        parse_spec(&spec).unwrap_err(),
        TransactionError::HeaderExceedsStaticKeys {
            needed: 2,
            static_account_count: 1
        }
    );

    // No keys at all.
    let mut spec = minimal_spec();
    spec.keys.clear();
    assert_eq!(
        parse_spec(&spec).unwrap_err().label(),
        "header_exceeds_static_keys"
    );
}

#[test]
fn rule_2_needs_a_writable_fee_payer() {
    let mut spec = legacy_spec();
    spec.header[1] = 2;
    let error = parse_spec(&spec).unwrap_err();
    assert_eq!(
        error,
        TransactionError::NoWritableFeePayer {
            num_readonly_signed_accounts: 2,
            num_required_signatures: 2
        }
    );
    assert_eq!(error.label(), "no_writable_fee_payer");

    // Zero signers and zero signatures: there is no fee payer at all.
    let mut spec = minimal_spec();
    spec.header = [0, 0, 0];
    spec.signatures.clear();
    assert_eq!(
        parse_spec(&spec).unwrap_err().label(),
        "no_writable_fee_payer"
    );
}

#[test]
fn rule_3_lookups_must_load_something() {
    let mut spec = v0_spec();
    spec.lookups.push(LookupSpec {
        table: [0x23; 32],
        writable: vec![],
        readonly: vec![],
    });
    let error = parse_spec(&spec).unwrap_err();
    assert_eq!(
        error,
        TransactionError::EmptyAddressTableLookup { lookup_index: 2 }
    );
    assert_eq!(error.label(), "empty_address_table_lookup");
}

#[test]
fn rule_4_v0_references_at_most_256_keys() {
    let mut spec = v0_spec();
    // 3 static + 4 loaded so far; 250 more readonly brings the total to 257.
    spec.lookups.push(LookupSpec {
        table: [0x24; 32],
        writable: vec![],
        readonly: vec![0; 250],
    });
    let error = parse_spec(&spec).unwrap_err();
    assert_eq!(
        error,
        TransactionError::TooManyAccountKeys {
            account_count: 257,
            max: 256
        }
    );
    assert_eq!(error.label(), "too_many_account_keys");

    // Exactly 256 is fine, and index 255 is then in range.
    spec.lookups.last_mut().unwrap().readonly.pop();
    spec.instructions[0].accounts.push(255);
    let wire = spec.encode();
    let view = parse_transaction_exact(&wire).unwrap();
    assert_eq!(view.account_count(), 256);
}

#[test]
fn legacy_messages_have_no_256_key_limit() {
    let mut spec = minimal_spec();
    spec.keys = (0..300u16).map(|i| [i as u8; 32]).collect();
    spec.instructions.push(InstructionSpec {
        program_id_index: 255,
        accounts: vec![255],
        data: vec![],
    });
    let wire = spec.encode();
    let view = parse_transaction_exact(&wire).unwrap();
    assert_eq!(view.static_account_count(), 300);
}

#[test]
fn rule_5_program_must_be_a_static_key() {
    let mut spec = v0_spec();
    // Index 3 exists, but only as a loaded address.
    spec.instructions[0].program_id_index = 3;
    let error = parse_spec(&spec).unwrap_err();
    assert_eq!(
        error,
        TransactionError::ProgramIdIndexOutOfRange {
            instruction_index: 0,
            program_id_index: 3,
            static_account_count: 3
        }
    );
    assert_eq!(error.label(), "program_id_index_out_of_range");
}

#[test]
fn rule_5_program_is_not_the_fee_payer() {
    let mut spec = legacy_spec();
    spec.instructions[1].program_id_index = 0;
    let error = parse_spec(&spec).unwrap_err();
    assert_eq!(
        error,
        TransactionError::ProgramIdIsFeePayer {
            instruction_index: 1
        }
    );
    assert_eq!(error.label(), "program_id_is_fee_payer");
}

#[test]
fn rule_6_account_indexes_stay_below_the_key_count() {
    let mut spec = legacy_spec();
    spec.instructions[1].accounts = vec![1, 4];
    let error = parse_spec(&spec).unwrap_err();
    assert_eq!(
        error,
        TransactionError::AccountIndexOutOfRange {
            instruction_index: 1,
            account_index: 4,
            account_count: 4
        }
    );
    assert_eq!(error.label(), "account_index_out_of_range");

    let mut spec = v0_spec();
    spec.instructions[0].accounts.push(7); // 7 keys: 0..=6
    assert_eq!(
        parse_spec(&spec).unwrap_err(),
        TransactionError::AccountIndexOutOfRange {
            instruction_index: 0,
            account_index: 7,
            account_count: 7
        }
    );
}

#[test]
fn instruction_errors_name_the_first_offender_in_reference_order() {
    let mut spec = legacy_spec();
    // Instruction 0 has a bad account, instruction 1 a bad program: the reference checks
    // instruction by instruction, so instruction 0's account error comes first.
    spec.instructions[0].accounts = vec![9];
    spec.instructions[1].program_id_index = 0;
    assert_eq!(
        parse_spec(&spec).unwrap_err(),
        TransactionError::AccountIndexOutOfRange {
            instruction_index: 0,
            account_index: 9,
            account_count: 4
        }
    );
}

#[test]
fn rule_7_signature_count_matches_the_header() {
    let mut spec = legacy_spec();
    spec.signatures.pop();
    let error = parse_spec(&spec).unwrap_err();
    assert_eq!(
        error,
        TransactionError::SignatureCountMismatch {
            num_required_signatures: 2,
            signature_count: 1
        }
    );
    assert_eq!(error.label(), "signature_count_mismatch");

    let mut spec = legacy_spec();
    spec.signatures.push([0; 64]);
    assert_eq!(
        parse_spec(&spec).unwrap_err(),
        TransactionError::SignatureCountMismatch {
            num_required_signatures: 2,
            signature_count: 3
        }
    );
}

#[test]
fn labels_are_distinct() {
    let errors = [
        TransactionError::Malformed(CursorError::Truncated {
            field: "",
            needed: 1,
            available: 0,
        }),
        TransactionError::Malformed(CursorError::BadCompactU16 { field: "" }),
        TransactionError::UnsupportedVersion { version: 1 },
        TransactionError::HeaderExceedsStaticKeys {
            needed: 1,
            static_account_count: 0,
        },
        TransactionError::NoWritableFeePayer {
            num_readonly_signed_accounts: 0,
            num_required_signatures: 0,
        },
        TransactionError::EmptyAddressTableLookup { lookup_index: 0 },
        TransactionError::TooManyAccountKeys {
            account_count: 257,
            max: 256,
        },
        TransactionError::ProgramIdIndexOutOfRange {
            instruction_index: 0,
            program_id_index: 0,
            static_account_count: 0,
        },
        TransactionError::ProgramIdIsFeePayer {
            instruction_index: 0,
        },
        TransactionError::AccountIndexOutOfRange {
            instruction_index: 0,
            account_index: 0,
            account_count: 0,
        },
        TransactionError::SignatureCountMismatch {
            num_required_signatures: 0,
            signature_count: 0,
        },
        TransactionError::TrailingBytes { count: 0 },
    ];
    let mut labels: Vec<&str> = errors.iter().map(TransactionError::label).collect();
    labels.sort_unstable();
    labels.dedup();
    assert_eq!(labels.len(), errors.len());
}

/// Bounds a successful parse must respect whatever the input: the view lies inside the input,
/// the cursor moved exactly over it, and the iterators yield exactly the declared counts.
fn assert_view_within(input: &[u8], view: &TransactionView<'_>, consumed: usize) {
    assert_eq!(view.bytes(), &input[..consumed]);
    assert!(view.message_bytes().len() < view.bytes().len());
    assert!(view.bytes().ends_with(view.message_bytes()));
    assert_eq!(view.instructions().count(), view.instruction_count());
    assert_eq!(
        view.address_table_lookups().count(),
        view.address_table_lookup_count()
    );
    for instruction in view.instructions() {
        assert!(usize::from(instruction.program_id_index) < view.static_account_count());
        assert!(
            instruction
                .account_indices
                .iter()
                .all(|&a| usize::from(a) < view.account_count())
        );
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..2048)) {
        let mut cursor = Cursor::new(&bytes);
        match parse_transaction(&mut cursor) {
            Ok(view) => assert_view_within(&bytes, &view, cursor.position()),
            Err(_) => prop_assert_eq!(cursor.position(), 0),
        }
        let _ = parse_transaction_exact(&bytes);
    }

    #[test]
    fn mutated_valid_transactions_never_panic(
        spec in valid_spec(),
        edits in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut wire = spec.encode();
        for (index, byte) in edits {
            let position = index.index(wire.len());
            wire[position] = byte;
        }
        wire.truncate(1 + cut.index(wire.len()));
        let mut cursor = Cursor::new(&wire);
        if let Ok(view) = parse_transaction(&mut cursor) {
            assert_view_within(&wire, &view, cursor.position());
        }
        let _ = parse_transaction_exact(&wire);
    }

    #[test]
    fn valid_transactions_round_trip(spec in valid_spec()) {
        let wire = spec.encode();
        let view = parse_transaction_exact(&wire);
        prop_assert!(view.is_ok(), "{:?}", view.err());
        if let Ok(view) = view {
            assert_matches_spec(&view, &spec);
        }
    }
}
