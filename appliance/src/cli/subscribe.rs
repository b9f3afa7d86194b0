//! `appliance subscribe`: watch an appliance's stream from a shell. Opens
//! `stream.Stream/SubscribeDecoded` (optional `x-token`, TLS with a CA file, named filters from
//! `--filter`), prints each update as a canonical proto3 JSON line (or, `--compact`, one line per
//! transaction), stops after `--count` transactions, and with `--stats` writes a summary per
//! second to standard error: updates and transactions per second and how long they took from the
//! server's first shred read and from its publish to this client (this host's clock against the
//! server's, so meaningful on the same host or with synchronized clocks).

use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use hdrhistogram::Histogram;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::subscribe_update::Update;
use stream_proto::stream::{DecodedTransaction, DexProgram, SubscribeRequest, SubscribeUpdate};
use tokio_stream::StreamExt;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use super::subscribe_filter::parse_filters;

/// What `appliance subscribe` was asked for.
#[derive(Debug, Clone)]
pub struct SubscribeArgs {
    pub endpoint: String,
    pub token: Option<String>,
    pub tls_ca: Option<std::path::PathBuf>,
    pub filters: Vec<String>,
    pub compact: bool,
    pub count: Option<u64>,
    /// `SubscribeRequest.from_slot`: resume from this slot.
    pub from_slot: Option<u64>,
    pub stats: bool,
}

/// Streams until `--count` transactions were printed, the reader of standard output went away,
/// or Ctrl-C; an error when the server refuses or ends the stream.
pub fn run(args: &SubscribeArgs) -> anyhow::Result<()> {
    let filters = parse_filters(&args.filters)?;
    let request = SubscribeRequest {
        subscriptions: filters,
        ping_id: None,
        from_slot: args.from_slot,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(stream(args, request))
}

async fn connect(args: &SubscribeArgs) -> anyhow::Result<Channel> {
    let mut endpoint = Endpoint::from_shared(args.endpoint.clone())
        .with_context(|| format!("--endpoint {}", args.endpoint))?;
    if let Some(ca) = &args.tls_ca {
        let pem = std::fs::read(ca).with_context(|| format!("--tls-ca {}", ca.display()))?;
        let tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem));
        endpoint = endpoint.tls_config(tls)?;
    }
    endpoint
        .connect()
        .await
        .with_context(|| format!("connecting to {}", args.endpoint))
}

async fn stream(args: &SubscribeArgs, first: SubscribeRequest) -> anyhow::Result<()> {
    let channel = connect(args).await?;
    let requests = tokio_stream::iter([first]).chain(tokio_stream::pending());
    let mut request = tonic::Request::new(requests);
    if let Some(token) = &args.token {
        let value = token
            .parse()
            .context("--token is not a valid header value")?;
        request.metadata_mut().insert("x-token", value);
    }
    let mut updates = StreamClient::new(channel)
        .subscribe_decoded(request)
        .await
        .map_err(refused)?
        .into_inner();
    let mut printer = Printer::new(args);
    let mut stats = args.stats.then(Stats::new).transpose()?;
    let ended = loop {
        let update = tokio::select! {
            _ = tokio::signal::ctrl_c() => break Ok(()),
            update = updates.message() => update,
        };
        let update = match update {
            Ok(Some(update)) => update,
            Ok(None) => break Err(anyhow::anyhow!("the server ended the stream")),
            Err(status) => break Err(refused(status)),
        };
        if let Some(stats) = &mut stats {
            stats.record(&update);
        }
        match printer.print(&update) {
            Ok(Printed::More) => {}
            Ok(Printed::Enough) => break Ok(()),
            Err(error) => break Err(error),
        }
    };
    // The last (partial) second too, so that a short run reports.
    if let Some(stats) = &mut stats
        && stats.updates > 0
    {
        stats.report();
    }
    ended
}

fn refused(status: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!(
        "stream refused or ended: {:?}: {}",
        status.code(),
        status.message()
    )
}

#[derive(Debug, PartialEq, Eq)]
enum Printed {
    More,
    Enough,
}

