//! Encode once: a published update is encoded a single time into shared bytes, and each
//! subscriber's message is those bytes with its own fields written around them.
//!
//! Every message field is written exactly once: some parsers (protobufjs, under
//! `@grpc/proto-loader`) keep only the last occurrence of a repeated embedded message instead of
//! merging, so a split `server_timing` or `envelope` would lose data there. The shared parts are
//! the oneof member's fields other than the per-subscriber ones, the delta's envelope likewise,
//! and the `ServerTiming` stamps 1–5; each subscriber's `SubscribeUpdate` is written as
//!
//! ```text
//! transaction: [1:LEN] len | shared | 8: id … | 9 { stamps 1–5 | 6: subscriber_recv } | 15: seq
//! delta:       [4:LEN] len | 1 { envelope | 8: id … | 9 { stamps 1–5 | 6: … } } | shared
//!              | 4: packed legs | 15: seq
//! other:       the whole SubscribeUpdate, shared as is (slots, pongs) | 15: seq
//! ```
//! (`15: seq`, the update's `sequence`, only once numbered by the recent-slot buffer.)
//! which any protobuf parser decodes to the same message as the personalised struct (the tests
//! check it with prost against an independent model, and the Node client test with protobufjs).
//! `server_timing` (and, for a delta, `envelope`) is only written when the published update has
//! one, as the personalised struct would; `subscriber_recv` is stamped no earlier than `publish`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prost::Message;
use prost::bytes::BufMut;
use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len};
use stream_proto::stream::{ServerTiming, SubscribeUpdate, subscribe_update::Update};

use crate::filter::{Filters, Matches};
use crate::grpc::outbound::{Outbound, SharedFrame};

/// `SubscribeUpdate.transaction`.
const UPDATE_TRANSACTION: u32 = 1;
/// `SubscribeUpdate.delta`.
const UPDATE_DELTA: u32 = 4;
/// `DecodedTransaction.matched_filters`.
const TRANSACTION_MATCHED_FILTERS: u32 = 8;
/// `DecodedTransaction.server_timing`.
const TRANSACTION_SERVER_TIMING: u32 = 9;
/// `ServerTiming.subscriber_recv_unix_nanos`.
const TIMING_SUBSCRIBER_RECV: u32 = 6;
/// `DeltaUpdate.envelope`.
const DELTA_ENVELOPE: u32 = 1;
/// `DeltaUpdate.matched_leg_indices`.
const DELTA_MATCHED_LEGS: u32 = 4;
/// `SubscribeUpdate.sequence`.
const UPDATE_SEQUENCE: u32 = 15;

/// How the shared bytes are framed into a subscriber's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// The whole `SubscribeUpdate`, written as is.
    Whole,
    /// A transaction; `timing` holds the publish stamp when the update has `server_timing`.
    Transaction { timing: Option<u64> },
    /// A delta; `envelope` when it has one, `timing` as for a transaction (of the envelope).
    Delta { envelope: bool, timing: Option<u64> },
}

/// A published update, encoded once and shared by every subscriber it goes to.
#[derive(Debug)]
pub struct EncodedUpdate {
    update: SubscribeUpdate,
    /// `SubscribeUpdate.sequence`, set once by the recent-slot buffer before any session sees the
    /// update (0 until then), written by each subscriber's message.
    sequence: AtomicU64,
    layout: Layout,
    /// Transaction: the `DecodedTransaction` without `matched_filters` and `server_timing`.
    /// Delta: the `DeltaUpdate` without `envelope` and `matched_leg_indices`. Whole: everything.
    body: Vec<u8>,
    /// Delta: the envelope without `matched_filters` and `server_timing`.
    envelope: Vec<u8>,
    /// The `ServerTiming` stamps 1–5 (empty without timing).
    timing: Vec<u8>,
}

