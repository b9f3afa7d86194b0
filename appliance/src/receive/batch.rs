//! [`RxBatch`]: a fixed block of datagram slots that a receive backend fills and its receive
//! thread dispatches to the workers' rings, allocated once at start-up and reused forever (no
//! allocation per packet).
//!
//! Memory per batch: `capacity × SLOT_BYTES` payload bytes plus 10 bytes of length and timestamp
//! per slot; 64 slots take 128 KiB + 640 B.
#![forbid(unsafe_code)]

use crate::handoff::SLOT_BYTES;

/// The largest batch a backend fills in one call (also the `recvmmsg` vector length).
pub const BATCH_CAPACITY_MAX: usize = 256;

/// A batch of received datagrams with their receive timestamps.
pub struct RxBatch {
    payload: Box<[u8]>,
    lens: Box<[u16]>,
    rx_ns: Box<[u64]>,
    count: usize,
}

impl RxBatch {
    /// A batch of `capacity` slots (1..=[`BATCH_CAPACITY_MAX`]).
    pub fn new(capacity: usize) -> Self {
        assert!(
            (1..=BATCH_CAPACITY_MAX).contains(&capacity),
            "batch capacity {capacity} outside 1..={BATCH_CAPACITY_MAX}"
        );
        Self {
            payload: vec![0; capacity * SLOT_BYTES].into_boxed_slice(),
            lens: vec![0; capacity].into_boxed_slice(),
            rx_ns: vec![0; capacity].into_boxed_slice(),
            count: 0,
        }
    }

    /// Slots this batch holds.
    pub fn capacity(&self) -> usize {
        self.lens.len()
    }

    /// Datagrams held.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Total payload bytes held.
    pub fn bytes(&self) -> u64 {
        self.lens[..self.count]
            .iter()
            .map(|&len| u64::from(len))
            .sum()
    }

    /// Forgets the datagrams (the memory stays).
    pub fn clear(&mut self) {
        self.count = 0;
    }

    /// Datagram `index`: its bytes and its receive time (Unix ns).
    pub fn get(&self, index: usize) -> Option<(&[u8], u64)> {
        if index >= self.count {
            return None;
        }
        let start = index * SLOT_BYTES;
        let len = usize::from(self.lens[index]);
        Some((&self.payload[start..start + len], self.rx_ns[index]))
    }

    /// The datagrams in receive order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        (0..self.count).filter_map(|index| self.get(index))
    }

    /// Copies one datagram into the next free slot; `false` when the batch is full. A datagram
    /// longer than [`SLOT_BYTES`] must have been refused by the caller.
    pub fn push(&mut self, datagram: &[u8], rx_ns: u64) -> bool {
        debug_assert!(datagram.len() <= SLOT_BYTES);
        if self.count == self.capacity() || datagram.len() > SLOT_BYTES {
            return false;
        }
        let start = self.count * SLOT_BYTES;
        self.payload[start..start + datagram.len()].copy_from_slice(datagram);
        self.lens[self.count] = datagram.len() as u16;
        self.rx_ns[self.count] = rx_ns;
        self.count += 1;
        true
    }

    /// The payload block, for backends that scatter datagrams into the slots directly
    /// (`recvmmsg`); slot `i` is `[i * SLOT_BYTES, (i + 1) * SLOT_BYTES)`.
    pub(crate) fn slots_mut(&mut self) -> &mut [u8] {
        &mut self.payload
    }

    /// Records that slots `0..count` were filled directly, with these lengths and stamps.
    pub(crate) fn set_filled(&mut self, count: usize, mut entry: impl FnMut(usize) -> (u16, u64)) {
        assert!(count <= self.capacity());
        for index in 0..count {
            let (len, rx_ns) = entry(index);
            debug_assert!(usize::from(len) <= SLOT_BYTES);
            self.lens[index] = len.min(SLOT_BYTES as u16);
            self.rx_ns[index] = rx_ns;
        }
        self.count = count;
    }
}

const _: () = assert!(SLOT_BYTES <= u16::MAX as usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_fills_in_order_until_capacity() {
        let mut batch = RxBatch::new(2);
        assert!(batch.push(b"one", 10));
        assert!(batch.push(&[7u8; SLOT_BYTES], 20));
        assert!(!batch.push(b"three", 30));
        assert_eq!(batch.len(), 2);
        assert_eq!(batch.get(0), Some((&b"one"[..], 10)));
        assert_eq!(batch.get(1).unwrap().0.len(), SLOT_BYTES);
        assert_eq!(batch.bytes(), 3 + SLOT_BYTES as u64);
        assert_eq!(batch.get(2), None);
        batch.clear();
        assert!(batch.is_empty());
        assert_eq!(batch.iter().count(), 0);
    }

    #[test]
    fn directly_filled_slots_read_back() {
        let mut batch = RxBatch::new(3);
        batch.slots_mut()[SLOT_BYTES..SLOT_BYTES + 2].copy_from_slice(b"hi");
        batch.set_filled(2, |index| (index as u16 * 2, 100 + index as u64));
        let read: Vec<_> = batch.iter().collect();
        assert_eq!(read, vec![(&b""[..], 100), (&b"hi"[..], 101)]);
    }
}
