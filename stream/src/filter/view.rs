//! `UpdateView`: what filters look at in one update, computed once per published update and shared
//! by every filter of every subscriber: the account keys (static keys and the addresses loaded
//! through resolved lookups; sorted, deduplicated, on first use) and the calls (decoded instructions of a `transaction`, legs of a `delta`) as (program, interned name).

use std::cell::OnceCell;

use stream_proto::stream::{DecodedTransaction, SubscribeUpdate, subscribe_update::Update};

use super::names::{NameId, name_id};

/// A 32-byte public key.
pub type Key = [u8; 32];

/// Which kind of update a view was taken of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    Transaction,
    Delta,
    /// Slot notifications, pongs and empty updates: never filtered.
    Unfiltered,
}

/// One call criterion 1 looks at: the `DexProgram` value and the logical name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub program: i32,
    /// `None` for a name that no supported program has (it only passes an empty
    /// `instruction_types`).
    pub name: Option<NameId>,
}

/// The per-update view filters are evaluated against. The sorted keys are built on first use:
/// an update that meets no account criterion (only match-all sessions, or filters by program and
/// name) is never sorted.
#[derive(Debug, Clone)]
pub struct UpdateView<'a> {
    kind: UpdateKind,
    /// The transaction whose keys the view holds; `None` for unfiltered updates.
    envelope: Option<&'a DecodedTransaction>,
    keys: OnceCell<Vec<Key>>,
    calls: Vec<Call>,
}

impl<'a> UpdateView<'a> {
    pub fn new(update: &'a SubscribeUpdate) -> Self {
        let (kind, envelope, calls) = match update.update.as_ref() {
            Some(Update::Transaction(transaction)) => (
                UpdateKind::Transaction,
                Some(transaction),
                transaction
                    .decoded_instructions
                    .iter()
                    .map(|instruction| Call {
                        program: instruction.program,
                        name: name_id(&instruction.instruction_name),
                    })
                    .collect(),
            ),
            Some(Update::Delta(delta)) => (
                UpdateKind::Delta,
                delta.envelope.as_ref(),
                delta
                    .dex_legs
                    .iter()
                    .map(|leg| Call {
                        program: leg.instruction.as_ref().map_or(0, |i| i.program),
                        name: name_id(&leg.logical_instruction_name),
                    })
                    .collect(),
            ),
            _ => (UpdateKind::Unfiltered, None, Vec::new()),
        };
        Self {
            kind,
            envelope,
            keys: OnceCell::new(),
            calls,
        }
    }

    pub fn kind(&self) -> UpdateKind {
        self.kind
    }

    /// The account keys (static and resolved loaded ones), sorted and deduplicated.
    pub fn keys(&self) -> &[Key] {
        self.keys.get_or_init(|| sorted_keys(self.envelope))
    }

    pub fn has_key(&self, key: &Key) -> bool {
        self.keys().binary_search(key).is_ok()
    }

    /// Decoded instructions (transaction) or legs (delta), in order.
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }
}

/// Static keys, then loaded addresses (unresolved positions are empty bytes), sorted and
/// deduplicated. Keys of another length cannot equal a filter's key: they are left out.
fn sorted_keys(envelope: Option<&DecodedTransaction>) -> Vec<Key> {
    let Some(envelope) = envelope else {
        return Vec::new();
    };
    let account_keys = envelope
        .account_keys
        .iter()
        .chain(&envelope.loaded_writable_addresses)
        .chain(&envelope.loaded_readonly_addresses);
    let mut keys: Vec<Key> = account_keys
        .filter_map(|key| Key::try_from(key.as_slice()).ok())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}