impl EncodedUpdate {
    /// Clears the per-subscriber fields (`matched_filters`, `subscriber_recv`,
    /// `matched_leg_indices`) and encodes the rest.
    pub fn new(mut update: SubscribeUpdate) -> Self {
        update.sequence = 0;
        let mut encoded = Self {
            update: SubscribeUpdate::default(),
            sequence: AtomicU64::new(0),
            layout: Layout::Whole,
            body: Vec::new(),
            envelope: Vec::new(),
            timing: Vec::new(),
        };
        match update.update.as_mut() {
            Some(Update::Transaction(transaction)) => {
                let timing = encoded.split_off_timing(transaction);
                encoded.body = transaction.encode_to_vec();
                transaction.server_timing = timing;
                encoded.layout = Layout::Transaction {
                    timing: timing.map(|timing| timing.publish_unix_nanos),
                };
            }
            Some(Update::Delta(delta)) => {
                delta.matched_leg_indices.clear();
                let mut envelope = delta.envelope.take();
                let timing = envelope.as_mut().and_then(|envelope| {
                    let timing = encoded.split_off_timing(envelope);
                    encoded.envelope = envelope.encode_to_vec();
                    envelope.server_timing = timing;
                    timing
                });
                encoded.layout = Layout::Delta {
                    envelope: envelope.is_some(),
                    timing: timing.map(|timing| timing.publish_unix_nanos),
                };
                encoded.body = delta.encode_to_vec();
                delta.envelope = envelope;
            }
            _ => encoded.body = update.encode_to_vec(),
        }
        encoded.update = update;
        encoded
    }

    /// Clears a transaction's per-subscriber fields and takes its timing out, keeping the
    /// shared stamps' encoding.
    fn split_off_timing(
        &mut self,
        transaction: &mut stream_proto::stream::DecodedTransaction,
    ) -> Option<ServerTiming> {
        transaction.matched_filters.clear();
        let mut timing = transaction.server_timing.take()?;
        timing.subscriber_recv_unix_nanos = 0;
        self.timing = timing.encode_to_vec();
        Some(timing)
    }

    /// The update as published, with the per-subscriber fields cleared (for re-matching).
    pub fn update(&self) -> &SubscribeUpdate {
        &self.update
    }

    /// Numbers the update (`SubscribeUpdate.sequence`); done once, before it is shared.
    pub fn set_sequence(&self, sequence: u64) {
        self.sequence.store(sequence, Ordering::Relaxed);
    }

    /// The update's number (0 when unnumbered).
    pub fn sequence(&self) -> u64 {
        self.sequence.load(Ordering::Relaxed)
    }

    /// The shared bytes.
    pub fn shared_len(&self) -> usize {
        self.body.len() + self.envelope.len() + self.timing.len()
    }
}

/// One subscriber's copy of a shared update: its matched filters and legs and its
/// `subscriber_recv` stamp, written around the shared bytes.
#[derive(Debug, Clone)]
pub struct PersonalUpdate {
    update: Arc<EncodedUpdate>,
    filters: Arc<Filters>,
    matches: Matches,
    subscriber_recv: u64,
    /// Length of the `matched_filters` entries.
    ids_len: usize,
    /// Length of the packed `matched_leg_indices` content.
    legs_len: usize,
}

impl PersonalUpdate {
    /// `matches` indexes `filters`; `subscriber_recv_unix_nanos` is raised to `publish` if below.
    pub fn new(
        update: Arc<EncodedUpdate>,
        filters: Arc<Filters>,
        matches: Matches,
        subscriber_recv_unix_nanos: u64,
    ) -> Self {
        let ids_len = ids(&filters, &matches)
            .map(|id| {
                key_len(TRANSACTION_MATCHED_FILTERS)
                    + encoded_len_varint(id.len() as u64)
                    + id.len()
            })
            .sum();
        let legs_len = matches
            .legs
            .iter()
            .map(|leg| encoded_len_varint(u64::from(*leg)))
            .sum();
        Self {
            update,
            filters,
            matches,
            subscriber_recv: subscriber_recv_unix_nanos,
            ids_len,
            legs_len,
        }
    }

