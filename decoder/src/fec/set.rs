//! One set slot of the resolver's pool: a FEC set's state and its 64 shred buffers (a leaf that
//! the resolver and `recovery` both use).

use crate::merkle::{Hash, NodeCache};
use crate::shred::{CODE_SHRED_LEN, SHREDS_PER_FEC_SET, SIGNATURE_LEN, ShredKind, ShredVariant};

use super::key::SetKey;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SetState {
    Free,
    Collecting,
    Complete,
    Failed,
}

/// One set slot of the pool. `buffers[e]` holds the shred at erasure index `e`.
pub(crate) struct FecSet {
    pub(crate) key: SetKey,
    pub(super) state: SetState,
    /// The root's signature verified against the slot's leader.
    pub(super) signed: bool,
    pub(super) confirmed: bool,
    /// A second signed root, once seen.
    pub(super) second_root: Option<Hash>,
    pub(super) sequence: u64,
    pub(crate) variant: ShredVariant,
    pub(crate) shred_version: u16,
    pub(crate) signature: [u8; SIGNATURE_LEN],
    pub(crate) root: Hash,
    pub(crate) chained_root: [u8; 32],
    pub(crate) first_coding_index: Option<u32>,
    pub(crate) present: u64,
    pub(super) consumed: u32,
    pub(super) first_rx_ns: u64,
    /// Boxed, like `nodes` and `buffers`: only authentication reads them, and out of line they
    /// leave the fields every shred touches in a few cache lines instead of behind 4.5 KB.
    pub(crate) leaves: Box<[Hash; SHREDS_PER_FEC_SET]>,
    /// Authenticated tree nodes, so later shreds stop hashing at the first known node.
    pub(super) nodes: Box<NodeCache>,
    pub(crate) buffers: Box<[[u8; CODE_SHRED_LEN]; SHREDS_PER_FEC_SET]>,
}

impl FecSet {
    pub(super) fn empty() -> Self {
        Self {
            key: SetKey {
                slot: 0,
                fec_set_index: 0,
            },
            state: SetState::Free,
            signed: false,
            confirmed: false,
            second_root: None,
            sequence: 0,
            variant: ShredVariant {
                kind: ShredKind::Data,
                proof_size: 0,
                chained: false,
                resigned: false,
            },
            shred_version: 0,
            signature: [0; SIGNATURE_LEN],
            root: [0; 32],
            chained_root: [0; 32],
            first_coding_index: None,
            present: 0,
            consumed: 0,
            first_rx_ns: 0,
            leaves: Box::new([[0; 32]; SHREDS_PER_FEC_SET]),
            nodes: Box::default(),
            buffers: Box::new([[0; CODE_SHRED_LEN]; SHREDS_PER_FEC_SET]),
        }
    }

    pub(super) fn data_present(&self) -> u32 {
        self.present as u32
    }
}
