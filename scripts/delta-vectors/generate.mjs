// Generates decoder/tests/fixtures/delta/route-vectors.jsonl: DELTA (Jupiter v6 aggregator) route
// instructions encoded by Anchor's BorshInstructionCoder from idl/delta_aggregator.json, with the
// values our Rust decoder (decoder/src/delta/) must report. See README.md.
//
// Everything random comes from a seeded SplitMix64 stream: a rerun is byte-identical.

import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import anchor from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";
import BN from "bn.js";

const { BorshInstructionCoder } = anchor;

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../..");
const IDL_PATH = process.env.DELTA_IDL ?? resolve(REPO, "idl/delta_aggregator.json");
const OUT_PATH = process.env.DELTA_OUT ?? resolve(REPO, "decoder/tests/fixtures/delta/route-vectors.jsonl");
const SEED = 0xde17a5eedc0de5n;

// ---------------------------------------------------------------------------------------------
// Seeded PRNG (SplitMix64).

const MASK64 = (1n << 64n) - 1n;
let prngState = SEED;
function next64() {
  prngState = (prngState + 0x9e3779b97f4a7c15n) & MASK64;
  let z = prngState;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}
const int = (n) => Number(next64() % BigInt(n)); // 0..n-1
const range = (a, b) => a + int(b - a + 1); // a..b inclusive
const chance = (p) => int(1_000_000) < Math.round(p * 1_000_000);
const pick = (list) => list[int(list.length)];
function shuffle(list) {
  const out = list.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
function randBits(bits) {
  let v = 0n;
  for (let done = 0; done < bits; done += 64) v = (v << 64n) | next64();
  return v & ((1n << BigInt(bits)) - 1n);
}
/** Random unsigned integer of `bits` bits with edge values (0, 1, max) and varied magnitudes. */
function randUint(bits) {
  const max = (1n << BigInt(bits)) - 1n;
  const r = int(10);
  if (r === 0) return 0n;
  if (r === 1) return max;
  if (r === 2) return 1n;
  const width = range(1, bits);
  return randBits(width);
}
function randBytes(n) {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = int(256);
  return out;
}
function randomKey() {
  return new PublicKey(randBytes(32)).toBase58();
}

// ---------------------------------------------------------------------------------------------
// IDL, route instructions, program ids.

const idlText = readFileSync(IDL_PATH, "utf8");
const idl = JSON.parse(idlText);
const coder = new BorshInstructionCoder(idl);
const TYPES = new Map(idl.types.map((t) => [t.name, t]));
const SWAP_VARIANTS = TYPES.get("Swap").type.variants;
if (SWAP_VARIANTS.length !== 177) throw new Error(`expected 177 Swap variants, got ${SWAP_VARIANTS.length}`);

const AGGREGATOR_ID = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4";
const EVENT_AUTHORITY = "D8cy77BBepLMngZx6ZukaTff5hCt1HrWyKk3Hnd9oitf";
const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
if (idl.address !== AGGREGATOR_ID) throw new Error(`IDL address ${idl.address}`);

// decoder/src/dex/registry.rs `DexProgram::mainnet_id` (docs/dex-mapping.md, dex §1).
const PROGRAM_IDS = {
  ALPHA_FUN: "6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P",
  ALPHA_AMM: "pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA",
  BETA_CPMM: "CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C",
  BETA_LAUNCH_LAB: "LanMV9sAd7wArD4vJFi2qDdfnVhFxYSUg6eADduJ3uj",
  GAMMA_DBC: "dbcij3LWUppWqq96dh6gJWwBifmcGfLSB5D4DuSMaqN",
  GAMMA_DAMM_V2: "cpamdpZCGKUy5JxQXB4dcpGPiikHawvSWAd6mEn1sGG",
};
const SUPPORTED_IDS = new Set(Object.values(PROGRAM_IDS));

/** `wrapped_program` of decoder/src/delta/mod.rs (docs/dex-mapping.md, dex §10 table). */
function wrappedProgram(variantIndex, mode) {
  const exactOut = mode === "exact_out";
  if ([49, 90, 97, 112, 149, 152].includes(variantIndex)) return ["ALPHA_FUN", "buy"];
  if ([50, 91, 98, 113, 150, 153].includes(variantIndex)) return ["ALPHA_FUN", "sell"];
  if ([72, 92, 99, 147].includes(variantIndex)) return ["ALPHA_AMM", "buy"];
  if ([73, 93, 100, 148].includes(variantIndex)) return ["ALPHA_AMM", "sell"];
  if (variantIndex === 46) return ["BETA_CPMM", exactOut ? "swap_base_output" : "swap_base_input"];
  if (variantIndex === 81) return ["BETA_LAUNCH_LAB", exactOut ? "buy_exact_out" : "buy_exact_in"];
  if (variantIndex === 82) return ["BETA_LAUNCH_LAB", exactOut ? "sell_exact_out" : "sell_exact_in"];
  if (variantIndex === 78 || variantIndex === 88) return ["GAMMA_DBC", "swap"];
  if (variantIndex === 77 || variantIndex === 108) return ["GAMMA_DAMM_V2", "swap"];
  return null;
}
const SUPPORTED_VARIANTS = [...Array(177).keys()].filter((i) => wrappedProgram(i, "exact_in"));
const UNSUPPORTED_VARIANTS = [...Array(177).keys()].filter((i) => !wrappedProgram(i, "exact_in"));

const ROUTE_NAMES = [
  "route",
  "route_with_token_ledger",
  "exact_out_route",
  "shared_accounts_route",
  "shared_accounts_route_with_token_ledger",
  "shared_accounts_exact_out_route",
  "route_v2",
  "exact_out_route_v2",
  "shared_accounts_route_v2",
  "shared_accounts_exact_out_route_v2",
];
const ROUTES = new Map();
for (const name of ROUTE_NAMES) {
  const ix = idl.instructions.find((i) => i.name === name);
  if (!ix) throw new Error(`IDL lacks ${name}`);
  const disc = createHash("sha256").update(`global:${name}`).digest().subarray(0, 8);
  if (!disc.equals(Buffer.from(ix.discriminator))) throw new Error(`discriminator of ${name}`);
  const mode = name.includes("exact_out") ? "exact_out" : name.includes("token_ledger") ? "exact_in_token_ledger" : "exact_in";
  ROUTES.set(name, {
    name,
    ix,
    disc,
    mode,
    isV2: name.endsWith("_v2"),
    isShared: name.startsWith("shared_accounts"),
    named: ix.accounts,
  });
}

// ---------------------------------------------------------------------------------------------
// Random values of IDL types, with (a) the Anchor coder's JS value, (b) the reads our decoder
// makes over the encoding ("atoms": all-or-nothing takes, in order; `check` marks a read that
// validates its byte) and (c) the text `swap.rs` renders.

const counters = new Map();
function counter(key) {
  const c = counters.get(key) ?? 0;
  counters.set(key, c + 1);
  return c;
}
const offsets = new Map();
function offsetFor(key, n) {
  if (!offsets.has(key)) offsets.set(key, int(n));
  return offsets.get(key);
}

const coverage = { enumValues: new Map(), options: new Map(), lengths: new Map() };
function noteCoverage(map, key, value) {
  if (!map.has(key)) map.set(key, new Set());
  map.get(key).add(value);
}

const isUnitEnum = (td) => td.type.kind === "enum" && td.type.variants.every((v) => !v.fields || v.fields.length === 0);

/**
 * Generates a value of `ty`. Returns { value, atoms, text, quoted }. `text` is the Display text of
 * swap.rs; `quoted` says whether render_candidates quotes it inside a candidate (u64, unit enums).
 */
function gen(ty, path) {
  if (typeof ty === "string") {
    switch (ty) {
      case "bool": {
        const c = counter(path);
        const v = (c + offsetFor(path, 2)) % 2 === 1;
        noteCoverage(coverage.enumValues, path, String(v));
        return { value: v, atoms: [{ size: 1, check: "bool" }], text: String(v), quoted: false };
      }
      case "u8":
      case "u16":
      case "u32":
      case "u64":
      case "u128": {
        const bits = Number(ty.slice(1));
        const v = randUint(bits);
        const value = bits <= 32 ? Number(v) : new BN(v.toString());
        return { value, atoms: [{ size: bits / 8 }], text: v.toString(), quoted: ty === "u64" };
      }
      case "bytes": {
        const c = counter(path);
        const len = [0, range(1, 8), range(9, 48)][c % 3];
        noteCoverage(coverage.lengths, path, len === 0 ? "empty" : "non-empty");
        const b = randBytes(len);
        return { value: b, atoms: [{ size: 4 }, { size: len }], text: b.toString("hex"), quoted: false };
      }
      default:
        throw new Error(`type ${ty}`);
    }
  }
  if ("array" in ty) {
    const [elem, len] = ty.array;
    if (elem !== "u64" || len !== 5) throw new Error(`array ${JSON.stringify(ty)}`);
    const words = [...Array(5)].map(() => randUint(64));
    // Our decoder steps over the whole array with one 40-byte take.
    return { value: words.map((w) => new BN(w.toString())), atoms: [{ size: 40 }], text: `[${words.join(",")}]`, quoted: false };
  }
  if ("option" in ty) {
    const c = counter(path);
    const some = (c + offsetFor(path, 2)) % 2 === 1;
    noteCoverage(coverage.options, path, some ? "Some" : "None");
    if (!some) return { value: null, atoms: [{ size: 1, check: "option" }], text: "null", quoted: false };
    const inner = gen(ty.option, `${path}?`);
    return { value: inner.value, atoms: [{ size: 1, check: "option" }, ...inner.atoms], text: inner.text, quoted: false };
  }
  if ("vec" in ty) {
    const elemType = ty.vec;
    const c = counter(path);
    const count = [0, 1, range(2, 4)][c % 3];
    noteCoverage(coverage.lengths, path, count === 0 ? "empty" : "non-empty");
    const elems = [...Array(count)].map(() => gen(elemType, `${path}[]`));
    const isCandidate = "defined" in elemType && elemType.defined.name.startsWith("CandidateSwap");
    if (!isCandidate) throw new Error(`vec ${JSON.stringify(ty)}`);
    return {
      value: elems.map((e) => e.value),
      atoms: [{ size: 4 }, ...elems.flatMap((e) => e.atoms)],
      text: `[${elems.map((e) => e.text).join(",")}]`,
      quoted: false,
    };
  }
  if ("defined" in ty) {
    const name = ty.defined.name;
    const td = TYPES.get(name);
    if (name === "RemainingAccountsInfo") {
      const c = counter(path);
      const count = [0, 1, range(2, 4)][c % 3];
      noteCoverage(coverage.lengths, path, count === 0 ? "empty" : "non-empty");
      const slices = [...Array(count)].map(() => ({
        accounts_type: chance(0.8) ? range(0, 8) : int(256),
        length: chance(0.8) ? range(0, 6) : int(256),
      }));
      // Our decoder reads the u32 count, then steps over all slices with one take.
      return {
        value: { slices },
        atoms: [{ size: 4 }, { size: 2 * count }],
        text: `{"slices":[${slices.map((s) => `{"accounts_type":${s.accounts_type},"length":${s.length}}`).join(",")}]}`,
        quoted: false,
      };
    }
    if (td.type.kind === "enum") {
      const variants = td.type.variants;
      const key = `enum:${name}`;
      // Unit enums cycle per field; CandidateSwap cycles globally so every variant comes up.
      const index = isUnitEnum(td)
        ? (counter(path) + offsetFor(path, variants.length)) % variants.length
        : counter(key) % variants.length;
      const variant = variants[index];
      noteCoverage(coverage.enumValues, isUnitEnum(td) ? path : key, variant.name);
      const tag = { size: 1, check: "enum", variants: variants.length };
      if (isUnitEnum(td)) return { value: { [variant.name]: {} }, atoms: [tag], text: variant.name, quoted: true };
      const fields = (variant.fields ?? []).map((f) => [f.name, gen(f.type, `${name}.${variant.name}.${f.name}`)]);
      const inner = fields.map(([n, g]) => (g.quoted ? `"${n}":"${g.text}"` : `"${n}":${g.text}`)).join(",");
      return {
        value: { [variant.name]: Object.fromEntries(fields.map(([n, g]) => [n, g.value])) },
        atoms: [tag, ...fields.flatMap(([, g]) => g.atoms)],
        // Without the closing brace, so CandidateSwapWithBps can add its bps (render_candidates).
        open: `{"${variant.name}":{${inner}}`,
        text: `{"${variant.name}":{${inner}}}`,
        quoted: false,
      };
    }
    if (name === "CandidateSwapWithBps") {
      const cand = gen(td.type.fields[0].type, `${path}.candidate_swap`);
      const bps = chance(0.7) ? range(0, 10000) : Number(randUint(32));
      return {
        value: { candidate_swap: cand.value, bps },
        atoms: [...cand.atoms, { size: 4 }],
        text: `${cand.open},"bps":${bps}}`,
        quoted: false,
      };
    }
    throw new Error(`defined ${name}`);
  }
  throw new Error(`type ${JSON.stringify(ty)}`);
}

/** How many times each variant is drawn in the coverage routes (enough to cycle every value). */
function coverageOccurrences(variant) {
  const fields = variant.fields ?? [];
  let n = 3;
  for (const f of fields) {
    const t = f.type;
    if (typeof t === "object" && "defined" in t) {
      const td = TYPES.get(t.defined.name);
      if (td.type.kind === "enum") n = Math.max(n, td.type.variants.length);
    }
    if (typeof t === "object" && "option" in t && typeof t.option === "object") n = Math.max(n, 6);
    if (typeof t === "object" && "vec" in t) n = Math.max(n, 10);
  }
  return n;
}

/** A random payload of Swap variant `index`. */
function genSwap(index) {
  const variant = SWAP_VARIANTS[index];
  const fields = (variant.fields ?? []).map((f) => [f.name, gen(f.type, `${variant.name}.${f.name}`)]);
  return {
    variantIndex: index,
    name: variant.name,
    anchorValue: { [variant.name]: Object.fromEntries(fields.map(([n, g]) => [n, g.value])) },
    payloadAtoms: fields.flatMap(([, g]) => g.atoms),
    swapFields: Object.fromEntries(fields.map(([n, g]) => [n, g.text])),
  };
}

// ---------------------------------------------------------------------------------------------
// Route plans and arguments.

function composition(total, parts) {
  // `parts` positive integers summing to `total`.
  const cuts = new Set();
  while (cuts.size < parts - 1) cuts.add(range(1, total - 1));
  const sorted = [...cuts].sort((a, b) => a - b);
  const out = [];
  let prev = 0;
  for (const c of [...sorted, total]) {
    out.push(c - prev);
    prev = c;
  }
  return out;
}

/** Steps for the given swaps: hops of parallel splits (summing to 100 % / 10000 bps). */
function planSteps(swaps, isV2) {
  const n = swaps.length;
  if (n === 0) return [];
  const hops = composition(n, n === 1 ? 1 : range(1, n));
  const total = isV2 ? 10000 : 100;
  const steps = [];
  let k = 0;
  const circular = chance(0.2);
  hops.forEach((m, h) => {
    const splits = composition(total, m);
    for (let j = 0; j < m; j++) {
      const last = h === hops.length - 1;
      steps.push({
        swap: swaps[k++],
        split: splits[j],
        input_index: h,
        output_index: last && circular ? 0 : h + 1,
      });
    }
  });
  return steps;
}

function randomScalars(route) {
  const s = {};
  if (route.isShared) s.id = Number(randUint(8));
  s.in_amount = randUint(64);
  s.out_amount = randUint(64);
  s.quoted_in_amount = randUint(64);
  s.quoted_out_amount = randUint(64);
  s.slippage_bps = chance(0.6) ? range(0, 10000) : Number(randUint(16));
  s.platform_fee_bps = route.isV2 ? (chance(0.6) ? range(0, 10000) : Number(randUint(16))) : Number(randUint(8));
  s.positive_slippage_bps = chance(0.6) ? range(0, 10000) : Number(randUint(16));
  return s;
}

const ARG_SIZE = { u8: 1, u16: 2, u64: 8 };

/**
 * Encodes a route with Anchor and lays out, from construction, the decoder's reads over it:
 * every read with its offset, size, region ("arg" / "plan_count" / "tag" / "payload" / "tail")
 * and the step it belongs to.
 */
function encodeRoute(route, scalars, steps) {
  const args = {};
  const reads = [];
  let offset = 8;
  let planStart = -1;
  const stepLens = [];
  for (const arg of route.ix.args) {
    if (arg.name === "route_plan") {
      planStart = offset;
      args.route_plan = steps.map((s) => ({
        swap: s.swap.anchorValue,
        ...(route.isV2 ? { bps: s.split } : { percent: s.split }),
        input_index: s.input_index,
        output_index: s.output_index,
      }));
      reads.push({ offset, size: 4, region: "plan_count" });
      offset += 4;
      steps.forEach((s, k) => {
        const start = offset;
        reads.push({ offset, size: 1, region: "tag", step: k });
        offset += 1;
        for (const a of s.swap.payloadAtoms) {
          reads.push({ offset, size: a.size, region: "payload", step: k, check: a.check, variants: a.variants });
          offset += a.size;
        }
        for (const size of [route.isV2 ? 2 : 1, 1, 1]) {
          reads.push({ offset, size, region: "tail", step: k });
          offset += size;
        }
        stepLens.push(offset - start);
      });
    } else {
      const t = arg.type;
      const v = scalars[arg.name];
      args[arg.name] = t === "u64" ? new BN(v.toString()) : v;
      reads.push({ offset, size: ARG_SIZE[t], region: "arg", name: arg.name });
      offset += ARG_SIZE[t];
    }
  }
  const data = coder.encode(route.name, args);
  if (data.length !== offset) throw new Error(`${route.name}: Anchor encoded ${data.length} bytes, layout says ${offset}`);
  if (!data.subarray(0, 8).equals(route.disc)) throw new Error("discriminator");
  // Round trip through Anchor's decoder.
  const decoded = coder.decode(data);
  if (!decoded || decoded.name !== route.name || !coder.encode(decoded.name, decoded.data).equals(data)) {
    throw new Error(`${route.name}: Anchor round trip failed`);
  }
  return { data, reads, planStart, stepLens };
}

// ---------------------------------------------------------------------------------------------
// Expected decoder output, from construction: walk the decoder's reads over the (possibly
// mutated / truncated) data; the first read that fails stops parsing.

function expectedRoute(route, scalars, steps, enc, data) {
  const exp = {
    id: null,
    in_amount: null,
    out_amount: null,
    quoted_in_amount: null,
    quoted_out_amount: null,
    slippage_bps: null,
    platform_fee_bps: null,
    positive_slippage_bps: null,
  };
  const lastReadOfStep = new Map();
  for (const r of enc.reads) if (r.step !== undefined) lastReadOfStep.set(r.step, r);
  let declared = 0; // the plan's u32 count as read (0 when unreadable)
  let declaredRead = false;
  let parsed = 0;
  let planEnd = null; // where plan reading stopped (absolute offset)
  let error = null;
  for (const r of enc.reads) {
    const inStep = r.step !== undefined;
    if (inStep && r.step >= declared) continue; // steps past the declared count are never read
    if (r.region === "arg" && declaredRead && declared !== steps.length) {
      throw new Error("a changed step count is only generated for v2 plans (nothing follows the plan)");
    }
    const end = r.offset + r.size;
    if (end > data.length) {
      // All-or-nothing take: nothing of this read is consumed.
      error = r.region === "payload" ? "swap_payload" : "route_argument";
      if (inStep) planEnd = r.offset;
      break;
    }
    if (r.region === "tag" && data[r.offset] >= SWAP_VARIANTS.length) {
      error = "unknown_swap_variant"; // the tag byte is consumed
      planEnd = end;
      break;
    }
    if (r.check) {
      const b = data[r.offset];
      if (r.check === "enum" ? b >= r.variants : b > 1) {
        error = "swap_payload"; // the bad byte is consumed
        planEnd = end;
        break;
      }
    }
    if (r.region === "arg") {
      const v = readUint(data, r.offset, r.size);
      exp[r.name] = r.name === "id" ? Number(v) : v.toString();
    } else if (r.region === "plan_count") {
      declared = Number(readUint(data, r.offset, 4));
      declaredRead = true;
      planEnd = end;
    } else {
      planEnd = end;
      if (lastReadOfStep.get(r.step) === r) parsed = r.step + 1;
    }
  }
  if (error === null && declared > steps.length) {
    // The count promises more steps than encoded: the next step's tag read finds no byte.
    if (planEnd !== data.length) throw new Error("raised step count must leave the plan at the end of the data");
    error = "route_argument";
  }
  const planBytesLen = planEnd === null ? 0 : planEnd - enc.planStart;
  return { exp, declared, parsed, planBytesLen, error };
}

function readUint(data, offset, size) {
  let v = 0n;
  for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(data[offset + i]);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Accounts: named accounts, then one block per leg (program id first).

/**
 * Lays out the instruction's accounts. `legPlans[k]` = { program: "static" | "alt",
 * programKey, fillers, extraKeys } for each step k (also steps the decoder will not parse).
 * Returns account_indices, static_keys, and per-step block starts (by construction).
 */
function layoutAccounts(route, legPlans, opts = {}) {
  const refs = []; // { static: key } | { alt: id }
  let altIds = 0;
  const newAlt = () => ({ alt: altIds++ });
  const userKeys = [...Array(6)].map(() => randomKey());
  const named = route.named.map((acc) => {
    if (acc.address) return { static: acc.address };
    if (acc.name === "program") return { static: AGGREGATOR_ID };
    if (acc.optional && chance(0.4)) return { static: AGGREGATOR_ID };
    if (acc.name.endsWith("token_program") || acc.name === "token_2022_program") {
      if (chance(0.25)) return newAlt();
      return { static: chance(0.7) ? TOKEN_PROGRAM : TOKEN_2022_PROGRAM };
    }
    if (acc.signer) return { static: userKeys[0] };
    if (chance(0.2)) return newAlt();
    return { static: pick(userKeys) };
  });
  refs.push(...named);
  const blockStarts = [];
  const altByKey = new Map();
  for (const leg of legPlans) {
    blockStarts.push(refs.length - route.named.length);
    if (leg.program === "alt") {
      // The same program loaded twice from a table reuses its table slot.
      if (!altByKey.has(leg.programKey)) altByKey.set(leg.programKey, newAlt());
      refs.push(altByKey.get(leg.programKey));
    } else {
      refs.push({ static: leg.programKey });
    }
    for (const f of leg.fillers) refs.push("alt" in f ? newAlt() : f);
  }
  let accountRefs = refs;
  if (opts.truncateTo !== undefined) accountRefs = refs.slice(0, opts.truncateTo);

  // Static keys: fee payer first, the rest in a shuffled order, the aggregator always present.
  const statics = [];
  const seen = new Set();
  const addStatic = (k) => {
    if (!seen.has(k)) {
      seen.add(k);
      statics.push(k);
    }
  };
  const payer = userKeys[0];
  const others = shuffle([...new Set([...refs.filter((r) => "static" in r).map((r) => r.static), AGGREGATOR_ID, ...(opts.extraStatic ?? [])])].filter((k) => k !== payer));
  addStatic(payer);
  others.forEach(addStatic);
  const staticIndex = new Map(statics.map((k, i) => [k, i]));
  const altCount = altIds;
  const altOrder = shuffle([...Array(altCount).keys()]);
  const altIndex = (id) => statics.length + altOrder[id];
  if (statics.length + altCount > 256) throw new Error("too many accounts");
  const indices = accountRefs.map((r) => ("static" in r ? staticIndex.get(r.static) : altIndex(r.alt)));
  return { indices, staticKeys: statics, blockStarts, altAccounts: altCount };
}

/** Filler accounts of a leg block: user keys, fresh keys, the aggregator placeholder, table slots. */
function fillers(n, pool) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = int(10);
    if (r < 3) out.push({ static: randomKey() });
    else if (r < 5) out.push({ static: pick(pool) });
    else if (r < 6) out.push({ static: AGGREGATOR_ID });
    else out.push({ alt: "filler" });
  }
  return out;
}

