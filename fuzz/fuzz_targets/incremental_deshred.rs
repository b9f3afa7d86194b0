//! Incremental deshredding on arbitrary splits of a range into data shreds. Input: byte 0 = shred
//! size (1–1,016 entry bytes), byte 1 = arrival-order seed, byte 2 = window cuts seed, then the
//! range's bytes. Checks: the range parser driven over growing windows agrees with
//! `parse_components` (same transactions, same verdict); a slot stage in incremental mode fed the
//! range's shreds in the seeded order hands out, per batch, exactly what the batch-wise stage
//! hands out for a well-formed batch, every batch ends once with a transaction count equal to the
//! transactions handed out, and nothing is handed out for a batch the batch path drops unless
//! its end reports it malformed.
#![no_main]

use std::collections::BTreeMap;

use decoder::entry::parse_components;
use decoder::incremental::{IncrementalConfig, RangeParser, Step};
use decoder::shred::{DATA_HEADERS_LEN, FLAG_LAST_SHRED_IN_SLOT};
use decoder::{DataShredReady, DecoderConfig, ReadyItem, SlotStage, SlotStageConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let [size, order_seed, cut_seed, range @ ..] = input else {
        return;
    };
    check_parser(range, *cut_seed);
    check_stage(range, 1 + usize::from(*size) * 4, *order_seed);
});

fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn check_parser(range: &[u8], cut_seed: u8) {
    let mut seed = u64::from(cut_seed) | 0x100;
    let mut parser = RangeParser::new();
    let mut position = 0;
    let mut available = 0;
    let mut transactions = Vec::new();
    let verdict = loop {
        let at_end = available == range.len();
        match parser.step(&range[position..available], at_end) {
            Step::Transaction {
                transaction, len, ..
            } => {
                transactions.push(transaction.bytes());
                position += len;
            }
            Step::Marker { len, .. } | Step::Skip { len } => position += len,
            Step::NeedMore => {
                assert!(!at_end, "need more only before the end");
                available = (available + 1 + next(&mut seed) as usize % 700).min(range.len());
            }
            Step::End => break true,
            Step::Malformed(_) => break false,
        }
    };
    match parse_components(range) {
        Ok(whole) => {
            assert!(verdict, "a range the whole parse accepts ends well");
            let expected: Vec<&[u8]> = whole.transactions().map(|t| t.bytes()).collect();
            assert_eq!(transactions, expected);
        }
        Err(_) => assert!(!verdict, "a range the whole parse rejects ends malformed"),
    }
}

/// Data shreds of one range at slot 5 (last in slot), as a set stage would hand them over.
fn shreds(range: &[u8], size: usize) -> Vec<Vec<u8>> {
    let pieces: Vec<&[u8]> = if range.is_empty() {
        vec![&[]]
    } else {
        range.chunks(size.min(1016)).collect()
    };
    let count = pieces.len();
    pieces
        .into_iter()
        .enumerate()
        .map(|(index, piece)| {
            let mut payload = vec![0u8; DATA_HEADERS_LEN];
            payload[73..77].copy_from_slice(&(index as u32).to_le_bytes());
            payload[85] = if index + 1 == count {
                FLAG_LAST_SHRED_IN_SLOT
            } else {
                0
            };
            let len = (DATA_HEADERS_LEN + piece.len()) as u16;
            payload[86..88].copy_from_slice(&len.to_le_bytes());
            payload.extend_from_slice(piece);
            payload
        })
        .collect()
}

fn feed(
    stage: &mut SlotStage,
    shreds: &[Vec<u8>],
    order: &[usize],
    incremental: bool,
) -> BTreeMap<u32, (Vec<Vec<u8>>, Option<bool>)> {
    let mut batches: BTreeMap<u32, (Vec<Vec<u8>>, Option<bool>)> = BTreeMap::new();
    for (arrival, &index) in order.iter().enumerate() {
        stage.insert(&DataShredReady {
            slot: 5,
            index: index as u32,
            flags: shreds[index][85],
            first_rx_ns: arrival as u64,
            rx_ns: arrival as u64,
            payload: &shreds[index],
        });
        if incremental {
            while let Some(item) = stage.next_ready() {
                match item {
                    ReadyItem::Transaction(ready) => {
                        let batch = batches.entry(ready.batch_start_index).or_default();
                        assert!(batch.1.is_none(), "transaction after its batch end");
                        assert_eq!(ready.index_in_batch, batch.0.len() as u64);
                        batch.0.push(ready.transaction.bytes().to_vec());
                    }
                    ReadyItem::Marker(_) => {}
                    ReadyItem::BatchEnd(end) => {
                        let batch = batches.entry(end.span.start_index).or_default();
                        assert!(batch.1.is_none(), "one end per batch");
                        assert_eq!(end.transactions, batch.0.len() as u64);
                        batch.1 = Some(end.outcome.is_ok());
                    }
                }
            }
        } else {
            while let Some(batch) = stage.next_batch() {
                let list = batch
                    .entries
                    .transactions()
                    .map(|t| t.bytes().to_vec())
                    .collect();
                batches.insert(batch.span.start_index, (list, Some(true)));
            }
        }
    }
    batches
}

fn check_stage(range: &[u8], size: usize, order_seed: u8) {
    let shreds = shreds(range, size);
    let mut order: Vec<usize> = (0..shreds.len()).collect();
    let mut seed = u64::from(order_seed) | 0x100;
    for i in (1..order.len()).rev() {
        order.swap(i, next(&mut seed) as usize % (i + 1));
    }
    let mut config = DecoderConfig {
        max_batch_bytes: 256 << 10,
        max_pending_batches: 4,
        ..DecoderConfig::default()
    };
    config.fec.max_sets_in_flight = 64;
    config.deshred.max_slots_in_flight = 1;
    let mut batch_stage = SlotStage::new(SlotStageConfig::from(&config));
    let expected = feed(&mut batch_stage, &shreds, &order, false);
    config.incremental = IncrementalConfig {
        enabled: true,
        max_open_streams: 2,
    };
    let mut stage = SlotStage::new(SlotStageConfig::from(&config));
    let got = feed(&mut stage, &shreds, &order, true);
    for (start, (transactions, ended)) in &got {
        match expected.get(start) {
            Some((want, _)) => {
                assert_eq!(
                    *ended,
                    Some(true),
                    "a batch the batch path accepts ends well"
                );
                assert_eq!(transactions, want);
            }
            None => assert_ne!(
                *ended,
                Some(true),
                "batch {start} accepted only incrementally"
            ),
        }
    }
    for start in expected.keys() {
        assert!(
            got.contains_key(start),
            "batch {start} missing incrementally"
        );
    }
}
