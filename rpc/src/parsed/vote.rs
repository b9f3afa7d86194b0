//! Vote program instructions as the validator parses them (bincode `VoteInstruction`: a `u32`
//! variant tag, then the fields; trailing bytes ignored). The compact vote-state updates and
//! tower syncs carry lockouts as varint offsets from the root in a short-vec; they print
//! expanded to absolute slots, as the validator does.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use super::reader::{Accounts, Reader};
use super::typed as ix;

const BLS_PUBKEY_LEN: usize = 48;
const BLS_PROOF_LEN: usize = 96;

impl Reader<'_> {
    /// A bincode `Option<T>` tag (0 or 1 only).
    fn option_tag(&mut self) -> Option<bool> {
        self.bool()
    }

    fn option_i64(&mut self) -> Option<Option<i64>> {
        Some(if self.option_tag()? {
            Some(self.i64()?)
        } else {
            None
        })
    }

    fn option_u64_bincode(&mut self) -> Option<Option<u64>> {
        Some(if self.option_tag()? {
            Some(self.u64()?)
        } else {
            None
        })
    }

    /// A bincode sequence length (`u64`) that the remaining bytes could hold with elements of
    /// at least `element` bytes.
    fn seq_len(&mut self, element: usize) -> Option<usize> {
        let len = usize::try_from(self.u64()?).ok()?;
        (len <= self.0.len() / element).then_some(len)
    }

    fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take::<N>()
    }

    /// A bincode `String`.
    fn bincode_string(&mut self) -> Option<String> {
        self.string()
    }

    /// solana-short-vec's strict compact `u16` (1 to 3 bytes, no alias encodings).
    fn short_u16(&mut self) -> Option<u16> {
        let mut value: u32 = 0;
        for nth in 0..3u32 {
            let byte = self.u8()?;
            if byte == 0 && nth != 0 {
                return None;
            }
            let done = byte & 0x80 == 0;
            if nth == 2 && !done {
                return None;
            }
            value |= u32::from(byte & 0x7f) << (nth * 7);
            if value > u32::from(u16::MAX) {
                return None;
            }
            if done {
                return u16::try_from(value).ok();
            }
        }
        None
    }

    /// solana-serde-varint's strict LEB128 `u64`.
    fn varint_u64(&mut self) -> Option<u64> {
        let mut out: u64 = 0;
        let mut shift = 0u32;
        while shift < u64::BITS {
            let byte = self.u8()?;
            out |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                if (out >> shift) as u8 != byte {
                    return None;
                }
                if byte == 0 && (shift != 0 || out != 0) {
                    return None;
                }
                return Some(out);
            }
            shift += 7;
        }
        None
    }
}

/// `"Voter"`, `"Withdrawer"` or `{"VoterWithBLS": {...}}` (the serde form of `VoteAuthorize`).
fn authorize(r: &mut Reader<'_>) -> Option<Value> {
    Some(match r.u32()? {
        0 => json!("Voter"),
        1 => json!("Withdrawer"),
        2 => {
            let pubkey = r.bytes::<BLS_PUBKEY_LEN>()?;
            let proof = r.bytes::<BLS_PROOF_LEN>()?;
            json!({"VoterWithBLS": {"bls_pubkey": pubkey.to_vec(),
                                    "bls_proof_of_possession": proof.to_vec()}})
        }
        _ => return None,
    })
}

fn commission_kind(r: &mut Reader<'_>) -> Option<Value> {
    Some(match r.u32()? {
        0 => json!("InflationRewards"),
        1 => json!("BlockRevenue"),
        _ => return None,
    })
}

/// `Vote { slots, hash, timestamp }`.
fn vote(r: &mut Reader<'_>) -> Option<Value> {
    let count = r.seq_len(8)?;
    let slots = (0..count).map(|_| r.u64()).collect::<Option<Vec<u64>>>()?;
    let (hash, timestamp) = (r.key()?, r.option_i64()?);
    Some(json!({"slots": slots, "hash": hash, "timestamp": timestamp}))
}

