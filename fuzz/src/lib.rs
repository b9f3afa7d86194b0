//! Invariant checks shared by the fuzz targets: what must hold for every value the decoder's
//! parsers return from untrusted bytes, beyond "it did not panic".
//!
//! Each `check_*` takes the input the value was parsed from and asserts that every borrowed view
//! lies inside that input, has the length its header implies, and agrees with the counts the
//! value reports. The targets in `fuzz_targets/` call them on every successful parse; a failed
//! assertion is a decoder bug (an accessor that escapes its input, or a count that iteration
//! contradicts), reported by libFuzzer like a crash.
#![forbid(unsafe_code)]

use std::ops::Range;

use decoder::entry::EntryBatch;
use decoder::shred::{
    CHAINED_ROOT_LEN, DATA_HEADERS_LEN, DATA_SHREDS_PER_FEC_SET, FEC_SET_PROOF_SIZE, KindHeader,
    MAX_SHREDS_PER_SLOT, MERKLE_PROOF_ENTRY_LEN, SHREDS_PER_FEC_SET, SIGNATURE_LEN, ShredKind,
    ShredRef, shard_offset,
};
use decoder::transaction::{
    ACCOUNT_KEYS_V0_MAX, MESSAGE_VERSION_PREFIX, MessageVersion, TransactionView,
    parse_transaction_exact,
};

/// The byte range `part` occupies inside `input`; panics when it is not inside. An empty `part`
/// must still point into `input` or at its end (the decoder only ever slices its input).
pub fn span_within(input: &[u8], part: &[u8]) -> Range<usize> {
    let input_start = input.as_ptr() as usize;
    let part_start = part.as_ptr() as usize;
    assert!(part_start >= input_start, "view starts before its input");
    let start = part_start - input_start;
    let end = start + part.len();
    assert!(
        end <= input.len(),
        "view {start}..{end} escapes an input of {} bytes",
        input.len()
    );
    start..end
}

/// Every accessor of a parsed shred stays inside `input`, where the layout of docs/decoder.md
/// (format §6) puts it, with the lengths its variant implies; header fields read back from the
/// wire.
pub fn check_shred(input: &[u8], shred: &ShredRef<'_>) {
    let variant = shred.variant();
    let payload = shred.payload();
    assert_eq!(span_within(input, payload), 0..variant.payload_len());
    assert_eq!(input[64], variant.to_byte());
    assert_eq!(variant.proof_size, FEC_SET_PROOF_SIZE);
    assert_eq!(shred.kind(), variant.kind);
    assert_eq!(
        shred.slot(),
        u64::from_le_bytes(payload[65..73].try_into().unwrap())
    );
    assert_eq!(
        shred.index(),
        u32::from_le_bytes(payload[73..77].try_into().unwrap())
    );
    assert_eq!(
        shred.shred_version(),
        u16::from_le_bytes([payload[77], payload[78]])
    );
    assert_eq!(
        shred.fec_set_index(),
        u32::from_le_bytes(payload[79..83].try_into().unwrap())
    );
    assert!(shred.index() < MAX_SHREDS_PER_SLOT);
    assert_eq!(shred.fec_set_index() % DATA_SHREDS_PER_FEC_SET as u32, 0);
    assert!(shred.erasure_index() < SHREDS_PER_FEC_SET);
    assert_eq!(span_within(input, shred.signature()), 0..SIGNATURE_LEN);

    // The tail, back to front: retransmitter signature, proof, chained root, then the shard.
    let shard_len = variant
        .shard_len()
        .expect("an accepted variant leaves room for a shard");
    let shard_start = shard_offset(variant.kind);
    let shard = span_within(input, shred.erasure_shard());
    assert_eq!(shard, shard_start..shard_start + shard_len);
    let proof = span_within(input, shred.merkle_proof());
    assert_eq!(
        proof.len(),
        usize::from(variant.proof_size) * MERKLE_PROOF_ENTRY_LEN
    );
    assert_eq!(proof.start, variant.proof_offset());
    match shred.chained_root() {
        Some(root) => {
            assert!(variant.chained);
            assert_eq!(
                span_within(input, root),
                shard.end..shard.end + CHAINED_ROOT_LEN
            );
            assert_eq!(shard.end + CHAINED_ROOT_LEN, proof.start);
        }
        None => assert!(!variant.chained && shard.end == proof.start),
    }
    let tail_end = match shred.retransmitter_signature() {
        Some(signature) => {
            assert!(variant.resigned);
            span_within(input, signature).start
        }
        None => {
            assert!(!variant.resigned);
            payload.len()
        }
    };
    assert_eq!(proof.end, tail_end);
    assert_eq!(
        span_within(input, shred.merkle_leaf_input()),
        SIGNATURE_LEN..proof.start
    );

    match shred.kind_header() {
        KindHeader::Data {
            parent_offset,
            flags,
            size,
        } => {
            assert_eq!(variant.kind, ShredKind::Data);
            assert!(shred.is_data());
            let data = shred.data();
            assert_eq!(data.len(), usize::from(size) - DATA_HEADERS_LEN);
            assert_eq!(
                span_within(input, data),
                DATA_HEADERS_LEN..usize::from(size)
            );
            assert!(
                usize::from(size) <= shard.end,
                "entry bytes run into the Merkle tail"
            );
            assert_eq!(shred.flags(), flags);
            assert_eq!(
                shred.parent_slot(),
                Some(shred.slot() - u64::from(parent_offset))
            );
            assert!(parent_offset > 0 || shred.slot() == 0);
            assert!(!shred.last_in_slot() || shred.data_complete());
            let position = shred.index() - shred.fec_set_index();
            assert_eq!(shred.erasure_index(), position as usize);
        }
        KindHeader::Code {
            num_data,
            num_coding,
            position,
        } => {
            assert_eq!(variant.kind, ShredKind::Code);
            assert!(!shred.is_data() && shred.data().is_empty() && shred.flags() == 0);
            assert_eq!(shred.parent_slot(), None);
            assert!(position < num_coding);
            assert_eq!(
                shred.erasure_index(),
                usize::from(num_data) + usize::from(position)
            );
        }
    }
}