    fn write_ids(&self, buf: &mut impl BufMut) {
        for id in ids(&self.filters, &self.matches) {
            encode_key(TRANSACTION_MATCHED_FILTERS, WireType::LengthDelimited, buf);
            encode_varint(id.len() as u64, buf);
            buf.put_slice(id.as_bytes());
        }
    }

    fn stamp(&self, publish: u64) -> u64 {
        self.subscriber_recv.max(publish)
    }

    /// Length of the whole `server_timing` field, shared stamps and this subscriber's (0 without
    /// timing).
    fn timing_len(&self, timing: Option<u64>) -> usize {
        timing.map_or(0, |publish| {
            let inner = self.update.timing.len() + stamp_len(self.stamp(publish));
            key_len(TRANSACTION_SERVER_TIMING) + encoded_len_varint(inner as u64) + inner
        })
    }

    fn write_timing(&self, timing: Option<u64>, buf: &mut impl BufMut) {
        if let Some(publish) = timing {
            let stamp = self.stamp(publish);
            let shared = &self.update.timing;
            encode_key(TRANSACTION_SERVER_TIMING, WireType::LengthDelimited, buf);
            encode_varint((shared.len() + stamp_len(stamp)) as u64, buf);
            buf.put_slice(shared);
            if stamp != 0 {
                encode_key(TIMING_SUBSCRIBER_RECV, WireType::Varint, buf);
                encode_varint(stamp, buf);
            }
        }
    }

    /// The length of a delta's envelope content (shared envelope, ids, timing), when it has one.
    fn envelope_inner(&self, envelope: bool, timing: Option<u64>) -> Option<usize> {
        envelope.then(|| self.update.envelope.len() + self.ids_len + self.timing_len(timing))
    }

    /// The oneof member's length: shared bytes plus this subscriber's suffix.
    fn member_len(&self) -> usize {
        let shared = self.update.body.len();
        match self.update.layout {
            Layout::Whole => shared,
            Layout::Transaction { timing } => shared + self.ids_len + self.timing_len(timing),
            Layout::Delta { envelope, timing } => {
                let envelope = self.envelope_inner(envelope, timing).map_or(0, |inner| {
                    key_len(DELTA_ENVELOPE) + encoded_len_varint(inner as u64) + inner
                });
                envelope + shared + framed_len(DELTA_MATCHED_LEGS, self.legs_len)
            }
        }
    }
}

/// The ids of the matched filters, in id order.
fn ids<'a>(filters: &'a Filters, matches: &'a Matches) -> impl Iterator<Item = &'a str> {
    matches
        .filters
        .iter()
        .filter_map(|index| filters.get(index))
        .map(|filter| filter.id())
}

/// The encoded length of the stamp field (0 for 0, which proto3 leaves out).
fn stamp_len(stamp: u64) -> usize {
    if stamp == 0 {
        0
    } else {
        key_len(TIMING_SUBSCRIBER_RECV) + encoded_len_varint(stamp)
    }
}

/// The encoded length of `SubscribeUpdate.sequence` (0 for 0, which proto3 leaves out).
fn sequence_len(sequence: u64) -> usize {
    if sequence == 0 {
        0
    } else {
        key_len(UPDATE_SEQUENCE) + encoded_len_varint(sequence)
    }
}

/// A length-delimited field of `inner` bytes; nothing when empty.
fn framed_len(tag: u32, inner: usize) -> usize {
    if inner == 0 {
        0
    } else {
        key_len(tag) + encoded_len_varint(inner as u64) + inner
    }
}

fn write_frame(tag: u32, inner: usize, buf: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(inner as u64, buf);
}

/// What a session sends: its own message (a pong) or its copy of a shared update.
pub type OutboundUpdate = Outbound<PersonalUpdate>;

