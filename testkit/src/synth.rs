//! A deterministic generator of realistic epochs for the CAR writer: a stand-in for a validator's
//! blocks (no live validator runs here). Blocks carry legacy and v0 transactions over a shared
//! pool of addresses, protobuf metadata with balances, logs, inner instructions, token balances,
//! loaded addresses, errors and compute units; some transactions call the Memo program; some
//! blocks carry rewards (the epoch's first block many, with partitions); some slots are skipped.
//! Tests derive their expectations from the generated inputs, never from the reader.

use archive::proto;
use archive::txerror::{InstructionError, TransactionError};
use archive::txwire::MEMO_PROGRAM_IDS;
use archive::writer::{BlockInput, EntryInput, MetaInput, TxInput};
use decoder::program_ids::SYSVAR_CLOCK;

/// Shape of a generated epoch (or part of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthOptions {
    pub first_slot: u64,
    /// Slots covered (present and skipped).
    pub slots: u64,
    /// Every `skip_every`-th slot is skipped (0 = none).
    pub skip_every: u64,
    pub entries_per_block: usize,
    pub txs_per_entry: usize,
    /// Size of the address pool transactions draw from.
    pub address_pool: usize,
    /// Every `big_log_every`-th transaction logs ~`big_log_bytes` (multi-frame metadata).
    pub big_log_every: usize,
    pub big_log_bytes: usize,
    /// Block time of the first slot (0 = unknown times, like epoch 0).
    pub base_time: i64,
    pub seed: u64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            first_slot: 0,
            slots: 100,
            skip_every: 5,
            entries_per_block: 4,
            txs_per_entry: 3,
            address_pool: 64,
            big_log_every: 0,
            big_log_bytes: 0,
            base_time: 1_700_000_000,
            seed: 7,
        }
    }
}

/// SplitMix64: small, deterministic, good enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }

    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        self.fill(&mut out);
        out
    }
}

fn id(text: &str) -> [u8; 32] {
    bs58::decode(text)
        .into_vec()
        .ok()
        .and_then(|v| v.try_into().ok())
        .unwrap_or([0; 32])
}

/// The account keys of one generated transaction.
struct TxKeys {
    /// The invoked program (also named in the logs).
    program: [u8; 32],
    /// Static keys: payer, 2 writable, then read-only: program, memo program, [clock].
    keys: Vec<[u8; 32]>,
    readonly_unsigned: u8,
    loaded_writable: Vec<[u8; 32]>,
    loaded_readonly: Vec<[u8; 32]>,
}

/// Generator state: the address pool and counters.
pub struct Synth {
    options: SynthOptions,
    rng: Rng,
    pool: Vec<[u8; 32]>,
    memo_v1: [u8; 32],
    memo_v3: [u8; 32],
    clock: [u8; 32],
    tx_counter: u64,
    previous_present: Option<u64>,
    next_slot: u64,
}

impl Synth {
    pub fn new(options: SynthOptions) -> Self {
        let mut rng = Rng::new(options.seed);
        let pool = (0..options.address_pool.max(4))
            .map(|_| rng.array::<32>())
            .collect();
        Synth {
            options,
            rng,
            pool,
            memo_v1: id(MEMO_PROGRAM_IDS[0]),
            memo_v3: id(MEMO_PROGRAM_IDS[1]),
            clock: id(SYSVAR_CLOCK),
            tx_counter: 0,
            previous_present: None,
            next_slot: options.first_slot,
        }
    }

    /// The address pool (for queries in tests).
    pub fn pool(&self) -> &[[u8; 32]] {
        &self.pool
    }

    fn pick(&mut self) -> [u8; 32] {
        let i = self.rng.below(self.pool.len() as u64) as usize;
        self.pool[i]
    }

    /// Whether `slot` is skipped under these options.
    pub fn is_skipped(options: &SynthOptions, slot: u64) -> bool {
        options.skip_every > 0 && slot % options.skip_every == options.skip_every - 1
    }

    fn transaction(&mut self) -> TxInput {
        self.tx_counter += 1;
        let n = self.tx_counter;
        let versioned = n.is_multiple_of(3);
        let keys = self.tx_keys(n, versioned);
        let instructions = self.instructions(n, versioned);
        let wire = self.wire(n, versioned, &keys, &instructions);
        let meta = self.meta(n, &keys);
        TxInput {
            wire,
            meta: MetaInput::Protobuf(meta),
        }
    }

