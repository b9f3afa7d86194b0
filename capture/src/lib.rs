//! Shred capture files, for the tools that read or replay them: their framing
//! ([`framing`]: length-prefixed records, pcap, `ar` archives of either) and re-slotting
//! ([`reslot`]: a captured slot renumbered, its FEC sets re-encoded, re-hashed and re-signed, so a
//! replay looks like a live chain).
#![forbid(unsafe_code)]

pub mod framing;
pub mod reslot;
