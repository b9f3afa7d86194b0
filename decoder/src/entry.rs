//! Strict parse of one deshredded data-complete range into an [`EntryBatch`]: a bincode 1
//! `Vec<Entry>`, or a sequence of block components (entry batches and block markers).
//!
//! Wire format (docs/decoder.md, format §§9, 9a; integers little-endian, bincode 1 fixed-width lengths):
//!
//! ```text
//! range      := component, component, ...     (back to back until the range ends)
//! component  := Vec<Entry> with entry_count ≥ 1 | u64 0, block marker   (see marker)
//! Vec<Entry> := u64 entry_count, then entry_count × Entry
//! Entry      := u64 num_hashes, [u8;32] hash, u64 transaction_count,
//!               then transaction_count × Transaction   (see crate::transaction)
//! ```
//!
//! [`parse_components`] reads a whole range; [`parse_entry_batch`] reads exactly one `Vec<Entry>`
//! (the format before markers). A zero entry count that ends the range is read as an empty entry
//! batch (the earlier format's empty batch, and the validator's block-abort signal), not as a
//! truncated marker. Entry indexes in errors and views count over the whole range.
//!
//! Both validate the whole range before returning anything: every entry header
//! fits, every transaction parses and passes sanitize, and every byte is consumed. Ticks are
//! entries with no transactions. Declared counts are checked against the bytes left before any
//! loop runs (an entry needs at least [`ENTRY_HEADER_LEN_BYTES`], a transaction at least
//! [`TRANSACTION_LEN_BYTES_MIN`]), so a forged count of 2^64 − 1 fails in one comparison, and
//! every loop is bounded by the input length.
//!
//! After that, [`EntryBatch::entries`] and [`EntryBatch::transactions`] re-walk the validated bytes
//! and cannot fail. Nothing is stored per entry (no allocation), so locating an entry's end means
//! parsing its transactions again: `entries()` parses each transaction once to step over it, and
//! `EntryView::transactions()` parses it once more. `EntryBatch::transactions()` walks every
//! transaction exactly once and is the cheaper path when entry boundaries are not needed.

use thiserror::Error;

use crate::cursor::{Cursor, CursorError};
use crate::entry::marker::{BlockMarker, MarkerCounts, MarkerError, read_marker};
use crate::transaction::{
    self, HASH_LEN_BYTES, TRANSACTION_LEN_BYTES_MIN, TransactionError, TransactionView,
    parse_transaction, span,
};

/// Bytes of an entry before its transactions: `num_hashes`, `hash`, `transaction_count`.
pub mod marker;

pub const ENTRY_HEADER_LEN_BYTES: usize = 8 + HASH_LEN_BYTES + 8;

/// Why a batch was rejected. Each variant has a stable [`label`].
///
/// [`label`]: EntryError::label
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EntryError {
    /// The batch is shorter than its 8-byte entry count.
    #[error("batch truncated before its entry count: {0}")]
    BatchHeaderTruncated(CursorError),
    /// The declared entry count cannot fit in the bytes that follow it.
    #[error("batch declares {declared} entries, the bytes left hold at most {max}")]
    EntryCountExceedsInput { declared: u64, max: u64 },
    /// An entry's header (`num_hashes`, `hash`, `transaction_count`) is cut short.
    #[error("entry {entry_index}: header truncated: {source}")]
    EntryHeaderTruncated {
        entry_index: u64,
        source: CursorError,
    },
    /// An entry declares more transactions than the bytes left could hold.
    #[error(
        "entry {entry_index} declares {declared} transactions, the bytes left hold at most {max}"
    )]
    TransactionCountExceedsInput {
        entry_index: u64,
        declared: u64,
        max: u64,
    },
    /// A transaction failed to parse or sanitize. `transaction_index` counts within the entry.
    #[error("entry {entry_index}, transaction {transaction_index}: {source}")]
    Transaction {
        entry_index: u64,
        transaction_index: u64,
        source: TransactionError,
    },
    /// Bytes follow the last entry.
    #[error("{count} bytes follow the last entry")]
    TrailingBytes { count: usize },
    /// A block marker could not be read (truncated, or a version without a known length).
    #[error("block marker: {0}")]
    Marker(#[from] MarkerError),
}

impl EntryError {
    /// Stable metric label. A transaction failure reports the transaction's own label
    /// ([`TransactionError::label`]), which no batch-level label repeats.
    pub fn label(&self) -> &'static str {
        match self {
            Self::BatchHeaderTruncated(_) => "batch_header_truncated",
            Self::EntryCountExceedsInput { .. } => "entry_count_exceeds_input",
            Self::EntryHeaderTruncated { .. } => "entry_header_truncated",
            Self::TransactionCountExceedsInput { .. } => "transaction_count_exceeds_input",
            Self::Transaction { source, .. } => source.label(),
            Self::TrailingBytes { .. } => "batch_trailing_bytes",
            Self::Marker(source) => source.label(),
        }
    }
}

