//! What a relay already has: drops the updates an origin sends again after a reconnect.
//!
//! Two keys, one per case (docs/relay.md):
//! - The same origin process (same `x-stream-numbering`): its `sequence` numbers increase, so an
//!   update numbered at or below the last one taken is a repeat. One comparison per update.
//! - Another origin process (restarted, or a server that sends no numbering): its numbers say
//!   nothing about the old ones. Updates of slots up to the highest slot taken before the change
//!   are checked against the content keys of the last [`KEY_SLOTS`] slots taken:
//!   (kind, slot, signature, route index) for transactions and deltas, (kind, slot, FEC set) for
//!   duplicate blocks, (kind, slot) for slot notifications and footers. A signature alone is not
//!   a key: one transaction can make several delta updates, one per route call.

use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};

use stream::fanout::recent::slot_of;
use stream_proto::stream::SubscribeUpdate;
use stream_proto::stream::subscribe_update::Update;

/// Slots whose content keys are kept (the newest ones taken).
pub const KEY_SLOTS: u64 = 8;
/// Content keys kept at most, all slots together (8 bytes each in the set).
pub const MAX_KEYS: usize = 1 << 18;

/// The decision on one update from the origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not seen before: publish it.
    New,
    /// Numbered at or below the last update taken from the same origin process.
    RepeatBySequence,
    /// Its content key was taken already from an earlier origin process.
    RepeatByContent,
    /// A pong or an update without a slot: not relayed.
    NotRelayed,
}

/// The relay's record of what it has published.
#[derive(Debug, Default)]
pub struct Dedupe {
    /// The origin's numbering on the current connection (`None`: not announced).
    numbering: Option<u64>,
    /// The highest `sequence` taken under `numbering`.
    last_sequence: u64,
    /// The highest slot of any update taken.
    last_slot: Option<u64>,
    /// After a numbering change: updates of slots up to this one are checked by content.
    guard_through: Option<u64>,
    /// Content keys of the newest slots taken.
    keys: BTreeMap<u64, HashSet<u64>>,
    key_count: usize,
}

impl Dedupe {
    pub fn new() -> Self {
        Self::default()
    }

    /// The slot to resume from: the last slot taken (its updates come again and are dropped).
    pub fn resume_slot(&self) -> Option<u64> {
        self.last_slot
    }

    /// A connection is up with this numbering; true when it is not the previous connection's
    /// (then updates of slots already taken are checked by content).
    pub fn connected(&mut self, numbering: Option<u64>) -> bool {
        let same = numbering.is_some() && numbering == self.numbering;
        if !same {
            self.numbering = numbering;
            self.last_sequence = 0;
            self.guard_through = self.last_slot;
        }
        !same && self.last_slot.is_some()
    }

    /// Whether to publish `update`, recording it when new.
    pub fn admit(&mut self, update: &SubscribeUpdate) -> Verdict {
        let Some(slot) = slot_of(update) else {
            return Verdict::NotRelayed;
        };
        let sequence = update.sequence;
        if self.numbering.is_some() && sequence != 0 && sequence <= self.last_sequence {
            return Verdict::RepeatBySequence;
        }
        let key = content_key(update, slot);
        let guarded = self.guard_through.is_some_and(|through| slot <= through);
        if guarded && self.keys.get(&slot).is_some_and(|keys| keys.contains(&key)) {
            return Verdict::RepeatByContent;
        }
        self.last_sequence = self.last_sequence.max(sequence);
        self.last_slot = Some(self.last_slot.map_or(slot, |last| last.max(slot)));
        self.remember(slot, key);
        Verdict::New
    }

    /// Keeps `key` if its slot is among the newest [`KEY_SLOTS`], dropping older slots and, over
    /// [`MAX_KEYS`], the oldest slots' keys.
    fn remember(&mut self, slot: u64, key: u64) {
        let newest = self.last_slot.unwrap_or(slot);
        let oldest_kept = newest.saturating_sub(KEY_SLOTS - 1);
        if slot < oldest_kept {
            return;
        }
        if self.keys.entry(slot).or_default().insert(key) {
            self.key_count += 1;
        }
        while let Some((&first, _)) = self.keys.first_key_value() {
            if first >= oldest_kept && self.key_count <= MAX_KEYS {
                break;
            }
            if let Some((_, dropped)) = self.keys.pop_first() {
                self.key_count -= dropped.len();
            }
        }
    }

    /// Content keys held (for the metrics).
    pub fn key_count(&self) -> usize {
        self.key_count
    }
}

