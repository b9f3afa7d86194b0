//! Zero-copy parse of one Solana transaction in wire format into a sanitized [`TransactionView`].
//!
//! The wire format is the bincode serialization of `VersionedTransaction` (docs/decoder.md,
//! format §9):
//!
//! ```text
//! Transaction := short_vec<[u8;64] signature>, Message
//! Message     := [0x80 | version]?  (present iff the first byte has 0x80; only version 0 exists)
//!                header[3] = num_required_signatures, num_readonly_signed_accounts,
//!                            num_readonly_unsigned_accounts
//!                short_vec<[u8;32] static account key>, [u8;32] recent_blockhash,
//!                short_vec<Instruction>, (v0 only) short_vec<AddressTableLookup>
//! Instruction := u8 program_id_index, short_vec<u8 account_index>, short_vec<u8 data>
//! AddressTableLookup := [u8;32] table, short_vec<u8 writable_index>, short_vec<u8 readonly_index>
//! ```
//!
//! [`parse_transaction`] walks those bytes once through the bounds-checked [`Cursor`], allocating
//! nothing, then applies the structural sanitize rules the Solana runtime applies before it will
//! execute (or replay) a transaction. A view that comes back is therefore one that Agave would
//! also accept as well-formed, and its accessors cannot fail: the instruction and lookup
//! iterators re-walk regions that were already validated.
//!
//! # Sanitize rules enforced
//!
//! Taken from `solana-message` 6.0 (`legacy::Message::sanitize`, `v0::Message::sanitize`) and
//! `solana-transaction` 6.0 (`VersionedTransaction::sanitize`, which runs the message rules and
//! then `sanitize_signatures_inner`). Replay reaches them through
//! `SanitizedVersionedTransaction::try_new`. Errors are reported in the reference's order: wire
//! errors first (bincode fails before sanitize runs), then rules 1–6, then 7.
//!
//! 1. `num_required_signatures + num_readonly_unsigned_accounts <= static key count`: the signer
//!    area and the read-only unsigned area must not overlap
//!    ([`TransactionError::HeaderExceedsStaticKeys`]).
//! 2. `num_readonly_signed_accounts < num_required_signatures`: there is at least one writable
//!    signer, the fee payer ([`TransactionError::NoWritableFeePayer`]). Rules 1 and 2 together
//!    imply at least one signature and at least one static key, so v0's separate "no static keys"
//!    check can never fire after them and has no variant of its own.
//! 3. v0 only: every address-table lookup loads at least one address
//!    ([`TransactionError::EmptyAddressTableLookup`]).
//! 4. v0 only: static keys plus loaded addresses are at most 256, because instruction account
//!    indexes are `u8` ([`TransactionError::TooManyAccountKeys`]). Legacy messages have no such
//!    rule in the reference and none here: their indexes simply cannot reach past 255.
//! 5. Every program id index points at a static key (never a loaded one, so programs are known
//!    without loading tables) and is not 0, the fee payer
//!    ([`TransactionError::ProgramIdIndexOutOfRange`], [`TransactionError::ProgramIdIsFeePayer`]).
//! 6. Every instruction account index is below the total key count: static keys for legacy,
//!    static plus loaded for v0 ([`TransactionError::AccountIndexOutOfRange`]).
//! 7. The signature count equals `num_required_signatures`
//!    ([`TransactionError::SignatureCountMismatch`]). The reference's last check, signatures at
//!    most the static key count, follows from rules 1 and 7 and has no variant.
//!
//! Message versions other than 0 are rejected ([`TransactionError::UnsupportedVersion`]). The
//! reference deserializer also refuses 127 (off-chain messages) and every undefined version;
//! `solana-message` 6.0 additionally knows a v1 format that this parser does not accept.
//!
//! Not enforced, because they are not part of the structural sanitize step: the 1,232-byte packet
//! limit (`PACKET_DATA_SIZE`, applied by banking stage to incoming packets), the account-lock limit
//! (`get_transaction_account_lock_limit`, applied when locking), duplicate keys (applied when the
//! transaction is turned into a `SanitizedTransaction`), and signature verification.