/// A fully validated entry batch (or range of block components) borrowed from its bytes.
#[derive(Debug, Clone, Copy)]
pub struct EntryBatch<'a> {
    /// The whole range, from the first component's entry count.
    bytes: &'a [u8],
    summary: RangeSummary,
}

/// What a strict parse counted in a range: enough to rebuild its [`EntryBatch`] without a walk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RangeSummary {
    /// Entries over all entry-batch components.
    pub entry_count: u64,
    pub transaction_count: u64,
    pub markers: MarkerCounts,
}

/// One entry of a validated batch.
#[derive(Debug, Clone, Copy)]
pub struct EntryView<'a> {
    /// Hashes the leader's PoH ran since the previous entry.
    pub num_hashes: u64,
    /// PoH hash after this entry.
    pub hash: &'a [u8; HASH_LEN_BYTES],
    /// Transactions in this entry; 0 for a tick.
    pub transaction_count: u64,
    /// The entry's transactions region (validated), `transaction_count` transactions.
    transactions: &'a [u8],
}

/// Parses and validates exactly one `Vec<Entry>` (no markers); see the module doc.
pub fn parse_entry_batch(bytes: &[u8]) -> Result<EntryBatch<'_>, EntryError> {
    let mut cursor = Cursor::new(bytes);
    let mut summary = RangeSummary::default();
    let entry_count = take_entry_count(&mut cursor)?;
    read_entries(&mut cursor, entry_count, &mut summary)?;
    if !cursor.is_empty() {
        return Err(EntryError::TrailingBytes {
            count: cursor.remaining(),
        });
    }
    Ok(EntryBatch { bytes, summary })
}

/// Parses and validates a data-complete range of block components; see the module doc.
pub fn parse_components(bytes: &[u8]) -> Result<EntryBatch<'_>, EntryError> {
    let mut cursor = Cursor::new(bytes);
    let mut summary = RangeSummary::default();
    loop {
        let entry_count = take_entry_count(&mut cursor)?;
        if entry_count == 0 && !cursor.is_empty() {
            let marker = read_marker(&mut cursor)?;
            summary.markers.add(marker.kind());
        } else {
            read_entries(&mut cursor, entry_count, &mut summary)?;
        }
        if cursor.is_empty() {
            return Ok(EntryBatch { bytes, summary });
        }
    }
}

fn take_entry_count(cursor: &mut Cursor<'_>) -> Result<u64, EntryError> {
    cursor
        .take_u64_le("entry count")
        .map_err(EntryError::BatchHeaderTruncated)
}

/// Reads `entry_count` entries, after checking that they can fit in the bytes left.
fn read_entries(
    cursor: &mut Cursor<'_>,
    entry_count: u64,
    summary: &mut RangeSummary,
) -> Result<(), EntryError> {
    let max = (cursor.remaining() / ENTRY_HEADER_LEN_BYTES) as u64;
    if entry_count > max {
        return Err(EntryError::EntryCountExceedsInput {
            declared: entry_count,
            max,
        });
    }
    for _ in 0..entry_count {
        let entry = read_entry(cursor, summary.entry_count)?;
        summary.entry_count += 1;
        // Each transaction is at least 134 bytes, so the sum stays far below u64::MAX.
        summary.transaction_count += entry.transaction_count;
    }
    Ok(())
}

impl<'a> EntryBatch<'a> {
    /// Rebuilds the view of a range that [`parse_components`] (or [`parse_entry_batch`]) accepted,
    /// from the same bytes and the summary it reported, without walking it again. Only for
    /// callers that validated `bytes` themselves and could not keep the borrow (the decoder's
    /// batch loop).
    pub(crate) fn from_validated(bytes: &'a [u8], summary: RangeSummary) -> Self {
        debug_assert!(
            bytes.len() >= 8,
            "validated ranges start with an entry count"
        );
        Self { bytes, summary }
    }

    /// Entries over all the range's entry batches.
    pub fn entry_count(&self) -> u64 {
        self.summary.entry_count
    }

    /// Transactions over all entries.
    pub fn transaction_count(&self) -> u64 {
        self.summary.transaction_count
    }

    /// Block markers of the range, by kind.
    pub fn marker_counts(&self) -> MarkerCounts {
        self.summary.markers
    }