    /// The account keys of transaction `n` (drawn from the pool in a fixed order).
    fn tx_keys(&mut self, n: u64, versioned: bool) -> TxKeys {
        let uses_sysvar = n % 10 == 3;
        let payer = self.pick();
        let writable = [self.pick(), self.pick()];
        let program = self.pick();
        // Static keys: payer, 2 writable, then read-only: program, memo program, [clock].
        let mut keys: Vec<[u8; 32]> = vec![payer, writable[0], writable[1], program];
        let memo_program = if n % 8 == 1 {
            self.memo_v3
        } else {
            self.memo_v1
        };
        keys.push(memo_program);
        if uses_sysvar {
            keys.push(self.clock);
        }
        let readonly_unsigned = (keys.len() - 3) as u8;
        let loaded_writable: Vec<[u8; 32]> = if versioned {
            vec![self.pick(), self.pick()]
        } else {
            Vec::new()
        };
        let loaded_readonly: Vec<[u8; 32]> = if versioned {
            vec![self.pick()]
        } else {
            Vec::new()
        };
        TxKeys {
            program,
            keys,
            readonly_unsigned,
            loaded_writable,
            loaded_readonly,
        }
    }

    /// The instructions of transaction `n`: `(program index, accounts, data)`.
    fn instructions(&mut self, n: u64, versioned: bool) -> Vec<(u8, Vec<u8>, Vec<u8>)> {
        let with_memo = n % 4 == 1;
        let mut data = vec![0u8; 8 + self.rng.below(40) as usize];
        self.rng.fill(&mut data);
        let mut instructions: Vec<(u8, Vec<u8>, Vec<u8>)> = vec![(3, vec![0, 1, 2], data)];
        if versioned {
            instructions.push((3, vec![5, 6, 7], vec![1, 2, 3]));
        }
        let memo_text = if with_memo {
            let text: Vec<u8> = if n % 20 == 9 {
                vec![0xff, 0xfe, b'x']
            } else {
                format!("memo {n}").into_bytes()
            };
            instructions.push((4, Vec::new(), text.clone()));
            Some(text)
        } else {
            None
        };
        let _ = memo_text;
        instructions
    }

    /// The wire bytes of transaction `n` (legacy, or v0 with one lookup table).
    fn wire(
        &mut self,
        n: u64,
        versioned: bool,
        keys: &TxKeys,
        instructions: &[(u8, Vec<u8>, Vec<u8>)],
    ) -> Vec<u8> {
        let mut wire = Vec::with_capacity(400);
        wire.push(1); // one signature
        let mut signature = self.rng.array::<64>();
        signature[..8].copy_from_slice(&n.to_le_bytes());
        wire.extend_from_slice(&signature);
        if versioned {
            wire.push(0x80);
        }
        wire.extend_from_slice(&[1, 0, keys.readonly_unsigned]);
        wire.push(keys.keys.len() as u8);
        for key in &keys.keys {
            wire.extend_from_slice(key);
        }
        wire.extend_from_slice(&self.rng.array::<32>());
        wire.push(instructions.len() as u8);
        for (program_index, accounts, data) in instructions {
            wire.push(*program_index);
            wire.push(accounts.len() as u8);
            wire.extend_from_slice(accounts);
            push_compact_u16(&mut wire, data.len());
            wire.extend_from_slice(data);
        }
        if versioned {
            wire.push(1); // one lookup table
            wire.extend_from_slice(&self.rng.array::<32>());
            wire.extend_from_slice(&[2, 4, 9, 1, 7]);
        }
        wire
    }

    /// The status metadata of transaction `n`.
    fn meta(&mut self, n: u64, keys: &TxKeys) -> proto::TransactionStatusMeta {
        let failed = n % 6 == 5;
        let program = keys.program;
        let (loaded_writable, loaded_readonly) = (&keys.loaded_writable, &keys.loaded_readonly);
        let total_keys = keys.keys.len() + loaded_writable.len() + loaded_readonly.len();
        let mut meta = proto::TransactionStatusMeta {
            fee: 5000,
            pre_balances: (0..total_keys as u64).map(|i| 1_000_000 + i).collect(),
            post_balances: (0..total_keys as u64).map(|i| 995_000 + i).collect(),
            log_messages: vec![
                format!("Program {} invoke [1]", bs58::encode(program).into_string()),
                "Program log: Instruction: Swap".into(),
                format!("Program {} success", bs58::encode(program).into_string()),
            ],
            compute_units_consumed: Some(1_000 + n % 5_000),
            loaded_writable_addresses: loaded_writable.iter().map(|k| k.to_vec()).collect(),
            loaded_readonly_addresses: loaded_readonly.iter().map(|k| k.to_vec()).collect(),
            return_data_none: true,
            ..Default::default()
        };
        if n.is_multiple_of(2) {
            meta.inner_instructions = vec![proto::InnerInstructions {
                index: 0,
                instructions: vec![proto::InnerInstruction {
                    program_id_index: 3,
                    accounts: vec![1, 2],
                    data: vec![3, 0, 0, 0, 1],
                    stack_height: Some(2),
                }],
            }];
            meta.pre_token_balances = vec![token_balance(1, 1_500_000)];
            meta.post_token_balances = vec![token_balance(1, 500_000)];
        } else {
            meta.inner_instructions_none = n.is_multiple_of(7);
        }
        if failed {
            meta.err = Some(proto::TransactionError {
                err: TransactionError::InstructionError(
                    0,
                    InstructionError::Custom(6000 + (n % 3) as u32),
                )
                .to_bincode(),
            });
        }
        if self.options.big_log_every > 0 && n.is_multiple_of(self.options.big_log_every as u64) {
            let mut filler = vec![0u8; self.options.big_log_bytes / 2];
            self.rng.fill(&mut filler);
            // Hex of random bytes compresses poorly, so the payload really is large.
            let text: String = filler.iter().map(|b| format!("{b:02x}")).collect();
            meta.log_messages.push(format!("Program log: {text}"));
        }
        meta
    }

