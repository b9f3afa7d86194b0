//! Subscription filters (specification §2.3–2.4, §4.1; decisions in
//! `shared/spec/product-decisions.md` §A): a `SubscribeRequest` compiled once into a typed matcher,
//! then matched purely against each update.
//!
//! ```text
//! SubscribeRequest + FilterLimits ─ Filters::compile ─► Filters | FilterError (INVALID_ARGUMENT)
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

mod compile;
mod error;

pub use compile::{FilterLimits, Filters};
pub use error::FilterError;

/// What an update matched: the ids of the matching filters and, for a delta update, the legs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matched {
    pub filter_ids: Vec<String>,
    pub leg_indices: Vec<u32>,
}