use crate::cursor::Cursor;

mod error;
mod sanitize;
mod wire;

pub use error::TransactionError;
use sanitize::sanitize;
pub(crate) use wire::span;
use wire::{Layout, read_instruction, read_layout, read_lookup};

/// Length of an ed25519 signature on the wire.
pub const SIGNATURE_LEN_BYTES: usize = 64;
/// Length of an account address (public key) on the wire.
pub const ADDRESS_LEN_BYTES: usize = 32;
/// Length of a blockhash on the wire.
pub const HASH_LEN_BYTES: usize = 32;
/// A first message byte with this bit set is a version prefix, not `num_required_signatures`
/// (`solana_message::MESSAGE_VERSION_PREFIX`).
pub const MESSAGE_VERSION_PREFIX: u8 = 0x80;
/// Most keys a v0 message may reference, static and loaded together: account indexes are `u8`
/// (`v0::Message::sanitize`).
pub const ACCOUNT_KEYS_V0_MAX: usize = 256;
/// The shortest transaction that can pass sanitize: one signature (its compact-u16 count is one
/// byte), a legacy header, one static key, a blockhash and zero instructions. Entry parsing uses it
/// to bound a declared transaction count by the bytes left.
pub const TRANSACTION_LEN_BYTES_MIN: usize =
    1 + SIGNATURE_LEN_BYTES + 3 + 1 + ADDRESS_LEN_BYTES + HASH_LEN_BYTES + 1;

/// The message format, from the optional version prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageVersion {
    /// No prefix: the first message byte is `num_required_signatures`.
    Legacy,
    /// Prefix `0x80`: the message ends with address-table lookups.
    V0,
}

/// The three header counts. Static keys are ordered writable signers, read-only signers, writable
/// non-signers, read-only non-signers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHeader {
    pub num_required_signatures: u8,
    pub num_readonly_signed_accounts: u8,
    pub num_readonly_unsigned_accounts: u8,
}

/// One compiled instruction, borrowed from the transaction bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstructionView<'a> {
    /// Index of the program among the static keys (never 0, never a loaded address).
    pub program_id_index: u8,
    /// Indexes into static keys, then loaded writable, then loaded read-only addresses.
    pub account_indices: &'a [u8],
    pub data: &'a [u8],
}

/// One v0 address-table lookup, borrowed from the transaction bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupView<'a> {
    /// Address of the lookup-table account.
    pub table: &'a [u8; ADDRESS_LEN_BYTES],
    /// Indexes into the table of addresses loaded writable.
    pub writable_indices: &'a [u8],
    /// Indexes into the table of addresses loaded read-only.
    pub readonly_indices: &'a [u8],
}

/// A parsed and sanitized transaction that borrows its input. Every accessor is infallible.
#[derive(Debug, Clone, Copy)]
pub struct TransactionView<'a> {
    bytes: &'a [u8],
    signatures: &'a [[u8; SIGNATURE_LEN_BYTES]],
    first_signature: &'a [u8; SIGNATURE_LEN_BYTES],
    message: &'a [u8],
    version: MessageVersion,
    header: MessageHeader,
    static_account_keys: &'a [[u8; ADDRESS_LEN_BYTES]],
    fee_payer: &'a [u8; ADDRESS_LEN_BYTES],
    recent_blockhash: &'a [u8; HASH_LEN_BYTES],
    /// Instructions region after its count; `instruction_count` entries, validated.
    instructions: &'a [u8],
    instruction_count: usize,
    /// Lookups region after its count (empty for legacy); `lookup_count` entries, validated.
    lookups: &'a [u8],
    lookup_count: usize,
    /// Sums of the lookups' index lists; at most 255 together once sanitized.
    loaded_writable_count: usize,
    loaded_readonly_count: usize,
}

