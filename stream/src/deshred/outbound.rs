//! The message a `SubscribeDeshred` session sends: either a transaction's shared body (encoded
//! once by the publisher) after this session's matching filter names, or a small message built
//! for the session (ping, pong, slot update). Wire-identical to `geyser.SubscribeUpdateDeshred`.

use prost::Message;
use prost::bytes::{Buf, BufMut, Bytes};
use prost::encoding::{DecodeContext, WireType, string};
use yellowstone_grpc_proto::geyser::SubscribeUpdateDeshred;

/// Field number of `SubscribeUpdateDeshred.filters`.
const FILTERS: u32 = 1;

/// One outgoing update.
#[derive(Debug, Clone)]
pub enum OutboundDeshred {
    /// Built for this session (boxed: the message is large, the shared case is the common one).
    Owned(Box<SubscribeUpdateDeshred>),
    /// A published transaction: the session's filter names, then the shared body.
    Shared { filters: Vec<String>, body: Bytes },
}

impl Default for OutboundDeshred {
    fn default() -> Self {
        Self::Owned(Box::default())
    }
}

impl Message for OutboundDeshred {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match self {
            Self::Owned(update) => update.encode_raw(buf),
            Self::Shared { filters, body } => {
                string::encode_repeated(FILTERS, filters, buf);
                buf.put_slice(body);
            }
        }
    }

    fn merge_field(
        &mut self,
        _tag: u32,
        _wire_type: WireType,
        _buf: &mut impl Buf,
        _ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        // Encode-only, as `fanout::OutboundUpdate`.
        #[allow(deprecated)]
        Err(prost::DecodeError::new(
            "OutboundDeshred is encode-only: decode a geyser.SubscribeUpdateDeshred",
        ))
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::Owned(update) => update.encoded_len(),
            Self::Shared { filters, body } => {
                string::encoded_len_repeated(FILTERS, filters) + body.len()
            }
        }
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use yellowstone_grpc_proto::geyser::subscribe_update_deshred::UpdateOneof;
    use yellowstone_grpc_proto::geyser::{
        SubscribeUpdateDeshredTransaction, SubscribeUpdateDeshredTransactionInfo,
    };

    use super::*;

    #[test]
    fn a_shared_body_after_the_names_decodes_as_the_whole_update() {
        let whole = SubscribeUpdateDeshred {
            filters: vec!["a".to_owned(), "bb".to_owned()],
            update_oneof: Some(UpdateOneof::DeshredTransaction(
                SubscribeUpdateDeshredTransaction {
                    transaction: Some(SubscribeUpdateDeshredTransactionInfo {
                        signature: vec![7; 64],
                        is_vote: true,
                        ..Default::default()
                    }),
                    slot: 42,
                },
            )),
            created_at: Some(super::super::item::timestamp(5_000_000_001)),
        };
        let body = SubscribeUpdateDeshred {
            filters: Vec::new(),
            ..whole.clone()
        }
        .encode_to_vec();
        let shared = OutboundDeshred::Shared {
            filters: whole.filters.clone(),
            body: Bytes::from(body),
        };
        let bytes = shared.encode_to_vec();
        assert_eq!(bytes.len(), shared.encoded_len());
        assert_eq!(SubscribeUpdateDeshred::decode(&bytes[..]).unwrap(), whole);
    }
}
