//! Fan-out of published updates to the stream's sessions (issue "Fast matching"): the cost of
//! one update follows its account keys and calls, not the number of sessions and filters, and the
//! update is encoded once whatever the number of sessions it goes to.
//!
//! ```text
//! worker thread ── Hub::publish(SubscribeUpdate) ──────────────────────────────────────────┐
//!   snapshot (ArcSwap, no lock) ─► UpdateView (keys, calls; once) ─► Index::candidates      │
//!   ─► evaluate each (session, filter) candidate ─► group by session ─► Matches per session │
//!   ─► EncodedUpdate (encoded once, Arc) ─► SessionQueue::offer (bounded; over ⇒ cut)       │
//! session task ── Subscriber::next ─► personalise (re-match if its filters changed since)   │
//!   ─► OutboundUpdate: shared bytes + matched_filters / legs / subscriber_recv ─► client ◄──┘
//! ```
//! - [`anchor`]: where each filter sits in the index (one required key, the include keys,
//!   (program, instruction) pairs, or the always-evaluate list).
//! - [`index`]: the immutable index of all sessions' filters.
//! - [`hub`]: registry, lock-free snapshot (index + sessions changed since it was built, which are
//!   evaluated directly, + stale marks), coalesced background rebuilds, and `publish`.
//! - [`queue`]: each session's queue, bounded in updates, bytes and age, and its lag state.
//! - [`recent`]: the recent-slot buffer: every update of the last slots, numbered, for resuming
//!   sessions (`from_slot`).
//! - [`pace`]: the replays' shared budget of updates per second.
//! - [`subscriber`]: the session's side (start/replace, resume, take, personalise, lag end).
//! - [`encode`]: the shared encoding and the per-subscriber `prost::Message` written around it.
//!
//! Consistency: a change (start, new request, end) is one snapshot store under the registry lock;
//! the publisher reads one snapshot per update, so it sees a session once, with one generation of
//! its filters. A delivery carries that generation; a session whose filters changed since
//! re-matches the (still held) update against its current filters before sending it.

pub mod anchor;
pub mod encode;
pub mod hub;
pub mod index;
pub mod pace;
pub mod queue;
pub mod recent;
pub mod registration;
pub mod subscriber;

pub use encode::{EncodedUpdate, OutboundUpdate, PersonalUpdate};
pub use hub::Hub;
pub use queue::{Delivery, LagObserver, Offer, QueueBounds, SessionQueue};
pub use recent::{RecentBounds, RecentBuffer, ResumeError};
pub use subscriber::Subscriber;