/// Parses one transaction at the cursor, advancing it past the transaction on success and leaving
/// it where it was on error. Bytes after the transaction are left for the caller.
pub fn parse_transaction<'a>(
    cursor: &mut Cursor<'a>,
) -> Result<TransactionView<'a>, TransactionError> {
    // Parse on a copy so that a rejected transaction does not move the caller's cursor.
    let mut work = *cursor;
    let start = work.position();
    let layout = read_layout::<true>(&mut work)?;
    sanitize(&layout)?;
    let view = view_of(&layout, span(&work, start))?;
    *cursor = work;
    Ok(view)
}

/// Parses again a transaction that [`parse_transaction`] accepted at this position of the same
/// bytes (a validated entry batch's re-walk): the wire walk only, without the instruction index
/// summary and sanitize, whose verdict is known. `None` would mean the bytes are not the ones
/// validated; the caller's cursor then stays where it was.
pub(crate) fn revisit_transaction<'a>(cursor: &mut Cursor<'a>) -> Option<TransactionView<'a>> {
    let mut work = *cursor;
    let start = work.position();
    let layout = read_layout::<false>(&mut work).ok()?;
    let view = view_of(&layout, span(&work, start)).ok()?;
    *cursor = work;
    Some(view)
}

/// The view of a walked transaction whose `bytes` are `layout`'s; fails only without a signature
/// or a static key, which sanitize rules out.
fn view_of<'a>(
    layout: &Layout<'a>,
    bytes: &'a [u8],
) -> Result<TransactionView<'a>, TransactionError> {
    // Sanitize proved 1 <= num_required_signatures == signature count <= static key count
    // (rules 1, 2 and 7), so both lists have a first element; the error arm cannot run.
    let (Some(first_signature), Some(fee_payer)) = (
        layout.signatures.first(),
        layout.static_account_keys.first(),
    ) else {
        debug_assert!(
            false,
            "sanitize admitted a transaction without signer or key"
        );
        return Err(TransactionError::NoWritableFeePayer {
            num_readonly_signed_accounts: layout.header.num_readonly_signed_accounts,
            num_required_signatures: layout.header.num_required_signatures,
        });
    };
    Ok(TransactionView {
        bytes,
        signatures: layout.signatures,
        first_signature,
        message: layout.message,
        version: layout.version,
        header: layout.header,
        static_account_keys: layout.static_account_keys,
        fee_payer,
        recent_blockhash: layout.recent_blockhash,
        instructions: layout.instructions,
        instruction_count: layout.instruction_count,
        lookups: layout.lookups,
        lookup_count: layout.lookup_count,
        loaded_writable_count: layout.loaded_writable_count,
        loaded_readonly_count: layout.loaded_readonly_count,
    })
}

/// Parses `bytes` as exactly one transaction: trailing bytes are an error.
pub fn parse_transaction_exact(bytes: &[u8]) -> Result<TransactionView<'_>, TransactionError> {
    let mut cursor = Cursor::new(bytes);
    let view = parse_transaction(&mut cursor)?;
    if !cursor.is_empty() {
        return Err(TransactionError::TrailingBytes {
            count: cursor.remaining(),
        });
    }
    Ok(view)
}

