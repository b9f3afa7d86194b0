//! Parsing a data-complete range while its bytes are still arriving: one item (component header,
//! entry header, transaction, marker) at a time from a window that starts at the parse position.
//!
//! [`RangeParser`] holds only counters (entries left in the component, transactions left in the
//! entry); the bytes stay with the caller, which hands over the window from its cursor to the end
//! of the contiguous bytes it has, and says whether that window reaches the end of the range.
//! An item cut short by the window's end is *not yet complete* ([`Step::NeedMore`]) unless the
//! window reaches the range end, where it is malformed. Any other failure is final at once: the
//! parsers read left to right, so bytes that fail a check fail it however many bytes follow.
//!
//! For a well-formed range the items equal [`parse_components`](crate::entry::parse_components)'s
//! exactly. Checks that need the whole range (declared counts against the bytes left, trailing
//! bytes) can only be decided at its end, so a malformed range may have yielded transactions
//! before its verdict; the caller reports how many.

use thiserror::Error;

use crate::cursor::{Cursor, CursorError};
use crate::entry::marker::{BlockMarker, MarkerError, marker_len, read_marker};
use crate::entry::{ENTRY_HEADER_LEN_BYTES, EntryError};
use crate::transaction::{TransactionError, TransactionView, parse_transaction};

/// Bytes an unfinished item may need before it is judged malformed: above a whole marker
/// (5 + 65,535 bytes after its count) and far above any transaction the validator accepts (1,232).
pub const MAX_PENDING_ITEM_BYTES: usize = 128 << 10;

/// Incremental deshredding in a slot stage (see `SlotStage::next_ready`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncrementalConfig {
    /// Parse batches as their shreds arrive. Off by default: `next_batch` serves whole batches.
    pub enabled: bool,
    /// Batches parsed incrementally at once; a batch that finds none free is served whole when
    /// complete (counted). Default 256 (a few dozen bytes each).
    pub max_open_streams: usize,
}

impl Default for IncrementalConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_open_streams: 256,
        }
    }
}

/// Why an incrementally parsed range ended malformed. Labels are metric labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum IncrementalError {
    #[error(transparent)]
    Entry(#[from] EntryError),
    /// An item still incomplete after [`MAX_PENDING_ITEM_BYTES`].
    #[error("an item is still incomplete after {bytes} bytes")]
    ItemTooLarge { bytes: usize },
    /// The range's shreds were evicted before it was parsed to its end.
    #[error("the range's shreds were evicted before its end")]
    Evicted,
    /// The range's unparsed bytes exceed the batch buffer.
    #[error("the range's unparsed bytes exceed the batch buffer")]
    TooLarge,
}

impl IncrementalError {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Entry(error) => error.label(),
            Self::ItemTooLarge { .. } => "item_too_large",
            Self::Evicted => "range_evicted",
            Self::TooLarge => "batch_too_large",
        }
    }
}

/// One parse step; `len` bytes of the window were consumed.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// A transaction of entry `entry_index` (counted over the range).
    Transaction {
        transaction: TransactionView<'a>,
        len: usize,
        entry_index: u64,
    },
    Marker {
        marker: BlockMarker<'a>,
        len: usize,
    },
    /// A component or entry header: nothing to hand out.
    Skip {
        len: usize,
    },
    /// The next item is not complete in the window; call again with more bytes.
    NeedMore,
    /// The range ended on a component boundary: well formed.
    End,
    Malformed(IncrementalError),
}

/// See the module documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RangeParser {
    entries_left: u64,
    transactions_left: u64,
    /// Index over the range of the next entry header.
    next_entry: u64,
    transaction_in_entry: u64,
    transactions: u64,
    /// A component header was read: an empty range is malformed, as in the whole-range parse.
    started: bool,
}

impl RangeParser {
    /// A parser at the start of a range.
    pub const DEFAULT: Self = Self {
        entries_left: 0,
        transactions_left: 0,
        next_entry: 0,
        transaction_in_entry: 0,
        transactions: 0,
        started: false,
    };