fn lockout(slot: u64, confirmation_count: u32) -> Value {
    json!({"slot": slot, "confirmation_count": confirmation_count})
}

/// `VoteStateUpdate { lockouts, root, hash, timestamp }` in its plain bincode form.
fn vote_state_update(r: &mut Reader<'_>) -> Option<Value> {
    let count = r.seq_len(12)?;
    let lockouts = (0..count)
        .map(|_| Some(lockout(r.u64()?, r.u32()?)))
        .collect::<Option<Vec<Value>>>()?;
    let (root, hash, timestamp) = (r.option_u64_bincode()?, r.key()?, r.option_i64()?);
    Some(json!({"lockouts": lockouts, "root": root, "hash": hash, "timestamp": timestamp}))
}

/// The compact form (vote-state update, or tower sync when `block_id`): root (`u64::MAX` for
/// none), short-vec of (varint offset, `u8` confirmations), hash, timestamp[, block id].
fn compact(r: &mut Reader<'_>, block_id: bool) -> Option<Value> {
    let root = r.u64()?;
    let root = (root != u64::MAX).then_some(root);
    let count = r.short_u16()?;
    let mut slot = root.unwrap_or_default();
    let mut lockouts = Vec::with_capacity(usize::from(count).min(r.0.len()));
    for _ in 0..count {
        let offset = r.varint_u64()?;
        let confirmations = r.u8()?;
        slot = slot.checked_add(offset)?;
        lockouts.push(lockout(slot, u32::from(confirmations)));
    }
    let (hash, timestamp) = (r.key()?, r.option_i64()?);
    let mut value = json!({"lockouts": lockouts, "root": root, "hash": hash,
                           "timestamp": timestamp});
    if block_id {
        let block_id = r.key()?;
        value
            .as_object_mut()?
            .insert("blockId".to_string(), json!(block_id));
    }
    Some(value)
}

/// Parses a vote instruction, or `None` (printed partially decoded): one helper per
/// instruction group.
pub fn parse(data: &[u8], accounts: &Accounts<'_>) -> Option<Value> {
    let mut r = Reader(data);
    let tag = r.u32()?;
    // The whole instruction deserializes before the accounts are looked at.
    let decoded = decode(tag, &mut r)?;
    if accounts.is_empty() {
        return None;
    }
    match tag {
        0 | 16 => initialize(tag, decoded, accounts),
        1 | 7 | 10 | 11 => authorization(tag, decoded, accounts),
        2 | 6 | 8 | 9 | 12..=15 => votes(tag, decoded, accounts),
        3 | 4 | 5 | 17..=19 => account_management(tag, decoded, accounts),
        _ => None,
    }
}

/// `initialize` (0) and `initializeV2` (16).
fn initialize(tag: u32, decoded: Decoded, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match (tag, decoded) {
        (0, Decoded::Fields(init)) => {
            need(4)?;
            ix(
                "initialize",
                json!({"voteAccount": a(0)?, "rentSysvar": a(1)?, "clockSysvar": a(2)?,
                       "node": a(3)?, "authorizedVoter": init["voter"],
                       "authorizedWithdrawer": init["withdrawer"],
                       "commission": init["commission"]}),
            )
        }
        (16, Decoded::Fields(init)) => {
            need(4)?;
            ix(
                "initializeV2",
                json!({"voteAccount": a(0)?, "node": a(1)?,
                       "inflationRewardsCollector": a(2)?, "blockRevenueCollector": a(3)?,
                       "authorizedVoter": init["voter"],
                       "authorizedVoterBlsPubkey": init["blsPubkey"],
                       "authorizedVoterBlsProofOfPossession": init["blsProof"],
                       "authorizedWithdrawer": init["withdrawer"],
                       "inflationRewardsCommissionBps": init["inflationBps"],
                       "blockRevenueCommissionBps": init["revenueBps"]}),
            )
        }
        _ => return None,
    })
}