/// A sanitized transaction: every view lies inside `input`, the counts agree with iteration, and
/// every index the runtime would follow is in range (rules 1–7 of `decoder::transaction`).
pub fn check_transaction(input: &[u8], transaction: &TransactionView<'_>) {
    let bytes = transaction.bytes();
    let whole = span_within(input, bytes);
    let message = span_within(input, transaction.message_bytes());
    assert_eq!(message.end, whole.end, "the message ends the transaction");
    let header = transaction.header();
    let signatures = transaction.signatures();
    assert_eq!(signatures.len(), transaction.signature_count());
    assert_eq!(
        signatures.len(),
        usize::from(header.num_required_signatures)
    );
    // The signatures sit between their compact-u16 count (1 to 3 bytes) and the message.
    let signatures_len = signatures.len() * SIGNATURE_LEN;
    assert!(message.start >= whole.start + 1 + signatures_len);
    assert!(message.start <= whole.start + 3 + signatures_len);
    assert_eq!(transaction.first_signature(), &signatures[0]);
    assert_eq!(transaction.signature(signatures.len()), None);

    let static_count = transaction.static_account_count();
    assert_eq!(transaction.static_account_keys().len(), static_count);
    assert_eq!(
        transaction.fee_payer(),
        &transaction.static_account_keys()[0]
    );
    assert!(header.num_readonly_signed_accounts < header.num_required_signatures);
    let signer_area = usize::from(header.num_required_signatures)
        + usize::from(header.num_readonly_unsigned_accounts);
    assert!(signer_area <= static_count);
    let prefixed = transaction.message_bytes()[0] & MESSAGE_VERSION_PREFIX != 0;
    assert_eq!(prefixed, transaction.version() == MessageVersion::V0);

    let account_count = transaction.account_count();
    let loaded = transaction.loaded_writable_count() + transaction.loaded_readonly_count();
    assert_eq!(account_count, static_count + loaded);
    let mut instruction_count = 0;
    for instruction in transaction.instructions() {
        instruction_count += 1;
        let program = usize::from(instruction.program_id_index);
        assert!(
            program > 0 && program < static_count,
            "program id {program} of {static_count}"
        );
        for &account_index in instruction.account_indices {
            assert!(usize::from(account_index) < account_count);
        }
        within(&message, span_within(input, instruction.account_indices));
        within(&message, span_within(input, instruction.data));
    }
    assert_eq!(instruction_count, transaction.instruction_count());
    check_lookups(input, &message, transaction);

    // The transaction's own bytes are exactly one transaction, and parse to the same view.
    let again = parse_transaction_exact(bytes).expect("a parsed transaction re-parses exactly");
    assert_eq!(again.bytes(), bytes);
    assert_eq!(again.signature_count(), transaction.signature_count());
    assert_eq!(again.account_count(), account_count);
}