    pub fn new() -> Self {
        Self::DEFAULT
    }

    /// Transactions handed out so far.
    pub fn transactions(&self) -> u64 {
        self.transactions
    }

    /// Entries read so far.
    pub fn entries(&self) -> u64 {
        self.next_entry
    }

    /// Parses the next item at the start of `window`; `at_end` says the window ends where the
    /// range ends.
    pub fn step<'a>(&mut self, window: &'a [u8], at_end: bool) -> Step<'a> {
        let result = if self.transactions_left > 0 {
            self.transaction(window)
        } else if self.entries_left > 0 {
            self.entry_header(window)
        } else if window.is_empty() && at_end && self.started {
            return Step::End;
        } else {
            self.component(window, at_end)
        };
        match result {
            Ok(step) => step,
            Err(error) if !at_end && is_truncation(&error) => match window.len() {
                length if length > MAX_PENDING_ITEM_BYTES => {
                    Step::Malformed(IncrementalError::ItemTooLarge { bytes: length })
                }
                _ => Step::NeedMore,
            },
            Err(error) => Step::Malformed(error.into()),
        }
    }

    fn transaction<'a>(&mut self, window: &'a [u8]) -> Result<Step<'a>, EntryError> {
        let mut cursor = Cursor::new(window);
        let transaction =
            parse_transaction(&mut cursor).map_err(|source| EntryError::Transaction {
                entry_index: self.next_entry - 1,
                transaction_index: self.transaction_in_entry,
                source,
            })?;
        self.transactions_left -= 1;
        self.transaction_in_entry += 1;
        self.transactions += 1;
        Ok(Step::Transaction {
            transaction,
            len: cursor.position(),
            entry_index: self.next_entry - 1,
        })
    }

    fn entry_header<'a>(&mut self, window: &'a [u8]) -> Result<Step<'a>, EntryError> {
        let mut cursor = Cursor::new(window);
        let header = cursor
            .take(ENTRY_HEADER_LEN_BYTES, "entry header")
            .map_err(|source| EntryError::EntryHeaderTruncated {
                entry_index: self.next_entry,
                source,
            })?;
        let mut count = [0u8; 8];
        count.copy_from_slice(&header[ENTRY_HEADER_LEN_BYTES - 8..]);
        self.entries_left -= 1;
        self.next_entry += 1;
        self.transactions_left = u64::from_le_bytes(count);
        self.transaction_in_entry = 0;
        Ok(Step::Skip {
            len: ENTRY_HEADER_LEN_BYTES,
        })
    }

    fn component<'a>(&mut self, window: &'a [u8], at_end: bool) -> Result<Step<'a>, EntryError> {
        let mut cursor = Cursor::new(window);
        let count = cursor
            .take_u64_le("entry count")
            .map_err(EntryError::BatchHeaderTruncated)?;
        self.started = true;
        if count > 0 {
            self.entries_left = count;
            return Ok(Step::Skip { len: 8 });
        }
        if cursor.is_empty() && at_end {
            // An empty entry batch ending the range (see crate::entry).
            return Ok(Step::Skip { len: 8 });
        }
        let marker = read_marker(&mut cursor)?;
        debug_assert_eq!(marker_len(&window[8..]), Some(cursor.position() - 8));
        Ok(Step::Marker {
            marker,
            len: cursor.position(),
        })
    }
}

/// Failures that more bytes could turn into success.
fn is_truncation(error: &EntryError) -> bool {
    matches!(
        error,
        EntryError::BatchHeaderTruncated(_)
            | EntryError::EntryHeaderTruncated { .. }
            | EntryError::Transaction {
                source: TransactionError::Malformed(CursorError::Truncated { .. }),
                ..
            }
            | EntryError::Marker(MarkerError::Truncated(_))
    )
}

#[cfg(test)]
mod tests;