    fn rewards(&mut self, first_block: bool, slot: u64) -> Option<proto::Rewards> {
        if first_block {
            let rewards = (0..40)
                .map(|i| proto::Reward {
                    pubkey: bs58::encode(self.rng.array::<32>()).into_string(),
                    lamports: 1_000_000 + i,
                    post_balance: 10_000_000_000 + i as u64,
                    reward_type: if i % 2 == 0 {
                        proto::RewardType::Staking
                    } else {
                        proto::RewardType::Voting
                    } as i32,
                    commission: if i % 2 == 0 {
                        String::new()
                    } else {
                        "10".into()
                    },
                })
                .collect();
            return Some(proto::Rewards {
                rewards,
                num_partitions: Some(proto::NumPartitions { num_partitions: 4 }),
            });
        }
        slot.is_multiple_of(3).then(|| proto::Rewards {
            rewards: vec![proto::Reward {
                pubkey: bs58::encode(self.pick()).into_string(),
                lamports: 2_500,
                post_balance: 90_000,
                reward_type: proto::RewardType::Fee as i32,
                commission: String::new(),
            }],
            num_partitions: None,
        })
    }
}

fn token_balance(account_index: u32, amount: u64) -> proto::TokenBalance {
    proto::TokenBalance {
        account_index,
        mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".into(),
        ui_token_amount: Some(proto::UiTokenAmount {
            ui_amount: amount as f64 / 1e6,
            decimals: 6,
            amount: amount.to_string(),
            ui_amount_string: archive::meta::ui_amount_string(&amount.to_string(), 6),
        }),
        owner: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM".into(),
        program_id: decoder::program_ids::TOKEN.into(),
    }
}

/// Appends `value` in the wire format's compact-u16 encoding (7 bits a byte, low first).
pub fn push_compact_u16(out: &mut Vec<u8>, value: usize) {
    let mut rem = value;
    loop {
        let mut byte = (rem & 0x7f) as u8;
        rem >>= 7;
        if rem != 0 {
            byte |= 0x80;
        }
        out.push(byte);
        if rem == 0 {
            break;
        }
    }
}

impl Iterator for Synth {
    type Item = BlockInput;

    /// The next present block (skipped slots are passed over).
    fn next(&mut self) -> Option<BlockInput> {
        let end = self.options.first_slot + self.options.slots;
        while self.next_slot < end && Self::is_skipped(&self.options, self.next_slot) {
            self.next_slot += 1;
        }
        if self.next_slot >= end {
            return None;
        }
        let slot = self.next_slot;
        self.next_slot += 1;
        let first_block = self.previous_present.is_none();
        let parent_slot = self.previous_present.unwrap_or(slot.saturating_sub(1));
        self.previous_present = Some(slot);
        let mut entries = Vec::with_capacity(self.options.entries_per_block + 1);
        for e in 0..self.options.entries_per_block {
            let count = if e % 3 == 2 {
                0
            } else {
                self.options.txs_per_entry
            };
            let transactions = (0..count).map(|_| self.transaction()).collect();
            entries.push(EntryInput {
                num_hashes: 12_500 + e as u64,
                hash: self.rng.array::<32>(),
                transactions,
            });
        }
        if entries.is_empty() {
            entries.push(EntryInput {
                num_hashes: 1,
                hash: self.rng.array::<32>(),
                transactions: Vec::new(),
            });
        }
        let block_time = if self.options.base_time == 0 {
            0
        } else {
            self.options.base_time + ((slot - self.options.first_slot) * 2 / 5) as i64
        };
        let rewards = self.rewards(first_block, slot);
        Some(BlockInput {
            slot,
            parent_slot,
            block_time,
            block_height: Some(slot / 2),
            entries,
            rewards,
        })
    }
}
