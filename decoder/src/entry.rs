//! Strict parse of one deshredded entry batch (a bincode 1 `Vec<Entry>`) into an [`EntryBatch`].
//!
//! Wire format (shred-format.md §9; integers little-endian, bincode 1 fixed-width lengths):
//!
//! ```text
//! Vec<Entry> := u64 entry_count, then entry_count × Entry
//! Entry      := u64 num_hashes, [u8;32] hash, u64 transaction_count,
//!               then transaction_count × Transaction   (see crate::transaction)
//! ```
//!
//! [`parse_entry_batch`] validates the whole batch before returning anything: every entry header
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
use crate::transaction::{
    HASH_LEN_BYTES, TRANSACTION_LEN_BYTES_MIN, TransactionError, TransactionView,
    parse_transaction, span,
};

/// Bytes of an entry before its transactions: `num_hashes`, `hash`, `transaction_count`.
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
        }
    }
}

/// A fully validated entry batch borrowed from its bytes.
#[derive(Debug, Clone, Copy)]
pub struct EntryBatch<'a> {
    /// The batch bytes after the entry count.
    entries: &'a [u8],
    entry_count: u64,
    transaction_count: u64,
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

/// Parses and validates a whole batch; see the module doc for what "valid" means.
pub fn parse_entry_batch(bytes: &[u8]) -> Result<EntryBatch<'_>, EntryError> {
    let mut cursor = Cursor::new(bytes);
    let entry_count = cursor
        .take_u64_le("entry count")
        .map_err(EntryError::BatchHeaderTruncated)?;
    let max = (cursor.remaining() / ENTRY_HEADER_LEN_BYTES) as u64;
    if entry_count > max {
        return Err(EntryError::EntryCountExceedsInput {
            declared: entry_count,
            max,
        });
    }
    let entries_start = cursor.position();
    let mut transaction_count: u64 = 0;
    for entry_index in 0..entry_count {
        let entry = read_entry(&mut cursor, entry_index)?;
        // Each transaction is at least 134 bytes, so the sum stays far below u64::MAX.
        transaction_count += entry.transaction_count;
    }
    if !cursor.is_empty() {
        return Err(EntryError::TrailingBytes {
            count: cursor.remaining(),
        });
    }
    Ok(EntryBatch {
        entries: span(&cursor, entries_start),
        entry_count,
        transaction_count,
    })
}

impl<'a> EntryBatch<'a> {
    /// Rebuilds the view of a batch that [`parse_entry_batch`] accepted, from the same bytes and
    /// the counts it reported, without walking it again. Only for callers that validated `bytes`
    /// themselves and could not keep the borrow (the decoder's batch loop).
    pub(crate) fn from_validated(
        bytes: &'a [u8],
        entry_count: u64,
        transaction_count: u64,
    ) -> Self {
        debug_assert!(
            bytes.len() >= 8,
            "validated batches start with their entry count"
        );
        let entries = bytes.get(8..).unwrap_or_default();
        Self {
            entries,
            entry_count,
            transaction_count,
        }
    }

    pub fn entry_count(&self) -> u64 {
        self.entry_count
    }

    /// Transactions over all entries.
    pub fn transaction_count(&self) -> u64 {
        self.transaction_count
    }

    /// The entries in order.
    pub fn entries(&self) -> EntryIter<'a> {
        EntryIter {
            cursor: Cursor::new(self.entries),
            remaining: self.entry_count,
            next_index: 0,
        }
    }

    /// Every transaction of the batch in order, each parsed once.
    pub fn transactions(&self) -> BatchTransactionIter<'a> {
        BatchTransactionIter {
            cursor: Cursor::new(self.entries),
            entries_remaining: self.entry_count,
            transactions_remaining_in_entry: 0,
            transactions_remaining: self.transaction_count,
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
    cursor: Cursor<'a>,
    remaining: u64,
    next_index: u64,
}

impl<'a> Iterator for EntryIter<'a> {
    type Item = EntryView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        match read_entry(&mut self.cursor, self.next_index) {
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
    cursor: Cursor<'a>,
    entries_remaining: u64,
    transactions_remaining_in_entry: u64,
    transactions_remaining: u64,
}

impl<'a> Iterator for BatchTransactionIter<'a> {
    type Item = TransactionView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        // Step over ticks and finished entries; bounded by the entry count.
        while self.transactions_remaining_in_entry == 0 {
            if self.entries_remaining == 0 || self.transactions_remaining == 0 {
                return None;
            }
            let Ok(header) = read_entry_header(&mut self.cursor) else {
                debug_assert!(false, "re-walk of a validated entry header failed");
                self.transactions_remaining = 0;
                return None;
            };
            self.entries_remaining -= 1;
            self.transactions_remaining_in_entry = header.transaction_count;
        }
        let transaction = revisit_transaction(&mut self.cursor);
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

/// Parses a transaction that already passed the strict batch parse. `None` would mean the parser
/// disagrees with itself; the iterators end there rather than panic in release builds.
fn revisit_transaction<'a>(cursor: &mut Cursor<'a>) -> Option<TransactionView<'a>> {
    let transaction = parse_transaction(cursor).ok();
    debug_assert!(
        transaction.is_some(),
        "re-walk of a validated transaction failed"
    );
    transaction
}

const _: () = assert!(ENTRY_HEADER_LEN_BYTES == 48);

#[cfg(test)]
mod tests;
