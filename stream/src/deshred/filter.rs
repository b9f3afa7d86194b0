//! A `SubscribeDeshred` session's filters, compiled from its latest request with the semantics of
//! Yellowstone's transaction filters (docs/yellowstone.md): each named filter ANDs its fields
//! (`vote` equal to the transaction's vote flag; `account_include` any key; `account_exclude` no
//! key; `account_required` every key, over static and loaded addresses), an update carries the
//! names of every filter it matched, and a filter with nothing set matches everything. Slot
//! filters pass every shred-level status unless they ask to filter by commitment (which no
//! pre-execution status has).

use yellowstone_grpc_proto::geyser::{
    SubscribeDeshredRequest, SubscribeRequestFilterDeshredTransactions, SubscribeRequestFilterSlots,
};

use super::item::{DeshredTransaction, SlotUpdate};
use crate::filter::compile::parse_key;
use crate::filter::{FilterError, FilterLimits, Key, KeySet};

/// One named transaction filter.
#[derive(Debug, Clone)]
struct TransactionFilter {
    name: String,
    vote: Option<bool>,
    include: KeySet,
    exclude: KeySet,
    required: Vec<Key>,
}

impl TransactionFilter {
    fn matches(&self, transaction: &DeshredTransaction) -> bool {
        if self.vote.is_some_and(|vote| vote != transaction.is_vote) {
            return false;
        }
        let keys = &transaction.keys;
        (self.include.is_empty() || keys.iter().any(|key| self.include.contains(key)))
            && !keys.iter().any(|key| self.exclude.contains(key))
            && self.required.iter().all(|key| keys.contains(key))
    }
}

/// A session's compiled filters; the default matches nothing (a session that has not asked).
#[derive(Debug, Clone, Default)]
pub struct DeshredFilters {
    transactions: Vec<TransactionFilter>,
    /// Names of the slot filters that let shred-level statuses through.
    slots: Vec<String>,
}

impl DeshredFilters {
    /// Compiles a request's filter maps (its `ping` is the caller's business). Names are sorted,
    /// so every update lists its filters in the same order.
    pub fn compile(
        request: &SubscribeDeshredRequest,
        limits: &FilterLimits,
    ) -> Result<Self, FilterError> {
        check_sizes(request, limits)?;
        let mut transactions = request
            .deshred_transactions
            .iter()
            .map(|(name, filter)| compile_transaction_filter(name, filter))
            .collect::<Result<Vec<_>, _>>()?;
        transactions.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        let mut slots: Vec<String> = request
            .slots
            .iter()
            .filter(|(_, filter)| passes_shred_statuses(filter))
            .map(|(name, _)| name.clone())
            .collect();
        slots.sort_unstable();
        Ok(Self {
            transactions,
            slots,
        })
    }

    /// The names of the filters `transaction` matches; empty when it is not for this session.
    pub fn transaction_matches(&self, transaction: &DeshredTransaction) -> Vec<String> {
        self.transactions
            .iter()
            .filter(|filter| filter.matches(transaction))
            .map(|filter| filter.name.clone())
            .collect()
    }

    /// The names of the filters a slot update matches.
    pub fn slot_matches(&self, _update: &SlotUpdate) -> Vec<String> {
        self.slots.clone()
    }
}

/// Yellowstone evaluates deshred slot filters without a commitment: `filter_by_commitment`
/// matches nothing; `interslot_updates` lets every status through; otherwise only processed,
/// confirmed and finalized pass, which shreds never tell.
fn passes_shred_statuses(filter: &SubscribeRequestFilterSlots) -> bool {
    filter.filter_by_commitment != Some(true) && filter.interslot_updates == Some(true)
}

fn check_sizes(
    request: &SubscribeDeshredRequest,
    limits: &FilterLimits,
) -> Result<(), FilterError> {
    let keys: usize = request
        .deshred_transactions
        .values()
        .map(|filter| {
            filter.account_include.len()
                + filter.account_exclude.len()
                + filter.account_required.len()
        })
        .sum();
    let filters = request.deshred_transactions.len() + request.slots.len();
    limits.check_counts(filters, keys)?;
    limits.check_ids(
        request
            .deshred_transactions
            .keys()
            .chain(request.slots.keys()),
    )
}

