//! The message a session sends, for every streaming method: either one built for the session
//! (a pong, a ping, a slot update), or its copy of an update encoded once by the publisher, the
//! session's own fields written around the shared bytes ([`SharedFrame`]). Encode-only: a server
//! never decodes what it sends, and the wire is the method's own response message.

use std::fmt::Debug;

use prost::Message;
use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType};

/// A session's copy of an encode-once update: what a method's encoder provides.
pub trait SharedFrame: Debug + Send + Sync + 'static {
    /// The method's response message: what a session's own messages are, and what a client
    /// decodes [`Outbound::Shared`] as.
    type Whole: Message + Default + Clone;
    /// The decoding error's text (this type is never decoded).
    const ENCODE_ONLY: &'static str;

    /// Writes the whole message: the shared bytes and this session's fields around them.
    fn encode_raw(&self, buf: &mut impl BufMut);

    /// The length [`SharedFrame::encode_raw`] writes.
    fn encoded_len(&self) -> usize;
}

/// One outgoing message of a session.
#[derive(Debug, Clone)]
pub enum Outbound<F: SharedFrame> {
    /// A message of its own (boxed: the shared variant is the hot one).
    Owned(Box<F::Whole>),
    /// Its copy of a shared update.
    Shared(F),
}

impl<F: SharedFrame> Default for Outbound<F> {
    fn default() -> Self {
        Self::Owned(Box::default())
    }
}

/// Encoding only: a server never decodes what it sends.
impl<F: SharedFrame> Message for Outbound<F> {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match self {
            Self::Owned(whole) => whole.encode_raw(buf),
            Self::Shared(frame) => frame.encode_raw(buf),
        }
    }

    fn merge_field(
        &mut self,
        _tag: u32,
        _wire_type: WireType,
        _buf: &mut impl Buf,
        _ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        // The only constructor of a DecodeError with a message (deprecated for outside use, kept
        // in prost 0.14); this type is never decoded.
        #[allow(deprecated)]
        Err(prost::DecodeError::new(F::ENCODE_ONLY))
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::Owned(whole) => whole.encoded_len(),
            Self::Shared(frame) => frame.encoded_len(),
        }
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}
