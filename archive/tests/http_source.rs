//! The HTTP source: an epoch laid out like the public file host (`<N>/epoch-<N>.car` and the
//! index names next to it) served by a small range-capable HTTP/1.1 server written here with std
//! (python's http.server has no ranges), read through `EpochArchive::open_http`, and checked
//! against the writer's inputs and the local store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use archive::build::{BuildOptions, build_indexes};
use archive::synth::{Synth, SynthOptions};
use archive::writer::{CarWriter, RootKind, WriterOptions};
use archive::{ArchiveStore, EpochArchive, LocalArchive, SignatureQuery, SlotLookup};

/// Serves files under `root`: HEAD, GET, and GET with a single `Range: bytes=a-b`.
fn serve(root: PathBuf, ranges_served: Arc<AtomicUsize>, connections: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            connections.fetch_add(1, Ordering::Relaxed);
            let root = root.clone();
            let counter = ranges_served.clone();
            std::thread::spawn(move || {
                let _ = handle(stream, &root, &counter);
            });
        }
    });
    format!("http://{addr}")
}

fn handle(stream: TcpStream, root: &Path, counter: &AtomicUsize) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = std::io::BufWriter::new(stream);
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request)? == 0 {
            return Ok(()); // connection closed
        }
        let mut range = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("range")
            {
                let spec = value.trim().strip_prefix("bytes=").unwrap();
                let (a, b) = spec.split_once('-').unwrap();
                range = Some((a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()));
            }
        }
        let mut parts = request.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let path = root.join(parts.next().unwrap_or("/").trim_start_matches('/'));
        let Ok(mut file) = File::open(&path) else {
            out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")?;
            out.flush()?;
            continue;
        };
        let len = file.metadata()?.len();
        match (method.as_str(), range) {
            ("HEAD", _) => {
                write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nAccept-Ranges: bytes\r\n\r\n"
                )?;
            }
            ("GET", Some((a, b))) if a <= b && b < len => {
                counter.fetch_add(1, Ordering::Relaxed);
                let mut body = vec![0u8; (b - a + 1) as usize];
                file.seek(SeekFrom::Start(a))?;
                file.read_exact(&mut body)?;
                write!(
                    out,
                    "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {a}-{b}/{len}\r\n\r\n",
                    body.len()
                )?;
                out.write_all(&body)?;
            }
            ("GET", Some(_)) => {
                write!(
                    out,
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\n\r\n"
                )?;
            }
            _ => {
                let mut body = Vec::new();
                file.read_to_end(&mut body)?;
                write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                )?;
                out.write_all(&body)?;
            }
        }
        out.flush()?;
    }
}

#[test]
fn epoch_behind_http_matches_the_inputs_and_the_local_store() {
    let host = tempfile::tempdir().unwrap();
    let epoch_dir = host.path().join("4");
    std::fs::create_dir_all(&epoch_dir).unwrap();
    let car = epoch_dir.join("epoch-4.car");
    let options = SynthOptions {
        first_slot: 4 * 432_000,
        slots: 60,
        seed: 3,
        ..SynthOptions::default()
    };
    let mut synth = Synth::new(options);
    let pool = synth.pool().to_vec();
    let blocks: Vec<_> = synth.by_ref().collect();
    let mut writer = CarWriter::new(
        BufWriter::new(File::create(&car).unwrap()),
        RootKind::Epoch(4),
        WriterOptions::default(),
    )
    .unwrap();
    for block in &blocks {
        writer.write_block(block).unwrap();
    }
    let (root, _) = writer.finish().unwrap();
    std::fs::write(epoch_dir.join("epoch-4.cid"), root.to_string()).unwrap();
    build_indexes(
        &car,
        &BuildOptions {
            progress: false,
            partitions: None,
        },
    )
    .unwrap();

    let ranges = Arc::new(AtomicUsize::new(0));
    let connections = Arc::new(AtomicUsize::new(0));
    let base = serve(
        host.path().to_path_buf(),
        ranges.clone(),
        connections.clone(),
    );
    let remote = EpochArchive::open_http(&base, &[4]).unwrap();
    let local = LocalArchive::open(&epoch_dir).unwrap();
    assert_eq!(remote.epochs(), vec![4]);
    assert_eq!(remote.newest_slot(), Some(blocks.last().unwrap().slot));

    for block in &blocks {
        let SlotLookup::Found(got) = remote.block(block.slot).unwrap() else {
            panic!("slot {}", block.slot);
        };
        assert_eq!(got.blockhash, block.entries.last().unwrap().hash);
        let wires: Vec<&Vec<u8>> = block
            .entries
            .iter()
            .flat_map(|e| &e.transactions)
            .map(|t| &t.wire)
            .collect();
        assert_eq!(
            got.transactions.iter().map(|t| &t.wire).collect::<Vec<_>>(),
            wires
        );
        assert_eq!(
            remote.block(block.slot).unwrap(),
            local.block(block.slot).unwrap()
        );
        for wire in wires {
            let sig: [u8; 64] = wire[1..65].try_into().unwrap();
            let found = remote
                .transaction(&sig)
                .unwrap()
                .expect("transaction over HTTP");
            assert_eq!(&found.transaction.wire, wire);
            assert_eq!(found.block_time, Some(block.block_time));
        }
    }
    let skipped = (blocks[0].slot..blocks.last().unwrap().slot)
        .find(|s| blocks.iter().all(|b| b.slot != *s))
        .unwrap();
    assert_eq!(remote.block(skipped).unwrap(), SlotLookup::Skipped);
    assert_eq!(remote.transaction(&[1u8; 64]).unwrap(), None);
    let query = SignatureQuery {
        before: None,
        until: None,
        limit: 1000,
    };
    for address in &pool {
        assert_eq!(
            remote.signatures_for_address(address, &query).unwrap(),
            local.signatures_for_address(address, &query).unwrap()
        );
    }
    assert!(
        ranges.load(Ordering::Relaxed) > 0,
        "reads went through range requests"
    );
    // Warm index buckets come from the range cache: a repeated getTransaction costs one range
    // request (the transaction's section); the first lookup of a signature in a cold bucket
    // costs more.
    let wire = &blocks.last().unwrap().entries[0].transactions[0].wire;
    let sig: [u8; 64] = wire[1..65].try_into().unwrap();
    let hits = archive::rangecache::shared().counts().hits;
    let before = ranges.load(Ordering::Relaxed);
    remote
        .transaction(&sig)
        .unwrap()
        .expect("transaction over HTTP");
    assert_eq!(
        ranges.load(Ordering::Relaxed) - before,
        1,
        "only the section is fetched"
    );
    assert!(archive::rangecache::shared().counts().hits >= hits + 4);
    // One caller, one kept-alive connection (a body read short of its end would close it).
    let (ranges, connections) = (
        ranges.load(Ordering::Relaxed),
        connections.load(Ordering::Relaxed),
    );
    assert!(
        ranges > 100 && connections <= 2,
        "{ranges} range requests over {connections} connections"
    );
    // A base without the epoch's files: a clear missing-file error.
    assert!(matches!(
        EpochArchive::open_http(&base, &[9]),
        Err(archive::ArchiveError::MissingIndex { .. })
    ));
}
