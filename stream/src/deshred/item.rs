//! What the Yellowstone deshred stream publishes: a transaction encoded once as the body of a
//! `SubscribeUpdateDeshred` (its transaction and `created_at` fields; each session adds only the
//! names of its matching filters), with the keys its filters match against, and slot updates.

use decoder::transaction::{MessageVersion, TransactionView};
use prost::Message;
use prost::bytes::Bytes;
use yellowstone_grpc_proto::geyser::subscribe_update_deshred::UpdateOneof;
use yellowstone_grpc_proto::geyser::{
    SlotStatus, SubscribeUpdateDeshred, SubscribeUpdateDeshredTransaction,
    SubscribeUpdateDeshredTransactionInfo, SubscribeUpdateSlot,
};
use yellowstone_grpc_proto::prost_types::Timestamp;
use yellowstone_grpc_proto::solana::storage::confirmed_block as storage;

/// A 32-byte account address.
pub type Address = [u8; 32];

/// `Vote111111111111111111111111111111111111111`, the vote program.
const VOTE_PROGRAM: Address = [
    7, 97, 72, 29, 53, 116, 116, 187, 124, 77, 118, 36, 235, 211, 189, 179, 216, 53, 94, 115, 209,
    16, 67, 252, 13, 163, 83, 128, 0, 0, 0, 0,
];

/// The data shreds of the completed data set (entry batch) a transaction came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataSet {
    pub slot: u64,
    pub start_index: u32,
    pub end_index_exclusive: u32,
}

/// A v0 transaction's loaded addresses, in the runtime's order (all of them resolved).
#[derive(Debug, Clone, Copy)]
pub struct Loaded<'a> {
    pub writable: &'a [Address],
    pub readonly: &'a [Address],
}

/// What the deshred feed carries.
#[derive(Debug)]
pub enum DeshredItem {
    Transaction(DeshredTransaction),
    Slot(SlotUpdate),
}

/// One transaction, encoded once for every session.
#[derive(Debug)]
pub struct DeshredTransaction {
    pub is_vote: bool,
    /// Static keys, then loaded writable, then loaded read-only addresses: what
    /// `account_include`, `account_exclude` and `account_required` look at.
    pub keys: Box<[Address]>,
    /// The update's `deshred_transaction` (2) and `created_at` (5) fields, encoded.
    pub body: Bytes,
}

/// A slot's progress as shreds show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotUpdate {
    pub slot: u64,
    pub parent: Option<u64>,
    pub status: SlotStatus,
}

impl SlotUpdate {
    /// The update as sent, to a session whose slot filters `filters` matched.
    pub fn to_update(self, filters: Vec<String>, now_nanos: u64) -> SubscribeUpdateDeshred {
        SubscribeUpdateDeshred {
            filters,
            update_oneof: Some(UpdateOneof::Slot(SubscribeUpdateSlot {
                slot: self.slot,
                parent: self.parent,
                status: self.status as i32,
                dead_error: None,
            })),
            created_at: Some(timestamp(now_nanos)),
        }
    }
}