// The decoder's leg rule (decoder/src/delta/mod.rs `RouteCall::legs`), applied to a layout.
// `declared`: the plan's declared step count (steps past the parsed ones may lie in the block).
function legsByRule(route, parsedSteps, declared, indices, staticKeys) {
  const named = route.named.length;
  const namedMissing = indices.length < named;
  const remaining = indices.slice(Math.min(named, indices.length));
  const find = (from, pid) => {
    for (let i = from; i < remaining.length; i++) {
      const idx = remaining[i];
      if (idx < staticKeys.length && staticKeys[idx] === pid) return i;
    }
    return -1;
  };
  const legs = [];
  let searchFrom = 0;
  parsedSteps.forEach((step, k) => {
    const w = wrappedProgram(step.swap.variantIndex, route.mode);
    if (!w) return;
    const leg = { step_index: k, wrapped_program: w[0], logical_name: w[1], location: "named_accounts_missing", account_indices: [], end_certain: false };
    if (namedMissing) return legs.push(leg);
    const start = find(searchFrom, PROGRAM_IDS[w[0]]);
    if (start < 0) {
      leg.location = "program_id_not_found";
      return legs.push(leg);
    }
    searchFrom = start + 1;
    // The next supported leg bounds the block. The end is uncertain when an unsupported leg lies
    // in between, when the next leg is of the same program (this leg's own `program` account may
    // be taken for its start), when the next leg's id is not found, or when there is no next
    // parsed supported leg but steps after the parsed ones were declared.
    let end = remaining.length;
    let endCertain = true;
    let bounded = false;
    for (const later of parsedSteps.slice(k + 1)) {
      const w2 = wrappedProgram(later.swap.variantIndex, route.mode);
      if (!w2) {
        endCertain = false;
        continue;
      }
      bounded = true;
      if (w2[0] === w[0]) endCertain = false;
      const next = find(start + 1, PROGRAM_IDS[w2[0]]);
      if (next >= 0) end = next;
      else endCertain = false;
      break;
    }
    if (!bounded && parsedSteps.length < declared) endCertain = false;
    leg.location = "located";
    leg.account_indices = remaining.slice(start, end);
    leg.end_certain = endCertain;
    legs.push(leg);
  });
  return legs;
}