    pub fn summary(&self) -> RangeSummary {
        self.summary
    }

    /// The block markers of the range in order. Free when there are none; otherwise it steps over
    /// the range's entries (parsing their transactions) to find them.
    pub fn markers(&self) -> MarkerIter<'a> {
        MarkerIter {
            walk: ComponentWalk::new(self.bytes),
            remaining: self.summary.markers.total(),
        }
    }

    /// The entries in order.
    pub fn entries(&self) -> EntryIter<'a> {
        EntryIter {
            walk: ComponentWalk::new(self.bytes),
            remaining: self.summary.entry_count,
            next_index: 0,
        }
    }

    /// Every transaction of the batch in order, each parsed once.
    pub fn transactions(&self) -> BatchTransactionIter<'a> {
        BatchTransactionIter {
            walk: ComponentWalk::new(self.bytes),
            transactions_remaining_in_entry: 0,
            transactions_remaining: self.summary.transaction_count,
        }
    }
}

impl<'a> EntryView<'a> {
    /// The entry's transactions in order.
    pub fn transactions(&self) -> EntryTransactionIter<'a> {
        EntryTransactionIter {
            cursor: Cursor::new(self.transactions),
            remaining: self.transaction_count,
        }
    }

    /// Wire bytes of all the entry's transactions, back to back.
    pub fn transactions_bytes(&self) -> &'a [u8] {
        self.transactions
    }

    pub fn is_tick(&self) -> bool {
        self.transaction_count == 0
    }
}

/// Iterator over the entries of a validated batch.
#[derive(Debug, Clone)]
pub struct EntryIter<'a> {
    walk: ComponentWalk<'a>,
    remaining: u64,
    next_index: u64,
}

impl<'a> Iterator for EntryIter<'a> {
    type Item = EntryView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 || !self.walk.step_to_entry() {
            self.remaining = 0;
            return None;
        }
        match read_entry(&mut self.walk.cursor, self.next_index) {
            Ok(entry) => {
                self.remaining -= 1;
                self.next_index += 1;
                Some(entry)
            }
            Err(_) => {
                debug_assert!(false, "re-walk of a validated entry batch failed");
                self.remaining = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Entries are at least 48 bytes, so the count fits usize on any input that fits memory.
        let remaining = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (remaining, Some(remaining))
    }
}

impl std::iter::FusedIterator for EntryIter<'_> {}

/// Iterator over one entry's transactions.
#[derive(Debug, Clone)]
pub struct EntryTransactionIter<'a> {
    cursor: Cursor<'a>,
    remaining: u64,
}

impl<'a> Iterator for EntryTransactionIter<'a> {
    type Item = TransactionView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        let transaction = revisit_transaction(&mut self.cursor);
        match transaction {
            Some(_) => self.remaining -= 1,
            None => self.remaining = 0,
        }
        transaction
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (remaining, Some(remaining))
    }
}

impl std::iter::FusedIterator for EntryTransactionIter<'_> {}

/// Iterator over every transaction of a validated batch, stepping over entry headers.
#[derive(Debug, Clone)]
pub struct BatchTransactionIter<'a> {
    walk: ComponentWalk<'a>,
    transactions_remaining_in_entry: u64,
    transactions_remaining: u64,
}

impl<'a> Iterator for BatchTransactionIter<'a> {
    type Item = TransactionView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        // Step over ticks, finished entries and markers; bounded by the range length.
        while self.transactions_remaining_in_entry == 0 {
            if self.transactions_remaining == 0 || !self.walk.step_to_entry() {
                self.transactions_remaining = 0;
                return None;
            }
            let Ok(header) = read_entry_header(&mut self.walk.cursor) else {
                debug_assert!(false, "re-walk of a validated entry header failed");
                self.transactions_remaining = 0;
                return None;
            };
            self.transactions_remaining_in_entry = header.transaction_count;
        }
        let transaction = revisit_transaction(&mut self.walk.cursor);
        match transaction {
            Some(_) => {
                self.transactions_remaining_in_entry -= 1;
                self.transactions_remaining -= 1;
            }
            None => self.transactions_remaining = 0,
        }
        transaction
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = usize::try_from(self.transactions_remaining).unwrap_or(usize::MAX);
        (remaining, Some(remaining))
    }
}

impl std::iter::FusedIterator for BatchTransactionIter<'_> {}

/// Iterator over the block markers of a validated range.
#[derive(Debug, Clone)]
pub struct MarkerIter<'a> {
    walk: ComponentWalk<'a>,
    remaining: u64,
}

