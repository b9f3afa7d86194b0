//! Pure encoding of the stream's `SubscribeUpdate` messages from a transaction's decoded form
//! (the interface's DecodedTransaction and DeltaUpdate; universe and update kinds as
//! docs/decisions.md says). No clock, no publishing: the workers stamp and publish.
//!
//! A transaction is in the stream's universe when at least one of its top-level instructions of a
//! supported program decodes, or one of its aggregator route instructions wraps a supported
//! program. Each such route gives one `delta` update (in instruction order) whose envelope lists
//! the direct calls too; a transaction with direct calls only gives one `transaction` update.
//! `account_keys` are the static keys only; the addresses loaded through lookup tables go into
//! `loaded_writable_addresses` / `loaded_readonly_addresses` with `lookup_status`, from the
//! resolution the caller hands in ([`encode_resolved`]; encoding stays pure).

use decoder::dex::DecodedInstruction;
use decoder::lookup::LoadedAddresses;
use decoder::transaction::TransactionView;
use decoder::{DecodedTransaction, decode_transaction};
use stream_proto::stream::{self, subscribe_update::Update};

mod delta;
mod lookups;
mod member;

pub use decoder::DecodeStats;
pub use delta::{UNRESOLVED, delta_update};
pub use lookups::status_number;
pub use member::decoded_member;

/// Where a transaction was found: slot and index within its entry batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placement {
    pub slot: u64,
    pub tx_index: u32,
}

/// The updates an empty-map subscriber receives for a transaction and its decoded form (none when
/// it is outside the universe): one `delta` per route, else one `transaction`. Without a
/// resolution: a transaction with lookups is encoded `unresolved`.
pub fn encode_transaction(
    transaction: &TransactionView<'_>,
    decoded: &DecodedTransaction<'_>,
    placement: Placement,
) -> Vec<stream::SubscribeUpdate> {
    encode_resolved(transaction, decoded, placement, None)
}

/// [`encode_transaction`] with the transaction's lookups resolved (`loaded`, from
/// `decoder::lookup::resolve_lookups`): the loaded addresses, the status, and the delta's named
/// accounts through them.
pub fn encode_resolved(
    transaction: &TransactionView<'_>,
    decoded: &DecodedTransaction<'_>,
    placement: Placement,
    loaded: Option<&LoadedAddresses>,
) -> Vec<stream::SubscribeUpdate> {
    if decoded.is_empty() {
        return Vec::new();
    }
    let instructions = decoded
        .instructions
        .iter()
        .map(decoded_instruction)
        .collect();
    let mut envelope = decoded_transaction(transaction, placement, instructions);
    lookups::fill(&mut envelope, transaction, loaded);
    if decoded.routes.is_empty() {
        return vec![stream::SubscribeUpdate {
            update: Some(Update::Transaction(envelope)),
            ..Default::default()
        }];
    }
    decoded
        .routes
        .iter()
        .map(|route| stream::SubscribeUpdate {
            update: Some(Update::Delta(delta_update(
                transaction,
                route,
                envelope.clone(),
                loaded,
            ))),
            ..Default::default()
        })
        .collect()
}

/// Decodes `transaction` (the decoder's one entry point) and encodes its updates: what
/// `appliance decode-tx` and the tests call; the workers call the two steps themselves.
pub fn transaction_updates(
    transaction: &TransactionView<'_>,
    registry: &decoder::dex::ProgramRegistry,
    placement: Placement,
    stats: &mut DecodeStats,
) -> Vec<stream::SubscribeUpdate> {
    let decoded = decode_transaction(transaction, registry, stats);
    encode_transaction(transaction, &decoded, placement)
}

/// The notification of a new highest slot (sent to every started session, unfiltered).
pub fn slot_notification(slot: u64) -> stream::SubscribeUpdate {
    stream::SubscribeUpdate {
        update: Some(Update::Slot(stream::SlotNotification { slot })),
        ..Default::default()
    }
}