fn check_lookups(input: &[u8], message: &Range<usize>, transaction: &TransactionView<'_>) {
    let (mut count, mut writable, mut readonly) = (0, 0, 0);
    for lookup in transaction.address_table_lookups() {
        count += 1;
        writable += lookup.writable_indices.len();
        readonly += lookup.readonly_indices.len();
        assert!(!lookup.writable_indices.is_empty() || !lookup.readonly_indices.is_empty());
        within(message, span_within(input, lookup.table));
        within(message, span_within(input, lookup.writable_indices));
        within(message, span_within(input, lookup.readonly_indices));
    }
    assert_eq!(count, transaction.address_table_lookup_count());
    assert_eq!(transaction.uses_lookup_tables(), count > 0);
    assert_eq!(writable, transaction.loaded_writable_count());
    assert_eq!(readonly, transaction.loaded_readonly_count());
    match transaction.version() {
        MessageVersion::Legacy => assert_eq!(count, 0),
        MessageVersion::V0 => assert!(transaction.account_count() <= ACCOUNT_KEYS_V0_MAX),
    }
}

/// A validated entry batch: entry and transaction iteration yield exactly the counts the batch
/// reports, every transaction is valid and inside `input`, and the entries cover every byte.
pub fn check_entry_batch(input: &[u8], batch: &EntryBatch<'_>) {
    let entries = batch.entries();
    let entry_count = usize::try_from(batch.entry_count()).expect("entry count fits memory");
    assert_eq!(entries.size_hint(), (entry_count, Some(entry_count)));
    let mut entries_seen = 0;
    let mut transactions_seen = 0u64;
    // Bytes covered: the 8-byte entry count, then each entry's 48-byte header and transactions.
    let mut covered = 8;
    let mut flattened = Vec::new();
    for entry in entries {
        entries_seen += 1;
        assert_eq!(entry.is_tick(), entry.transaction_count == 0);
        let region = entry.transactions_bytes();
        let mut next_start = span_within(input, region).start;
        let mut in_entry = 0;
        for transaction in entry.transactions() {
            in_entry += 1;
            check_transaction(input, &transaction);
            let range = span_within(input, transaction.bytes());
            assert_eq!(
                range.start, next_start,
                "transactions of an entry are contiguous"
            );
            next_start = range.end;
            flattened.push(range);
        }
        assert_eq!(in_entry, entry.transaction_count);
        assert_eq!(next_start, span_within(input, region).end);
        transactions_seen += in_entry;
        covered += decoder::entry::ENTRY_HEADER_LEN_BYTES + region.len();
    }
    assert_eq!(entries_seen, entry_count);
    assert_eq!(transactions_seen, batch.transaction_count());
    assert_eq!(
        covered,
        input.len(),
        "a validated batch consumes every byte"
    );
    let direct: Vec<_> = batch
        .transactions()
        .map(|transaction| span_within(input, transaction.bytes()))
        .collect();
    assert_eq!(
        direct, flattened,
        "batch-wide and per-entry iteration agree"
    );
}

fn within(outer: &Range<usize>, inner: Range<usize>) {
    assert!(
        outer.start <= inner.start && inner.end <= outer.end,
        "{inner:?} outside {outer:?}"
    );
}
