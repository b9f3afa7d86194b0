//! The gRPC stream's fan-out (issue "Fast matching"): matching and encoding cost per published
//! transaction with 1, 100 and 1,000 subscribers, against the per-session path it replaced.
//!
//! Workload (synthetic, deterministic): each subscriber watches its own wallets and pools, as a
//! copy-trading or pool-tracking client does, with three filters: `wallets` (ALPHA_FUN and
//! ALPHA_AMM calls touching any of 10 to 1,000 of its wallet keys, log-uniform), `pools`
//! (BETA_CPMM and DELTA_BETA_CPMM swaps touching any of 10 of its pool keys) and `whale` (pump
//! buys requiring one wallet key). Transactions carry 12 to 30 static keys (busy program and mint
//! keys, a signer and accounts drawn from the subscribers' universe or elsewhere) and 1 to 3
//! supported calls; one in eight is an aggregator `delta` with two legs. The key universe grows
//! with the subscribers, so a transaction matches about the same number of subscribers at every
//! size: what grows is the number of filters that do not match.
//!
//! - `fanout/publish/N`: `Hub::publish` (view, index look-ups, candidate evaluation, one shared
//!   encoding, `try_send` per matching session), timed per batch of 256 transactions; queues are
//!   drained untimed between batches.
//! - `fanout/publish_and_send/N`: the same plus every matching session's work: taking the
//!   delivery, `personalise` and writing its message (shared bytes plus suffix) into a buffer.
//! - `fanout/per_session_baseline/N`: the old path: every session runs `Filters::matches` on the
//!   update, deep-clones it when it matches and encodes its copy.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use ::stream::fanout::{Hub, Subscriber};
use ::stream::filter::{FilterLimits, Filters};
use ::stream::service::personalise;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use prost::Message;
use stream_proto::stream::{
    DecodedInstruction, DecodedTransaction, DeltaDexLeg, DeltaUpdate, ProgramFilter, ServerTiming,
    SubscribeUpdate, subscribe_update::Update,
};

/// SplitMix64: a small deterministic generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn key(&mut self) -> [u8; 32] {
        let mut key = [0u8; 32];
        for chunk in key.chunks_mut(8) {
            chunk.copy_from_slice(&self.next().to_le_bytes());
        }
        key
    }
}

const BUSY: &[&str] = &[
    "11111111111111111111111111111111",
    "ComputeBudget111111111111111111111111111111",
    "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
    "So11111111111111111111111111111111111111112",
];

/// Calls of direct transactions: (DexProgram value, logical name).
const CALLS: &[(i32, &str)] = &[
    (1, "buy"),
    (1, "sell"),
    (2, "buy"),
    (2, "sell"),
    (3, "swap_base_input"),
    (4, "buy_exact_in"),
    (5, "swap"),
    (6, "swap"),
];

struct Universe {
    /// Per subscriber: its wallet and pool keys.
    wallets: Vec<Vec<[u8; 32]>>,
    pools: Vec<Vec<[u8; 32]>>,
}

fn b58(key: &[u8; 32]) -> String {
    bs58::encode(key).into_string()
}

fn universe(subscribers: usize, rng: &mut Rng) -> Universe {
    let mut wallets = Vec::new();
    let mut pools = Vec::new();
    for _ in 0..subscribers {
        // Log-uniform between 10 and 1,000 keys.
        let count = (10.0 * 100f64.powf(rng.below(1001) as f64 / 1000.0)) as usize;
        wallets.push((0..count).map(|_| rng.key()).collect());
        pools.push((0..10).map(|_| rng.key()).collect());
    }
    Universe { wallets, pools }
}

fn subscription(universe: &Universe, subscriber: usize) -> Filters {
    let wallets = &universe.wallets[subscriber];
    let filters: HashMap<String, ProgramFilter> = [
        (
            "wallets".to_owned(),
            ProgramFilter {
                programs: vec![1, 2],
                accounts_include: wallets.iter().map(b58).collect(),
                ..Default::default()
            },
        ),
        (
            "pools".to_owned(),
            ProgramFilter {
                programs: vec![3, 9],
                instruction_types: vec!["swap_base_input".to_owned()],
                accounts_include: universe.pools[subscriber].iter().map(b58).collect(),
                ..Default::default()
            },
        ),
        (
            "whale".to_owned(),
            ProgramFilter {
                programs: vec![1],
                instruction_types: vec!["buy".to_owned()],
                accounts_required: vec![b58(&wallets[0])],
                ..Default::default()
            },
        ),
    ]
    .into();
    Filters::compile(&filters, &FilterLimits::default()).expect("valid filters")
}

fn instruction(program: i32, name: &str, index: u32) -> DecodedInstruction {
    DecodedInstruction {
        program,
        instruction_name: name.to_owned(),
        instruction_index: index,
        account_indices: (0..12).collect(),
        raw_data: vec![7; 24],
        decoded: None,
    }
}

