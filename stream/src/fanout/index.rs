//! `Index`: every registered session's filters by anchor ([`super::anchor`]), built in one go from
//! a set of registrations and then only read. Per update, [`Index::candidates`] looks up each
//! static account key and each call (three table cells per call) and returns the (session slot,
//! filter) pairs that must be evaluated; its cost follows the update's keys and calls, plus the
//! candidates it finds, not the number of sessions or filters.

use std::collections::HashMap;
use std::sync::Arc;

use super::anchor::{Anchor, anchor};
use super::registration::{Registration, SessionId};
use crate::filter::{KeyHasher, PROGRAM_VALUE_MAX, UpdateView, names};

/// One filter of one session: its slot in [`Index::sessions`] and its position in the filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Entry {
    pub slot: u32,
    pub filter: u32,
}

/// The entries under one key; most keys belong to one filter.
#[derive(Debug, Clone)]
enum Postings {
    One(Entry),
    Many(Vec<Entry>),
}

impl Postings {
    fn push(&mut self, entry: Entry) {
        match self {
            Self::One(first) => *self = Self::Many(vec![*first, entry]),
            Self::Many(entries) => entries.push(entry),
        }
    }

    fn as_slice(&self) -> &[Entry] {
        match self {
            Self::One(entry) => std::slice::from_ref(entry),
            Self::Many(entries) => entries,
        }
    }
}

/// The immutable index of a set of registrations.
#[derive(Debug)]
pub struct Index {
    /// The registry version it was built from.
    version: u64,
    sessions: Vec<Arc<Registration>>,
    slots: HashMap<SessionId, u32>,
    by_key: HashMap<crate::filter::Key, Postings, KeyHasher>,
    /// Cell `program * (names + 1) + name`: program 0 and name `names` are wildcards.
    by_call: Vec<Vec<Entry>>,
    always: Vec<Entry>,
    /// Slots of sessions with an empty filter map.
    match_all: Vec<u32>,
    entries: usize,
}

/// Columns of the `by_call` table: every interned name plus the wildcard.
fn call_columns() -> usize {
    names::name_count() + 1
}

fn call_cell(program: Option<i32>, name: Option<names::NameId>) -> usize {
    let row = program.map_or(0, |program| program as usize);
    let column = name.map_or(names::name_count(), usize::from);
    row * call_columns() + column
}

impl Index {
    /// An index of nothing.
    pub fn empty() -> Self {
        Self::build(Vec::new(), 0)
    }

    /// Indexes `sessions` (one registration per session), as of registry `version`.
    pub fn build(sessions: Vec<Arc<Registration>>, version: u64) -> Self {
        let mut index = Self {
            version,
            slots: HashMap::with_capacity(sessions.len()),
            by_key: HashMap::default(),
            by_call: vec![Vec::new(); (PROGRAM_VALUE_MAX as usize + 1) * call_columns()],
            always: Vec::new(),
            match_all: Vec::new(),
            entries: 0,
            sessions: Vec::new(),
        };
        for (slot, registration) in sessions.iter().enumerate() {
            let slot = slot as u32;
            index.slots.insert(registration.session, slot);
            if registration.filters.is_empty() {
                index.match_all.push(slot);
                continue;
            }
            for (position, filter) in registration.filters.iter().enumerate() {
                let entry = Entry {
                    slot,
                    filter: position as u32,
                };
                index.entries += 1;
                match anchor(filter) {
                    Anchor::Keys(keys) => {
                        for key in keys {
                            index
                                .by_key
                                .entry(key)
                                .and_modify(|postings| postings.push(entry))
                                .or_insert(Postings::One(entry));
                        }
                    }
                    Anchor::Calls(pairs) => {
                        for (program, name) in pairs {
                            if let Some(cell) = index.by_call.get_mut(call_cell(program, name)) {
                                cell.push(entry);
                            }
                        }
                    }
                    Anchor::Always => index.always.push(entry),
                }
            }
        }
        index.sessions = sessions;
        index
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    /// The indexed registrations, by slot.
    pub fn sessions(&self) -> &[Arc<Registration>] {
        &self.sessions
    }

    pub fn slot_of(&self, session: SessionId) -> Option<u32> {
        self.slots.get(&session).copied()
    }

    /// Slots of sessions with an empty filter map.
    pub fn match_all(&self) -> &[u32] {
        &self.match_all
    }

    /// Filters indexed (each once, whatever its number of anchors).
    pub fn filter_count(&self) -> usize {
        self.entries
    }

    /// Appends the entries an update hits (with repeats) to `out`.
    pub fn candidates(&self, view: &UpdateView<'_>, out: &mut Vec<Entry>) {
        // Without account anchors the view's keys are never built (nor sorted).
        let keys = if self.by_key.is_empty() {
            &[][..]
        } else {
            view.keys()
        };
        for key in keys {
            if let Some(postings) = self.by_key.get(key) {
                out.extend_from_slice(postings.as_slice());
            }
        }
        for call in view.calls() {
            let program = (1..=PROGRAM_VALUE_MAX)
                .contains(&call.program)
                .then_some(call.program);
            let mut cells = [None; 3];
            if program.is_some() {
                cells[0] = Some(call_cell(program, None));
                if call.name.is_some() {
                    cells[1] = Some(call_cell(program, call.name));
                }
            }
            if call.name.is_some() {
                cells[2] = Some(call_cell(None, call.name));
            }
            for cell in cells.into_iter().flatten() {
                if let Some(entries) = self.by_call.get(cell) {
                    out.extend_from_slice(entries);
                }
            }
        }
        out.extend_from_slice(&self.always);
    }
}
