//! The full account-key list of a transaction (static keys, then lookup-table keys loaded
//! writable, then read-only) with the validator's signer/writable flags.

use decoder::transaction::TransactionView;
use serde::Serialize;

use super::program_keys::{RESERVED_KEYS, UPGRADEABLE_LOADER_KEY};
use crate::base58::b58;

/// `{"pubkey","signer","source","writable"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParsedAccount {
    pub pubkey: String,
    pub signer: bool,
    pub source: &'static str,
    pub writable: bool,
}

/// Every key a transaction references, in index order, with what is needed for the flags.
pub struct AccountKeys<'a> {
    static_keys: &'a [[u8; 32]],
    loaded_writable: &'a [Vec<u8>],
    loaded_readonly: &'a [Vec<u8>],
    num_required_signatures: usize,
    num_readonly_signed: usize,
    num_readonly_unsigned: usize,
    /// Static key indexes called as a program by a top-level instruction.
    called_as_program: [bool; 256],
    upgradeable_loader_present: bool,
}

impl<'a> AccountKeys<'a> {
    pub fn new(
        view: &TransactionView<'a>,
        loaded_writable: &'a [Vec<u8>],
        loaded_readonly: &'a [Vec<u8>],
    ) -> Self {
        let header = view.header();
        let static_keys = view.static_account_keys();
        let mut called_as_program = [false; 256];
        for ix in view.instructions() {
            called_as_program[usize::from(ix.program_id_index)] = true;
        }
        Self {
            static_keys,
            loaded_writable,
            loaded_readonly,
            num_required_signatures: usize::from(header.num_required_signatures),
            num_readonly_signed: usize::from(header.num_readonly_signed_accounts),
            num_readonly_unsigned: usize::from(header.num_readonly_unsigned_accounts),
            called_as_program,
            upgradeable_loader_present: static_keys
                .iter()
                .any(|key| UPGRADEABLE_LOADER_KEY.contains(key)),
        }
    }

    pub fn len(&self) -> usize {
        self.static_keys.len() + self.loaded_writable.len() + self.loaded_readonly.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key at `index` (static, then loaded writable, then loaded read-only).
    pub fn get(&self, index: usize) -> Option<&[u8]> {
        if let Some(key) = self.static_keys.get(index) {
            return Some(key);
        }
        let index = index - self.static_keys.len();
        if let Some(key) = self.loaded_writable.get(index) {
            return Some(key);
        }
        self.loaded_readonly
            .get(index - self.loaded_writable.len())
            .map(Vec::as_slice)
    }

    fn writable_by_position(&self, index: usize) -> bool {
        let statics = self.static_keys.len();
        if index < statics {
            if index < self.num_required_signatures {
                index
                    < self
                        .num_required_signatures
                        .saturating_sub(self.num_readonly_signed)
            } else {
                index < statics.saturating_sub(self.num_readonly_unsigned)
            }
        } else {
            index - statics < self.loaded_writable.len()
        }
    }

    fn is_writable(&self, index: usize) -> bool {
        let Some(key) = self.get(index) else {
            return false;
        };
        let reserved = RESERVED_KEYS
            .binary_search_by(|k| k.as_slice().cmp(key))
            .is_ok();
        let demoted = self.called_as_program.get(index).copied().unwrap_or(false)
            && !self.upgradeable_loader_present;
        self.writable_by_position(index) && !reserved && !demoted
    }

    /// The `accountKeys` list of the `accounts` and `jsonParsed` views.
    pub fn parsed_accounts(&self) -> Vec<ParsedAccount> {
        (0..self.len())
            .map(|index| ParsedAccount {
                pubkey: self.get(index).map(b58).unwrap_or_default(),
                signer: index < self.num_required_signatures,
                source: if index < self.static_keys.len() {
                    "transaction"
                } else {
                    "lookupTable"
                },
                writable: self.is_writable(index),
            })
            .collect()
    }
}