/// `authorize` (1), `authorizeChecked` (7), `authorizeWithSeed` (10),
/// `authorizeCheckedWithSeed` (11).
fn authorization(tag: u32, decoded: Decoded, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match (tag, decoded) {
        (1, Decoded::Fields(args)) => {
            need(3)?;
            ix(
                "authorize",
                json!({"voteAccount": a(0)?, "clockSysvar": a(1)?, "authority": a(2)?,
                       "newAuthority": args["new"], "authorityType": args["type"]}),
            )
        }
        (7, Decoded::Fields(args)) => {
            need(4)?;
            ix(
                "authorizeChecked",
                json!({"voteAccount": a(0)?, "clockSysvar": a(1)?, "authority": a(2)?,
                       "newAuthority": a(3)?, "authorityType": args["type"]}),
            )
        }
        (10 | 11, Decoded::Fields(args)) => {
            let mut info = json!({"voteAccount": a(0)?, "clockSysvar": a(1)?,
                                  "authorityBaseKey": a(2)?, "authorityOwner": args["owner"],
                                  "authoritySeed": args["seed"],
                                  "authorityType": args["type"]});
            let kind = if tag == 10 {
                need(3)?;
                info.as_object_mut()?
                    .insert("newAuthority".to_string(), args["new"].clone());
                "authorizeWithSeed"
            } else {
                need(4)?;
                info.as_object_mut()?
                    .insert("newAuthority".to_string(), json!(a(3)?));
                "authorizeCheckedWithSeed"
            };
            ix(kind, info)
        }
        _ => return None,
    })
}

/// Votes, vote-state updates and tower syncs, with their `*Switch` forms.
fn votes(tag: u32, decoded: Decoded, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match (tag, decoded) {
        (2 | 6, Decoded::Fields(args)) => {
            need(4)?;
            let mut info = json!({"voteAccount": a(0)?, "slotHashesSysvar": a(1)?,
                                  "clockSysvar": a(2)?, "voteAuthority": a(3)?,
                                  "vote": args["vote"]});
            let kind = if tag == 6 {
                info.as_object_mut()?
                    .insert("hash".to_string(), args["hash"].clone());
                "voteSwitch"
            } else {
                "vote"
            };
            ix(kind, info)
        }
        (8 | 9 | 12 | 13, Decoded::Fields(args)) => {
            need(2)?;
            let mut info = json!({"voteAccount": a(0)?, "voteAuthority": a(1)?,
                                  "voteStateUpdate": args["update"]});
            if matches!(tag, 9 | 13) {
                info.as_object_mut()?
                    .insert("hash".to_string(), args["hash"].clone());
            }
            let kind = match tag {
                8 => "updatevotestate",
                9 => "updatevotestateswitch",
                12 => "compactupdatevotestate",
                _ => "compactupdatevotestateswitch",
            };
            ix(kind, info)
        }
        (14 | 15, Decoded::Fields(args)) => {
            need(2)?;
            let mut info = json!({"voteAccount": a(0)?, "voteAuthority": a(1)?,
                                  "towerSync": args["update"]});
            let kind = if tag == 15 {
                info.as_object_mut()?
                    .insert("hash".to_string(), args["hash"].clone());
                "towersyncswitch"
            } else {
                "towersync"
            };
            ix(kind, info)
        }
        _ => return None,
    })
}