impl DeshredTransaction {
    /// `transaction` of `data_set`, with its loaded addresses when every lookup resolved (else
    /// none, as agave sends them), stamped `created_at`.
    pub fn new(
        transaction: &TransactionView<'_>,
        data_set: DataSet,
        loaded: Option<Loaded<'_>>,
        created_at_nanos: u64,
    ) -> Self {
        let loaded = loaded.unwrap_or(Loaded {
            writable: &[],
            readonly: &[],
        });
        let is_vote = is_simple_vote(transaction);
        let info = SubscribeUpdateDeshredTransactionInfo {
            signature: transaction.first_signature().to_vec(),
            is_vote,
            transaction: Some(storage_transaction(transaction)),
            loaded_writable_addresses: loaded.writable.iter().map(|key| key.to_vec()).collect(),
            loaded_readonly_addresses: loaded.readonly.iter().map(|key| key.to_vec()).collect(),
            completed_data_set_starting_shred_index: data_set.start_index,
            completed_data_set_ending_shred_index_exclusive: data_set.end_index_exclusive,
        };
        let update = SubscribeUpdateDeshred {
            filters: Vec::new(),
            update_oneof: Some(UpdateOneof::DeshredTransaction(
                SubscribeUpdateDeshredTransaction {
                    transaction: Some(info),
                    slot: data_set.slot,
                },
            )),
            created_at: Some(timestamp(created_at_nanos)),
        };
        let keys = transaction
            .static_account_keys()
            .iter()
            .chain(loaded.writable)
            .chain(loaded.readonly)
            .copied()
            .collect();
        Self {
            is_vote,
            keys,
            body: Bytes::from(update.encode_to_vec()),
        }
    }
}

/// agave's simple vote transaction: fewer than three signatures, a legacy message, exactly one
/// instruction, and that instruction calls the vote program.
pub fn is_simple_vote(transaction: &TransactionView<'_>) -> bool {
    if transaction.signature_count() >= 3 || transaction.version() != MessageVersion::Legacy {
        return false;
    }
    let mut instructions = transaction.instructions();
    match (instructions.next(), instructions.next()) {
        (Some(only), None) => transaction
            .static_account_key(usize::from(only.program_id_index))
            .is_some_and(|program| *program == VOTE_PROGRAM),
        _ => false,
    }
}

/// The `solana.storage.ConfirmedBlock.Transaction` of a wire transaction, field by field.
fn storage_transaction(transaction: &TransactionView<'_>) -> storage::Transaction {
    let header = transaction.header();
    let message = storage::Message {
        header: Some(storage::MessageHeader {
            num_required_signatures: u32::from(header.num_required_signatures),
            num_readonly_signed_accounts: u32::from(header.num_readonly_signed_accounts),
            num_readonly_unsigned_accounts: u32::from(header.num_readonly_unsigned_accounts),
        }),
        account_keys: transaction
            .static_account_keys()
            .iter()
            .map(|key| key.to_vec())
            .collect(),
        recent_blockhash: transaction.recent_blockhash().to_vec(),
        instructions: transaction
            .instructions()
            .map(|instruction| storage::CompiledInstruction {
                program_id_index: u32::from(instruction.program_id_index),
                accounts: instruction.account_indices.to_vec(),
                data: instruction.data.to_vec(),
            })
            .collect(),
        versioned: transaction.version() == MessageVersion::V0,
        address_table_lookups: transaction
            .address_table_lookups()
            .map(|lookup| storage::MessageAddressTableLookup {
                account_key: lookup.table.to_vec(),
                writable_indexes: lookup.writable_indices.to_vec(),
                readonly_indexes: lookup.readonly_indices.to_vec(),
            })
            .collect(),
        config: None,
    };
    storage::Transaction {
        signatures: transaction
            .signatures()
            .iter()
            .map(|signature| signature.to_vec())
            .collect(),
        message: Some(message),
    }
}

/// A protobuf timestamp of a Unix time in nanoseconds.
pub fn timestamp(unix_nanos: u64) -> Timestamp {
    Timestamp {
        seconds: i64::try_from(unix_nanos / 1_000_000_000).unwrap_or(i64::MAX),
        nanos: i32::try_from(unix_nanos % 1_000_000_000).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_vote_program_constant_is_the_vote_program() {
        let decoded = bs58::decode(decoder::program_ids::VOTE).into_vec().unwrap();
        assert_eq!(decoded, VOTE_PROGRAM);
    }

    #[test]
    fn timestamps_split_seconds_and_nanoseconds() {
        let stamp = timestamp(1_700_000_000_123_456_789);
        assert_eq!((stamp.seconds, stamp.nanos), (1_700_000_000, 123_456_789));
    }
}