impl<'a> Iterator for MarkerIter<'a> {
    type Item = BlockMarker<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        let marker = self.walk.step_to_marker();
        match marker {
            Some(_) => self.remaining -= 1,
            None => self.remaining = 0,
        }
        marker
    }
}

impl std::iter::FusedIterator for MarkerIter<'_> {}

/// A position in the component sequence of a validated range.
#[derive(Debug, Clone)]
struct ComponentWalk<'a> {
    cursor: Cursor<'a>,
    /// Entries of the current entry-batch component not yet stepped to.
    entries_left: u64,
}

impl<'a> ComponentWalk<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self {
            cursor: Cursor::new(bytes),
            entries_left: 0,
        }
    }

    /// Steps over markers (and finished components) to the start of the next entry, which the
    /// caller then reads; false at the end of the range. Every pass consumes at least 8 bytes.
    fn step_to_entry(&mut self) -> bool {
        while self.entries_left == 0 {
            match self.next_component() {
                Some(Component::Entries(count)) => self.entries_left = count,
                Some(Component::Marker(_)) => {}
                None => return false,
            }
        }
        self.entries_left -= 1;
        true
    }

    /// Steps over entries to the next marker.
    fn step_to_marker(&mut self) -> Option<BlockMarker<'a>> {
        loop {
            while self.entries_left > 0 {
                self.entries_left -= 1;
                if read_entry(&mut self.cursor, 0).is_err() {
                    debug_assert!(false, "re-walk of a validated entry failed");
                    return None;
                }
            }
            match self.next_component()? {
                Component::Entries(count) => self.entries_left = count,
                Component::Marker(marker) => return Some(marker),
            }
        }
    }

    fn next_component(&mut self) -> Option<Component<'a>> {
        if self.cursor.is_empty() {
            return None;
        }
        let count = self.cursor.take_u64_le("entry count").ok();
        debug_assert!(count.is_some(), "re-walk of a validated entry count failed");
        match count? {
            0 if self.cursor.is_empty() => Some(Component::Entries(0)),
            0 => {
                let marker = read_marker(&mut self.cursor).ok();
                debug_assert!(marker.is_some(), "re-walk of a validated marker failed");
                marker.map(Component::Marker)
            }
            count => Some(Component::Entries(count)),
        }
    }
}

enum Component<'a> {
    Entries(u64),
    Marker(BlockMarker<'a>),
}

/// An entry's fixed-size prefix.
struct EntryHeader<'a> {
    num_hashes: u64,
    hash: &'a [u8; HASH_LEN_BYTES],
    transaction_count: u64,
}

fn read_entry_header<'a>(cursor: &mut Cursor<'a>) -> Result<EntryHeader<'a>, CursorError> {
    Ok(EntryHeader {
        num_hashes: cursor.take_u64_le("entry num_hashes")?,
        hash: cursor.take_array::<HASH_LEN_BYTES>("entry hash")?,
        transaction_count: cursor.take_u64_le("entry transaction count")?,
    })
}

/// Reads one entry and all its transactions, leaving the cursor after it. Shared by the strict
/// parse and the re-walk so both agree on every boundary.
fn read_entry<'a>(cursor: &mut Cursor<'a>, entry_index: u64) -> Result<EntryView<'a>, EntryError> {
    let header = read_entry_header(cursor).map_err(|source| EntryError::EntryHeaderTruncated {
        entry_index,
        source,
    })?;
    let max = (cursor.remaining() / TRANSACTION_LEN_BYTES_MIN) as u64;
    if header.transaction_count > max {
        return Err(EntryError::TransactionCountExceedsInput {
            entry_index,
            declared: header.transaction_count,
            max,
        });
    }
    let transactions_start = cursor.position();
    for transaction_index in 0..header.transaction_count {
        parse_transaction(cursor).map_err(|source| EntryError::Transaction {
            entry_index,
            transaction_index,
            source,
        })?;
    }
    Ok(EntryView {
        num_hashes: header.num_hashes,
        hash: header.hash,
        transaction_count: header.transaction_count,
        transactions: span(cursor, transactions_start),
    })
}

/// Parses a transaction that already passed the strict batch parse (the wire walk only, see
/// [`transaction::revisit_transaction`]). `None` would mean the parser disagrees with itself; the
/// iterators end there rather than panic in release builds.
fn revisit_transaction<'a>(cursor: &mut Cursor<'a>) -> Option<TransactionView<'a>> {
    let transaction = transaction::revisit_transaction(cursor);
    debug_assert!(
        transaction.is_some(),
        "re-walk of a validated transaction failed"
    );
    transaction
}

const _: () = assert!(ENTRY_HEADER_LEN_BYTES == 48);

#[cfg(test)]
mod tests;
