//! An endless feed of the fixture slots for steady-state benches: one long-lived decoder sees
//! loop after loop of the six fixture slots, each loop renumbered to fresh slots above the last
//! (re-encoded, re-hashed and re-signed by [`capture::reslot::Reslotter`], as the appliance's
//! replay does), with the records of every loop in the order (and with the drops) of the chosen
//! fixture files.
//!
//! A bench that builds a fresh decoder per iteration measures its pools' first touch as much as
//! the decode; a worker of `appliance run` instead reuses the same warm pools for days. This feed
//! lets a bench keep one decoder, so the timed loop is the steady state.

use capture::reslot::Reslotter;
use decoder::merkle::Hash;
use decoder::{DecoderConfig, LeaderSchedule};
use ed25519_dalek::SigningKey;

use crate::{fixture_slots, read_fixture, records};

/// Key that signs every renumbered slot (any fixed seed: the feed is its own leader).
const FEED_KEY_SEED: [u8; 32] = *b"bench-steady-feed-leader-key-001";

/// Offset of the variant byte; its high bit marks a data shred (0x8_, 0x9_, 0xB_).
const VARIANT_OFFSET: usize = 64;
const SLOT_RANGE: std::ops::Range<usize> = 65..73;
const INDEX_RANGE: std::ops::Range<usize> = 73..77;

/// Which shred of a captured slot a record is: (is data, index). Stable across renumbering.
type ShredId = (bool, u32);

fn shred_id(record: &[u8]) -> (u64, ShredId) {
    let field = |range: std::ops::Range<usize>| -> [u8; 8] {
        let mut bytes = [0; 8];
        bytes[..range.len()].copy_from_slice(&record[range]);
        bytes
    };
    let slot = u64::from_le_bytes(field(SLOT_RANGE));
    let index = u64::from_le_bytes(field(INDEX_RANGE)) as u32;
    (slot, (record[VARIANT_OFFSET] & 0x80 != 0, index))
}

/// Offset of the FEC set index in the common shred header.
const FEC_SET_INDEX_RANGE: std::ops::Range<usize> = 79..83;

/// Shuffles the records of each FEC set among themselves (Fisher-Yates with SplitMix64 seeded by
/// the slot), keeping the sets in their order. The complete files hold each set's shreds
/// contiguously.
fn shuffle_within_sets(records: &mut [Vec<u8>], slot: u64) {
    let mut state = slot ^ 0x5EED_5EED;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let set_of = |record: &Vec<u8>| {
        let mut bytes = [0; 4];
        bytes.copy_from_slice(&record[FEC_SET_INDEX_RANGE]);
        u32::from_le_bytes(bytes)
    };
    let mut seen = std::collections::HashSet::new();
    for set in records.chunk_by_mut(|a, b| set_of(a) == set_of(b)) {
        assert!(
            seen.insert(set_of(&set[0])),
            "slot {slot}: a FEC set's shreds are not contiguous in the complete file"
        );
        for last in (1..set.len()).rev() {
            let pick = (next() % (last as u64 + 1)) as usize;
            set.swap(last, pick);
        }
    }
}

/// The decoder a steady-state bench keeps: production pools and bounds, the fixtures' shred
/// version; `authenticate = false` is the trusted-feed mode.
pub fn steady_decoder_config(authenticate: bool) -> DecoderConfig {
    let mut config = DecoderConfig {
        shred_version: Some(crate::SHRED_VERSION),
        ..DecoderConfig::default()
    };
    config.fec.authenticate = authenticate;
    config
}

/// Which records a loop holds, in which order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedOrder {
    /// The shuffled, lossy `slot-<n>.bin` files (recovery needed).
    Lossy,
    /// The complete `slot-<n>.full.bin` files in emitted order.
    Full,
    /// The complete files with each FEC set's 64 shreds in a random order (sets in emitted
    /// order, nothing dropped): what a receiver sees from turbine without loss, where data and
    /// coding shreds interleave, so a set completes on its 32nd shred and its missing data
    /// shreds are recovered.
    Turbine,
}

/// Loops of renumbered fixture slots; see the module docs.
pub struct SteadyFeed {
    reslotter: Reslotter,
    /// Captured slot number and its complete capture, ascending.
    captures: Vec<(u64, Vec<Vec<u8>>)>,
    /// One loop's records: index into `captures` and the shred's identity.
    order: Vec<(usize, ShredId)>,
    /// Last slot emitted and the root its next slot chains to.
    previous: (u64, Hash),
    loops: u64,
}