impl<'a> TransactionView<'a> {
    /// The full wire bytes of this transaction (signatures and message).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// All signatures, in signer order; there are `num_required_signatures` of them.
    pub fn signatures(&self) -> &'a [[u8; SIGNATURE_LEN_BYTES]] {
        self.signatures
    }

    pub fn signature_count(&self) -> usize {
        self.signatures.len()
    }

    pub fn signature(&self, index: usize) -> Option<&'a [u8; SIGNATURE_LEN_BYTES]> {
        self.signatures.get(index)
    }

    /// The fee payer's signature, which is the transaction's id.
    pub fn first_signature(&self) -> &'a [u8; SIGNATURE_LEN_BYTES] {
        self.first_signature
    }

    /// The message bytes, including any version prefix: what the signatures sign.
    pub fn message_bytes(&self) -> &'a [u8] {
        self.message
    }

    pub fn version(&self) -> MessageVersion {
        self.version
    }

    pub fn header(&self) -> MessageHeader {
        self.header
    }

    pub fn static_account_count(&self) -> usize {
        self.static_account_keys.len()
    }

    /// The static keys in message order; `.iter()` walks them.
    pub fn static_account_keys(&self) -> &'a [[u8; ADDRESS_LEN_BYTES]] {
        self.static_account_keys
    }

    pub fn static_account_key(&self, index: usize) -> Option<&'a [u8; ADDRESS_LEN_BYTES]> {
        self.static_account_keys.get(index)
    }

    /// Static key 0: the first writable signer, who pays the fee.
    pub fn fee_payer(&self) -> &'a [u8; ADDRESS_LEN_BYTES] {
        self.fee_payer
    }

    pub fn recent_blockhash(&self) -> &'a [u8; HASH_LEN_BYTES] {
        self.recent_blockhash
    }

    pub fn instruction_count(&self) -> usize {
        self.instruction_count
    }

    /// The compiled instructions in order.
    pub fn instructions(&self) -> InstructionIter<'a> {
        InstructionIter {
            cursor: Cursor::new(self.instructions),
            remaining: self.instruction_count,
        }
    }

    /// Number of address-table lookups (always 0 for legacy).
    pub fn address_table_lookup_count(&self) -> usize {
        self.lookup_count
    }

    /// The v0 address-table lookups in order (none for legacy).
    pub fn address_table_lookups(&self) -> LookupIter<'a> {
        LookupIter {
            cursor: Cursor::new(self.lookups),
            remaining: self.lookup_count,
        }
    }

    pub fn uses_lookup_tables(&self) -> bool {
        self.lookup_count > 0
    }

    /// Addresses loaded writable across all lookups (instruction indexes right after the static
    /// keys refer to them).
    pub fn loaded_writable_count(&self) -> usize {
        self.loaded_writable_count
    }

    /// Addresses loaded read-only across all lookups (indexed after the loaded writable ones).
    pub fn loaded_readonly_count(&self) -> usize {
        self.loaded_readonly_count
    }

    /// Static keys plus loaded addresses: every instruction account index is below this.
    pub fn account_count(&self) -> usize {
        self.static_account_keys.len() + self.loaded_writable_count + self.loaded_readonly_count
    }
}

/// Iterator over a transaction's instructions; re-walks bytes that already parsed.
#[derive(Debug, Clone)]
pub struct InstructionIter<'a> {
    cursor: Cursor<'a>,
    remaining: usize,
}

impl<'a> Iterator for InstructionIter<'a> {
    type Item = InstructionView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        match read_instruction(&mut self.cursor) {
            Ok(instruction) => {
                self.remaining -= 1;
                Some(instruction)
            }
            Err(_) => {
                debug_assert!(false, "re-walk of a validated instruction region failed");
                self.remaining = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for InstructionIter<'_> {}
impl std::iter::FusedIterator for InstructionIter<'_> {}

/// Iterator over a v0 transaction's address-table lookups; re-walks bytes that already parsed.
#[derive(Debug, Clone)]
pub struct LookupIter<'a> {
    cursor: Cursor<'a>,
    remaining: usize,
}

impl<'a> Iterator for LookupIter<'a> {
    type Item = LookupView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        match read_lookup(&mut self.cursor) {
            Ok(lookup) => {
                self.remaining -= 1;
                Some(lookup)
            }
            Err(_) => {
                debug_assert!(false, "re-walk of a validated lookup region failed");
                self.remaining = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for LookupIter<'_> {}
impl std::iter::FusedIterator for LookupIter<'_> {}

const _: () = assert!(TRANSACTION_LEN_BYTES_MIN == 134);

#[cfg(test)]
pub(crate) mod test_wire;

#[cfg(test)]
mod tests;
