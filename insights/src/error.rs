//! Why an insights operation failed: one variant per reason, each with a stable metric label.

/// Errors of the insights ingest, store and backfill.
#[derive(Debug, thiserror::Error)]
pub enum InsightsError {
    #[error("getBlock JSON of slot {slot} does not parse: {source}")]
    BlockJson {
        slot: u64,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "transaction {index} of slot {slot} is malformed (index outside its keys or bad wire bytes)"
    )]
    MalformedTransaction { slot: u64, index: usize },
    #[error("upstream request {method} failed: {reason}")]
    UpstreamTransport {
        method: &'static str,
        reason: String,
    },
    #[error("upstream answered {method} with JSON-RPC error {code}: {message}")]
    UpstreamRpc {
        method: &'static str,
        code: i64,
        message: String,
    },
    #[error("upstream answer to {method} does not parse: {reason}")]
    UpstreamResponse {
        method: &'static str,
        reason: String,
    },
    #[error("insights store: {0}")]
    Store(String),
    #[error("stored record at slot {slot} does not decode: {reason}")]
    StoredRecord { slot: u64, reason: String },
    #[error("archive read of slot {slot} failed: {source}")]
    Archive {
        slot: u64,
        #[source]
        source: archive::ArchiveError,
    },
    #[error("invalid backfill range {from}..={to}")]
    BackfillRange { from: u64, to: u64 },
    #[error("could not start the ingest thread: {0}")]
    Spawn(std::io::Error),
}

impl InsightsError {
    /// Short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::BlockJson { .. } => "block_json",
            Self::MalformedTransaction { .. } => "malformed_transaction",
            Self::UpstreamTransport { .. } => "upstream_transport",
            Self::UpstreamRpc { .. } => "upstream_rpc",
            Self::UpstreamResponse { .. } => "upstream_response",
            Self::Store(_) => "store",
            Self::StoredRecord { .. } => "stored_record",
            Self::Archive { .. } => "archive",
            Self::BackfillRange { .. } => "backfill_range",
            Self::Spawn(_) => "spawn",
        }
    }
}

impl From<redb::Error> for InsightsError {
    fn from(error: redb::Error) -> Self {
        Self::Store(error.to_string())
    }
}

macro_rules! store_error_from {
    ($($kind:ty),*) => {
        $(impl From<$kind> for InsightsError {
            fn from(error: $kind) -> Self {
                Self::Store(error.to_string())
            }
        })*
    };
}
store_error_from!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);
