//! The embedded default's archive and insights samples (docs/samples.md): CARs compiled into the
//! binary, written to `<data>/samples/` and indexed at first start, then served through the same
//! code as any archive; the insights sample chain is backfilled once into its own store, which
//! insights then serve without an upstream.

use std::path::{Path, PathBuf};

use anyhow::Context;
use archive::LocalArchive;
use archive::build::{BuildOptions, build_indexes};
use insights::Limits;
use insights::backfill::backfill;
use insights::store::Store;
use tracing::info;

use crate::config::Config;

/// One bundled CAR: its file name and bytes.
type BundledCar = (&'static str, &'static [u8]);

/// Three consecutive pieces of real mainnet epoch 0, slots 0–29 (the archive crate's fixtures;
/// provenance in archive/tests/fixtures/SOURCES.md).
const EPOCH_0_PIECES: [BundledCar; 3] = [
    (
        "epoch-0-1.car",
        include_bytes!("../../archive/tests/fixtures/epoch-0-1.car"),
    ),
    (
        "epoch-0-2.car",
        include_bytes!("../../archive/tests/fixtures/epoch-0-2.car"),
    ),
    (
        "epoch-0-3.car",
        include_bytes!("../../archive/tests/fixtures/epoch-0-3.car"),
    ),
];

/// The insights fixture chain (slots 1000–1089, 80 blocks) as a whole-epoch CAR, written by the
/// archive crate's writer (appliance/samples/README.md says how it is made and checked).
const INSIGHTS_CHAIN: [BundledCar; 1] = [(
    "epoch-0.car",
    include_bytes!("../samples/insights-chain/epoch-0.car"),
)];

/// Where the prepared samples are.
#[derive(Debug, Clone)]
pub struct Samples {
    /// The archive directory served at `POST /` (the epoch-0 pieces and their indexes).
    pub archive: PathBuf,
    /// The insights store holding the backfilled sample chain.
    pub insights_store: PathBuf,
}

impl Samples {
    /// Serves the samples: the archive directory as the only archive source, the sample store as
    /// the insights store (served without an upstream).
    pub fn apply(self, config: &mut Config) {
        info!(archive = %self.archive.display(), insights = %self.insights_store.display(),
            "embedded default: serving the bundled archive and insights samples");
        config.archive.sources = vec![self.archive.display().to_string()];
        config.insights.db = Some(self.insights_store);
    }
}

/// Writes, indexes and backfills what is missing under `<data>/samples/`; a second start finds
/// everything in place and only checks it.
pub fn prepare(data: &Path) -> anyhow::Result<Samples> {
    let root = data.join("samples");
    let archive = root.join("archive");
    install(&archive, &EPOCH_0_PIECES)?;
    let chain = root.join("insights-chain");
    install(&chain, &INSIGHTS_CHAIN)?;
    let insights_store = root.join("insights.redb");
    backfill_once(&chain, &insights_store)?;
    Ok(Samples {
        archive,
        insights_store,
    })
}

/// Writes `cars` into `dir` unless there with the same bytes (a changed CAR clears the directory
/// first, so no stale index survives), then builds their missing indexes.
fn install(dir: &Path, cars: &[BundledCar]) -> anyhow::Result<()> {
    let stale = cars
        .iter()
        .any(|(name, bytes)| std::fs::read(dir.join(name)).ok().as_deref() != Some(*bytes));
    if stale {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, bytes) in cars {
            // Renamed into place: a CAR is either absent or whole.
            let (path, partial) = (dir.join(name), dir.join(format!("{name}.partial")));
            std::fs::write(&partial, bytes)
                .and_then(|()| std::fs::rename(&partial, &path))
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let options = BuildOptions {
        progress: false,
        partitions: None,
    };
    for (name, _) in cars {
        let car = dir.join(name);
        build_indexes(&car, &options).with_context(|| format!("indexing {}", car.display()))?;
    }
    Ok(())
}

/// Backfills every block of the chain in `chain` into `store` unless it already holds snapshots.
fn backfill_once(chain: &Path, store_path: &Path) -> anyhow::Result<()> {
    let store = Store::open(store_path)
        .with_context(|| format!("opening the sample store {}", store_path.display()))?;
    if !store.snapshot_slots()?.is_empty() {
        return Ok(());
    }
    let archive = LocalArchive::open(chain)
        .with_context(|| format!("opening the sample chain {}", chain.display()))?;
    let pieces = archive.pieces();
    let (Some(first), Some(last)) = (
        pieces.iter().map(|piece| piece.first_slot).min(),
        pieces.iter().map(|piece| piece.last_slot).max(),
    ) else {
        anyhow::bail!("the sample chain {} holds no block", chain.display());
    };
    let progress = backfill(
        &archive,
        &store,
        &Limits::default(),
        first,
        last,
        &mut |_| {},
    )
    .with_context(|| format!("backfilling the sample chain {first}..={last}"))?;
    info!(
        blocks = progress.blocks,
        snapshots = progress.snapshots,
        "insights sample backfilled"
    );
    Ok(())
}
