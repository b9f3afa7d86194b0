//! An in-memory [`ArchiveStore`]: blocks held in maps, with the signature and address indexes
//! computed from the transactions themselves. Test double and benchmark fixture for the JSON-RPC
//! frontend (the real stores read CAR files, in the `archive` crate); not meant for production
//! data sizes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use archive::{
    ArchiveError, ArchiveStore, Block, SignatureInfo, SignatureQuery, SlotLookup,
    TransactionInBlock, epoch_of,
};

use super::methods::{account_keys_of, first_signature};
use super::parsed::is_memo_program;

/// Position of a transaction: (slot, index in block). Orders newest-last.
type Position = (u64, u32);

/// Blocks of some epochs, kept in memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    epochs: BTreeSet<u64>,
    blocks: BTreeMap<u64, Block>,
    by_signature: HashMap<[u8; 64], Position>,
    /// Positions per address, ascending.
    by_address: HashMap<[u8; 32], Vec<Position>>,
    infos: HashMap<Position, SignatureInfo>,
}

impl MemoryStore {
    /// A store holding `epochs`, with `blocks` (each must lie in a held epoch; others are ignored).
    /// Slots of held epochs without a block are skipped slots.
    pub fn new(
        epochs: impl IntoIterator<Item = u64>,
        blocks: impl IntoIterator<Item = Block>,
    ) -> Self {
        let mut store = Self {
            epochs: epochs.into_iter().collect(),
            ..Self::default()
        };
        for block in blocks {
            if !store.epochs.contains(&epoch_of(block.slot)) {
                continue;
            }
            for transaction in &block.transactions {
                let Some(signature) = first_signature(transaction) else {
                    continue;
                };
                let position = (block.slot, transaction.index);
                store.by_signature.insert(signature, position);
                for key in account_keys_of(transaction) {
                    store.by_address.entry(key).or_default().push(position);
                }
                store.infos.insert(
                    position,
                    SignatureInfo {
                        signature,
                        slot: block.slot,
                        index: transaction.index,
                        err: transaction
                            .meta
                            .as_ref()
                            .and_then(|meta| meta.err.as_ref())
                            .map(|err| err.err.clone()),
                        memo: memo_of(transaction),
                        block_time: block.block_time,
                    },
                );
            }
            store.blocks.insert(block.slot, block);
        }
        for positions in store.by_address.values_mut() {
            positions.sort_unstable();
            positions.dedup();
        }
        store
    }

    fn held(&self, slot: u64) -> bool {
        self.epochs.contains(&epoch_of(slot))
    }

    fn transaction_at(&self, (slot, index): Position) -> Option<&archive::Transaction> {
        self.blocks
            .get(&slot)?
            .transactions
            .iter()
            .find(|tx| tx.index == index)
    }
}

/// The memo as the validator prints it: `[len] text` per top-level memo instruction, `"; "`-joined.
pub fn memo_of(transaction: &archive::Transaction) -> Option<String> {
    let view = decoder::transaction::parse_transaction_exact(&transaction.wire).ok()?;
    let memos: Vec<String> = view
        .instructions()
        .filter(|ix| {
            view.static_account_key(usize::from(ix.program_id_index))
                .is_some_and(|key| is_memo_program(key))
        })
        .map(|ix| match std::str::from_utf8(ix.data) {
            Ok(text) => format!("[{}] {text}", ix.data.len()),
            Err(_) => format!("[{}] (unparseable)", ix.data.len()),
        })
        .collect();
    (!memos.is_empty()).then(|| memos.join("; "))
}

impl ArchiveStore for MemoryStore {
    fn epochs(&self) -> Vec<u64> {
        self.epochs.iter().copied().collect()
    }

    fn block(&self, slot: u64) -> Result<SlotLookup<Block>, ArchiveError> {
        Ok(match self.blocks.get(&slot) {
            Some(block) => SlotLookup::Found(block.clone()),
            None if self.held(slot) => SlotLookup::Skipped,
            None => SlotLookup::NotHeld,
        })
    }

    fn block_time(&self, slot: u64) -> Result<SlotLookup<Option<i64>>, ArchiveError> {
        Ok(match self.blocks.get(&slot) {
            Some(block) => SlotLookup::Found(block.block_time),
            None if self.held(slot) => SlotLookup::Skipped,
            None => SlotLookup::NotHeld,
        })
    }

    fn transaction(
        &self,
        signature: &[u8; 64],
    ) -> Result<Option<TransactionInBlock>, ArchiveError> {
        let Some(&position) = self.by_signature.get(signature) else {
            return Ok(None);
        };
        let block_time = self.blocks.get(&position.0).and_then(|b| b.block_time);
        Ok(self
            .transaction_at(position)
            .map(|transaction| TransactionInBlock {
                transaction: transaction.clone(),
                block_time,
            }))
    }

    fn signatures_for_address(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<Vec<SignatureInfo>, ArchiveError> {
        let Some(positions) = self.by_address.get(address) else {
            return Ok(Vec::new());
        };
        // An unknown `before`/`until` is a lookup failure: nothing is returned.
        let locate = |signature: &Option<[u8; 64]>| match signature {
            None => Ok(None),
            Some(signature) => self
                .by_signature
                .get(signature)
                .copied()
                .map(Some)
                .ok_or(()),
        };
        let (Ok(before), Ok(until)) = (locate(&query.before), locate(&query.until)) else {
            return Ok(Vec::new());
        };
        Ok(positions
            .iter()
            .rev()
            .filter(|position| before.is_none_or(|before| **position < before))
            .take_while(|position| until.is_none_or(|until| **position > until))
            .take(query.limit)
            .filter_map(|position| self.infos.get(position).cloned())
            .collect())
    }

    fn newest_slot(&self) -> Option<u64> {
        self.blocks.keys().next_back().copied()
    }
}