fn compile_transaction_filter(
    name: &str,
    filter: &SubscribeRequestFilterDeshredTransactions,
) -> Result<TransactionFilter, FilterError> {
    let keys = |field: &'static str, values: &[String]| -> Result<Vec<Key>, FilterError> {
        values
            .iter()
            .map(|value| parse_key(name, field, value))
            .collect()
    };
    let mut required = keys("account_required", &filter.account_required)?;
    required.sort_unstable();
    required.dedup();
    Ok(TransactionFilter {
        name: name.to_owned(),
        vote: filter.vote,
        include: keys("account_include", &filter.account_include)?
            .into_iter()
            .collect(),
        exclude: keys("account_exclude", &filter.account_exclude)?
            .into_iter()
            .collect(),
        required,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use prost::bytes::Bytes;

    use super::*;

    fn key(byte: u8) -> Key {
        [byte; 32]
    }

    fn base58(byte: u8) -> String {
        bs58::encode(key(byte)).into_string()
    }

    fn transaction(is_vote: bool, keys: &[u8]) -> DeshredTransaction {
        DeshredTransaction {
            is_vote,
            keys: keys.iter().map(|&byte| key(byte)).collect(),
            body: Bytes::new(),
        }
    }

    fn request(
        filters: &[(&str, SubscribeRequestFilterDeshredTransactions)],
    ) -> SubscribeDeshredRequest {
        SubscribeDeshredRequest {
            deshred_transactions: filters
                .iter()
                .map(|(name, filter)| ((*name).to_owned(), filter.clone()))
                .collect(),
            ..Default::default()
        }
    }

    fn compile(filters: &[(&str, SubscribeRequestFilterDeshredTransactions)]) -> DeshredFilters {
        DeshredFilters::compile(&request(filters), &FilterLimits::default()).unwrap()
    }

    #[test]
    fn a_session_without_filters_gets_nothing_and_an_empty_filter_everything() {
        let none = DeshredFilters::default();
        assert!(
            none.transaction_matches(&transaction(false, &[1]))
                .is_empty()
        );
        let all = compile(&[("all", Default::default())]);
        assert_eq!(all.transaction_matches(&transaction(true, &[1])), ["all"]);
    }

    #[test]
    fn fields_and_within_a_filter_and_names_list_every_match() {
        let filters = compile(&[
            (
                "b_include",
                SubscribeRequestFilterDeshredTransactions {
                    vote: Some(false),
                    account_include: vec![base58(1), base58(2)],
                    ..Default::default()
                },
            ),
            (
                "a_required",
                SubscribeRequestFilterDeshredTransactions {
                    account_required: vec![base58(1), base58(3)],
                    account_exclude: vec![base58(9)],
                    ..Default::default()
                },
            ),
        ]);
        let both = transaction(false, &[1, 3]);
        assert_eq!(
            filters.transaction_matches(&both),
            ["a_required", "b_include"]
        );
        let vote = transaction(true, &[1, 3]);
        assert_eq!(filters.transaction_matches(&vote), ["a_required"]);
        let excluded = transaction(false, &[1, 3, 9]);
        assert_eq!(filters.transaction_matches(&excluded), ["b_include"]);
        let neither = transaction(false, &[4]);
        assert!(filters.transaction_matches(&neither).is_empty());
    }

    #[test]
    fn slot_filters_pass_shred_statuses_only_with_interslot_updates_and_no_commitment() {
        let mut request = SubscribeDeshredRequest::default();
        for (name, by_commitment, interslot) in [
            ("interslot", None, Some(true)),
            ("committed", Some(true), Some(true)),
            ("plain", None, None),
        ] {
            request.slots.insert(
                name.to_owned(),
                SubscribeRequestFilterSlots {
                    filter_by_commitment: by_commitment,
                    interslot_updates: interslot,
                },
            );
        }
        let filters = DeshredFilters::compile(&request, &FilterLimits::default()).unwrap();
        let update = SlotUpdate {
            slot: 5,
            parent: Some(4),
            status: yellowstone_grpc_proto::geyser::SlotStatus::SlotFirstShredReceived,
        };
        assert_eq!(filters.slot_matches(&update), ["interslot"]);
    }

    #[test]
    fn bad_keys_and_oversized_requests_are_refused_with_the_reason() {
        let bad = request(&[(
            "mine",
            SubscribeRequestFilterDeshredTransactions {
                account_include: vec!["not-a-key".to_owned()],
                ..Default::default()
            },
        )]);
        let error = DeshredFilters::compile(&bad, &FilterLimits::default()).unwrap_err();
        assert_eq!(error.label(), "bad_key");
        assert!(error.to_string().contains("account_include"), "{error}");
        assert!(error.to_string().contains("not-a-key"), "{error}");
        let limits = FilterLimits {
            max_keys: 1,
            ..FilterLimits::default()
        };
        let many = request(&[(
            "mine",
            SubscribeRequestFilterDeshredTransactions {
                account_include: vec![base58(1), base58(2)],
                ..Default::default()
            },
        )]);
        let error = DeshredFilters::compile(&many, &limits).unwrap_err();
        assert_eq!(error.label(), "too_many_keys");
    }
}
