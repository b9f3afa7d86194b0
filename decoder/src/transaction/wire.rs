//! The wire walk of one transaction (docs/decoder.md, format §9): its layout read once through
//! the bounds-checked cursor, before sanitize decides whether it is a transaction.

use crate::cursor::{Cursor, CursorError};

use super::{
    ADDRESS_LEN_BYTES, HASH_LEN_BYTES, InstructionView, LookupView, MESSAGE_VERSION_PREFIX,
    MessageHeader, MessageVersion, SIGNATURE_LEN_BYTES, TransactionError,
};

/// Everything the wire walk learns, before sanitize decides whether it is a transaction.
pub(super) struct Layout<'a> {
    pub(super) signatures: &'a [[u8; SIGNATURE_LEN_BYTES]],
    pub(super) message: &'a [u8],
    pub(super) version: MessageVersion,
    pub(super) header: MessageHeader,
    pub(super) static_account_keys: &'a [[u8; ADDRESS_LEN_BYTES]],
    pub(super) recent_blockhash: &'a [u8; HASH_LEN_BYTES],
    pub(super) instructions: &'a [u8],
    pub(super) instruction_count: usize,
    /// Summary of the instruction indexes, so the common all-valid case needs no second walk.
    pub(super) index_summary: IndexSummary,
    pub(super) lookups: &'a [u8],
    pub(super) lookup_count: usize,
    /// First lookup that loads nothing (rule 3).
    pub(super) empty_lookup_index: Option<usize>,
    pub(super) loaded_writable_count: usize,
    pub(super) loaded_readonly_count: usize,
}

/// Largest indexes seen over all instructions. Exclusive ends (max + 1) so that "no instruction"
/// is 0 and compares below every limit.
#[derive(Default)]
pub(super) struct IndexSummary {
    pub(super) program_id_index_end: usize,
    pub(super) program_id_is_fee_payer: bool,
    pub(super) account_index_end: usize,
}

/// Walks the wire format (no sanitize rules yet), leaving `cursor` after the transaction. Without
/// `SUMMARY` the instruction indexes are not summarised (a re-walk: sanitize already ran).
pub(super) fn read_layout<'a, const SUMMARY: bool>(
    cursor: &mut Cursor<'a>,
) -> Result<Layout<'a>, TransactionError> {
    let signature_count = usize::from(cursor.take_compact_u16("signature count")?);
    let signatures = take_arrays::<SIGNATURE_LEN_BYTES>(cursor, signature_count, "signatures")?;

    let message_start = cursor.position();
    let first_byte = cursor.take_u8("message header")?;
    let (version, num_required_signatures) = if first_byte & MESSAGE_VERSION_PREFIX != 0 {
        let version = first_byte & !MESSAGE_VERSION_PREFIX;
        if version != 0 {
            return Err(TransactionError::UnsupportedVersion { version });
        }
        (MessageVersion::V0, cursor.take_u8("message header")?)
    } else {
        (MessageVersion::Legacy, first_byte)
    };
    let header = MessageHeader {
        num_required_signatures,
        num_readonly_signed_accounts: cursor.take_u8("message header")?,
        num_readonly_unsigned_accounts: cursor.take_u8("message header")?,
    };

    let static_account_count = usize::from(cursor.take_compact_u16("account key count")?);
    let static_account_keys =
        take_arrays::<ADDRESS_LEN_BYTES>(cursor, static_account_count, "account keys")?;
    let recent_blockhash = cursor.take_array::<HASH_LEN_BYTES>("recent blockhash")?;

    let instruction_count = usize::from(cursor.take_compact_u16("instruction count")?);
    ensure_room(
        cursor,
        instruction_count,
        INSTRUCTION_LEN_BYTES_MIN,
        "instructions",
    )?;
    let instructions_start = cursor.position();
    let mut index_summary = IndexSummary::default();
    for _ in 0..instruction_count {
        let instruction = read_instruction(cursor)?;
        if SUMMARY {
            index_summary.record(&instruction);
        }
    }
    let instructions = span(cursor, instructions_start);

    let mut layout = Layout {
        signatures,
        message: &[],
        version,
        header,
        static_account_keys,
        recent_blockhash,
        instructions,
        instruction_count,
        index_summary,
        lookups: &[],
        lookup_count: 0,
        empty_lookup_index: None,
        loaded_writable_count: 0,
        loaded_readonly_count: 0,
    };
    if version == MessageVersion::V0 {
        read_lookups(cursor, &mut layout)?;
    }
    layout.message = span(cursor, message_start);
    Ok(layout)
}