impl OutboundUpdate {
    pub fn pong(ping_id: i32) -> Self {
        Self::Owned(Box::new(SubscribeUpdate {
            update: Some(Update::Pong(ping_id)),
            ..Default::default()
        }))
    }
}

impl SharedFrame for PersonalUpdate {
    type Whole = SubscribeUpdate;
    const ENCODE_ONLY: &'static str =
        "OutboundUpdate is encode-only: decode a stream::SubscribeUpdate";

    fn encode_raw(&self, buf: &mut impl BufMut) {
        let shared = &self.update.body;
        match self.update.layout {
            Layout::Whole => buf.put_slice(shared),
            Layout::Transaction { timing } => {
                write_frame(UPDATE_TRANSACTION, self.member_len(), buf);
                buf.put_slice(shared);
                self.write_ids(buf);
                self.write_timing(timing, buf);
            }
            Layout::Delta { envelope, timing } => {
                write_frame(UPDATE_DELTA, self.member_len(), buf);
                if let Some(inner) = self.envelope_inner(envelope, timing) {
                    write_frame(DELTA_ENVELOPE, inner, buf);
                    buf.put_slice(&self.update.envelope);
                    self.write_ids(buf);
                    self.write_timing(timing, buf);
                }
                buf.put_slice(shared);
                let legs = self.legs_len;
                if legs > 0 {
                    write_frame(DELTA_MATCHED_LEGS, legs, buf);
                    for leg in &self.matches.legs {
                        encode_varint(u64::from(*leg), buf);
                    }
                }
            }
        }
        let sequence = self.update.sequence();
        if sequence != 0 {
            encode_key(UPDATE_SEQUENCE, WireType::Varint, buf);
            encode_varint(sequence, buf);
        }
    }

    fn encoded_len(&self) -> usize {
        let framed = match self.update.layout {
            Layout::Whole => self.update.body.len(),
            Layout::Transaction { .. } => {
                let member = self.member_len();
                key_len(UPDATE_TRANSACTION) + encoded_len_varint(member as u64) + member
            }
            Layout::Delta { .. } => {
                let member = self.member_len();
                key_len(UPDATE_DELTA) + encoded_len_varint(member as u64) + member
            }
        };
        framed + sequence_len(self.update.sequence())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stream_proto::stream::SlotNotification;

    #[test]
    fn a_shared_slot_is_the_plain_encoding_and_is_never_decoded() {
        let slot = SubscribeUpdate {
            update: Some(Update::Slot(SlotNotification { slot: 300 })),
            ..Default::default()
        };
        let shared = Arc::new(EncodedUpdate::new(slot.clone()));
        let outbound = OutboundUpdate::Shared(PersonalUpdate::new(
            shared,
            Arc::new(Filters::default()),
            Matches::default(),
            9,
        ));
        // Field 3, length 3, { field 1: varint 300 }.
        assert_eq!(outbound.encode_to_vec(), [0x1a, 3, 0x08, 0xac, 0x02]);
        assert_eq!(outbound.encoded_len(), 5);
        assert!(OutboundUpdate::decode(&outbound.encode_to_vec()[..]).is_err());
    }

    /// The field numbers of a message's top level, in wire order, with each length-delimited
    /// field's content.
    fn fields(mut bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let (tag, wire_type) = prost::encoding::decode_key(&mut bytes).unwrap();
            match wire_type {
                WireType::Varint => {
                    prost::encoding::decode_varint(&mut bytes).unwrap();
                    out.push((tag, Vec::new()));
                }
                WireType::LengthDelimited => {
                    let len = prost::encoding::decode_varint(&mut bytes).unwrap() as usize;
                    out.push((tag, bytes[..len].to_vec()));
                    bytes = &bytes[len..];
                }
                other => panic!("unexpected wire type {other:?}"),
            }
        }
        out
    }

