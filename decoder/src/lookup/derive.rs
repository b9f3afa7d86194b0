//! Where a lookup table lives: the program-derived address its create instruction must name.
//!
//! The program derives the table's address from the seeds `[authority, recent_slot as u64 LE,
//! [bump_seed]]` with the runtime's `create_program_address`: SHA-256 over the seeds, the program
//! id and `"ProgramDerivedAddress"`, valid only if the digest is *not* an ed25519 curve point. A
//! create whose table account is not that address fails, so the stream learns nothing from it.

use sha2::{Digest, Sha256};

use super::ADDRESS_LOOKUP_TABLE_PROGRAM_ID;
use super::account::Address;

const PDA_MARKER: &[u8] = b"ProgramDerivedAddress";

/// The table address for these seeds, or `None` when the digest lies on the curve (the program
/// refuses such a bump seed).
pub fn derive_table_address(
    authority: &Address,
    recent_slot: u64,
    bump_seed: u8,
) -> Option<Address> {
    let mut hasher = Sha256::new();
    hasher.update(authority);
    hasher.update(recent_slot.to_le_bytes());
    hasher.update([bump_seed]);
    hasher.update(ADDRESS_LOOKUP_TABLE_PROGRAM_ID);
    hasher.update(PDA_MARKER);
    let address: Address = hasher.finalize().into();
    let on_curve = ed25519_dalek::VerifyingKey::from_bytes(&address).is_ok();
    (!on_curve).then_some(address)
}