/// Reads the v0 lookup list into `layout`.
fn read_lookups<'a>(cursor: &mut Cursor<'a>, layout: &mut Layout<'a>) -> Result<(), CursorError> {
    let lookup_count = usize::from(cursor.take_compact_u16("lookup count")?);
    ensure_room(
        cursor,
        lookup_count,
        LOOKUP_LEN_BYTES_MIN,
        "address table lookups",
    )?;
    let lookups_start = cursor.position();
    for lookup_index in 0..lookup_count {
        let lookup = read_lookup(cursor)?;
        if lookup.writable_indices.is_empty() && lookup.readonly_indices.is_empty() {
            layout.empty_lookup_index.get_or_insert(lookup_index);
        }
        // At most 0xFFFF lookups of at most 2 × 0xFFFF indexes each: no overflow in usize.
        layout.loaded_writable_count += lookup.writable_indices.len();
        layout.loaded_readonly_count += lookup.readonly_indices.len();
    }
    layout.lookups = span(cursor, lookups_start);
    layout.lookup_count = lookup_count;
    Ok(())
}

pub(super) fn read_instruction<'a>(
    cursor: &mut Cursor<'a>,
) -> Result<InstructionView<'a>, CursorError> {
    let program_id_index = cursor.take_u8("program id index")?;
    let account_count = usize::from(cursor.take_compact_u16("instruction account count")?);
    let account_indices = cursor.take(account_count, "instruction accounts")?;
    let data_len_bytes = usize::from(cursor.take_compact_u16("instruction data length")?);
    let data = cursor.take(data_len_bytes, "instruction data")?;
    Ok(InstructionView {
        program_id_index,
        account_indices,
        data,
    })
}

pub(super) fn read_lookup<'a>(cursor: &mut Cursor<'a>) -> Result<LookupView<'a>, CursorError> {
    let table = cursor.take_array::<ADDRESS_LEN_BYTES>("lookup table address")?;
    let writable_count = usize::from(cursor.take_compact_u16("lookup writable count")?);
    let writable_indices = cursor.take(writable_count, "lookup writable indexes")?;
    let readonly_count = usize::from(cursor.take_compact_u16("lookup readonly count")?);
    let readonly_indices = cursor.take(readonly_count, "lookup readonly indexes")?;
    Ok(LookupView {
        table,
        writable_indices,
        readonly_indices,
    })
}

impl IndexSummary {
    fn record(&mut self, instruction: &InstructionView<'_>) {
        let program_id_end = usize::from(instruction.program_id_index) + 1;
        self.program_id_index_end = self.program_id_index_end.max(program_id_end);
        self.program_id_is_fee_payer |= instruction.program_id_index == 0;
        if let Some(&largest) = instruction.account_indices.iter().max() {
            self.account_index_end = self.account_index_end.max(usize::from(largest) + 1);
        }
    }
}

/// Takes `count` fixed-size arrays as one borrowed slice of arrays.
fn take_arrays<'a, const N: usize>(
    cursor: &mut Cursor<'a>,
    count: usize,
    field: &'static str,
) -> Result<&'a [[u8; N]], CursorError> {
    let bytes = cursor.take(count.saturating_mul(N), field)?;
    let (arrays, rest) = bytes.as_chunks::<N>();
    debug_assert!(rest.is_empty(), "took a whole number of {N}-byte arrays");
    Ok(arrays)
}

/// Fails fast when `count` items of at least `item_len_bytes` each cannot fit in what is left, so
/// a bogus count costs one comparison instead of a walk. The error is the one the walk would end
/// in (a truncation), naming the whole list.
fn ensure_room(
    cursor: &Cursor<'_>,
    count: usize,
    item_len_bytes: usize,
    field: &'static str,
) -> Result<(), CursorError> {
    let needed = count.saturating_mul(item_len_bytes);
    let available = cursor.remaining();
    if needed > available {
        return Err(CursorError::Truncated {
            field,
            needed,
            available,
        });
    }
    Ok(())
}

/// The bytes a cursor consumed since `start`, an earlier position of the same cursor.
pub(crate) fn span<'a>(cursor: &Cursor<'a>, start: usize) -> &'a [u8] {
    debug_assert!(start <= cursor.position());
    // start <= position <= input length, so the range is always in bounds and the default (an
    // empty slice) is never used.
    cursor
        .input()
        .get(start..cursor.position())
        .unwrap_or_default()
}

/// Smallest instruction: program id index and two empty `short_vec`s.
const INSTRUCTION_LEN_BYTES_MIN: usize = 1 + 1 + 1;
/// Smallest lookup: table address and two empty `short_vec`s.
const LOOKUP_LEN_BYTES_MIN: usize = ADDRESS_LEN_BYTES + 1 + 1;
