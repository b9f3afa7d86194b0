//! The message a `SubscribeDeshred` session sends: either a transaction's shared body (encoded
//! once by the publisher) after this session's matching filter names, or a small message built
//! for the session (ping, pong, slot update). Wire-identical to `geyser.SubscribeUpdateDeshred`.

use prost::bytes::{BufMut, Bytes};
use prost::encoding::string;
use yellowstone_grpc_proto::geyser::SubscribeUpdateDeshred;

use crate::grpc::outbound::{Outbound, SharedFrame};

/// Field number of `SubscribeUpdateDeshred.filters`.
const FILTERS: u32 = 1;

/// One outgoing update: built for this session (`Owned`), or a published transaction's shared
/// body after this session's matching filter names (`Shared`).
pub type OutboundDeshred = Outbound<DeshredFrame>;

/// A published transaction as one session sends it: its filter names, then the shared body.
#[derive(Debug, Clone)]
pub struct DeshredFrame {
    pub filters: Vec<String>,
    pub body: Bytes,
}

impl SharedFrame for DeshredFrame {
    type Whole = SubscribeUpdateDeshred;
    const ENCODE_ONLY: &'static str =
        "OutboundDeshred is encode-only: decode a geyser.SubscribeUpdateDeshred";

    fn encode_raw(&self, buf: &mut impl BufMut) {
        string::encode_repeated(FILTERS, &self.filters, buf);
        buf.put_slice(&self.body);
    }

    fn encoded_len(&self) -> usize {
        string::encoded_len_repeated(FILTERS, &self.filters) + self.body.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use yellowstone_grpc_proto::geyser::subscribe_update_deshred::UpdateOneof;
    use yellowstone_grpc_proto::geyser::{
        SubscribeUpdateDeshredTransaction, SubscribeUpdateDeshredTransactionInfo,
    };

    use prost::Message;

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
        let shared = OutboundDeshred::Shared(DeshredFrame {
            filters: whole.filters.clone(),
            body: Bytes::from(body),
        });
        let bytes = shared.encode_to_vec();
        assert_eq!(bytes.len(), shared.encoded_len());
        assert_eq!(SubscribeUpdateDeshred::decode(&bytes[..]).unwrap(), whole);
    }
}