/// The block footer update of `slot`: the leader's producer time and user agent (lossy UTF-8).
pub fn slot_footer(slot: u64, producer_time_ns: u64, user_agent: &[u8]) -> stream::SubscribeUpdate {
    stream::SubscribeUpdate {
        update: Some(Update::Footer(stream::BlockFooter {
            slot,
            producer_time_unix_nanos: producer_time_ns,
            producer_user_agent: String::from_utf8_lossy(user_agent).into_owned(),
        })),
        ..Default::default()
    }
}

/// The duplicate-block update: the leader of `slot` signed two roots for one FEC set.
pub fn duplicate_block(
    slot: u64,
    fec_set_index: u32,
    first_root: &[u8; 32],
    second_root: &[u8; 32],
) -> stream::SubscribeUpdate {
    stream::SubscribeUpdate {
        update: Some(Update::DuplicateBlock(stream::DuplicateBlock {
            slot,
            fec_set_index,
            first_merkle_root: first_root.to_vec(),
            second_merkle_root: second_root.to_vec(),
        })),
        ..Default::default()
    }
}

/// Sets the `ServerTiming` of a transaction or delta update (slot notifications and pongs carry
/// none).
pub fn stamp_timing(update: &mut stream::SubscribeUpdate, timing: stream::ServerTiming) {
    match update.update.as_mut() {
        Some(Update::Transaction(transaction)) => transaction.server_timing = Some(timing),
        Some(Update::Delta(delta)) => {
            if let Some(envelope) = delta.envelope.as_mut() {
                envelope.server_timing = Some(timing);
            }
        }
        _ => {}
    }
}

/// The `DecodedTransaction` envelope of a transaction with its decoded instructions.
pub fn decoded_transaction(
    transaction: &TransactionView<'_>,
    placement: Placement,
    decoded_instructions: Vec<stream::DecodedInstruction>,
) -> stream::DecodedTransaction {
    stream::DecodedTransaction {
        slot: placement.slot,
        signature: transaction.first_signature().to_vec(),
        tx_index: placement.tx_index,
        signer: transaction.fee_payer().to_vec(),
        account_keys: transaction
            .static_account_keys()
            .iter()
            .map(|key| key.to_vec())
            .collect(),
        decoded_instructions,
        uses_lookup_tables: transaction.uses_lookup_tables(),
        matched_filters: Vec::new(),
        server_timing: None,
        loaded_writable_addresses: Vec::new(),
        loaded_readonly_addresses: Vec::new(),
        lookup_status: stream::LookupStatus::NoLookups as i32,
    }
}

/// One `DecodedInstruction` message.
pub fn decoded_instruction(instruction: &DecodedInstruction<'_>) -> stream::DecodedInstruction {
    stream::DecodedInstruction {
        program: instruction.program.proto_number(),
        instruction_name: instruction.call.instruction_name.to_owned(),
        instruction_index: instruction.instruction_index,
        account_indices: instruction
            .account_indices
            .iter()
            .map(|&index| u32::from(index))
            .collect(),
        raw_data: instruction.raw_data.to_vec(),
        decoded: decoded_member(&instruction.call.args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footer_update_carries_the_slot_producer_time_and_user_agent() {
        let footer = slot_footer(7, 1_700_000_000_123_456_789, b"agave/3.1.0 \xff");
        let Some(Update::Footer(footer)) = footer.update else {
            panic!("not a footer");
        };
        assert_eq!(footer.slot, 7);
        assert_eq!(footer.producer_time_unix_nanos, 1_700_000_000_123_456_789);
        assert_eq!(footer.producer_user_agent, "agave/3.1.0 \u{fffd}");
    }

    #[test]
    fn the_duplicate_block_update_names_both_roots() {
        let update = duplicate_block(9, 32, &[1; 32], &[2; 32]);
        let Some(Update::DuplicateBlock(duplicate)) = update.update else {
            panic!("not a duplicate block");
        };
        assert_eq!((duplicate.slot, duplicate.fec_set_index), (9, 32));
        assert_eq!(duplicate.first_merkle_root, vec![1; 32]);
        assert_eq!(duplicate.second_merkle_root, vec![2; 32]);
    }
}
