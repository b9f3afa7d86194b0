//! `Registration`: one session's compiled filters at one generation, with its queue. A new
//! request makes a new registration (a new generation) that replaces the old one as a whole.

use std::sync::Arc;

use super::queue::SessionQueue;
use crate::filter::Filters;

/// A session's number, unique for the life of the hub.
pub type SessionId = u64;

/// What the index and the publisher hold of a session.
#[derive(Debug)]
pub struct Registration {
    pub session: SessionId,
    /// The registry version that made it: increases with every change of any session.
    pub generation: u64,
    pub filters: Arc<Filters>,
    pub queue: Arc<SessionQueue>,
}
