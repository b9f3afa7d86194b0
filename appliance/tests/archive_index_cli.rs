//! `appliance archive index`: the real binary indexes a real epoch-0 piece next to it, and a rerun
//! keeps the finished indexes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const ROOT: &str = "bafyreia7j4o364whssrt36odmq3tgryjcjfyjy7ab73akykjppk2f2qnhi";

#[test]
fn indexes_a_piece_and_keeps_finished_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let car = dir.path().join("epoch-0-1.car");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../archive/tests/fixtures/epoch-0-1.car"
        ),
        &car,
    )
    .unwrap();
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_appliance"))
            .args(["archive", "index", "--no-progress"])
            .arg(&car)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let first = run();
    assert!(
        first.contains(&format!("root {ROOT} epoch 0 blocks 10 transactions 34")),
        "{first}"
    );
    assert!(first.contains("kept []"), "{first}");
    for kind in [
        "slot-to-cid",
        "sig-to-cid",
        "cid-to-offset-and-size",
        "sig-exists",
        "slot-to-blocktime",
        "slot-to-blockhash",
        "asig-txs",
    ] {
        let name = format!("epoch-0-1-{ROOT}-mainnet-{kind}.index");
        assert!(dir.path().join(&name).is_file(), "{name}");
    }
    assert!(dir.path().join("epoch-0-1-slot-ranges.raw").is_file());
    let second = run();
    assert!(second.contains("built []"), "{second}");
    // The rerun says what the indexes hold, not `epoch ? blocks 0`.
    assert!(
        second.contains(&format!("root {ROOT} epoch 0 blocks 10 transactions 34")),
        "{second}"
    );
    assert!(second.contains("indexes complete"), "{second}");

    // The per-slot tables are sized to the piece's ten blocks, not to the 432,000-slot epoch:
    // slot-to-blockhash holds only the held span; the published formats keep their logical size
    // (format §3.4, §3.8) but take disk only for the span (sparse files).
    use std::os::unix::fs::MetadataExt;
    let file = |kind: &str| std::fs::metadata(dir.path().join(kind)).unwrap();
    let hashes = file(&format!("epoch-0-1-{ROOT}-mainnet-slot-to-blockhash.index"));
    assert!(
        hashes.len() < 4096,
        "slot-to-blockhash of {} bytes",
        hashes.len()
    );
    let ranges = file("epoch-0-1-slot-ranges.raw");
    assert_eq!(ranges.len(), 432_000 * 12);
    let times = file(&format!("epoch-0-1-{ROOT}-mainnet-slot-to-blocktime.index"));
    assert_eq!(times.len(), 1_728_046);
    for (name, meta) in [("slot-ranges", &ranges), ("slot-to-blocktime", &times)] {
        let on_disk = meta.blocks() * 512;
        assert!(on_disk <= 64 << 10, "{name} takes {on_disk} bytes of disk");
    }

    // A missing file is an error with the path in the message.
    let out = Command::new(env!("CARGO_BIN_EXE_appliance"))
        .args([
            "archive",
            "index",
            "--no-progress",
            "/nonexistent/epoch-9.car",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/epoch-9.car"));
}
