//! The one pass over a CAR's sections: every section feeds the compact indexes and sig-exists,
//! Entry hashes and DataFrames are kept until their `Block` node closes the slot (slot tables,
//! slot-to-cid, the address batch). Runs on the calling thread; the address index is fed to a
//! second thread ([`super::address`]).

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use indicatif::ProgressBar;

use super::address::{ADDRESS_QUEUE_BLOCKS, AddressBatch, PendingTx, feed_addresses};
use super::seal::Builders;
use super::{BuildReport, IndexBuildError, build_err};
use crate::car::{CarStream, Section};
use crate::cid::{Cid, NODE_CID_LEN};
use crate::error::FormatError;
use crate::frame;
use crate::index::compact::{BuildError, CompactBuilder};
use crate::index::sigexists::SigExistsBuilder;
use crate::index::slots::SlotTables;
use crate::node::{self, BlockNode, EntryNode, TransactionNode};
use crate::txwire;

/// Runs the pass over `stream`, filling `builders` (the address builder on its own thread, fed one
/// block at a time over a bounded channel) and the report's counts.
pub(super) fn run<R: Read>(
    stream: &mut CarStream<R>,
    builders: &mut Builders,
    need_tables: bool,
    report: &mut BuildReport,
    (path, bar): (&Path, &ProgressBar),
) -> Result<(), IndexBuildError> {
    // The pass runs on this thread (CAR parsing, frames, first signatures, the compact and slot
    // indexes); the address index (metadata decompression and decoding, rows, postings) runs on
    // a second thread fed one block at a time over a bounded channel.
    let (address_feed, address_queue) = match builders.address.take() {
        Some(builder) => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<AddressBatch>(ADDRESS_QUEUE_BLOCKS);
            (Some(tx), Some((builder, rx)))
        }
        None => (None, None),
    };
    let range_start = stream.header().data_start;
    let (pass, address) = std::thread::scope(|scope| {
        let worker = address_queue
            .map(|(builder, rx)| scope.spawn(move || feed_addresses(builder, rx, path)));
        let pass = Pass {
            path,
            slot_to_cid: builders.slot_to_cid.as_mut(),
            sig_to_cid: builders.sig_to_cid.as_mut(),
            cid_to_offset: builders.cid_to_offset.as_mut(),
            sig_exists: builders.sig_exists.as_mut(),
            need_tables,
            tables: &mut builders.tables,
            report,
            address_feed,
            range_start,
            entry_hashes: HashMap::new(),
            frames: HashMap::new(),
            pending: Vec::new(),
        };
        // Consumed: the feed closes here, so the address thread ends and can be joined.
        let pass = pass.sections(stream, bar);
        let address = worker.map(|w| {
            w.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        (pass, address)
    });
    pass?;
    builders.address = address.transpose()?;
    Ok(())
}

/// The state of the one pass over a CAR's sections: the builders it feeds, the slot tables, the
/// report's counts, and what a block collects until its `Block` node closes it.
struct Pass<'a> {
    path: &'a Path,
    slot_to_cid: Option<&'a mut CompactBuilder>,
    sig_to_cid: Option<&'a mut CompactBuilder>,
    cid_to_offset: Option<&'a mut CompactBuilder>,
    sig_exists: Option<&'a mut SigExistsBuilder>,
    need_tables: bool,
    tables: &'a mut Option<SlotTables>,
    report: &'a mut BuildReport,
    /// Blocks for the address thread, when the address index is built.
    address_feed: Option<std::sync::mpsc::SyncSender<AddressBatch>>,
    /// Where the current slot's range starts (after the previous `Block` node).
    range_start: u64,
    entry_hashes: HashMap<Cid, [u8; 32]>,
    frames: HashMap<Cid, Vec<u8>>,
    pending: Vec<PendingTx>,
}