/** What the legs are by construction, for layouts where the rule cannot be misled. */
function legsByConstruction(route, steps, legPlans, layout) {
  const remaining = layout.indices.slice(route.named.length);
  const supported = steps.map((s) => wrappedProgram(s.swap.variantIndex, route.mode));
  const legs = [];
  steps.forEach((s, k) => {
    const w = supported[k];
    if (!w) return;
    if (legPlans[k].program === "alt") {
      legs.push({ step_index: k, wrapped_program: w[0], logical_name: w[1], location: "program_id_not_found", account_indices: [], end_certain: false });
      return;
    }
    let end = remaining.length;
    let endCertain = true;
    for (let j = k + 1; j < steps.length; j++) {
      if (!supported[j]) {
        endCertain = false;
        continue;
      }
      // A next leg of the same program: the rule cannot rule out this leg's own `program` account.
      if (supported[j][0] === w[0]) endCertain = false;
      if (legPlans[j].program === "alt") endCertain = false;
      else end = layout.blockStarts[j];
      break;
    }
    legs.push({
      step_index: k,
      wrapped_program: w[0],
      logical_name: w[1],
      location: "located",
      account_indices: remaining.slice(layout.blockStarts[k], end),
      end_certain: endCertain,
    });
  });
  return legs;
}

