//! The replay source: a shred capture (or the bundled fixture slots) sent over UDP to the
//! appliance's own receive path, paced per shred or per FEC set, optionally looped with every slot
//! renumbered and re-signed so the stream looks like a live chain. [`send`] holds the
//! `sendmmsg`/GSO sender.

#[allow(unsafe_code)]
pub mod send;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use capture::framing;
use capture::reslot::Reslotter;

use send::{BurstSender, fec_set_runs};

/// The capture replayed when no source is given: two complete slots of the reference fixtures.
const BUNDLED_CAPTURE: &[&[u8]] = &[
    include_bytes!("../../replay/slot-361200000.full.bin"),
    include_bytes!("../../replay/slot-361200002.full.bin"),
];

/// The seed of the replay's signing key: looping replays are signed by this key, which the decode
/// worker then verifies as the leader of every replayed slot.
const REPLAY_KEY_SEED: [u8; 32] = *b"shred-appliance-replay-leader-01";

/// Plays the captures in a loop until shutdown, renumbering every slot so the passes follow each
/// other like a live chain: slot gaps of the capture are kept, each slot's parent is the slot
/// played before it, and each first FEC set chains to the previous slot's last root. The first
/// slot played is `first_slot` when given (a restarted appliance continues the chain), else the
/// capture's first.
fn replay_loop(
    captures: &[Vec<u8>],
    target: SocketAddr,
    (pacing, first_slot): (Pacing, Option<u64>),
    reslotter: &Reslotter,
    shutdown: &AtomicBool,
) -> anyhow::Result<u64> {
    let mut slots: Vec<(u64, Vec<&[u8]>)> = Vec::new();
    for capture in captures {
        for record in framing::records(capture) {
            let payload = record.context("malformed replay capture")?.payload;
            let Some((slot, _)) = decoder::shred::peek_slot_and_fec_set(payload) else {
                continue;
            };
            match slots.iter_mut().find(|(known, _)| *known == slot) {
                Some((_, shreds)) => shreds.push(payload),
                None => slots.push((slot, vec![payload])),
            }
        }
    }
    let Some(&(captured_first, _)) = slots.first() else {
        bail!("the replay capture is empty");
    };
    let first_slot = first_slot.unwrap_or(captured_first);
    let mut sender = ReplaySender::new(target, pacing)?;
    let mut previous = (first_slot.saturating_sub(1), [0u8; 32]);
    while !shutdown.load(Ordering::Acquire) {
        let mut captured_previous: Option<u64> = None;
        for (captured, shreds) in &slots {
            let gap = captured_previous.map_or(1, |before| captured.saturating_sub(before).max(1));
            captured_previous = Some(*captured);
            let slot = previous.0 + gap;
            let renumbered = reslotter
                .reslot(shreds, slot, previous.0, &previous.1)
                .with_context(|| format!("renumbering captured slot {captured}"))?;
            let shreds: Vec<&[u8]> = renumbered.shreds.iter().map(Vec::as_slice).collect();
            sender.send(&shreds)?;
            previous = (slot, renumbered.last_root);
            if shutdown.load(Ordering::Acquire) {
                break;
            }
        }
    }
    Ok(sender.sent)
}

/// How a replay spaces its datagrams.
#[derive(Debug, Clone, Copy)]
pub struct Pacing {
    /// Shreds per second, on average.
    pub rate: u64,
    /// Pace only the first shred of each FEC set and send the rest of the set at once.
    pub per_fec_set: bool,
}

/// Paces a send loop at a fixed rate: the `n`-th datagram goes out `n / rate` seconds after the
/// start, so short stalls are caught up instead of accumulating. In per-FEC-set mode only a
/// datagram that starts a new FEC set waits for its due time; the rest of its set follows at once.
struct Pacer {
    started: Instant,
    pacing: Pacing,
    /// (slot, fec_set_index) of the previous datagram, in per-FEC-set mode.
    current_set: Option<(u64, u32)>,
}

impl Pacer {
    fn new(pacing: Pacing) -> Self {
        Self {
            started: Instant::now(),
            pacing,
            current_set: None,
        }
    }

    /// Sleeps until datagram `sent` (the shred `payload`) is due.
    fn wait(&mut self, sent: u64, payload: &[u8]) {
        if let Some(due) = self.due(sent, payload)
            && let Some(wait) = due.checked_sub(self.started.elapsed())
        {
            std::thread::sleep(wait);
        }
    }

    /// When datagram `sent` is due after the start, or `None` when it goes out at once (the
    /// rest of a FEC set in per-FEC-set mode).
    fn due(&mut self, sent: u64, payload: &[u8]) -> Option<Duration> {
        if self.pacing.per_fec_set {
            let set = decoder::shred::peek_slot_and_fec_set(payload);
            if set.is_some() && set == self.current_set {
                return None;
            }
            self.current_set = set;
        }
        Some(Duration::from_nanos(
            sent.saturating_mul(1_000_000_000) / self.pacing.rate,
        ))
    }
}