fn transactions(universe: &Universe, count: usize, rng: &mut Rng) -> Vec<SubscribeUpdate> {
    let busy: Vec<Vec<u8>> = BUSY
        .iter()
        .map(|text| bs58::decode(text).into_vec().expect("base58"))
        .collect();
    let subscribers = universe.wallets.len() as u64;
    (0..count)
        .map(|n| {
            let mut keys: Vec<Vec<u8>> = Vec::new();
            // A signer: one in four from a subscriber's wallets.
            let from_universe = |rng: &mut Rng, pools: bool| {
                let subscriber = rng.below(subscribers) as usize;
                let list = if pools {
                    &universe.pools[subscriber]
                } else {
                    &universe.wallets[subscriber]
                };
                list[rng.below(list.len() as u64) as usize].to_vec()
            };
            keys.push(if rng.below(4) == 0 {
                from_universe(rng, false)
            } else {
                rng.key().to_vec()
            });
            keys.extend(busy.iter().cloned());
            if rng.below(4) == 0 {
                keys.push(from_universe(rng, true));
            }
            let extra = 7 + rng.below(19) as usize;
            keys.extend((0..extra).map(|_| rng.key().to_vec()));
            let timing = Some(ServerTiming {
                first_read_unix_nanos: 1,
                capture_done_unix_nanos: 2,
                deshred_done_unix_nanos: 3,
                decode_done_unix_nanos: 4,
                publish_unix_nanos: 5,
                subscriber_recv_unix_nanos: 0,
                ..Default::default()
            });
            let calls = 1 + rng.below(3) as usize;
            let decoded_instructions = (0..calls)
                .map(|index| {
                    let (program, name) = CALLS[rng.below(CALLS.len() as u64) as usize];
                    instruction(program, name, index as u32)
                })
                .collect();
            let transaction = DecodedTransaction {
                slot: 300_000_000,
                signature: rng.key().repeat(2),
                tx_index: n as u32,
                signer: keys[0].clone(),
                account_keys: keys,
                decoded_instructions,
                uses_lookup_tables: false,
                matched_filters: Vec::new(),
                server_timing: timing,
                ..Default::default()
            };
            let update = if n % 8 == 7 {
                Update::Delta(DeltaUpdate {
                    envelope: Some(transaction),
                    top_level_instruction: None,
                    dex_legs: [(9, "swap_base_input"), (7, "buy")]
                        .iter()
                        .enumerate()
                        .map(|(step, (program, name))| DeltaDexLeg {
                            wrapped_program: program - 6,
                            instruction: Some(instruction(*program, name, 0)),
                            route_step_index: step as u32,
                            logical_instruction_name: (*name).to_owned(),
                            ..Default::default()
                        })
                        .collect(),
                    matched_leg_indices: Vec::new(),
                })
            } else {
                Update::Transaction(transaction)
            };
            SubscribeUpdate {
                update: Some(update),
                ..Default::default()
            }
        })
        .collect()
}

struct Setup {
    hub: std::sync::Arc<Hub>,
    subscribers: Vec<Subscriber>,
    filters: Vec<Filters>,
    updates: Vec<SubscribeUpdate>,
}

fn setup(sessions: usize) -> Setup {
    let mut rng = Rng(0x5EED ^ sessions as u64);
    let universe = universe(sessions, &mut rng);
    let filters: Vec<Filters> = (0..sessions).map(|s| subscription(&universe, s)).collect();
    let hub = Hub::new(1 << 14);
    let subscribers = filters
        .iter()
        .map(|filters| {
            let mut subscriber = Subscriber::new(hub.clone());
            subscriber.replace(filters.clone());
            subscriber
        })
        .collect();
    // Index every session now (the background rebuild would do it within milliseconds).
    hub.rebuild();
    let updates = transactions(&universe, 2048, &mut rng);
    Setup {
        hub,
        subscribers,
        filters,
        updates,
    }
}

const BATCH: usize = 256;

/// Takes every queued delivery: personalised and encoded when `send`, else dropped. Returns
/// the deliveries taken.
fn drain(subscribers: &mut [Subscriber], send: bool, buffer: &mut Vec<u8>) -> usize {
    let mut taken = 0;
    for subscriber in subscribers {
        while let Some(delivery) = subscriber.try_next() {
            taken += 1;
            if send && let Some(outbound) = subscriber.personalise(delivery, 6) {
                buffer.clear();
                outbound.encode(buffer).expect("buffer grows");
                black_box(&buffer);
            }
        }
    }
    taken
}

fn fanout(c: &mut Criterion) {
    let mut group = c.benchmark_group("fanout");
    group.throughput(Throughput::Elements(1));
    for sessions in [1usize, 100, 1000] {
        let mut setup = setup(sessions);
        let mut buffer = Vec::with_capacity(4096);
        // Matches per transaction, reported once (independent of the timing).
        for update in &setup.updates {
            setup.hub.publish(update.clone());
        }
        let matches = drain(&mut setup.subscribers, false, &mut buffer);
        eprintln!(
            "fanout: {sessions} sessions, {:.3} matching sessions per update, {} filters indexed",
            matches as f64 / setup.updates.len() as f64,
            setup.filters.iter().map(Filters::len).sum::<usize>()
        );
        for (name, send) in [("publish", false), ("publish_and_send", true)] {
            group.bench_function(BenchmarkId::new(name, sessions), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut done = 0u64;
                    let mut next = 0usize;
                    while done < iters {
                        let batch = (iters - done).min(BATCH as u64) as usize;
                        let updates: Vec<SubscribeUpdate> = (0..batch)
                            .map(|i| setup.updates[(next + i) % setup.updates.len()].clone())
                            .collect();
                        next += batch;
                        let started = Instant::now();
                        for update in updates {
                            setup.hub.publish(update);
                        }
                        if send {
                            drain(&mut setup.subscribers, true, &mut buffer);
                            total += started.elapsed();
                        } else {
                            total += started.elapsed();
                            drain(&mut setup.subscribers, false, &mut buffer);
                        }
                        done += batch as u64;
                    }
                    total
                })
            });
        }
        group.bench_function(BenchmarkId::new("per_session_baseline", sessions), |b| {
            let mut next = 0usize;
            b.iter(|| {
                let update = &setup.updates[next % setup.updates.len()];
                next += 1;
                for filters in &setup.filters {
                    if let Some(personal) = personalise(update, filters, 6) {
                        buffer.clear();
                        personal.encode(&mut buffer).expect("buffer grows");
                        black_box(&buffer);
                    }
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, fanout);
criterion_main!(benches);