    fn timed_transaction() -> stream_proto::stream::DecodedTransaction {
        stream_proto::stream::DecodedTransaction {
            slot: 7,
            signature: vec![1; 64],
            matched_filters: vec!["stale".into()],
            server_timing: Some(ServerTiming {
                first_read_unix_nanos: 1,
                capture_done_unix_nanos: 2,
                deshred_done_unix_nanos: 3,
                decode_done_unix_nanos: 4,
                publish_unix_nanos: 5,
                subscriber_recv_unix_nanos: 0,
                ..Default::default()
            }),
            loaded_writable_addresses: vec![vec![3; 32], Vec::new()],
            loaded_readonly_addresses: vec![vec![4; 32]],
            lookup_status: stream_proto::stream::LookupStatus::PartlyResolved as i32,
            ..Default::default()
        }
    }

    /// The lookup fields (10, 11, 12) of an encoded `DecodedTransaction`, each position once.
    fn assert_lookup_fields(transaction_fields: &[(u32, Vec<u8>)]) {
        let of = |tag: u32| -> Vec<Vec<u8>> {
            transaction_fields
                .iter()
                .filter(|(t, _)| *t == tag)
                .map(|(_, content)| content.clone())
                .collect()
        };
        assert_eq!(
            of(10),
            vec![vec![3; 32], Vec::new()],
            "loaded_writable_addresses"
        );
        assert_eq!(of(11), vec![vec![4; 32]], "loaded_readonly_addresses");
        assert_eq!(of(12).len(), 1, "lookup_status once");
    }

    fn personal(update: SubscribeUpdate) -> Vec<u8> {
        let shared = Arc::new(EncodedUpdate::new(update));
        let outbound = OutboundUpdate::Shared(PersonalUpdate::new(
            shared,
            Arc::new(Filters::default()),
            Matches::default(),
            9,
        ));
        let bytes = outbound.encode_to_vec();
        assert_eq!(bytes.len(), outbound.encoded_len());
        bytes
    }

    /// Field `tag` occurs exactly once at this level; its content.
    fn once(fields: &[(u32, Vec<u8>)], tag: u32) -> Vec<u8> {
        let found: Vec<_> = fields.iter().filter(|(t, _)| *t == tag).collect();
        assert_eq!(found.len(), 1, "field {tag} occurs {} times", found.len());
        found[0].1.clone()
    }

    #[test]
    fn a_transaction_carries_one_complete_server_timing() {
        let update = SubscribeUpdate {
            update: Some(Update::Transaction(timed_transaction())),
            ..Default::default()
        };
        let member = once(&fields(&personal(update)), UPDATE_TRANSACTION);
        let timing = once(&fields(&member), TRANSACTION_SERVER_TIMING);
        assert_lookup_fields(&fields(&member));
        let timing = ServerTiming::decode(&timing[..]).unwrap();
        assert_eq!(
            (timing.first_read_unix_nanos, timing.publish_unix_nanos),
            (1, 5)
        );
        assert_eq!(timing.subscriber_recv_unix_nanos, 9);
    }

    #[test]
    fn a_delta_carries_one_envelope_with_one_server_timing() {
        let update = SubscribeUpdate {
            update: Some(Update::Delta(stream_proto::stream::DeltaUpdate {
                envelope: Some(timed_transaction()),
                matched_leg_indices: vec![0],
                ..Default::default()
            })),
            ..Default::default()
        };
        let member = once(&fields(&personal(update)), UPDATE_DELTA);
        let envelope = once(&fields(&member), DELTA_ENVELOPE);
        let envelope_fields = fields(&envelope);
        let timing = ServerTiming::decode(&once(&envelope_fields, TRANSACTION_SERVER_TIMING)[..]);
        assert_eq!(timing.unwrap().decode_done_unix_nanos, 4);
        assert_eq!(once(&envelope_fields, 2), vec![1; 64], "the signature");
        assert_lookup_fields(&envelope_fields);
        assert!(
            envelope_fields
                .iter()
                .all(|(tag, _)| *tag != TRANSACTION_MATCHED_FILTERS),
            "no filter matched here, and the published ids are not shared"
        );
    }
}