// ---------------------------------------------------------------------------------------------
// Cases.

const lines = [];
const caseCounts = new Map();
const ixCounts = new Map();
const variantCounts = new Array(177).fill(0);
const errorCounts = new Map();
let constructionChecked = 0;

function legPlansFor(route, steps, opts = {}) {
  const pool = [randomKey(), randomKey(), randomKey()];
  return steps.map((s, k) => {
    const w = wrappedProgram(s.swap.variantIndex, route.mode);
    const nFill = range(opts.minFill ?? 0, opts.maxFill ?? 5);
    let program = "static";
    let programKey;
    if (w) {
      programKey = PROGRAM_IDS[w[0]];
      if (opts.altSupported?.includes(k)) program = "alt";
    } else {
      programKey = randomKey();
      if (chance(opts.altUnsupported ?? 0.3)) program = "alt";
    }
    return { program, programKey, fillers: fillers(nFill, pool) };
  });
}

/**
 * Builds one line. `mutate(data, enc)` may return new data (truncated / patched).
 * `clean`: the layout cannot mislead the leg rule, so check the rule against construction.
 */
function emit(caseKind, route, steps, { scalars, legPlans, layoutOpts, mutate, clean = false } = {}) {
  scalars ??= randomScalars(route);
  legPlans ??= legPlansFor(route, steps);
  const enc = encodeRoute(route, scalars, steps);
  let data = enc.data;
  if (mutate) data = mutate(Buffer.from(data), enc) ?? data;
  const { exp, declared, parsed, planBytesLen, error } = expectedRoute(route, scalars, steps, enc, data);
  const layout = layoutAccounts(route, legPlans, layoutOpts);
  const parsedSteps = steps.slice(0, parsed);
  const legs = legsByRule(route, parsedSteps, declared, layout.indices, layout.staticKeys);
  if (clean) {
    // Construction knows every step; a clean layout must have all of them parsed.
    if (parsed !== steps.length || declared !== steps.length) throw new Error(`clean case ${caseKind} with unparsed steps`);
    const byConstruction = legsByConstruction(route, steps, legPlans, layout);
    if (JSON.stringify(byConstruction) !== JSON.stringify(legs)) {
      throw new Error(`leg rule disagrees with construction in ${caseKind}: ${JSON.stringify(legs)} vs ${JSON.stringify(byConstruction)}`);
    }
    constructionChecked++;
  }
  let singleHop = { input: null, output: null };
  if (declared === 1 && parsed === 1) {
    if (route.mode === "exact_in") singleHop = { input: exp.in_amount, output: exp.quoted_out_amount };
    else if (route.mode === "exact_out") singleHop = { input: exp.quoted_in_amount, output: exp.out_amount };
    else singleHop = { input: null, output: exp.quoted_out_amount };
  }
  const n = (caseCounts.get(caseKind) ?? 0) + 1;
  caseCounts.set(caseKind, n);
  ixCounts.set(route.name, (ixCounts.get(route.name) ?? 0) + 1);
  errorCounts.set(String(error), (errorCounts.get(String(error)) ?? 0) + 1);
  for (const s of steps) variantCounts[s.swap.variantIndex]++;
  const line = {
    id: `delta.${caseKind}.${String(n).padStart(3, "0")}`,
    case: caseKind,
    route_ix_name: route.name,
    data_hex: data.toString("hex"),
    account_count: layout.indices.length,
    account_indices: layout.indices,
    static_keys: layout.staticKeys,
    expected: {
      instruction_name: route.name,
      mode: route.mode,
      is_v2: route.isV2,
      ...exp,
      declared_step_count: declared,
      parsed_step_count: parsed,
      plan_bytes_len: planBytesLen,
      error,
      steps: parsedSteps.map((s) => ({
        variant: s.swap.name,
        variant_index: s.swap.variantIndex,
        ...(route.isV2 ? { split_bps: s.split } : { split_percent: s.split }),
        input_index: s.input_index,
        output_index: s.output_index,
        swap_fields: s.swap.swapFields,
      })),
      single_hop: singleHop,
      legs,
    },
  };
  lines.push(JSON.stringify(line));
  return line;
}