/// Sends every record of the captures to `target`, paced at `pacing.rate` shreds per second.
fn replay(captures: &[Vec<u8>], target: SocketAddr, pacing: Pacing) -> anyhow::Result<u64> {
    let mut sender = ReplaySender::new(target, pacing)?;
    for capture in captures {
        // Everything before a malformed record still goes out, then the error.
        let mut shreds = Vec::new();
        let mut malformed = None;
        for record in framing::records(capture) {
            match record {
                Ok(record) => shreds.push(record.payload),
                Err(error) => {
                    malformed = Some(error);
                    break;
                }
            }
        }
        sender.send(&shreds)?;
        if let Some(error) = malformed {
            return Err(error).context("malformed replay capture");
        }
    }
    Ok(sender.sent)
}

/// Sends paced shreds: one `send` per shred in uniform mode; in per-FEC-set mode one
/// `sendmmsg` per run of a set's shreds, after waiting for the set's due time.
struct ReplaySender {
    transport: ReplayTransport,
    pacer: Pacer,
    /// Datagrams sent so far.
    sent: u64,
}

/// The socket of a replay, by pacing mode.
enum ReplayTransport {
    Uniform {
        socket: UdpSocket,
        target: SocketAddr,
    },
    PerFecSet(BurstSender),
}

impl ReplaySender {
    fn new(target: SocketAddr, pacing: Pacing) -> anyhow::Result<Self> {
        let transport = if pacing.per_fec_set {
            ReplayTransport::PerFecSet(BurstSender::connect(target).context("replay burst socket")?)
        } else {
            ReplayTransport::Uniform {
                socket: UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?,
                target,
            }
        };
        Ok(Self {
            transport,
            pacer: Pacer::new(pacing),
            sent: 0,
        })
    }

    fn send(&mut self, shreds: &[&[u8]]) -> anyhow::Result<()> {
        match &mut self.transport {
            ReplayTransport::PerFecSet(burst) => {
                for run in fec_set_runs(shreds) {
                    if let Some(first) = run.first() {
                        self.pacer.wait(self.sent, first);
                    }
                    self.sent += burst.send(run).context("replay sendmmsg")? as u64;
                }
            }
            ReplayTransport::Uniform { socket, target } => {
                for shred in shreds {
                    self.pacer.wait(self.sent, shred);
                    socket.send_to(shred, *target)?;
                    self.sent += 1;
                }
            }
        }
        Ok(())
    }
}

/// Starts the replay thread: the configured capture (or the bundled slots) sent to `target`,
/// looped and re-signed when `looping` (numbered from `first_slot` when given), until `shutdown`.
pub fn spawn(
    file: Option<&std::path::Path>,
    target: SocketAddr,
    pacing: Pacing,
    looping: Option<Option<u64>>,
    shutdown: std::sync::Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let captures = match file {
        Some(path) => {
            vec![std::fs::read(path).with_context(|| format!("reading {}", path.display()))?]
        }
        None => BUNDLED_CAPTURE.iter().map(|bytes| bytes.to_vec()).collect(),
    };
    std::thread::Builder::new()
        .name("replay".into())
        .spawn(move || {
            let result = match looping {
                Some(first_slot) => replay_loop(
                    &captures,
                    target,
                    (pacing, first_slot),
                    &replay_reslotter(),
                    &shutdown,
                ),
                None => replay(&captures, target, pacing),
            };
            match result {
                Ok(sent) => tracing::info!(sent, "replay finished"),
                Err(error) => tracing::warn!(%error, "replay failed"),
            }
        })?;
    Ok(())
}

/// The re-signer of looping replays; its key is the leader the decoder verifies.
pub fn replay_reslotter() -> Reslotter {
    Reslotter::new(ed25519_dalek::SigningKey::from_bytes(&REPLAY_KEY_SEED))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header-sized payload naming `slot` and `fec_set_index` at their wire offsets.
    fn shred(slot: u64, fec_set_index: u32) -> Vec<u8> {
        let mut payload = vec![0u8; 88];
        payload[65..73].copy_from_slice(&slot.to_le_bytes());
        payload[79..83].copy_from_slice(&fec_set_index.to_le_bytes());
        payload
    }

    #[test]
    fn uniform_pacing_spaces_every_datagram() {
        let mut pacer = Pacer::new(Pacing {
            rate: 1_000,
            per_fec_set: false,
        });
        let set = shred(7, 0);
        let due: Vec<_> = (0..3).map(|sent| pacer.due(sent, &set)).collect();
        let ms = Duration::from_millis;
        assert_eq!(due, [Some(ms(0)), Some(ms(1)), Some(ms(2))]);
    }

    #[test]
    fn burst_pacing_waits_only_at_each_new_fec_set() {
        let mut pacer = Pacer::new(Pacing {
            rate: 1_000,
            per_fec_set: true,
        });
        let sends = [
            shred(7, 0),
            shred(7, 0),
            shred(7, 0),
            shred(7, 32),
            shred(7, 32),
            shred(8, 32),
        ];
        let due: Vec<_> = sends
            .iter()
            .enumerate()
            .map(|(sent, payload)| pacer.due(sent as u64, payload))
            .collect();
        let ms = Duration::from_millis;
        // The set starting at datagram 3 is due 3 ms in, keeping the average at 1,000/s; the
        // same index in another slot is another set.
        assert_eq!(
            due,
            [Some(ms(0)), None, None, Some(ms(3)), None, Some(ms(5))]
        );
    }
}