impl Pass<'_> {
    /// Indexes every section of `stream` (until the end, or until the address thread stopped on
    /// an error: that error is returned by the thread).
    fn sections<R: Read>(
        mut self,
        stream: &mut CarStream<R>,
        bar: &ProgressBar,
    ) -> Result<(), IndexBuildError> {
        let mut sections: u64 = 0;
        loop {
            let section = match stream.next_section() {
                Ok(Some(section)) => section,
                Ok(None) => break,
                Err(source) => {
                    return Err(IndexBuildError::Car {
                        path: self.path.to_path_buf(),
                        source,
                    });
                }
            };
            sections += 1;
            if sections.is_multiple_of(4096) {
                bar.set_position(section.offset);
            }
            if !self.section(&section)? {
                // The address thread stopped on an error: [`run`] returns it.
                break;
            }
        }
        Ok(())
    }

    fn format_err(&self, source: FormatError) -> IndexBuildError {
        IndexBuildError::Format {
            path: self.path.to_path_buf(),
            source,
        }
    }

    /// Indexes one section; false when the address thread stopped (its error comes from it).
    fn section(&mut self, section: &Section<'_>) -> Result<bool, IndexBuildError> {
        self.offset_of(section)?;
        let kind = node::peek_kind(section.node).map_err(|e| self.format_err(e))?;
        match kind {
            node::kind::DATA_FRAME => {
                self.frames.insert(section.cid, section.node.to_vec());
            }
            node::kind::ENTRY => {
                let hash = EntryNode::decode_hash(section.node).map_err(|e| self.format_err(e))?;
                self.entry_hashes.insert(section.cid, hash);
            }
            node::kind::TRANSACTION => self.transaction(section)?,
            node::kind::BLOCK => return self.block(section),
            _ => {}
        }
        Ok(true)
    }

    /// The cid-to-offset entry of every section.
    fn offset_of(&mut self, section: &Section<'_>) -> Result<(), IndexBuildError> {
        let path = self.path;
        let Some(builder) = self.cid_to_offset.as_mut() else {
            return Ok(());
        };
        let key = section.cid.as_bytes();
        if key.len() != NODE_CID_LEN {
            return Err(IndexBuildError::Format {
                path: self.path.to_path_buf(),
                source: FormatError::Cid("section CID is not 36 bytes"),
            });
        }
        // Sizes of 16 MiB and more do not fit the 24-bit field: stored as 0, meaning "read the
        // varint at the offset" (docs/archive.md).
        let size = if section.size < 1 << 24 {
            section.size
        } else {
            0
        };
        let mut value = [0u8; 9];
        value[..6].copy_from_slice(&section.offset.to_le_bytes()[..6]);
        value[6..].copy_from_slice(&size.to_le_bytes()[..3]);
        builder
            .add(key, &value)
            .map_err(|source| build_err(path, source))
    }

    fn transaction(&mut self, section: &Section<'_>) -> Result<(), IndexBuildError> {
        let path = self.path;
        self.report.transactions += 1;
        let tx = TransactionNode::decode(section.node).map_err(|e| self.format_err(e))?;
        let frames = &self.frames;
        let wire = frame::reassemble(&tx.data, |cid: &Cid| frames.get(cid).cloned())
            .map_err(|e| self.format_err(e))?;
        let summary = txwire::summarize(&wire).map_err(|e| self.format_err(e))?;
        if let Some(b) = self.sig_to_cid.as_mut() {
            b.add(&summary.first_signature, section.cid.as_bytes())
                .map_err(|source| build_err(path, source))?;
        }
        if let Some(b) = self.sig_exists.as_mut() {
            b.add(&summary.first_signature)
                .map_err(|e| build_err(path, BuildError::Io(e)))?;
        }
        if self.address_feed.is_none() {
            return Ok(());
        }
        let frames = &self.frames;
        let metadata = frame::reassemble(&tx.metadata, |cid: &Cid| frames.get(cid).cloned())
            .map_err(|e| self.format_err(e))?
            .into_owned();
        let index = match tx.index {
            Some(i) => {
                u32::try_from(i).map_err(|_| self.format_err(FormatError::Field("index")))?
            }
            None => self.pending.len() as u32,
        };
        self.pending.push(PendingTx {
            signature: summary.first_signature,
            slot: tx.slot,
            index,
            memo: summary.memo,
            static_keys: summary.static_keys,
            metadata,
        });
        Ok(())
    }

    /// A `Block` node closes its slot: slot index, slot tables, the address batch.
    fn block(&mut self, section: &Section<'_>) -> Result<bool, IndexBuildError> {
        let path = self.path;
        self.report.blocks += 1;
        let block = BlockNode::decode(section.node).map_err(|e| self.format_err(e))?;
        let epoch = crate::epoch_of(block.slot);
        if self.report.epoch.is_some_and(|e| e != epoch) {
            return Err(self.format_err(FormatError::Index(format!(
                "slot {} is outside epoch {epoch:?}",
                block.slot
            ))));
        }
        self.report.epoch = Some(epoch);
        if let Some(b) = self.slot_to_cid.as_mut() {
            b.add(&block.slot.to_le_bytes(), section.cid.as_bytes())
                .map_err(|source| build_err(path, source))?;
        }
        if self.need_tables {
            self.slot_tables(&block, section, epoch)?;
        }
        let mut fed = true;
        if let Some(feed) = self.address_feed.as_ref() {
            let batch = AddressBatch {
                block_time: block.blocktime,
                txs: std::mem::take(&mut self.pending),
            };
            fed = feed.send(batch).is_ok();
        }
        self.pending.clear();
        self.entry_hashes.clear();
        self.frames.clear();
        self.range_start = section.offset + section.size;
        Ok(fed)
    }

    /// The slot's block time, byte range and blockhash (its last entry's hash).
    fn slot_tables(
        &mut self,
        block: &BlockNode,
        section: &Section<'_>,
        epoch: u64,
    ) -> Result<(), IndexBuildError> {
        let last_entry = block
            .entries
            .last()
            .ok_or_else(|| self.format_err(FormatError::Field("block without entries")))?;
        let hash = *self.entry_hashes.get(last_entry).ok_or_else(|| {
            self.format_err(FormatError::Field("last entry not in the slot's range"))
        })?;
        let end = section.offset + section.size;
        let len = u32::try_from(end - self.range_start)
            .map_err(|_| self.format_err(FormatError::Index("slot range over 4 GiB".into())))?;
        let range_start = self.range_start;
        let tables = self.tables.get_or_insert_with(|| SlotTables::new(epoch));
        tables
            .set(block.slot, block.blocktime, (range_start, len), hash)
            .map_err(|source| IndexBuildError::Format {
                path: self.path.to_path_buf(),
                source,
            })
    }
}