const routeList = [...ROUTES.values()];
const routeAt = (i) => routeList[i % routeList.length];

// 1. Variant coverage: every Swap variant several times (cycling enum values, Option None/Some,
//    empty / non-empty vecs and bytes, every CandidateSwap variant), packed into routes of 1–4
//    steps over all ten route instructions.
{
  const draws = [];
  SWAP_VARIANTS.forEach((v, i) => {
    for (let j = 0; j < coverageOccurrences(v); j++) draws.push(i);
  });
  const order = shuffle(draws);
  let r = 0;
  for (let i = 0; i < order.length; ) {
    const n = Math.min(range(1, 4), order.length - i);
    const swaps = order.slice(i, i + n).map(genSwap);
    i += n;
    const route = routeAt(r++);
    const steps = planSteps(swaps, route.isV2);
    emit("variant_coverage", route, steps, { clean: true });
  }
}

// 2. Every route instruction, several single-step and multi-step routes with supported legs.
for (let rep = 0; rep < 4; rep++) {
  for (const route of routeList) {
    const n = rep === 0 ? 1 : range(1, 4);
    const swaps = [...Array(n)].map(() => genSwap(chance(0.6) ? pick(SUPPORTED_VARIANTS) : pick(UNSUPPORTED_VARIANTS)));
    emit("route_basic", route, planSteps(swaps, route.isV2), { clean: true });
  }
}

