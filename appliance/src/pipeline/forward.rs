//! A set-stage event on its way to the worker that owns its slot: applied at once by its own
//! worker, or copied into a preallocated forwarding ring slot ([`Forwarded`]) and applied by the
//! owner's slot stage when it pops it (`pipeline::workers`).

use decoder::fec::SetKey;
use decoder::shard::slot_shard;
use decoder::shred::DATA_SHRED_LEN;
use decoder::{DataShredReady, SetEvent, SlotStage};

use crate::handoff::ring::Producer;

/// What a forwarding ring slot carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum ForwardKind {
    #[default]
    Data,
    Evicted,
}

/// A `SetEvent` copied into a forwarding ring slot.
pub struct Forwarded {
    kind: ForwardKind,
    slot: u64,
    index: u32,
    flags: u8,
    first_rx_ns: u64,
    rx_ns: u64,
    len: u16,
    payload: Box<[u8; DATA_SHRED_LEN]>,
}

impl Default for Forwarded {
    fn default() -> Self {
        Self {
            kind: ForwardKind::Data,
            slot: 0,
            index: 0,
            flags: 0,
            first_rx_ns: 0,
            rx_ns: 0,
            len: 0,
            payload: Box::new([0; DATA_SHRED_LEN]),
        }
    }
}

impl Forwarded {
    fn fill(&mut self, event: &SetEvent<'_>) {
        match event {
            SetEvent::DataShredReady(shred) => {
                let len = shred.payload.len().min(DATA_SHRED_LEN);
                self.kind = ForwardKind::Data;
                self.slot = shred.slot;
                self.index = shred.index;
                self.flags = shred.flags;
                self.first_rx_ns = shred.first_rx_ns;
                self.rx_ns = shred.rx_ns;
                self.payload[..len].copy_from_slice(&shred.payload[..len]);
                self.len = len as u16;
            }
            SetEvent::SetEvicted(key) => {
                self.kind = ForwardKind::Evicted;
                self.slot = key.slot;
                self.index = key.fec_set_index;
            }
            // Floors, slot notifications, re-anchors and duplicates stay with the worker that
            // raised them (`route`).
            SetEvent::SlotFloor(_)
            | SetEvent::HighestSlot(_)
            | SetEvent::Reanchored { .. }
            | SetEvent::Duplicate(_) => {}
        }
    }

    pub fn event(&self) -> SetEvent<'_> {
        match self.kind {
            ForwardKind::Data => SetEvent::DataShredReady(DataShredReady {
                slot: self.slot,
                index: self.index,
                flags: self.flags,
                first_rx_ns: self.first_rx_ns,
                rx_ns: self.rx_ns,
                payload: &self.payload[..usize::from(self.len)],
            }),
            ForwardKind::Evicted => SetEvent::SetEvicted(SetKey {
                slot: self.slot,
                fec_set_index: self.index,
            }),
        }
    }
}

/// Sends a set-stage event to the slot stage of the slot's owner: applied at once when that is
/// this worker, copied into the forwarding ring otherwise (full ring: dropped, counted there).
/// Returns the owner when the event was pushed into its ring.
pub fn route(
    event: &SetEvent<'_>,
    own: usize,
    workers: usize,
    slots: &mut SlotStage,
    forward_out: &mut [Option<Producer<Forwarded>>],
) -> Option<usize> {
    let owner = match event {
        SetEvent::DataShredReady(shred) => slot_shard(shred.slot, workers),
        SetEvent::SetEvicted(key) => slot_shard(key.slot, workers),
        // Each worker's set stage sees every slot (sets are spread over all workers), so its
        // floor is applied to its own slot stage.
        SetEvent::SlotFloor(_)
        | SetEvent::HighestSlot(_)
        | SetEvent::Reanchored { .. }
        | SetEvent::Duplicate(_) => own,
    };
    if owner == own {
        slots.apply(event);
    } else if let Some(Some(producer)) = forward_out.get_mut(owner)
        && producer.push_with(|slot| slot.fill(event))
    {
        return Some(owner);
    }
    None
}