/// `withdraw` (3), `updateValidatorIdentity` (4), `updateCommission` (5),
/// `updateCommissionCollector` (17), `updateCommissionBps` (18), `depositDelegatorRewards` (19).
fn account_management(tag: u32, decoded: Decoded, accounts: &Accounts<'_>) -> Option<Value> {
    let a = |i: usize| accounts.get(i);
    let need = |n: usize| accounts.need(n);
    Some(match (tag, decoded) {
        (3, Decoded::Fields(args)) => {
            need(3)?;
            ix(
                "withdraw",
                json!({"voteAccount": a(0)?, "destination": a(1)?,
                       "withdrawAuthority": a(2)?, "lamports": args["lamports"]}),
            )
        }
        (4, _) => {
            need(3)?;
            ix(
                "updateValidatorIdentity",
                json!({"voteAccount": a(0)?, "newValidatorIdentity": a(1)?,
                       "withdrawAuthority": a(2)?}),
            )
        }
        (5, Decoded::Fields(args)) => {
            need(2)?;
            ix(
                "updateCommission",
                json!({"voteAccount": a(0)?, "withdrawAuthority": a(1)?,
                       "commission": args["commission"]}),
            )
        }
        (17, Decoded::Fields(args)) => {
            need(3)?;
            ix(
                "updateCommissionCollector",
                json!({"voteAccount": a(0)?, "newCollector": a(1)?,
                       "withdrawAuthority": a(2)?, "commissionKind": args["kind"]}),
            )
        }
        (18, Decoded::Fields(args)) => {
            need(2)?;
            ix(
                "updateCommissionBps",
                json!({"voteAccount": a(0)?, "withdrawAuthority": a(1)?,
                       "commissionBps": args["bps"], "commissionKind": args["kind"]}),
            )
        }
        (19, Decoded::Fields(args)) => {
            need(2)?;
            ix(
                "depositDelegatorRewards",
                json!({"voteAccount": a(0)?, "source": a(1)?, "deposit": args["deposit"]}),
            )
        }
        _ => return None,
    })
}

/// The decoded fields of an instruction, by name, before the accounts are checked.
enum Decoded {
    Nothing,
    Fields(Value),
}

fn decode(tag: u32, r: &mut Reader<'_>) -> Option<Decoded> {
    let fields = match tag {
        0 => {
            let (_node, voter, withdrawer) = (r.key()?, r.key()?, r.key()?);
            json!({"voter": voter, "withdrawer": withdrawer, "commission": r.u8()?})
        }
        1 => {
            let new = r.key()?;
            json!({"new": new, "type": authorize(r)?})
        }
        2 => json!({"vote": vote(r)?}),
        6 => {
            let vote = vote(r)?;
            json!({"vote": vote, "hash": r.key()?})
        }
        3 => json!({"lamports": r.u64()?}),
        4 => return Some(Decoded::Nothing),
        5 => json!({"commission": r.u8()?}),
        7 => json!({"type": authorize(r)?}),
        8 => json!({"update": vote_state_update(r)?}),
        9 => {
            let update = vote_state_update(r)?;
            json!({"update": update, "hash": r.key()?})
        }
        10 | 11 => {
            let kind = authorize(r)?;
            let (owner, seed) = (r.key()?, r.bincode_string()?);
            let mut fields = json!({"type": kind, "owner": owner, "seed": seed});
            if tag == 10 {
                fields
                    .as_object_mut()?
                    .insert("new".to_string(), json!(r.key()?));
            }
            fields
        }
        12 => json!({"update": compact(r, false)?}),
        13 => {
            let update = compact(r, false)?;
            json!({"update": update, "hash": r.key()?})
        }
        14 => json!({"update": compact(r, true)?}),
        15 => {
            let update = compact(r, true)?;
            json!({"update": update, "hash": r.key()?})
        }
        16 => {
            let (_node, voter) = (r.key()?, r.key()?);
            let bls_pubkey = BASE64.encode(r.bytes::<BLS_PUBKEY_LEN>()?);
            let bls_proof = BASE64.encode(r.bytes::<BLS_PROOF_LEN>()?);
            let withdrawer = r.key()?;
            let (inflation_bps, revenue_bps) = (r.u16()?, r.u16()?);
            json!({"voter": voter, "blsPubkey": bls_pubkey, "blsProof": bls_proof,
                   "withdrawer": withdrawer, "inflationBps": inflation_bps,
                   "revenueBps": revenue_bps})
        }
        17 => json!({"kind": commission_kind(r)?}),
        18 => {
            let bps = r.u16()?;
            json!({"bps": bps, "kind": commission_kind(r)?})
        }
        19 => json!({"deposit": r.u64()?}),
        _ => return None,
    };
    Some(Decoded::Fields(fields))
}
