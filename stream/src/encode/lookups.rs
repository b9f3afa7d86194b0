//! The lookup fields of a `DecodedTransaction` (`loaded_writable_addresses`,
//! `loaded_readonly_addresses`, `lookup_status`) from the caller's resolution, and naming an
//! instruction account through them.
//!
//! Every loaded position is listed, in the runtime's order, so `account_indices` index into
//! `account_keys ++ loaded_writable_addresses ++ loaded_readonly_addresses`; a position whose
//! lookup did not resolve holds empty bytes. Without a resolution, a transaction with lookups is
//! `unresolved` with every position empty.

use decoder::lookup::{AccountKey, LoadedAddresses, LookupStatus};
use decoder::transaction::TransactionView;
use stream_proto::stream;

/// The proto value of a decoder status.
pub fn status_number(status: LookupStatus) -> i32 {
    let proto = match status {
        LookupStatus::NoLookups => stream::LookupStatus::NoLookups,
        LookupStatus::Resolved => stream::LookupStatus::Resolved,
        LookupStatus::ProvisionallyResolved => stream::LookupStatus::ProvisionallyResolved,
        LookupStatus::PartlyResolved => stream::LookupStatus::PartlyResolved,
        LookupStatus::Unresolved => stream::LookupStatus::Unresolved,
    };
    proto as i32
}

/// Fills the envelope's lookup fields.
pub fn fill(
    envelope: &mut stream::DecodedTransaction,
    transaction: &TransactionView<'_>,
    loaded: Option<&LoadedAddresses>,
) {
    match loaded {
        Some(loaded) if loaded.status() != LookupStatus::NoLookups => {
            envelope.loaded_writable_addresses = (0..loaded.writable().len())
                .map(|position| {
                    resolved_bytes(
                        loaded.is_writable_resolved(position),
                        loaded.writable(),
                        position,
                    )
                })
                .collect();
            envelope.loaded_readonly_addresses = (0..loaded.readonly().len())
                .map(|position| {
                    resolved_bytes(
                        loaded.is_readonly_resolved(position),
                        loaded.readonly(),
                        position,
                    )
                })
                .collect();
            envelope.lookup_status = status_number(loaded.status());
        }
        _ if transaction.address_table_lookups().next().is_some() => {
            let (mut writable, mut readonly) = (0, 0);
            for lookup in transaction.address_table_lookups() {
                writable += lookup.writable_indices.len();
                readonly += lookup.readonly_indices.len();
            }
            envelope.loaded_writable_addresses = vec![Vec::new(); writable];
            envelope.loaded_readonly_addresses = vec![Vec::new(); readonly];
            envelope.lookup_status = stream::LookupStatus::Unresolved as i32;
        }
        _ => {}
    }
}

fn resolved_bytes(resolved: bool, addresses: &[[u8; 32]], position: usize) -> Vec<u8> {
    match (resolved, addresses.get(position)) {
        (true, Some(address)) => address.to_vec(),
        _ => Vec::new(),
    }
}

/// The address instruction account `index` names: a static key, or a resolved loaded address.
pub fn account_address<'a>(
    transaction: &TransactionView<'a>,
    loaded: Option<&'a LoadedAddresses>,
    index: u8,
) -> Option<&'a [u8; 32]> {
    match loaded {
        Some(loaded) => match loaded.account_key(transaction.static_account_keys(), index) {
            AccountKey::Static(key)
            | AccountKey::LoadedWritable(key)
            | AccountKey::LoadedReadonly(key) => Some(key),
            AccountKey::Unresolved | AccountKey::OutOfRange => None,
        },
        None => transaction.static_account_key(usize::from(index)),
    }
}
