//! Subscription filters (`SubscribeRequest` and `ProgramFilter` of proto/stream.proto; rules in
//! docs/decisions.md, product decisions §A): a `SubscribeRequest` compiled once into a typed
//! matcher, then matched purely against a per-update view.
//!
//! ```text
//! SubscribeRequest + FilterLimits ─ Filters::compile ─► Filters | FilterError (INVALID_ARGUMENT)
//! SubscribeUpdate ─ UpdateView::new (once per update) ─► keys (sorted) + calls (program, name id)
//! CompiledFilter::evaluate(&UpdateView)            one filter, used by the fan-out index
//! Filters::match_view(&UpdateView) ─► Option<Matches { filter indices, leg indices }>
//! Filters::matches(&SubscribeUpdate) ─► Option<Matched { filter ids, leg indices }>
//! ```
//! One filter matches when every non-empty criterion holds (AND): (1) some decoded instruction (for
//! a `delta` update: some leg, with its `DELTA_*` program and logical name) has its program in
//! `programs` and its name in `instruction_types`; (2) some `accounts_include` key, (3) no
//! `accounts_exclude` key and (4) every `accounts_required` key is among the static account keys.
//! Filters combine with OR; `matched_filters` lists every matching id, sorted. An empty map matches
//! everything with no ids. For a delta update, `matched_leg_indices` is the sorted union of the
//! legs that satisfied criterion 1 in a matching filter (every leg for an empty map). Direct
//! programs (`ALPHA_FUN`) never match routed legs, which carry `DELTA_*` values.
//!
//! The view is built once per published update and shared by every filter of every subscriber:
//! instruction names are interned ([`names`]) so criterion 1 is two bit tests per call, and the
//! account criteria probe whichever side is smaller (the update's sorted keys or the filter's
//! hash set), so a filter with 1,000 keys costs as much as one with 10.

mod bits;
pub(crate) mod compile;
mod criteria;
mod error;
pub mod names;
mod view;

pub use bits::IndexSet;
pub use compile::{FilterLimits, Filters};
pub use criteria::{CompiledFilter, KeyHasher, KeySet, PROGRAM_VALUE_MAX};
pub use error::FilterError;
pub use view::{Call, Key, UpdateKind, UpdateView};

/// What an update matched: the ids of the matching filters and, for a delta update, the legs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matched {
    pub filter_ids: Vec<String>,
    pub leg_indices: Vec<u32>,
}

/// What an update matched, by position: the matching filters' indices in their [`Filters`] (id
/// order) and, for a delta update, the matching legs (ascending).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matches {
    pub filters: IndexSet,
    pub legs: Vec<u32>,
}

impl Matches {
    /// The match of an empty filter map: no filter ids and, for a delta update, every leg.
    pub fn everything(view: &UpdateView) -> Self {
        let legs = if view.kind() == UpdateKind::Delta {
            (0..view.calls().len() as u32).collect()
        } else {
            Vec::new()
        };
        Self {
            filters: IndexSet::default(),
            legs,
        }
    }
}