// 3. Account layouts.
// 3a. Consecutive supported legs, program ids static (includes two legs of the same program).
for (let i = 0; i < 20; i++) {
  const route = routeAt(i);
  const n = range(2, 4);
  let swaps = [...Array(n)].map(() => genSwap(pick(SUPPORTED_VARIANTS)));
  if (i % 3 === 0) {
    const same = [49, 50, 90, 91, 152, 153, 72, 73, 92, 93, 81, 82, 77, 108, 78, 88];
    const a = pick(same);
    const program = wrappedProgram(a, "exact_in")[0];
    const b = pick(same.filter((v) => wrappedProgram(v, "exact_in")[0] === program));
    swaps = [genSwap(a), genSwap(b), ...swaps.slice(2)];
  }
  emit("legs_consecutive_supported", route, planSteps(swaps, route.isV2), { clean: true });
}
// 3b. A supported leg followed by unsupported ones (end_certain false), and unsupported before.
for (let i = 0; i < 16; i++) {
  const route = routeAt(i + 3);
  const pattern = [
    ["S", "U"],
    ["S", "U", "S"],
    ["U", "S", "U"],
    ["S", "U", "U", "S"],
    ["U", "S"],
    ["U", "U", "S", "U"],
  ][i % 6];
  const swaps = pattern.map((p) => genSwap(pick(p === "S" ? SUPPORTED_VARIANTS : UNSUPPORTED_VARIANTS)));
  emit("legs_supported_then_unsupported", route, planSteps(swaps, route.isV2), { clean: true });
}
// 3c. Supported legs whose program id sits in a lookup table (program_id_not_found).
for (let i = 0; i < 16; i++) {
  const route = routeAt(i + 5);
  const n = range(1, 4);
  // Different programs per step, so an ALT leg cannot latch onto a later static leg.
  const programs = shuffle(Object.keys(PROGRAM_IDS));
  const swaps = [...Array(n)].map((_, k) => {
    if (k > 0 && chance(0.25)) return genSwap(pick(UNSUPPORTED_VARIANTS));
    return genSwap(pick(SUPPORTED_VARIANTS.filter((v) => wrappedProgram(v, "exact_in")[0] === programs[k])));
  });
  const supportedSteps = swaps.map((s, k) => (wrappedProgram(s.variantIndex, route.mode) ? k : -1)).filter((k) => k >= 0);
  const alt = supportedSteps.filter((k, j) => j === 0 || chance(0.5));
  const steps = planSteps(swaps, route.isV2);
  emit("legs_lookup_program_id", route, steps, { legPlans: legPlansFor(route, steps, { altSupported: alt }), clean: true });
}
// 3d. Fewer accounts than the route's named accounts.
for (let i = 0; i < 12; i++) {
  const route = routeAt(i + 7);
  const n = range(1, 3);
  const swaps = [...Array(n)].map((_, k) => genSwap(k === 0 || chance(0.6) ? pick(SUPPORTED_VARIANTS) : pick(UNSUPPORTED_VARIANTS)));
  emit("legs_named_accounts_missing", route, planSteps(swaps, route.isV2), {
    layoutOpts: { truncateTo: range(0, route.named.length - 1) },
  });
}
// 3e. Exactly the named accounts (no leg blocks) and routes with no supported leg.
for (let i = 0; i < 10; i++) {
  const route = routeAt(i);
  if (i % 2 === 0) {
    const swaps = [...Array(range(1, 3))].map(() => genSwap(pick(SUPPORTED_VARIANTS)));
    emit("legs_no_remaining_accounts", route, planSteps(swaps, route.isV2), {
      layoutOpts: { truncateTo: route.named.length, extraStatic: Object.values(PROGRAM_IDS).slice(0, range(0, 6)) },
    });
  } else {
    const swaps = [...Array(range(1, 4))].map(() => genSwap(pick(UNSUPPORTED_VARIANTS)));
    emit("legs_unsupported_only", route, planSteps(swaps, route.isV2), { clean: true });
  }
}
// 3f. Layouts that mislead the documented rule (first static match wins): a leg's own program id
//     repeated inside its block (as Anchor programs' `program` account), a supported program id
//     inside an unsupported leg's block, a lookup-table leg before a static leg of the same program.
//     Expected values follow the rule, not the construction.
for (let i = 0; i < 12; i++) {
  const route = routeAt(i + 2);
  const kind = i % 3;
  let swaps;
  let legPlans;
  if (kind === 0) {
    const a = pick(SUPPORTED_VARIANTS);
    const program = wrappedProgram(a, "exact_in")[0];
    const b = pick(SUPPORTED_VARIANTS.filter((v) => wrappedProgram(v, "exact_in")[0] === program));
    swaps = [genSwap(a), genSwap(b)];
    const steps = planSteps(swaps, route.isV2);
    legPlans = legPlansFor(route, steps, { minFill: 2, maxFill: 5 });
    legPlans[0].fillers.splice(range(0, legPlans[0].fillers.length), 0, { static: PROGRAM_IDS[program] });
    emit("legs_program_id_repeated", route, steps, { legPlans });
  } else if (kind === 1) {
    const b = pick(SUPPORTED_VARIANTS);
    const program = wrappedProgram(b, "exact_in")[0];
    swaps = [genSwap(pick(UNSUPPORTED_VARIANTS)), genSwap(b)];
    const steps = planSteps(swaps, route.isV2);
    legPlans = legPlansFor(route, steps, { minFill: 2, maxFill: 5, altUnsupported: 0 });
    legPlans[0].fillers.splice(range(0, legPlans[0].fillers.length), 0, { static: PROGRAM_IDS[program] });
    emit("legs_program_id_repeated", route, steps, { legPlans });
  } else {
    const a = pick(SUPPORTED_VARIANTS);
    const program = wrappedProgram(a, "exact_in")[0];
    const b = pick(SUPPORTED_VARIANTS.filter((v) => wrappedProgram(v, "exact_in")[0] === program));
    swaps = [genSwap(a), genSwap(pick(UNSUPPORTED_VARIANTS)), genSwap(b)].slice(0, chance(0.5) ? 3 : 2);
    if (swaps.length === 2) swaps[1] = genSwap(b);
    const steps = planSteps(swaps, route.isV2);
    legPlans = legPlansFor(route, steps, { altSupported: [0] });
    emit("legs_lookup_then_static_same_program", route, steps, { legPlans });
  }
}

