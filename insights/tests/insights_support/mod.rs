//! Shared helpers of the insights integration tests: fixture paths, the expected figures, an
//! in-memory ArchiveStore double built from the fixtures' archive form, HTTP helpers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use archive::{
    ArchiveError, ArchiveStore, Block, SignatureInfo, SignatureQuery, SlotLookup, Transaction,
    TransactionInBlock,
};
use serde_json::Value;

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/insights")
}

pub fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("expected.json")).unwrap()).unwrap()
}

pub fn block_json(slot: u64) -> Vec<u8> {
    std::fs::read(fixtures().join(format!("blocks/{slot}.json"))).unwrap()
}

#[allow(unused_imports)]
pub use testkit::json_match::{assert_close, assert_matches};

/// The fixture block of `slot` as the archive holds it.
pub fn archive_block(slot: u64) -> Option<Block> {
    let path = fixtures().join(format!("archive/{slot}.json"));
    if !path.exists() {
        return None;
    }
    let block = testkit::insights_fixture::archived_block(slot).expect("well-formed fixture");
    let transactions = block
        .transactions
        .into_iter()
        .enumerate()
        .map(|(index, tx)| Transaction {
            slot,
            index: index as u32,
            wire: tx.wire,
            meta: Some(tx.meta),
        })
        .collect();
    Some(Block {
        slot,
        parent_slot: block.parent_slot,
        blockhash: block.blockhash,
        previous_blockhash: None,
        block_time: block.block_time,
        block_height: block.block_height,
        rewards: Vec::new(),
        num_partitions: None,
        transactions,
    })
}

/// A test double of the archive: the fixture chain's slots, held in memory.
pub struct MemoryArchive {
    pub blocks: BTreeMap<u64, Option<Block>>,
}

impl MemoryArchive {
    /// Every fixture slot (skipped ones as `None`).
    pub fn from_fixtures() -> Self {
        let chain: Value =
            serde_json::from_slice(&std::fs::read(fixtures().join("chain.json")).unwrap()).unwrap();
        let (first, last) = (
            chain["first_slot"].as_u64().unwrap(),
            chain["last_slot"].as_u64().unwrap(),
        );
        Self {
            blocks: (first..=last)
                .map(|slot| (slot, archive_block(slot)))
                .collect(),
        }
    }
}

impl ArchiveStore for MemoryArchive {
    fn epochs(&self) -> Vec<u64> {
        vec![0]
    }
    fn block(&self, slot: u64) -> Result<SlotLookup<Block>, ArchiveError> {
        Ok(match self.blocks.get(&slot) {
            Some(Some(block)) => SlotLookup::Found(block.clone()),
            Some(None) => SlotLookup::Skipped,
            None => SlotLookup::NotHeld,
        })
    }
    fn block_time(&self, _slot: u64) -> Result<SlotLookup<Option<i64>>, ArchiveError> {
        Ok(SlotLookup::NotHeld)
    }
    fn transaction(
        &self,
        _signature: &[u8; 64],
    ) -> Result<Option<TransactionInBlock>, ArchiveError> {
        Ok(None)
    }
    fn signatures_for_address(
        &self,
        _address: &[u8; 32],
        _query: &SignatureQuery,
    ) -> Result<Vec<SignatureInfo>, ArchiveError> {
        Ok(Vec::new())
    }
    fn newest_slot(&self) -> Option<u64> {
        self.blocks.keys().next_back().copied()
    }
}

/// GET `url`: status and body.
pub fn get(url: &str) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut response = agent.get(url).call().unwrap();
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}")),
    )
}

/// Polls until `done` holds (panics after `limit`).
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
