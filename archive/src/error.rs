//! Why bytes of the archive could not be read as what they claim to be: one variant per reason,
//! shared by the CAR, node, payload and index parsers. [`crate::ArchiveError`] wraps it with
//! the name of the file or object being read.

/// A format violation found while parsing archive bytes (CAR, DAG-CBOR, payloads, indexes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("input ends early: {0}")]
    Truncated(&'static str),
    #[error("varint is longer than 10 bytes or overflows u64")]
    VarintOverflow,
    #[error("CAR section of {0} bytes exceeds the {1}-byte cap")]
    SectionTooLarge(u64, u64),
    #[error("CID: {0}")]
    Cid(&'static str),
    #[error("CAR header: {0}")]
    CarHeader(String),
    #[error("CBOR: {0}")]
    Cbor(String),
    #[error("node kind {found} where {expected} was expected")]
    UnexpectedKind { expected: &'static str, found: u64 },
    #[error("unknown node kind {0}")]
    UnknownKind(u64),
    #[error("node field {0} is invalid")]
    Field(&'static str),
    #[error("CID does not match the node's sha256")]
    CidMismatch,
    #[error("multi-frame payload: {0}")]
    Frames(String),
    #[error("payload checksum mismatch")]
    Checksum,
    #[error("zstd: {0}")]
    Zstd(String),
    #[error("payload decompresses to more than {0} bytes")]
    TooLarge(usize),
    #[error("metadata is neither protobuf nor bincode: {0}")]
    Metadata(String),
    #[error("rewards are neither protobuf nor bincode: {0}")]
    Rewards(String),
    #[error("transaction wire bytes: {0}")]
    Transaction(String),
    #[error("index file: {0}")]
    Index(String),
    #[error("index metadata mismatch: {0}")]
    IndexMeta(String),
}

impl FormatError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Truncated(_) => "truncated",
            Self::VarintOverflow => "varint_overflow",
            Self::SectionTooLarge(..) => "section_too_large",
            Self::Cid(_) => "cid",
            Self::CarHeader(_) => "car_header",
            Self::Cbor(_) => "cbor",
            Self::UnexpectedKind { .. } => "unexpected_kind",
            Self::UnknownKind(_) => "unknown_kind",
            Self::Field(_) => "field",
            Self::CidMismatch => "cid_mismatch",
            Self::Frames(_) => "frames",
            Self::Checksum => "checksum",
            Self::Zstd(_) => "zstd",
            Self::TooLarge(_) => "too_large",
            Self::Metadata(_) => "metadata",
            Self::Rewards(_) => "rewards",
            Self::Transaction(_) => "transaction",
            Self::Index(_) => "index",
            Self::IndexMeta(_) => "index_meta",
        }
    }
}

impl From<minicbor::decode::Error> for FormatError {
    fn from(error: minicbor::decode::Error) -> Self {
        Self::Cbor(error.to_string())
    }
}