/// A 64-bit fingerprint of what identifies an update (not its timing or numbering).
fn content_key(update: &SubscribeUpdate, slot: u64) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    slot.hash(&mut hasher);
    match update.update.as_ref() {
        Some(Update::Transaction(transaction)) => {
            (1u8, &transaction.signature, transaction.tx_index).hash(&mut hasher);
        }
        Some(Update::Delta(delta)) => {
            let signature = delta.envelope.as_ref().map(|envelope| &envelope.signature);
            let route = delta
                .top_level_instruction
                .as_ref()
                .map(|instruction| instruction.instruction_index);
            (2u8, signature, route).hash(&mut hasher);
        }
        Some(Update::Slot(_)) => 3u8.hash(&mut hasher),
        Some(Update::Footer(_)) => 4u8.hash(&mut hasher),
        Some(Update::DuplicateBlock(duplicate)) => {
            (5u8, duplicate.fec_set_index).hash(&mut hasher);
        }
        Some(Update::Pong(_)) | None => 0u8.hash(&mut hasher),
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use stream_proto::stream::{
        DecodedTransaction, DeltaTopLevelInstruction, DeltaUpdate, SlotNotification,
    };

    use super::*;

    fn transaction(slot: u64, signature: u8, sequence: u64) -> SubscribeUpdate {
        SubscribeUpdate {
            update: Some(Update::Transaction(DecodedTransaction {
                slot,
                signature: vec![signature; 64],
                ..Default::default()
            })),
            sequence,
        }
    }

    fn delta(slot: u64, signature: u8, route: u32, sequence: u64) -> SubscribeUpdate {
        SubscribeUpdate {
            update: Some(Update::Delta(DeltaUpdate {
                envelope: Some(DecodedTransaction {
                    slot,
                    signature: vec![signature; 64],
                    ..Default::default()
                }),
                top_level_instruction: Some(DeltaTopLevelInstruction {
                    instruction_index: route,
                    ..Default::default()
                }),
                ..Default::default()
            })),
            sequence,
        }
    }

    fn slot(slot: u64, sequence: u64) -> SubscribeUpdate {
        SubscribeUpdate {
            update: Some(Update::Slot(SlotNotification { slot })),
            sequence,
        }
    }

    #[test]
    fn the_same_origin_repeats_are_dropped_by_sequence() {
        let mut dedupe = Dedupe::new();
        assert!(!dedupe.connected(Some(7)));
        assert_eq!(dedupe.admit(&transaction(10, 1, 1)), Verdict::New);
        assert_eq!(dedupe.admit(&slot(10, 2)), Verdict::New);
        assert_eq!(dedupe.resume_slot(), Some(10));
        // Reconnected to the same process: the resumed slot comes again, then newer updates.
        assert!(!dedupe.connected(Some(7)));
        assert_eq!(
            dedupe.admit(&transaction(10, 1, 1)),
            Verdict::RepeatBySequence
        );
        assert_eq!(dedupe.admit(&slot(10, 2)), Verdict::RepeatBySequence);
        assert_eq!(dedupe.admit(&transaction(11, 3, 5)), Verdict::New);
    }

    #[test]
    fn a_restarted_origin_numbering_from_one_is_not_taken_for_repeats() {
        let mut dedupe = Dedupe::new();
        dedupe.connected(Some(7));
        for sequence in 1..=100 {
            assert_eq!(dedupe.admit(&transaction(10, 1, sequence)), Verdict::New);
        }
        assert!(dedupe.connected(Some(8)));
        // Slot 10 again, once more from a new process: its content is known.
        assert_eq!(
            dedupe.admit(&transaction(10, 1, 1)),
            Verdict::RepeatByContent
        );
        assert_eq!(dedupe.admit(&transaction(10, 2, 2)), Verdict::New);
        assert_eq!(dedupe.admit(&transaction(11, 1, 3)), Verdict::New);
    }

    #[test]
    fn each_route_call_of_one_transaction_is_its_own_update() {
        let mut dedupe = Dedupe::new();
        dedupe.connected(None);
        assert_eq!(dedupe.admit(&delta(5, 9, 0, 1)), Verdict::New);
        assert_eq!(dedupe.admit(&delta(5, 9, 1, 2)), Verdict::New);
        assert!(dedupe.connected(None));
        assert_eq!(dedupe.admit(&delta(5, 9, 1, 1)), Verdict::RepeatByContent);
        assert_eq!(dedupe.admit(&delta(5, 9, 2, 2)), Verdict::New);
        assert_eq!(dedupe.admit(&slot(5, 3)), Verdict::New);
        assert_eq!(dedupe.admit(&slot(5, 4)), Verdict::RepeatByContent);
    }

    #[test]
    fn keys_are_kept_for_the_newest_slots_only() {
        let mut dedupe = Dedupe::new();
        dedupe.connected(Some(1));
        for slot in 0..100 {
            dedupe.admit(&transaction(slot, 1, slot + 1));
        }
        assert_eq!(dedupe.key_count(), KEY_SLOTS as usize);
        let pongs = SubscribeUpdate {
            update: Some(Update::Pong(1)),
            sequence: 0,
        };
        assert_eq!(dedupe.admit(&pongs), Verdict::NotRelayed);
    }
}