// 4. Malformed data.
function randomRouteSwaps(minSteps, maxSteps, predicate) {
  const n = range(minSteps, maxSteps);
  return [...Array(n)].map(() => genSwap(chance(0.5) ? pick(SUPPORTED_VARIANTS) : pick(UNSUPPORTED_VARIANTS)));
}
// 4a. Unknown Swap variant index (177..255) at step k.
for (let i = 0; i < 30; i++) {
  const route = routeAt(i);
  const swaps = randomRouteSwaps(1, 4);
  const steps = planSteps(swaps, route.isV2);
  const k = int(steps.length);
  const bad = i < 2 ? [177, 255][i] : range(177, 255);
  emit("malformed_unknown_variant", route, steps, {
    mutate: (data, enc) => {
      const tag = enc.reads.find((r) => r.region === "tag" && r.step === k);
      data[tag.offset] = bad;
      return data;
    },
  });
}
// Variants with a payload read that can be cut.
const PAYLOAD_VARIANTS = SWAP_VARIANTS.map((v, i) => i).filter((i) => (SWAP_VARIANTS[i].fields ?? []).length > 0);
// 4b. Data cut inside a step's payload (swap_payload).
for (let i = 0; i < 40; i++) {
  const route = routeAt(i);
  let steps;
  let k;
  let target;
  for (;;) {
    const swaps = randomRouteSwaps(1, 4);
    k = int(swaps.length);
    swaps[k] = genSwap(pick(PAYLOAD_VARIANTS));
    steps = planSteps(swaps, route.isV2);
    // Reads of positive size inside step k's payload.
    target = steps[k].swap.payloadAtoms.some((a) => a.size > 0);
    if (target) break;
  }
  emit("malformed_truncated_payload", route, steps, {
    mutate: (data, enc) => {
      const reads = enc.reads.filter((r) => r.region === "payload" && r.step === k && r.size > 0);
      const r = pick(reads);
      // Cut at the read's start or inside it.
      return data.subarray(0, r.offset + int(r.size));
    },
  });
}
// 4c. Data cut outside a payload: shared id, v2 scalars, the plan count, a step's tag or
//     split/indexes, the v1 amounts after the plan, or just after the discriminator (route_argument).
for (let i = 0; i < 40; i++) {
  const route = routeAt(i);
  const steps = planSteps(randomRouteSwaps(1, 3), route.isV2);
  emit("malformed_truncated_argument", route, steps, {
    mutate: (data, enc) => {
      const reads = enc.reads.filter((r) => r.region !== "payload" && r.size > 0);
      const regions = [...new Set(reads.map((r) => r.region))];
      const region = regions[i % regions.length];
      const r = pick(reads.filter((x) => x.region === region));
      return data.subarray(0, r.offset + int(r.size));
    },
  });
}
// 4d. Invalid bool byte, Option tag or enum index inside a payload (swap_payload).
function emitInvalid(caseKind, check, variantsWith, count) {
  for (let i = 0; i < count; i++) {
    const route = routeAt(i + 1);
    let steps;
    let k;
    for (;;) {
      const swaps = randomRouteSwaps(1, 3);
      k = int(swaps.length);
      swaps[k] = genSwap(pick(variantsWith));
      if (swaps[k].payloadAtoms.some((a) => a.check === check)) {
        steps = planSteps(swaps, route.isV2);
        break;
      }
    }
    emit(caseKind, route, steps, {
      mutate: (data, enc) => {
        const r = pick(enc.reads.filter((x) => x.region === "payload" && x.step === k && x.check === check));
        const lo = check === "enum" ? r.variants : 2;
        data[r.offset] = [lo, 255, range(lo, 255)][i % 3];
        return data;
      },
    });
  }
}
const fieldTypeHas = (ty, pred) => {
  if (pred(ty)) return true;
  if (typeof ty !== "object") return false;
  if ("option" in ty) return fieldTypeHas(ty.option, pred);
  if ("vec" in ty) return fieldTypeHas(ty.vec, pred);
  if ("defined" in ty) {
    const td = TYPES.get(ty.defined.name);
    const fields = td.type.kind === "struct" ? td.type.fields : td.type.variants.flatMap((v) => v.fields ?? []);
    return fields.some((f) => fieldTypeHas(f.type, pred));
  }
  return false;
};
const variantsWhere = (pred) => PAYLOAD_VARIANTS.filter((i) => SWAP_VARIANTS[i].fields.some((f) => fieldTypeHas(f.type, pred)));
emitInvalid("malformed_invalid_bool", "bool", variantsWhere((t) => t === "bool"), 20);
emitInvalid("malformed_invalid_option_tag", "option", variantsWhere((t) => typeof t === "object" && "option" in t), 16);
emitInvalid("malformed_invalid_enum", "enum", variantsWhere((t) => typeof t === "object" && "defined" in t && TYPES.get(t.defined.name).type.kind === "enum"), 16);
// 4e. v2 plan count raised (the next step's tag is missing) or lowered (trailing steps ignored).
for (let i = 0; i < 12; i++) {
  const route = routeList.filter((r) => r.isV2)[i % 4];
  const steps = planSteps(randomRouteSwaps(i % 2 === 0 ? 0 : 2, 4), route.isV2);
  emit("plan_count_mismatch", route, steps, {
    mutate: (data, enc) => {
      const r = enc.reads.find((x) => x.region === "plan_count");
      const declared = i === 0 ? 0xffffffff : i % 2 === 0 ? steps.length + range(1, 3) : range(0, steps.length - 1);
      data.writeUInt32LE(declared, r.offset);
      return data;
    },
  });
}
// 4f. Nothing but the discriminator (every argument unreadable).
for (const route of routeList) {
  const steps = planSteps(randomRouteSwaps(1, 2), route.isV2);
  emit("malformed_discriminator_only", route, steps, { mutate: (data) => data.subarray(0, 8) });
}
// 4g. Trailing bytes after the last argument (ignored), and empty plans.
for (let i = 0; i < 10; i++) {
  const route = routeAt(i);
  const steps = planSteps(randomRouteSwaps(1, 3), route.isV2);
  emit("trailing_bytes", route, steps, { mutate: (data) => Buffer.concat([data, randBytes(range(1, 12))]) });
}
for (let i = 0; i < 10; i++) {
  const route = routeAt(i);
  emit("empty_plan", route, [], { clean: true });
}

