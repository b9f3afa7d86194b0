//! Which worker handles what: FEC sets are sharded by a hash of `(slot, fec_set_index)` (the set
//! side's work spreads evenly, a set never spans two shards), slots by a hash of the slot (all the
//! data shreds of a slot meet in one slot stage, so batches can span sets).

/// SplitMix64's finaliser: a cheap bijective mix, so consecutive slots and set indexes spread.
const fn mix(mut value: u64) -> u64 {
    value ^= value >> 30;
    value = value.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value ^= value >> 27;
    value = value.wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ value >> 31
}

/// The shard (`0..shards`) of FEC set `(slot, fec_set_index)`; 0 when `shards` is 0.
pub const fn set_shard(slot: u64, fec_set_index: u32, shards: usize) -> usize {
    if shards == 0 {
        return 0;
    }
    let set = fec_set_index as u64 / crate::shred::DATA_SHREDS_PER_FEC_SET as u64;
    (mix(mix(slot) ^ set) % shards as u64) as usize
}

/// The shard (`0..shards`) that owns `slot`; 0 when `shards` is 0.
pub const fn slot_shard(slot: u64, shards: usize) -> usize {
    if shards == 0 {
        return 0;
    }
    (mix(slot ^ 0x5bd1_e995) % shards as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sets_of_one_slot_spread_over_every_shard() {
        for shards in 1..=8 {
            let mut seen = vec![0u32; shards];
            for set in 0..64u32 {
                seen[set_shard(361_200_000, set * 32, shards)] += 1;
            }
            assert!(seen.iter().all(|&count| count > 0), "{shards}: {seen:?}");
            assert!(slot_shard(361_200_000, shards) < shards);
        }
        assert_eq!(set_shard(1, 0, 0), 0);
    }
}