/// Writes updates to standard output and counts the transactions.
struct Printer {
    out: std::io::Stdout,
    compact: bool,
    left: Option<u64>,
}

impl Printer {
    fn new(args: &SubscribeArgs) -> Self {
        Self {
            out: std::io::stdout(),
            compact: args.compact,
            left: args.count,
        }
    }

    fn print(&mut self, update: &SubscribeUpdate) -> anyhow::Result<Printed> {
        let transaction = transaction_of(update);
        let line = match (self.compact, transaction) {
            (true, None) => return Ok(Printed::More),
            (true, Some(transaction)) => compact_line(transaction),
            (false, _) => serde_json::to_string(update)?,
        };
        let mut out = self.out.lock();
        let written = writeln!(out, "{line}").and_then(|()| out.flush());
        match written {
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                return Ok(Printed::Enough);
            }
            other => other?,
        }
        if transaction.is_some()
            && let Some(left) = &mut self.left
        {
            *left = left.saturating_sub(1);
            if *left == 0 {
                return Ok(Printed::Enough);
            }
        }
        Ok(Printed::More)
    }
}

/// The transaction an update carries (a delta's envelope), if any.
fn transaction_of(update: &SubscribeUpdate) -> Option<&DecodedTransaction> {
    match &update.update {
        Some(Update::Transaction(transaction)) => Some(transaction),
        Some(Update::Delta(delta)) => delta.envelope.as_ref(),
        _ => None,
    }
}

/// `slot <slot> <signature> <program>:<instruction>…`.
fn compact_line(transaction: &DecodedTransaction) -> String {
    let instructions: Vec<String> = transaction
        .decoded_instructions
        .iter()
        .map(|instruction| {
            let program = DexProgram::try_from(instruction.program)
                .map_or("UNKNOWN", |program| program.as_str_name());
            format!("{program}:{}", instruction.instruction_name)
        })
        .collect();
    format!(
        "slot {} {} {}",
        transaction.slot,
        bs58::encode(&transaction.signature).into_string(),
        instructions.join(" ")
    )
}

/// Per-second counts and latencies for `--stats`.
struct Stats {
    since: Instant,
    updates: u64,
    transactions: u64,
    from_first_read: Histogram<u64>,
    from_publish: Histogram<u64>,
}

impl Stats {
    fn new() -> anyhow::Result<Self> {
        let histogram = || Histogram::new_with_bounds(1, 60_000_000, 3);
        Ok(Self {
            since: Instant::now(),
            updates: 0,
            transactions: 0,
            from_first_read: histogram()?,
            from_publish: histogram()?,
        })
    }

    fn record(&mut self, update: &SubscribeUpdate) {
        self.updates += 1;
        let timing = transaction_of(update).and_then(|t| t.server_timing.as_ref());
        if let Some(timing) = timing {
            self.transactions += 1;
            let now = unix_nanos();
            let micros = |stamp: u64| now.saturating_sub(stamp) / 1_000;
            self.from_first_read
                .saturating_record(micros(timing.first_read_unix_nanos));
            self.from_publish
                .saturating_record(micros(timing.publish_unix_nanos));
        }
        if self.since.elapsed() >= Duration::from_secs(1) {
            self.report();
        }
    }

    fn report(&mut self) {
        let seconds = self.since.elapsed().as_secs_f64();
        let quantiles = |histogram: &Histogram<u64>| {
            (
                histogram.value_at_quantile(0.5),
                histogram.value_at_quantile(0.99),
            )
        };
        let (read_50, read_99) = quantiles(&self.from_first_read);
        let (publish_50, publish_99) = quantiles(&self.from_publish);
        eprintln!(
            "{:.0} updates/s, {:.0} transactions/s; first shred read → here p50 {read_50} µs p99 \
             {read_99} µs; publish → here p50 {publish_50} µs p99 {publish_99} µs",
            self.updates as f64 / seconds,
            self.transactions as f64 / seconds,
        );
        self.since = Instant::now();
        self.updates = 0;
        self.transactions = 0;
        self.from_first_read.reset();
        self.from_publish.reset();
    }
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}