// ---------------------------------------------------------------------------------------------
// Checks and output.

const missing = variantCounts.map((c, i) => [i, c]).filter(([, c]) => c < 3);
if (missing.length) throw new Error(`variants drawn fewer than 3 times: ${JSON.stringify(missing)}`);
const candidateNames = TYPES.get("CandidateSwap").type.variants.map((v) => v.name);
const candSeen = coverage.enumValues.get("enum:CandidateSwap") ?? new Set();
const candMissing = candidateNames.filter((n) => !candSeen.has(n));
if (candMissing.length) throw new Error(`CandidateSwap variants never drawn: ${candMissing}`);
for (const [path, values] of coverage.options) {
  if (values.size < 2) throw new Error(`option ${path} only ${[...values]}`);
}
for (const [path, values] of coverage.lengths) {
  if (values.size < 2 && !path.includes("[]")) throw new Error(`length ${path} only ${[...values]}`);
}
for (const v of SWAP_VARIANTS) {
  for (const f of v.fields ?? []) {
    const t = f.type;
    if (typeof t === "object" && "defined" in t && isUnitEnum(TYPES.get(t.defined.name))) {
      const seen = coverage.enumValues.get(`${v.name}.${f.name}`) ?? new Set();
      const all = TYPES.get(t.defined.name).type.variants.map((x) => x.name);
      if (all.some((n) => !seen.has(n))) throw new Error(`${v.name}.${f.name}: enum values ${[...seen]}`);
    }
    if (t === "bool") {
      const seen = coverage.enumValues.get(`${v.name}.${f.name}`) ?? new Set();
      if (seen.size < 2) throw new Error(`${v.name}.${f.name}: bool values ${[...seen]}`);
    }
  }
}

const output = lines.join("\n") + "\n";
mkdirSync(dirname(OUT_PATH), { recursive: true });
writeFileSync(OUT_PATH, output);
const summary = {
  output: OUT_PATH,
  bytes: Buffer.byteLength(output),
  sha256: createHash("sha256").update(output).digest("hex"),
  lines: lines.length,
  idl_sha256: createHash("sha256").update(idlText).digest("hex"),
  versions: {
    "@coral-xyz/anchor": JSON.parse(readFileSync(resolve(HERE, "node_modules/@coral-xyz/anchor/package.json"), "utf8")).version,
    "@solana/web3.js": JSON.parse(readFileSync(resolve(HERE, "node_modules/@solana/web3.js/package.json"), "utf8")).version,
    "bn.js": JSON.parse(readFileSync(resolve(HERE, "node_modules/bn.js/package.json"), "utf8")).version,
  },
  cases: Object.fromEntries(caseCounts),
  route_instructions: Object.fromEntries(ixCounts),
  errors: Object.fromEntries(errorCounts),
  variant_draws: { min: Math.min(...variantCounts), max: Math.max(...variantCounts), total: variantCounts.reduce((a, b) => a + b, 0) },
  candidate_swap_variants: candidateNames.length,
  legs_checked_against_construction: constructionChecked,
};
console.log(JSON.stringify(summary, null, 2));