impl SteadyFeed {
    /// A feed starting above every fixture slot.
    pub fn new(order: FeedOrder) -> Self {
        let slots = fixture_slots();
        let captures: Vec<(u64, Vec<Vec<u8>>)> = slots
            .iter()
            .map(|&slot| {
                (
                    slot,
                    records(&read_fixture(&format!("slot-{slot}.full.bin"))),
                )
            })
            .collect();
        let order = slots
            .iter()
            .enumerate()
            .flat_map(|(position, &slot)| {
                let name = match order {
                    FeedOrder::Lossy => format!("slot-{slot}.bin"),
                    FeedOrder::Full | FeedOrder::Turbine => format!("slot-{slot}.full.bin"),
                };
                let mut records = records(&read_fixture(&name));
                if order == FeedOrder::Turbine {
                    shuffle_within_sets(&mut records, slot);
                }
                records
                    .into_iter()
                    .map(move |record| {
                        let (record_slot, id) = shred_id(&record);
                        assert_eq!(record_slot, slot, "{name} holds another slot's shred");
                        (position, id)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let last = slots.last().copied().unwrap_or_default();
        Self {
            reslotter: Reslotter::new(SigningKey::from_bytes(&FEED_KEY_SEED)),
            captures,
            order,
            previous: (last, [0; 32]),
            loops: 0,
        }
    }

    /// The schedule that accepts the feed's signatures (one key for every slot).
    pub fn leaders(&self) -> LeaderSchedule {
        match LeaderSchedule::key_from_bytes(&self.reslotter.leader()) {
            Ok(key) => LeaderSchedule::Fixed(key),
            Err(error) => panic!("feed key: {error}"),
        }
    }

    /// Records of one loop.
    pub fn records_per_loop(&self) -> usize {
        self.order.len()
    }

    /// Loops emitted so far.
    pub fn loops(&self) -> u64 {
        self.loops
    }

    /// Writes the next loop's records into `out` (cleared first), renumbered above the last loop,
    /// with the fixture slots' gaps kept.
    pub fn next_loop(&mut self, out: &mut Vec<Vec<u8>>) {
        let first_captured = self.captures[0].0;
        let base = self.previous.0 + 1;
        let mut renumbered = Vec::with_capacity(self.captures.len());
        for (captured, shreds) in &self.captures {
            let slot = base + (captured - first_captured);
            let views: Vec<&[u8]> = shreds.iter().map(Vec::as_slice).collect();
            let resigned = self
                .reslotter
                .reslot(&views, slot, self.previous.0, &self.previous.1)
                .unwrap_or_else(|error| panic!("renumbering fixture slot {captured}: {error}"));
            self.previous = (slot, resigned.last_root);
            let by_id: std::collections::HashMap<ShredId, Vec<u8>> = resigned
                .shreds
                .into_iter()
                .map(|shred| (shred_id(&shred).1, shred))
                .collect();
            renumbered.push(by_id);
        }
        out.clear();
        out.extend(self.order.iter().map(|(position, id)| {
            renumbered[*position]
                .get(id)
                .cloned()
                .unwrap_or_else(|| panic!("renumbered slot lacks shred {id:?}"))
        }));
        self.loops += 1;
    }
}

/// Loops renumbered ahead, a batch at a time: renumbering between two timed loops would evict the
/// decoder's working set from the caches, which a worker never sees, so benches take their loops
/// from here and renumber only when the batch is used up (outside their timing).
pub struct LoopsAhead {
    /// Ready loops, the next one last.
    ready: Vec<Vec<Vec<u8>>>,
    batch: usize,
}

impl LoopsAhead {
    /// Renumbers `batch` loops whenever none is ready.
    pub fn new(batch: usize) -> Self {
        Self {
            ready: Vec::new(),
            batch: batch.max(1),
        }
    }

    /// The next loop's records (slots above every loop handed out before).
    pub fn next(&mut self, feed: &mut SteadyFeed) -> Vec<Vec<u8>> {
        if self.ready.is_empty() {
            self.ready = (0..self.batch)
                .map(|_| {
                    let mut records = Vec::new();
                    feed.next_loop(&mut records);
                    records
                })
                .collect();
            self.ready.reverse();
        }
        self.ready.pop().unwrap_or_default()
    }
}
