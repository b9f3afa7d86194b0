// Generates the DEX instruction decoder test vectors:
//   decoder/tests/fixtures/dex/idl-vectors.jsonl  (Anchor BorshInstructionCoder over the official IDLs)
//   decoder/tests/fixtures/dex/sdk-vectors.jsonl  (offline builders of the official SDKs)
// Deterministic: every random choice comes from a seeded PRNG (SEED below), Math.random included,
// so a rerun reproduces both files byte for byte. No network access.
//
// Expected values follow docs/dex-mapping.md (the project's mapping decisions), including its
// decoding rule: only the *required* arguments (the ones the proto message carries, every argument
// before them on the wire, swap2's swap_mode, the whole params struct behind pool_config / config)
// are read and checked; arguments after the last required one are not read, so they may be missing,
// truncated or malformed and the instruction still decodes with the same args.
// Usage: cd scripts/dex-vectors && npm ci && node generate.mjs

import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const IDL_DIR = process.env.DEX_IDL_DIR || path.resolve(HERE, "../../../shared/idl");
const OUT_DIR = process.env.DEX_OUT_DIR || path.resolve(HERE, "../../decoder/tests/fixtures/dex");
const SEED = 0x5eed_d3c0_de12n; // fixed seed: do not change without regenerating and committing

// ---------------------------------------------------------------------------------------------
// Seeded PRNG (SplitMix64 over BigInt). Independent streams for the IDL and SDK parts, and one for
// Math.random (the Pump SDKs pick fee recipients with Math.random; only account keys depend on it).
// ---------------------------------------------------------------------------------------------
const M64 = (1n << 64n) - 1n;
class Rng {
  constructor(seed) {
    this.s = BigInt.asUintN(64, BigInt(seed));
  }
  next64() {
    this.s = (this.s + 0x9e3779b97f4a7c15n) & M64;
    let z = this.s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
    return z ^ (z >> 31n);
  }
  float() {
    return Number(this.next64() >> 11n) / 2 ** 53;
  }
  int(n) {
    return Number(this.next64() % BigInt(n));
  }
  pick(a) {
    return a[this.int(a.length)];
  }
  bytes(n) {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = Number(this.next64() & 0xffn);
    return b;
  }
  bits(nbits) {
    // uniform integer with exactly up to nbits bits
    let v = 0n;
    for (let got = 0; got < nbits; got += 64) v = (v << 64n) | this.next64();
    return v & ((1n << BigInt(nbits)) - 1n);
  }
}
const mathRng = new Rng(SEED ^ 0x4d415448n);
Math.random = () => mathRng.float();

// Libraries (CommonJS entry points: the ESM build of @pump-fun/pump-sdk's dependency
// @pump-fun/agent-payments-sdk does not load under Node 20).
const { BorshInstructionCoder } = require("@coral-xyz/anchor");
const BN = require("bn.js");
const { PublicKey } = require("@solana/web3.js");
const TOKEN_PROGRAM_ID = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
const TOKEN_2022_PROGRAM_ID = new PublicKey("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const isUtf8 = (b) => {
  try {
    strictUtf8.decode(b);
    return true;
  } catch {
    return false;
  }
};

function pkgVersion(name) {
  const p = path.join(HERE, "node_modules", ...name.split("/"), "package.json");
  return JSON.parse(fs.readFileSync(p, "utf8")).version;
}

// ---------------------------------------------------------------------------------------------
// Programs (docs/dex-mapping.md, dex §1)
// ---------------------------------------------------------------------------------------------
const PROGRAMS = {
  ALPHA_FUN: { idl: "alpha_fun.json", id: "6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P" },
  ALPHA_AMM: { idl: "alpha_amm.json", id: "pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA" },
  BETA_CPMM: { idl: "beta_cpmm.json", id: "CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C" },
  BETA_LAUNCH_LAB: { idl: "beta_launch_lab.json", id: "LanMV9sAd7wArD4vJFi2qDdfnVhFxYSUg6eADduJ3uj" },
  GAMMA_DBC: { idl: "gamma_dbc.json", id: "dbcij3LWUppWqq96dh6gJWwBifmcGfLSB5D4DuSMaqN" },
  GAMMA_DAMM_V2: { idl: "gamma_damm_v2.json", id: "cpamdpZCGKUy5JxQXB4dcpGPiikHawvSWAd6mEn1sGG" },
};
const IDLS = {};
const IDL_SHA256 = {};
const CODERS = {};
for (const [prog, p] of Object.entries(PROGRAMS)) {
  const raw = fs.readFileSync(path.join(IDL_DIR, p.idl));
  IDL_SHA256[p.idl] = createHash("sha256").update(raw).digest("hex");
  const idl = JSON.parse(raw.toString("utf8"));
  if (idl.address !== p.id) throw new Error(`${prog}: IDL address ${idl.address} != spec ${p.id}`);
  IDLS[prog] = idl;
  CODERS[prog] = new BorshInstructionCoder(idl);
}

const globalDisc = (name) => createHash("sha256").update(`global:${name}`).digest().subarray(0, 8);
function idlIx(prog, name) {
  const ix = IDLS[prog].instructions.find((i) => i.name === name);
  if (!ix) throw new Error(`${prog}: no instruction ${name}`);
  const d = Buffer.from(ix.discriminator);
  if (!d.equals(globalDisc(name))) throw new Error(`${prog}.${name}: IDL discriminator != sha256(global:name)`);
  return ix;
}
function typeDef(prog, name) {
  const t = IDLS[prog].types.find((x) => x.name === name);
  if (!t) throw new Error(`${prog}: no type ${name}`);
  return t.type;
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------
const U64_MAX = M64;
const U128_MAX = (1n << 128n) - 1n;
const EDGE = {
  u8: [0n, 1n, 127n, 128n, 255n],
  u16: [0n, 1n, 255n, 256n, 65535n],
  u32: [0n, 1n, 65535n, 65536n, 4294967295n],
  u64: [0n, 1n, 4294967295n, 4294967296n, (1n << 53n) + 1n, (1n << 63n) - 1n, 1n << 63n, U64_MAX - 1n, U64_MAX],
  u128: [0n, 1n, U64_MAX, U64_MAX + 1n, 1n << 64n, 1n << 127n, U128_MAX - 1n, U128_MAX],
};
const BITS = { u8: 8, u16: 16, u32: 32, u64: 64, u128: 128 };

// Text pieces: ASCII, 2-, 3- and 4-byte characters, combining marks, ZWJ sequences, flags,
// bidi/BOM/noncharacters, the largest code point, control characters.
const PIECES = {
  ascii: ["a", "b", "Z", "q", "7", "0", "_", "-", ".", " ", "$", "X", "ipfs://", "https://", "/", "PUMP", "moon"],
  two: ["é", "ñ", "ø", "ß", "Ω", "ж", "ع", "Ñ", "Æ", "ç"],
  three: ["日", "本", "語", "中", "文", "글", "ह", "ก", "€", "∞", "√", "‰", "ｶ"],
  four: ["🚀", "💎", "🔥", "🌕", "𝕏", "😀", "𐍈", "🦄", "𠜎"],
  combining: ["e\u0301", "a\u0308", "n\u0303", "Z\u0336\u0335", "\u0915\u094d\u0937", "o\u0328\u0301", "A\u030a", "\u05e9\u05c1"],
  seq: ["👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "🇯🇵", "👍🏽", "1\ufe0f\u20e3"],
  special: ["\ufeff", "\u202e", "\uffff", "\u{10ffff}", "\u00a0", "\u2028", "\t", "\n", "\u0000", "\u007f"],
};
const PIECE_KINDS = Object.keys(PIECES);
const utf8len = (s) => Buffer.byteLength(s, "utf8");
function randString(rng, maxBytes) {
  let s = "";
  const target = rng.int(maxBytes + 1);
  for (let guard = 0; guard < 1000; guard++) {
    const kind = rng.float() < 0.35 ? "ascii" : rng.pick(PIECE_KINDS);
    const piece = rng.pick(PIECES[kind]);
    if (utf8len(s) + utf8len(piece) > target) break;
    s += piece;
  }
  return s;
}
function longString(rng, bytes) {
  // a long string mixing every kind of piece, exactly filled up to `bytes` with ASCII
  let s = "";
  let k = 0;
  for (let guard = 0; guard < 10000; guard++) {
    const kind = PIECE_KINDS[k++ % PIECE_KINDS.length];
    const piece = rng.pick(PIECES[kind]);
    if (utf8len(s) + utf8len(piece) > bytes) break;
    s += piece;
  }
  while (utf8len(s) < bytes) s += "x";
  return s;
}

// gen(type, ctx) -> {js (value for the Anchor coder), json (value for idl_args)}
// ctx: {prog, mode: "min"|"max"|"random"|"short", caseIdx, rng, field, strBudget}
function gen(type, ctx) {
  const { rng, mode } = ctx;
  if (typeof type === "string") {
    if (type in BITS) {
      let v;
      if (ctx.field === "swap_mode") {
        v = mode === "min" ? 0n : mode === "max" ? 2n : BigInt(ctx.caseIdx % 3);
      } else if (mode === "min") v = 0n;
      else if (mode === "max") v = (1n << BigInt(BITS[type])) - 1n;
      else if (rng.float() < 0.25) v = rng.pick(EDGE[type]);
      else v = rng.bits(1 + rng.int(BITS[type]));
      const js = type === "u64" || type === "u128" ? new BN(v.toString()) : Number(v);
      return { js, json: v.toString(), big: v };
    }
    if (type === "bool") {
      const v = mode === "min" ? false : mode === "max" ? true : rng.float() < 0.5;
      return { js: v, json: v };
    }
    if (type === "string") {
      const budget = ctx.strBudget ?? 200;
      let s;
      if (mode === "min") s = "";
      else if (mode === "max") s = longString(rng, budget);
      else if (mode === "short") s = randString(rng, 6);
      else s = randString(rng, Math.min(budget, 120));
      return { js: s, json: s };
    }
    if (type === "pubkey") {
      const b = mode === "min" ? Buffer.alloc(32) : mode === "max" ? Buffer.alloc(32, 0xff) : rng.bytes(32);
      const pk = new PublicKey(b);
      return { js: pk, json: pk.toBase58() };
    }
    throw new Error(`type ${type} not handled`);
  }
  if ("option" in type) {
    const some = mode === "min" ? false : mode === "max" ? true : ctx.caseIdx % 2 === 0;
    if (!some) return { js: null, json: null };
    return gen(type.option, ctx);
  }
  if ("vec" in type) {
    const n = mode === "min" ? 0 : mode === "max" ? 4 : rng.int(4);
    const items = [];
    for (let i = 0; i < n; i++) items.push(gen(type.vec, { ...ctx, caseIdx: ctx.caseIdx + i }));
    return { js: items.map((x) => x.js), json: items.map((x) => x.json) };
  }
  if ("array" in type) {
    const [inner, len] = type.array;
    if (inner !== "u8") throw new Error("only [u8; N] arrays handled");
    const b = mode === "min" ? Buffer.alloc(len) : mode === "max" ? Buffer.alloc(len, 0xff) : rng.bytes(len);
    return { js: [...b], json: b.toString("hex") };
  }
  if ("defined" in type) {
    const def = typeDef(ctx.prog, type.defined.name);
    if (def.kind === "struct") {
      if (def.fields.length && typeof def.fields[0] !== "object") {
        // tuple struct (OptionBool / OptionU64): array
        const items = def.fields.map((t) => gen(t, ctx));
        return { js: items.map((x) => x.js), json: items.map((x) => x.json) };
      }
      const js = {};
      const json = {};
      for (const f of def.fields) {
        const v = gen(f.type, { ...ctx, field: f.name });
        js[f.name] = v.js;
        json[f.name] = v.json;
      }
      return { js, json };
    }
    if (def.kind === "enum") {
      const n = def.variants.length;
      const vi = mode === "min" ? 0 : mode === "max" ? n - 1 : ctx.caseIdx % n;
      const variant = def.variants[vi];
      const js = {};
      const json = {};
      for (const f of variant.fields ?? []) {
        const v = gen(f.type, { ...ctx, field: f.name });
        js[f.name] = v.js;
        json[f.name] = v.json;
      }
      return { js: { [variant.name]: js }, json: { [variant.name]: json } };
    }
  }
  throw new Error(`type ${JSON.stringify(type)} not handled`);
}

// ---------------------------------------------------------------------------------------------
// Mapping (docs/dex-mapping.md): real instruction -> logical name, oneof member, proto args
// Each map function gets the idl_args JSON form (integers as decimal strings).
// ---------------------------------------------------------------------------------------------
// Borsh sizes of LaunchLab MintParams / CurveParams and DAMM v2 PoolFeeParameters (idl_args form)
const mintParamsLen = (mp) => 1 + 12 + utf8len(mp.name) + utf8len(mp.symbol) + utf8len(mp.uri);
const curveLen = (c) => 1 + ("Constant" in c ? 25 : 17);
const poolFeesLen = (pf) => 27 + 2 + 1 + (pf.dynamic_fee === null ? 1 : 33);
const sat64 = (s) => (BigInt(s) > U64_MAX ? U64_MAX.toString() : s);
const paramsHex = (ctx) => ctx.data.subarray(8, 8 + ctx.paramsLen).toString("hex");
function swap2Args(p) {
  const mode = Number(p.swap_mode);
  if (mode === 0 || mode === 1) return { amount_in: p.amount_0, minimum_amount_out: p.amount_1 };
  if (mode === 2) return { amount_in: "0", minimum_amount_out: "0" };
  return null; // decode failure
}
const T = { u64: "uint64", u32: "uint32", s: "string", b: "bytes" };
const TYPES = {
  alpha_fun_create: { name: T.s, symbol: T.s, uri: T.s },
  alpha_fun_buy: { amount: T.u64, max_sol_cost: T.u64 },
  alpha_fun_sell: { amount: T.u64, min_sol_output: T.u64 },
  alpha_amm_buy: { base_amount_out: T.u64, max_quote_amount_in: T.u64 },
  alpha_amm_sell: { base_amount_in: T.u64, min_quote_amount_out: T.u64 },
  alpha_amm_create_pool: { index: T.u32, base_amount: T.u64, quote_amount: T.u64 },
  alpha_amm_deposit: { lp_token_amount_out: T.u64, max_base_amount_in: T.u64, max_quote_amount_in: T.u64 },
  alpha_amm_withdraw: { lp_token_amount_in: T.u64, min_base_amount_out: T.u64, min_quote_amount_out: T.u64 },
  cpmm_swap_base_input: { amount_in: T.u64, minimum_amount_out: T.u64 },
  cpmm_swap_base_output: { max_amount_in: T.u64, amount_out: T.u64 },
  cpmm_create_pool: { init_amount_0: T.u64, init_amount_1: T.u64, open_time: T.u64 },
  launch_lab_create: { name: T.s, symbol: T.s, uri: T.s, decimals: T.u32, total_supply: T.u64 },
  launch_lab_buy_exact_in: { amount_in: T.u64, minimum_amount_out: T.u64, share_fee_bps: T.u64 },
  launch_lab_buy_exact_out: { amount_out: T.u64, maximum_amount_in: T.u64, share_fee_bps: T.u64 },
  launch_lab_sell_exact_in: { amount_in: T.u64, minimum_amount_out: T.u64, share_fee_bps: T.u64 },
  launch_lab_sell_exact_out: { amount_out: T.u64, maximum_amount_in: T.u64, share_fee_bps: T.u64 },
  launch_lab_migrate: {},
  dbc_swap: { amount_in: T.u64, minimum_amount_out: T.u64 },
  dbc_initialize: { pool_config: T.b },
  dbc_migrate: {},
  damm_v2_swap: { amount_in: T.u64, minimum_amount_out: T.u64 },
  damm_v2_create_pool: { config: T.b },
  damm_v2_add_liquidity: { max_token_a_amount: T.u64, max_token_b_amount: T.u64, min_lp_amount: T.u64 },
  damm_v2_remove_liquidity: { lp_amount: T.u64, min_token_a_amount: T.u64, min_token_b_amount: T.u64 },
};
const curveSupply = (c) => Object.values(c)[0].data.supply;

// notRead: the trailing top-level args that are not read (docs/dex-mapping.md "Rules for every
// program": everything after the last required argument). They may be missing, truncated or
// malformed. reqEnd(idlArgs) overrides the end of the required bytes when it falls inside an
// argument (LaunchLab: curve_param is read up to its first field, supply).
// Without notRead every argument is required.
const IX = {
  ALPHA_FUN: {
    create: { name: "create", member: "alpha_fun_create", map: (a) => ({ name: a.name, symbol: a.symbol, uri: a.uri }), notRead: ["creator"], strBudget: 180 },
    create_v2: {
      name: "create",
      member: "alpha_fun_create",
      map: (a) => ({ name: a.name, symbol: a.symbol, uri: a.uri }),
      notRead: ["creator", "is_mayhem_mode", "is_cashback_enabled", "creator_fee_bps", "is_holder_reward"],
      strBudget: 180,
    },
    buy: { name: "buy", member: "alpha_fun_buy", map: (a) => ({ amount: a.amount, max_sol_cost: a.max_sol_cost }), notRead: ["track_volume"] },
    buy_v2: { name: "buy", member: "alpha_fun_buy", map: (a) => ({ amount: a.amount, max_sol_cost: a.max_sol_cost }) },
    buy_exact_sol_in: {
      name: "buy",
      member: "alpha_fun_buy",
      map: (a) => ({ amount: a.min_tokens_out, max_sol_cost: a.spendable_sol_in }),
      notRead: ["track_volume"],
    },
    buy_exact_quote_in_v2: { name: "buy", member: "alpha_fun_buy", map: (a) => ({ amount: a.min_tokens_out, max_sol_cost: a.spendable_quote_in }) },
    sell: { name: "sell", member: "alpha_fun_sell", map: (a) => ({ amount: a.amount, min_sol_output: a.min_sol_output }) },
    sell_v2: { name: "sell", member: "alpha_fun_sell", map: (a) => ({ amount: a.amount, min_sol_output: a.min_sol_output }) },
  },
  ALPHA_AMM: {
    buy: {
      name: "buy",
      member: "alpha_amm_buy",
      map: (a) => ({ base_amount_out: a.base_amount_out, max_quote_amount_in: a.max_quote_amount_in }),
      notRead: ["track_volume"],
    },
    buy_exact_quote_in: {
      name: "buy",
      member: "alpha_amm_buy",
      map: (a) => ({ base_amount_out: a.min_base_amount_out, max_quote_amount_in: a.spendable_quote_in }),
      notRead: ["track_volume"],
    },
    sell: { name: "sell", member: "alpha_amm_sell", map: (a) => ({ base_amount_in: a.base_amount_in, min_quote_amount_out: a.min_quote_amount_out }) },
    create_pool: {
      name: "create_pool",
      member: "alpha_amm_create_pool",
      map: (a) => ({ index: a.index, base_amount: a.base_amount_in, quote_amount: a.quote_amount_in }),
      notRead: ["coin_creator", "is_mayhem_mode", "is_cashback_coin", "creator_fee_bps", "can_edit_creator_fee", "is_holder_reward"],
    },
    deposit: {
      name: "deposit",
      member: "alpha_amm_deposit",
      map: (a) => ({ lp_token_amount_out: a.lp_token_amount_out, max_base_amount_in: a.max_base_amount_in, max_quote_amount_in: a.max_quote_amount_in }),
    },
    withdraw: {
      name: "withdraw",
      member: "alpha_amm_withdraw",
      map: (a) => ({ lp_token_amount_in: a.lp_token_amount_in, min_base_amount_out: a.min_base_amount_out, min_quote_amount_out: a.min_quote_amount_out }),
    },
  },
  BETA_CPMM: {
    swap_base_input: { name: "swap_base_input", member: "cpmm_swap_base_input", map: (a) => ({ amount_in: a.amount_in, minimum_amount_out: a.minimum_amount_out }) },
    swap_base_output: { name: "swap_base_output", member: "cpmm_swap_base_output", map: (a) => ({ max_amount_in: a.max_amount_in, amount_out: a.amount_out }) },
    initialize: {
      name: "create_pool",
      member: "cpmm_create_pool",
      map: (a) => ({ init_amount_0: a.init_amount_0, init_amount_1: a.init_amount_1, open_time: a.open_time }),
    },
    // not in the stored IDL: hand-encoded per docs/dex-mapping.md, dex §5 (see encodeInitializeWithPermission)
    initialize_with_permission: {
      name: "create_pool",
      member: "cpmm_create_pool",
      map: (a) => ({ init_amount_0: a.init_amount_0, init_amount_1: a.init_amount_1, open_time: a.open_time }),
      notRead: ["creator_fee_on"],
      specOnly: true,
    },
  },
  BETA_LAUNCH_LAB: Object.fromEntries([
    ...["initialize", "initialize_v2", "initialize_with_token_2022"].map((n) => [
      n,
      {
        name: "create",
        member: "launch_lab_create",
        map: (a) => ({
          name: a.base_mint_param.name,
          symbol: a.base_mint_param.symbol,
          uri: a.base_mint_param.uri,
          decimals: a.base_mint_param.decimals,
          total_supply: curveSupply(a.curve_param),
        }),
        // required: base_mint_param, the curve_param variant index and its first field (supply)
        notRead: { initialize: ["vesting_param"], initialize_v2: ["vesting_param", "amm_fee_on"], initialize_with_token_2022: ["vesting_param", "amm_fee_on", "transfer_fee_extension_param"] }[n],
        reqEnd: (a) => 8 + mintParamsLen(a.base_mint_param) + 1 + 8,
        strBudget: 180,
      },
    ]),
    ["buy_exact_in", { name: "buy_exact_in", member: "launch_lab_buy_exact_in", map: (a) => ({ amount_in: a.amount_in, minimum_amount_out: a.minimum_amount_out, share_fee_bps: a.share_fee_rate }) }],
    ["buy_exact_out", { name: "buy_exact_out", member: "launch_lab_buy_exact_out", map: (a) => ({ amount_out: a.amount_out, maximum_amount_in: a.maximum_amount_in, share_fee_bps: a.share_fee_rate }) }],
    ["sell_exact_in", { name: "sell_exact_in", member: "launch_lab_sell_exact_in", map: (a) => ({ amount_in: a.amount_in, minimum_amount_out: a.minimum_amount_out, share_fee_bps: a.share_fee_rate }) }],
    ["sell_exact_out", { name: "sell_exact_out", member: "launch_lab_sell_exact_out", map: (a) => ({ amount_out: a.amount_out, maximum_amount_in: a.maximum_amount_in, share_fee_bps: a.share_fee_rate }) }],
    ["migrate_to_amm", { name: "migrate", member: "launch_lab_migrate", map: () => ({}), notRead: ["base_lot_size", "quote_lot_size", "market_vault_signer_nonce"] }],
    ["migrate_to_cpswap", { name: "migrate", member: "launch_lab_migrate", map: () => ({}) }],
  ]),
  GAMMA_DBC: {
    swap: { name: "swap", member: "dbc_swap", map: (a) => ({ amount_in: a.params.amount_in, minimum_amount_out: a.params.minimum_amount_out }) },
    swap2: { name: "swap", member: "dbc_swap", map: (a) => swap2Args(a.params) },
    swap2_with_transfer_hook: { name: "swap", member: "dbc_swap", map: (a) => swap2Args(a.params), notRead: ["transfer_hook_accounts_info"] },
    initialize_virtual_pool_with_spl_token: { name: "initialize", member: "dbc_initialize", map: (a, c) => ({ pool_config: paramsHex(c) }), strBudget: 180 },
    initialize_virtual_pool_with_token2022: { name: "initialize", member: "dbc_initialize", map: (a, c) => ({ pool_config: paramsHex(c) }), strBudget: 180 },
    initialize_virtual_pool_with_token2022_transfer_hook: { name: "initialize", member: "dbc_initialize", map: (a, c) => ({ pool_config: paramsHex(c) }), strBudget: 180 },
    migration_damm_v2: { name: "migrate", member: "dbc_migrate", map: () => ({}) },
    migrate_meteora_damm: { skipped: true },
  },
  GAMMA_DAMM_V2: {
    swap: { name: "swap", member: "damm_v2_swap", map: (a) => ({ amount_in: a._params.amount_in, minimum_amount_out: a._params.minimum_amount_out }) },
    swap2: { name: "swap", member: "damm_v2_swap", map: (a) => swap2Args(a._params) },
    initialize_pool: { name: "create_pool", member: "damm_v2_create_pool", map: (a, c) => ({ config: paramsHex(c) }) },
    initialize_customizable_pool: { name: "create_pool", member: "damm_v2_create_pool", map: (a, c) => ({ config: paramsHex(c) }) },
    initialize_pool_with_dynamic_config: { name: "create_pool", member: "damm_v2_create_pool", map: (a, c) => ({ config: paramsHex(c) }) },
    add_liquidity: {
      name: "add_liquidity",
      member: "damm_v2_add_liquidity",
      map: (a) => ({
        max_token_a_amount: a.params.token_a_amount_threshold,
        max_token_b_amount: a.params.token_b_amount_threshold,
        min_lp_amount: sat64(a.params.liquidity_delta),
      }),
    },
    remove_liquidity: {
      name: "remove_liquidity",
      member: "damm_v2_remove_liquidity",
      map: (a) => ({
        lp_amount: sat64(a.params.liquidity_delta),
        min_token_a_amount: a.params.token_a_amount_threshold,
        min_token_b_amount: a.params.token_b_amount_threshold,
      }),
    },
    remove_all_liquidity: {
      name: "remove_liquidity",
      member: "damm_v2_remove_liquidity",
      map: (a) => ({ lp_amount: "0", min_token_a_amount: a.token_a_amount_threshold, min_token_b_amount: a.token_b_amount_threshold }),
    },
  },
};

function expectedFor(spec, idlArgs, encCtx) {
  if (spec.skipped) return { skipped: true };
  const args = spec.map(idlArgs, encCtx);
  if (args === null) return { error: true };
  const types = TYPES[spec.member];
  // field order = proto message order
  const ordered = {};
  const argTypes = {};
  for (const k of Object.keys(types)) {
    if (!(k in args)) throw new Error(`${spec.member}: missing ${k}`);
    ordered[k] = args[k];
    argTypes[k] = types[k];
  }
  if (Object.keys(args).length !== Object.keys(types).length) throw new Error(`${spec.member}: extra args`);
  return { instruction_name: spec.name, decoded_member: spec.member, args: ordered, arg_types: argTypes };
}

// ---------------------------------------------------------------------------------------------
// Encoding helpers
// ---------------------------------------------------------------------------------------------
const prefixCoders = new Map();
// Length of the encoding of the first k args (discriminator included), with the Anchor coder.
function prefixLen(prog, ixName, jsArgs, k) {
  const key = `${prog}.${ixName}.${k}`;
  let coder = prefixCoders.get(key);
  if (!coder) {
    const ix = idlIx(prog, ixName);
    const idl = { ...IDLS[prog], instructions: [{ ...ix, args: ix.args.slice(0, k) }] };
    coder = new BorshInstructionCoder(idl);
    prefixCoders.set(key, coder);
  }
  return coder.encode(ixName, jsArgs).length;
}

const CREATOR_FEE_ON = ["BothToken", "OnlyToken0", "OnlyToken1"];
// BETA_CPMM initialize_with_permission (docs/dex-mapping.md, dex §5): not in the stored IDL.
const DISC_INIT_WITH_PERMISSION = Buffer.from("3f37fe4131b25979", "hex");
if (!DISC_INIT_WITH_PERMISSION.equals(globalDisc("initialize_with_permission"))) throw new Error("initialize_with_permission discriminator");
function encodeInitializeWithPermission(a) {
  const b = Buffer.alloc(8 + 25);
  DISC_INIT_WITH_PERMISSION.copy(b, 0);
  b.writeBigUInt64LE(BigInt(a.init_amount_0), 8);
  b.writeBigUInt64LE(BigInt(a.init_amount_1), 16);
  b.writeBigUInt64LE(BigInt(a.open_time), 24);
  b.writeUInt8(CREATOR_FEE_ON.indexOf(Object.keys(a.creator_fee_on)[0]), 32);
  return b;
}
function genInitializeWithPermission(ctx) {
  const v = (f) => gen("u64", { ...ctx, field: f }).json;
  const n = CREATOR_FEE_ON.length;
  const vi = ctx.mode === "min" ? 0 : ctx.mode === "max" ? n - 1 : ctx.caseIdx % n;
  return { init_amount_0: v("init_amount_0"), init_amount_1: v("init_amount_1"), open_time: v("open_time"), creator_fee_on: { [CREATOR_FEE_ON[vi]]: {} } };
}

// ---------------------------------------------------------------------------------------------
// IDL vectors
// ---------------------------------------------------------------------------------------------
const CASES_PER_IX = 8;
const MODES = ["min", "max", "short", "random", "random", "random", "random", "random"];
const idlLines = [];
const counts = {}; // program -> ix -> case -> n
function count(prog, ix, kind) {
  counts[prog] ??= {};
  counts[prog][ix] ??= {};
  counts[prog][ix][kind] = (counts[prog][ix][kind] ?? 0) + 1;
}
function push(line) {
  idlLines.push(line);
  const row = { unknown_discriminator: "(unknown discriminators)", short_data: "(data shorter than 8 bytes)" }[line.case] ?? line.real_ix_name;
  count(line.program, row, line.case);
}
const hex = (b) => Buffer.from(b).toString("hex");

const rng = new Rng(SEED);
const valid = {}; // prog -> ix -> [{id, data, json, requiredEnd, paramsLen, spec}]

for (const prog of Object.keys(IX)) {
  valid[prog] = {};
  for (const [ixName, spec] of Object.entries(IX[prog])) {
    valid[prog][ixName] = [];
    // instructions without arguments have one possible encoding: a single case
    const nCases = !spec.specOnly && idlIx(prog, ixName).args.length === 0 ? 1 : CASES_PER_IX;
    for (let c = 0; c < nCases; c++) {
      const ctx = { prog, mode: MODES[c], caseIdx: c, rng, strBudget: spec.strBudget };
      let data;
      let json;
      let argNames;
      let argOffsets = []; // argOffsets[k]: offset of top-level arg k (argOffsets[nArgs] = data.length)
      if (spec.specOnly) {
        json = genInitializeWithPermission(ctx);
        data = encodeInitializeWithPermission(json);
        argNames = ["init_amount_0", "init_amount_1", "open_time", "creator_fee_on"];
        argOffsets = [8, 16, 24, 32, 33];
      } else {
        const ix = idlIx(prog, ixName);
        const js = {};
        json = {};
        for (const a of ix.args) {
          const v = gen(a.type, { ...ctx, field: a.name });
          js[a.name] = v.js;
          json[a.name] = v.json;
        }
        data = CODERS[prog].encode(ixName, js);
        if (!data.subarray(0, 8).equals(Buffer.from(ix.discriminator))) throw new Error("discriminator mismatch");
        // round trip through the Anchor decoder
        const dec = CODERS[prog].decode(data);
        if (!dec || dec.name !== ixName) throw new Error(`${prog}.${ixName}: decode round trip failed`);
        for (let k = 0; k <= ix.args.length; k++) argOffsets.push(prefixLen(prog, ixName, js, k));
        argNames = ix.args.map((a) => a.name);
      }
      if (argOffsets[argNames.length] !== data.length) throw new Error("offsets");
      // end of the required bytes (docs/dex-mapping.md): everything after it is not read
      const notRead = spec.notRead ?? [];
      const nReq = argNames.length - notRead.length;
      if (argNames.slice(nReq).join() !== notRead.join()) throw new Error(`${prog}.${ixName}: not-read args ${argNames.slice(nReq)}`);
      const requiredEnd = spec.reqEnd ? spec.reqEnd(json) : argOffsets[nReq];
      if (requiredEnd > argOffsets[nReq] || (nReq > 0 && requiredEnd <= argOffsets[nReq - 1]) || requiredEnd < 8) throw new Error(`${prog}.${ixName}: required end ${requiredEnd}`);
      const paramsLen = data.length - 8;
      const id = `idl.${prog.toLowerCase()}.${ixName}.${String(c).padStart(2, "0")}`;
      const encCtx = { data, paramsLen };
      const expected = expectedFor(spec, json, encCtx);
      const line = {
        id,
        case: spec.skipped ? "skipped_instruction" : "valid",
        program: prog,
        program_id: PROGRAMS[prog].id,
        real_ix_name: ixName,
        data_hex: hex(data),
        expected,
        idl_args: json,
      };
      if (spec.specOnly) line.spec_only = true;
      push(line);
      valid[prog][ixName].push({ id, data, json, requiredEnd, paramsLen, argNames, argOffsets, spec, expected });
    }
  }
}

// Cuts: the case each instruction's every-length cuts are made from ("short" strings), and the
// description of a cut at `len` after the last required byte (not read: same args as the valid line).
const truncSource = (cases) => cases[Math.min(2, cases.length - 1)];
function notReadCut(prog, ixName, v, len) {
  const n = v.argNames.length;
  let k = 0; // arg holding byte `len` (or the first missing arg when len is a boundary)
  while (k < n && v.argOffsets[k + 1] <= len) k++;
  const boundary = v.argOffsets[k] === len;
  const missing = v.argNames.slice(boundary ? k : k + 1);
  const where = boundary
    ? `data ends ${k === 0 ? "after the discriminator" : `after ${v.argNames[k - 1]}`}`
    : `inside ${v.argNames[k]} (${len - v.argOffsets[k]} of its ${v.argOffsets[k + 1] - v.argOffsets[k]} bytes)`;
  push({
    id: `${v.id}.trunc.${len}`,
    case: "truncated_not_read",
    program: prog,
    program_id: PROGRAMS[prog].id,
    real_ix_name: ixName,
    data_hex: hex(v.data.subarray(0, len)),
    expected: v.expected,
    ...(v.spec.specOnly ? { spec_only: true } : {}),
    derived_from: v.id,
    notes: `cut at ${len} of ${v.data.length} (${v.requiredEnd} required): ${where}${missing.length ? `; missing: ${missing.join(", ")}` : ""}`,
  });
}

// (a) truncated after the last required argument, at every top-level argument boundary (older
// generations of the instruction, e.g. ALPHA_FUN create without creator, buy without track_volume)
// and at the end of the required bytes, on valid cases 00, 01, 03, 04, 05 (every enum variant and
// both Option states occur among them; case 02 is the every-length source of (c))
const BOUNDARY_CUT_CASES = [0, 1, 3, 4, 5];
for (const prog of Object.keys(valid)) {
  for (const [ixName, cases] of Object.entries(valid[prog])) {
    for (const v of BOUNDARY_CUT_CASES.map((i) => cases[i]).filter(Boolean)) {
      if (v.spec.skipped || v === truncSource(cases)) continue;
      const lens = [...new Set([v.requiredEnd, ...v.argOffsets.filter((o) => o > v.requiredEnd)])].filter((l) => l < v.data.length).sort((x, y) => x - y);
      for (const len of lens) notReadCut(prog, ixName, v, len);
    }
  }
}

// (b) 1 and 10 extra trailing bytes (still decodes; pool_config/config exclude them)
for (const prog of Object.keys(valid)) {
  for (const [ixName, cases] of Object.entries(valid[prog])) {
    for (const ci of cases.length > 4 ? [1, 4] : [0]) {
      const v = cases[ci];
      for (const n of [1, 10]) {
        const extra = rng.bytes(n);
        extra[0] = n === 1 ? 0x02 : 0xff; // a byte that is never a valid bool / Option tag
        const data = Buffer.concat([v.data, extra]);
        push({
          id: `${v.id}.extra${n}`,
          case: v.spec.skipped ? "skipped_instruction" : "extra_trailing_bytes",
          program: prog,
          program_id: PROGRAMS[prog].id,
          real_ix_name: ixName,
          data_hex: hex(data),
          expected: v.expected, // computed from the data without the extra bytes
          idl_args: v.json,
          ...(v.spec.specOnly ? { spec_only: true } : {}),
          derived_from: v.id,
          notes: `${n} extra byte(s) after the last argument`,
        });
      }
    }
  }
}

// (c) every cut length from 8 to the end, on case 02 ("short" strings): inside the required
// bytes -> error; after them -> not read, same args
for (const prog of Object.keys(valid)) {
  for (const [ixName, cases] of Object.entries(valid[prog])) {
    const v = truncSource(cases);
    if (v.spec.skipped) continue;
    for (let len = 8; len < v.data.length; len++) {
      if (len >= v.requiredEnd) {
        notReadCut(prog, ixName, v, len);
        continue;
      }
      push({
        id: `${v.id}.trunc.${len}`,
        case: "truncated_required",
        program: prog,
        program_id: PROGRAMS[prog].id,
        real_ix_name: ixName,
        data_hex: hex(v.data.subarray(0, len)),
        expected: { error: true },
        ...(v.spec.specOnly ? { spec_only: true } : {}),
        derived_from: v.id,
        notes: `cut at ${len} of ${v.requiredEnd} required bytes (${v.data.length} in all)`,
      });
    }
  }
}

// (d) unknown discriminators per program (expected skipped): random, admin instructions of the same
// IDL, and discriminators of supported instructions of OTHER programs (dispatch is per program id).
const allDiscs = new Set();
for (const idl of Object.values(IDLS)) for (const ix of idl.instructions) allDiscs.add(hex(ix.discriminator));
allDiscs.add(hex(DISC_INIT_WITH_PERMISSION));
const UNKNOWN = {
  ALPHA_FUN: { admin: ["initialize", "set_params", "migrate", "extend_account"], cross: [["ALPHA_AMM", "create_pool"], ["ALPHA_AMM", "buy_exact_quote_in"], ["ALPHA_AMM", "deposit"]] },
  ALPHA_AMM: { admin: ["create_config", "disable", "extend_account"], cross: [["ALPHA_FUN", "create"], ["ALPHA_FUN", "buy_exact_sol_in"], ["ALPHA_FUN", "buy_v2"]] },
  BETA_CPMM: { admin: ["deposit", "withdraw", "create_amm_config"], cross: [["BETA_LAUNCH_LAB", "buy_exact_in"], ["GAMMA_DBC", "swap"], ["ALPHA_AMM", "buy"]] },
  BETA_LAUNCH_LAB: { admin: ["claim_vested_token", "create_config", "claim_platform_fee"], cross: [["BETA_CPMM", "swap_base_input"], ["GAMMA_DBC", "swap"], ["ALPHA_FUN", "sell"]] },
  GAMMA_DBC: { admin: ["create_config", "claim_trading_fee", "migrate_meteora_damm_lock_lp_token"], cross: [["GAMMA_DAMM_V2", "add_liquidity"], ["GAMMA_DAMM_V2", "initialize_pool"], ["BETA_LAUNCH_LAB", "migrate_to_cpswap"]] },
  GAMMA_DAMM_V2: { admin: ["create_position", "claim_position_fee", "lock_position"], cross: [["GAMMA_DBC", "migration_damm_v2"], ["GAMMA_DBC", "initialize_virtual_pool_with_spl_token"], ["GAMMA_DBC", "swap2_with_transfer_hook"]] },
};
for (const [prog, u] of Object.entries(UNKNOWN)) {
  const own = new Set(IDLS[prog].instructions.map((i) => hex(i.discriminator)));
  let k = 0;
  const emit = (disc, realName, notes) => {
    const tail = rng.bytes(rng.int(40));
    push({
      id: `idl.${prog.toLowerCase()}.unknown.${String(k++).padStart(2, "0")}`,
      case: "unknown_discriminator",
      program: prog,
      program_id: PROGRAMS[prog].id,
      real_ix_name: realName,
      data_hex: hex(Buffer.concat([disc, tail])),
      expected: { skipped: true },
      notes,
    });
  };
  for (let i = 0; i < 3; i++) {
    let d;
    do d = rng.bytes(8);
    while (allDiscs.has(hex(d)));
    emit(d, null, "random discriminator found in no IDL");
  }
  for (const name of u.admin) {
    const ix = idlIx(prog, name);
    if (IX[prog][name]) throw new Error(`${name} is mapped`);
    emit(Buffer.from(ix.discriminator), name, `${prog} instruction without a logical name in docs/dex-mapping.md`);
  }
  for (const [other, name] of u.cross) {
    const d = Buffer.from(idlIx(other, name).discriminator);
    if (own.has(hex(d))) throw new Error(`${prog} knows ${other}.${name}`);
    emit(d, null, `discriminator of ${other} ${name}, which ${prog} does not have`);
  }
}

// (e) swap2 with swap_mode outside 0..2 (decode failure)
for (const [prog, ixName] of [["GAMMA_DBC", "swap2"], ["GAMMA_DBC", "swap2_with_transfer_hook"], ["GAMMA_DAMM_V2", "swap2"]]) {
  for (const [ci, mode] of [[3, 3], [5, 4], [6, 255]]) {
    const v = valid[prog][ixName][ci];
    const data = Buffer.from(v.data);
    data[8 + 16] = mode; // SwapParameters2.swap_mode
    push({
      id: `${v.id}.swap_mode_${mode}`,
      case: "invalid_swap_mode",
      program: prog,
      program_id: PROGRAMS[prog].id,
      real_ix_name: ixName,
      data_hex: hex(data),
      expected: { error: true },
      derived_from: v.id,
      notes: `swap_mode ${mode}`,
    });
  }
}

// (f) invalid bool / Option tag / enum index; (h) length prefix past the end. Inside the required
// bytes: decode failure (case = the kind); after them: not read, same args (case malformed_not_read).
function mutate(prog, ixName, caseIdx, kind, offsetFn, value, notes, pred = () => true) {
  const cases = valid[prog][ixName];
  // first case at or after caseIdx satisfying pred
  let v = null;
  for (let i = 0; i < cases.length; i++) {
    const cand = cases[(caseIdx + i) % cases.length];
    if (pred(cand.json)) {
      v = cand;
      break;
    }
  }
  if (!v) throw new Error(`no case for ${prog}.${ixName} ${kind}`);
  const data = Buffer.from(v.data);
  const off = offsetFn(v);
  const size = typeof value === "number" ? 1 : value.length;
  if (off + size > v.data.length) throw new Error(`${prog}.${ixName} ${kind}: offset ${off} past the data`);
  const required = off < v.requiredEnd;
  if (required && off + size > v.requiredEnd) throw new Error(`${prog}.${ixName} ${kind}: straddles the required end`);
  if (typeof value === "number") data[off] = value;
  else value.copy(data, off);
  push({
    id: `${v.id}.${kind}.${off}`,
    case: required ? kind : "malformed_not_read",
    program: prog,
    program_id: PROGRAMS[prog].id,
    real_ix_name: ixName,
    data_hex: hex(data),
    expected: required ? { error: true } : v.expected,
    ...(v.spec.specOnly ? { spec_only: true } : {}),
    derived_from: v.id,
    notes: required ? notes : `${kind} at byte ${off}, after the ${v.requiredEnd} required bytes (not read): ${notes}`,
  });
}
const u32le = (n) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
// bool
mutate("ALPHA_FUN", "create_v2", 3, "invalid_bool", (v) => v.argOffsets[4], 2, "is_mayhem_mode = 2");
mutate("ALPHA_AMM", "create_pool", 4, "invalid_bool", (v) => v.argOffsets[4], 2, "is_mayhem_mode = 2");
mutate("ALPHA_AMM", "create_pool", 5, "invalid_bool", (v) => v.argOffsets[4], 255, "is_mayhem_mode = 255");
for (const ixn of ["initialize_customizable_pool", "initialize_pool_with_dynamic_config"]) {
  mutate("GAMMA_DAMM_V2", ixn, 3, "invalid_bool", (v) => 8 + poolFeesLen(v.json.params.pool_fees) + 32, 2, "params.has_alpha_vault = 2");
}
// OptionBool values of the trailing Pump args (not read)
mutate("ALPHA_FUN", "buy", 3, "invalid_bool", (v) => v.argOffsets[2], 2, "track_volume = 2");
mutate("ALPHA_FUN", "buy_exact_sol_in", 4, "invalid_bool", (v) => v.argOffsets[2], 255, "track_volume = 255");
mutate("ALPHA_FUN", "create_v2", 5, "invalid_bool", (v) => v.argOffsets[5], 2, "is_cashback_enabled = 2");
mutate("ALPHA_FUN", "create_v2", 6, "invalid_bool", (v) => v.argOffsets[7], 255, "is_holder_reward = 255");
mutate("ALPHA_AMM", "buy", 3, "invalid_bool", (v) => v.argOffsets[2], 2, "track_volume = 2");
mutate("ALPHA_AMM", "buy_exact_quote_in", 4, "invalid_bool", (v) => v.argOffsets[2], 3, "track_volume = 3");
mutate("ALPHA_AMM", "create_pool", 6, "invalid_bool", (v) => v.argOffsets[5], 2, "is_cashback_coin = 2");
mutate("ALPHA_AMM", "create_pool", 7, "invalid_bool", (v) => v.argOffsets[7], 255, "can_edit_creator_fee = 255");
// Option tag
mutate("GAMMA_DAMM_V2", "initialize_pool", 3, "invalid_option_tag", () => 8 + 32, 2, "params.activation_point tag = 2");
for (const ixn of ["initialize_customizable_pool", "initialize_pool_with_dynamic_config"]) {
  mutate("GAMMA_DAMM_V2", ixn, 4, "invalid_option_tag", () => 8 + 30, 2, "params.pool_fees.dynamic_fee tag = 2");
  mutate("GAMMA_DAMM_V2", ixn, 5, "invalid_option_tag", (v) => 8 + poolFeesLen(v.json.params.pool_fees) + 32 + 1 + 32 + 2, 2, "params.activation_point tag = 2");
}
mutate(
  "BETA_LAUNCH_LAB",
  "initialize_with_token_2022",
  3,
  "invalid_option_tag",
  (v) => 8 + mintParamsLen(v.json.base_mint_param) + curveLen(v.json.curve_param) + 24 + 1,
  2,
  "transfer_fee_extension_param tag = 2",
);
// enum index
for (const ixn of ["initialize", "initialize_v2", "initialize_with_token_2022"]) {
  mutate("BETA_LAUNCH_LAB", ixn, 4, "invalid_enum_index", (v) => 8 + mintParamsLen(v.json.base_mint_param), 3, "curve_param variant index 3 (3 variants)");
}
for (const ixn of ["initialize_v2", "initialize_with_token_2022"]) {
  mutate(
    "BETA_LAUNCH_LAB",
    ixn,
    5,
    "invalid_enum_index",
    (v) => 8 + mintParamsLen(v.json.base_mint_param) + curveLen(v.json.curve_param) + 24,
    2,
    "amm_fee_on variant index 2 (2 variants)",
  );
}
mutate("GAMMA_DBC", "swap2_with_transfer_hook", 3, "invalid_enum_index", () => 8 + 17 + 4, 2, "transfer_hook_accounts_info.slices[0].accounts_type = 2", (a) => a.transfer_hook_accounts_info.slices.length > 0);
mutate("BETA_CPMM", "initialize_with_permission", 3, "invalid_enum_index", () => 32, 3, "creator_fee_on variant index 3 (3 variants)");
mutate("BETA_CPMM", "initialize_with_permission", 6, "invalid_enum_index", () => 32, 255, "creator_fee_on variant index 255 (3 variants)");
mutate("BETA_LAUNCH_LAB", "initialize_v2", 6, "invalid_enum_index", (v) => 8 + mintParamsLen(v.json.base_mint_param), 255, "curve_param variant index 255 (3 variants)");
// length prefix past the end of the data
mutate("ALPHA_FUN", "create", 3, "length_past_end", () => 8, u32le(0xffffffff), "name length 0xffffffff");
mutate("ALPHA_FUN", "create_v2", 4, "length_past_end", (v) => 8 + 4 + utf8len(v.json.name), u32le(1000), "symbol length 1000");
mutate("BETA_LAUNCH_LAB", "initialize_v2", 3, "length_past_end", () => 9, u32le(0x7fffffff), "base_mint_param.name length 0x7fffffff");
mutate("GAMMA_DBC", "initialize_virtual_pool_with_spl_token", 3, "length_past_end", (v) => 8 + 4 + utf8len(v.json.params.name), u32le(0x10000), "params.symbol length 65536");
mutate("GAMMA_DBC", "swap2_with_transfer_hook", 4, "length_past_end", () => 8 + 17, u32le(1000), "transfer_hook_accounts_info.slices count 1000");

// (g) invalid UTF-8 inside a string argument (same length as the original string)
const BAD_UTF8 = [
  [Buffer.from([0x80]), "lone continuation byte 0x80"],
  [Buffer.from([0xc0, 0xaf]), "overlong encoding C0 AF"],
  [Buffer.from([0xed, 0xa0, 0x80]), "UTF-16 surrogate ED A0 80"],
  [Buffer.from([0xff]), "byte 0xFF"],
  [Buffer.from([0xf0, 0x9f, 0x98]), "4-byte sequence cut after 3 bytes"],
  [Buffer.from([0xf4, 0x90, 0x80, 0x80]), "code point above U+10FFFF"],
  [Buffer.from([0xc3, 0x28]), "2-byte lead followed by ASCII"],
  [Buffer.from([0xe6, 0x97]), "3-byte sequence cut at the end of the string"],
];
// string fields: [prog, ix, locate(json) -> [offset of first string byte, byte length], field name]
const STRING_FIELDS = [
  ["ALPHA_FUN", "create", (a) => [8 + 4, utf8len(a.name)], "name"],
  ["ALPHA_FUN", "create", (a) => [8 + 4 + utf8len(a.name) + 4, utf8len(a.symbol)], "symbol"],
  ["ALPHA_FUN", "create_v2", (a) => [8 + 4 + utf8len(a.name) + 4 + utf8len(a.symbol) + 4, utf8len(a.uri)], "uri"],
  ["ALPHA_FUN", "create_v2", (a) => [8 + 4, utf8len(a.name)], "name"],
  ["BETA_LAUNCH_LAB", "initialize", (a) => [9 + 4, utf8len(a.base_mint_param.name)], "base_mint_param.name"],
  ["BETA_LAUNCH_LAB", "initialize_v2", (a) => [9 + 4 + utf8len(a.base_mint_param.name) + 4, utf8len(a.base_mint_param.symbol)], "base_mint_param.symbol"],
  ["BETA_LAUNCH_LAB", "initialize_with_token_2022", (a) => [9 + 12 + utf8len(a.base_mint_param.name) + utf8len(a.base_mint_param.symbol), utf8len(a.base_mint_param.uri)], "base_mint_param.uri"],
  ["GAMMA_DBC", "initialize_virtual_pool_with_spl_token", (a) => [8 + 4, utf8len(a.params.name)], "params.name"],
  ["GAMMA_DBC", "initialize_virtual_pool_with_token2022", (a) => [8 + 8 + utf8len(a.params.name), utf8len(a.params.symbol)], "params.symbol"],
  ["GAMMA_DBC", "initialize_virtual_pool_with_token2022_transfer_hook", (a) => [8 + 12 + utf8len(a.params.name) + utf8len(a.params.symbol), utf8len(a.params.uri)], "params.uri"],
];
{
  let bi = 0;
  for (const [prog, ixName, locate, field] of STRING_FIELDS) {
    for (let rep = 0; rep < 2; rep++) {
      const [bad, what] = BAD_UTF8[bi++ % BAD_UTF8.length];
      // a case whose string is long enough to hold the bad sequence
      const v = valid[prog][ixName].find((c, i) => i >= 3 + rep && locate(c.json)[1] >= bad.length + 2) ?? valid[prog][ixName].find((c) => locate(c.json)[1] >= bad.length + 2);
      const [off, len] = locate(v.json);
      if (!isUtf8(v.data.subarray(off, off + len))) throw new Error("original string not UTF-8");
      // "cut at the end" cases go at the end of the string, the others as near the middle as
      // possible where the result is invalid UTF-8 (checked with a strict decoder)
      const atEnd = what.includes("end of the string");
      const starts = atEnd ? [len - bad.length] : Array.from({ length: len - bad.length + 1 }, (_, j) => j).sort((x, y) => Math.abs(x - (len - bad.length) / 2) - Math.abs(y - (len - bad.length) / 2));
      let data = null;
      let at = -1;
      for (const st of starts) {
        const d = Buffer.from(v.data);
        bad.copy(d, off + st);
        if (!isUtf8(d.subarray(off, off + len))) {
          data = d;
          at = off + st;
          break;
        }
      }
      if (!data) throw new Error(`could not make ${field} invalid`);
      push({
        id: `${v.id}.invalid_utf8.${field}.${rep}`,
        case: "invalid_utf8",
        program: prog,
        program_id: PROGRAMS[prog].id,
        real_ix_name: ixName,
        data_hex: hex(data),
        expected: { error: true },
        derived_from: v.id,
        notes: `${field}: ${what} at byte ${at - off} of ${len}`,
      });
    }
  }
}

// (i) data shorter than 8 bytes (no discriminator): decode failure, per program: the first 7 bytes
// of a supported instruction's discriminator, and 0-6 random bytes (own stream: the lines above
// do not depend on it)
{
  const shortRng = new Rng(SEED ^ 0x53484f5254n);
  const PREFIX_OF = { ALPHA_FUN: "buy", ALPHA_AMM: "sell", BETA_CPMM: "swap_base_input", BETA_LAUNCH_LAB: "buy_exact_in", GAMMA_DBC: "swap", GAMMA_DAMM_V2: "swap2" };
  Object.keys(PROGRAMS).forEach((prog, pi) => {
    const disc = Buffer.from(idlIx(prog, PREFIX_OF[prog]).discriminator);
    const n = [0, 1, 3, 4, 6, 2][pi];
    for (const [data, notes] of [
      [disc.subarray(0, 7), `first 7 bytes of the ${PREFIX_OF[prog]} discriminator`],
      [shortRng.bytes(n), n === 0 ? "empty data" : `${n} random byte(s)`],
    ]) {
      push({
        id: `idl.${prog.toLowerCase()}.short_data.${data.length}`,
        case: "short_data",
        program: prog,
        program_id: PROGRAMS[prog].id,
        real_ix_name: null,
        data_hex: hex(data),
        expected: { error: true },
        notes: `${data.length} byte(s), shorter than a discriminator: ${notes}`,
      });
    }
  });
}

// ---------------------------------------------------------------------------------------------
// SDK vectors (independent oracles): offline builders, random args and random keys, no RPC
// ---------------------------------------------------------------------------------------------
const sdkLines = [];
const sdkReport = []; // {source, ok, why}
const srng = new Rng(SEED ^ 0x53444bn);
const key = () => new PublicKey(srng.bytes(32));
const rU64 = (i) => (i === 0 ? 0n : i === 1 ? U64_MAX : srng.float() < 0.25 ? srng.pick(EDGE.u64) : srng.bits(1 + srng.int(64)));
const bn = (v) => new BN(v.toString());
const SDK_CASES = 8;

function sdkExpected(member, name, args) {
  return expectedFor({ name, member, map: () => args }, null, null);
}
async function sdkRun(pkg, fn, prog, realIx, build, opts = {}) {
  const version = pkgVersion(pkg);
  const source = `${pkg}@${version} ${fn}`;
  let made = 0;
  try {
    for (let i = 0; i < (opts.cases ?? SDK_CASES); i++) {
      const r = await build(i);
      const ixs = Array.isArray(r.ix) ? r.ix : [r.ix];
      const pid = PROGRAMS[prog].id;
      const disc = opts.disc ?? (opts.specOnly ? DISC_INIT_WITH_PERMISSION : Buffer.from(idlIx(prog, realIx).discriminator));
      const matches = ixs.filter((x) => x.programId.toBase58() === pid && x.data.subarray(0, 8).equals(disc));
      if (matches.length !== 1) throw new Error(`expected one ${prog} ${realIx} instruction, got ${matches.length}`);
      const ix = matches[0];
      const line = {
        id: `sdk.${pkg.replace(/^@/, "").replace(/[/]/g, ".")}.${fn}.${String(i).padStart(2, "0")}`,
        case: "valid",
        source,
        program: prog,
        program_id: pid,
        real_ix_name: realIx,
        data_hex: hex(ix.data),
        account_count: ix.keys.length,
        expected: r.expected,
        sdk_args: r.sdkArgs,
      };
      if (opts.specOnly) line.spec_only = true;
      if (r.notes) line.notes = r.notes;
      sdkLines.push(line);
      made++;
    }
    sdkReport.push({ source, ok: true, count: made });
  } catch (e) {
    sdkReport.push({ source, ok: false, why: String(e && e.message ? e.message : e).split("\n")[0] });
    // drop partial output of a failing builder
    for (let j = 0; j < made; j++) sdkLines.pop();
  }
}

async function raydium() {
  const pkg = "@raydium-io/raydium-sdk-v2";
  let R;
  try {
    R = require(pkg);
  } catch (e) {
    sdkReport.push({ source: `${pkg}`, ok: false, why: `import failed: ${e.message}` });
    return;
  }
  const CPMM = new PublicKey(PROGRAMS.BETA_CPMM.id);
  const LL = new PublicKey(PROGRAMS.BETA_LAUNCH_LAB.id);
  const k13 = () => Array.from({ length: 13 }, key);

  for (const [fn, member, name, realIx, fields] of [
    ["makeSwapCpmmBaseInInstruction", "cpmm_swap_base_input", "swap_base_input", "swap_base_input", ["amount_in", "minimum_amount_out"]],
    ["makeSwapCpmmBaseOutInstruction", "cpmm_swap_base_output", "swap_base_output", "swap_base_output", ["max_amount_in", "amount_out"]],
  ]) {
    await sdkRun(pkg, fn, "BETA_CPMM", realIx, async (i) => {
      const a = rU64(i);
      const b = rU64(i);
      const ix = R[fn](CPMM, ...k13(), bn(a), bn(b));
      // positional: makeSwapCpmmBaseIn(amountIn, amounOutMin), makeSwapCpmmBaseOut(amountInMax, amountOut)
      return { ix, expected: sdkExpected(member, name, { [fields[0]]: a.toString(), [fields[1]]: b.toString() }), sdkArgs: { [fields[0]]: a.toString(), [fields[1]]: b.toString() } };
    });
  }
  await sdkRun(pkg, "makeCreateCpmmPoolInInstruction", "BETA_CPMM", "initialize", async (i) => {
    const [a, b, t] = [rU64(i), rU64(i), rU64(i)];
    const supper = i % 3 === 2 ? [key(), key()] : undefined;
    const ix = R.makeCreateCpmmPoolInInstruction(CPMM, ...Array.from({ length: 16 }, key), bn(a), bn(b), bn(t), supper);
    const args = { init_amount_0: a.toString(), init_amount_1: b.toString(), open_time: t.toString() };
    return { ix, expected: sdkExpected("cpmm_create_pool", "create_pool", args), sdkArgs: { amountMaxA: args.init_amount_0, amountMaxB: args.init_amount_1, openTime: args.open_time, supperMintEx: supper?.length ?? 0 } };
  });
  await sdkRun(
    pkg,
    "initializeWithPermission",
    "BETA_CPMM",
    "initialize_with_permission",
    async (i) => {
      const [a, b, t] = [rU64(i), rU64(i), rU64(i)];
      const feeOn = i % 3; // FeeOn: BothToken, OnlyTokenA, OnlyTokenB
      const ix = R.initializeWithPermission(CPMM, ...Array.from({ length: 18 }, key), bn(a), bn(b), bn(t), feeOn);
      const args = { init_amount_0: a.toString(), init_amount_1: b.toString(), open_time: t.toString() };
      return { ix, expected: sdkExpected("cpmm_create_pool", "create_pool", args), sdkArgs: { amountA: args.init_amount_0, amountB: args.init_amount_1, openTime: args.open_time, feeOn } };
    },
    { specOnly: true },
  );

  // LaunchLab trades: (programId, owner, auth, configId, platformId, poolId, userTokenAccountA,
  // userTokenAccountB, vaultA, vaultB, mintA, mintB, tokenProgramA, tokenProgramB,
  // platformClaimFeeVault, creatorClaimFeeVault, x, y, shareFeeRate?, shareFeeReceiver?)
  for (const [fn, member, realIx, names, fields] of [
    ["buyExactInInstruction", "launch_lab_buy_exact_in", "buy_exact_in", ["amountB", "minAmountA"], ["amount_in", "minimum_amount_out"]],
    ["buyExactOutInstruction", "launch_lab_buy_exact_out", "buy_exact_out", ["amountA", "maxAmountB"], ["amount_out", "maximum_amount_in"]],
    ["sellExactInInstruction", "launch_lab_sell_exact_in", "sell_exact_in", ["amountA", "minAmountB"], ["amount_in", "minimum_amount_out"]],
    ["sellExactOut", "launch_lab_sell_exact_out", "sell_exact_out", ["amountB", "maxAmountA"], ["amount_out", "maximum_amount_in"]],
  ]) {
    await sdkRun(pkg, fn, "BETA_LAUNCH_LAB", realIx, async (i) => {
      const x = rU64(i);
      const y = rU64(i);
      const fee = i % 4 === 3 ? undefined : i === 0 ? 0n : i === 1 ? U64_MAX : srng.bits(1 + srng.int(20));
      const receiver = i % 2 === 1 ? key() : undefined;
      const ix = R[fn](LL, ...Array.from({ length: 15 }, key), bn(x), bn(y), fee === undefined ? undefined : bn(fee), receiver);
      const args = { [fields[0]]: x.toString(), [fields[1]]: y.toString(), share_fee_bps: (fee ?? 0n).toString() };
      return {
        ix,
        expected: sdkExpected(member, realIx, args),
        sdkArgs: { [names[0]]: x.toString(), [names[1]]: y.toString(), shareFeeRate: fee === undefined ? null : fee.toString(), shareFeeReceiver: receiver ? receiver.toBase58() : null },
      };
    });
  }

  // LaunchLab create
  const curve = (i) => {
    const type = ["ConstantCurve", "FixedCurve", "LinearCurve"][i % 3];
    const supply = rU64(i);
    const c = { type, migrateType: i % 2 ? "cpmm" : "amm", supply: bn(supply), totalFundRaisingB: bn(rU64(i)) };
    if (type === "ConstantCurve") c.totalSellA = bn(rU64(i));
    return { c, supply };
  };
  const mint = (i) => {
    const decimals = i === 0 ? 0 : i === 1 ? 255 : srng.int(256);
    const s = (n) => (i === 0 ? "" : i === 1 ? longString(srng, n) : randString(srng, 60));
    return { decimals, name: s(150), symbol: s(60), uri: s(150) };
  };
  const curveJson = (c) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, BN.isBN(v) ? v.toString() : v]));
  for (const fn of ["initialize", "initializeV2", "initializeWithToken2022"]) {
    const realIx = { initialize: "initialize", initializeV2: "initialize_v2", initializeWithToken2022: "initialize_with_token_2022" }[fn];
    await sdkRun(pkg, fn, "BETA_LAUNCH_LAB", realIx, async (i) => {
      const m = mint(i);
      const { c, supply } = curve(i);
      const [locked, cliff, unlock] = [rU64(i), rU64(i), rU64(i)];
      const feeOn = i % 2; // CpmmCreatorFeeOn: OnlyTokenB=0, BothToken=1
      const extra = i % 4 === 1 ? [key(), key()] : i % 4 === 2 ? [key()] : [];
      let ix;
      let transfer = null;
      if (fn === "initialize") {
        ix = R.initialize(LL, ...Array.from({ length: 11 }, key), m.decimals, m.name, m.symbol, m.uri, c, bn(locked), bn(cliff), bn(unlock));
      } else if (fn === "initializeV2") {
        ix = R.initializeV2(LL, ...Array.from({ length: 12 }, key), m.decimals, m.name, m.symbol, m.uri, c, bn(locked), bn(cliff), bn(unlock), feeOn, ...extra);
      } else {
        transfer = i % 2 === 0 ? { transferFeeBasePoints: i === 0 ? 0 : i === 2 ? 65535 : srng.int(501), maxinumFee: bn(rU64(i)) } : undefined;
        ix = R.initializeWithToken2022(LL, ...Array.from({ length: 11 }, key), m.decimals, m.name, m.symbol, m.uri, c, bn(locked), bn(cliff), bn(unlock), feeOn, transfer, ...extra);
      }
      const args = { name: m.name, symbol: m.symbol, uri: m.uri, decimals: String(m.decimals), total_supply: supply.toString() };
      return {
        ix,
        expected: sdkExpected("launch_lab_create", "create", args),
        sdkArgs: {
          decimals: m.decimals,
          name: m.name,
          symbol: m.symbol,
          uri: m.uri,
          curveParam: curveJson(c),
          totalLockedAmount: locked.toString(),
          cliffPeriod: cliff.toString(),
          unlockPeriod: unlock.toString(),
          ...(fn === "initialize" ? {} : { cpmmCreatorFeeOn: feeOn, remainingAccounts: extra.length }),
          ...(fn === "initializeWithToken2022"
            ? { transferFeeExtensionParams: transfer ? { transferFeeBasePoints: transfer.transferFeeBasePoints, maxinumFee: transfer.maxinumFee.toString() } : null }
            : {}),
        },
        notes: fn === "initializeWithToken2022" && !transfer ? "None transfer-fee option written as 11 bytes (tag 0 + 10 zero bytes): 10 trailing bytes" : undefined,
      };
    });
  }
}

async function pump() {
  const pkg = "@pump-fun/pump-sdk";
  let P;
  try {
    P = require(pkg);
  } catch (e) {
    sdkReport.push({ source: pkg, ok: false, why: `import failed: ${e.message}` });
    return;
  }
  const S = P.PUMP_SDK;
  await sdkRun(pkg, "getBuyInstructionRaw", "ALPHA_FUN", "buy", async (i) => {
    const [amount, sol] = [rU64(i), rU64(i)];
    const ix = await S.getBuyInstructionRaw({ user: key(), mint: key(), creator: key(), amount: bn(amount), solAmount: bn(sol), feeRecipient: key(), buybackFeeRecipient: key(), tokenProgram: i % 2 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID });
    const args = { amount: amount.toString(), max_sol_cost: sol.toString() };
    return { ix, expected: sdkExpected("alpha_fun_buy", "buy", args), sdkArgs: { amount: args.amount, solAmount: args.max_sol_cost } };
  });
  await sdkRun(pkg, "getSellInstructionRaw", "ALPHA_FUN", "sell", async (i) => {
    const [amount, sol] = [rU64(i), rU64(i)];
    const cashback = i % 2 === 1;
    const ix = await S.getSellInstructionRaw({ user: key(), mint: key(), creator: key(), amount: bn(amount), solAmount: bn(sol), feeRecipient: key(), buybackFeeRecipient: key(), tokenProgram: TOKEN_PROGRAM_ID, cashback });
    const args = { amount: amount.toString(), min_sol_output: sol.toString() };
    return { ix, expected: sdkExpected("alpha_fun_sell", "sell", args), sdkArgs: { amount: args.amount, solAmount: args.min_sol_output, cashback } };
  });
  await sdkRun(pkg, "getBuyV2InstructionRaw", "ALPHA_FUN", "buy_v2", async (i) => {
    const [amount, q] = [rU64(i), rU64(i)];
    const ix = await S.getBuyV2InstructionRaw({ user: key(), mint: key(), creator: key(), amount: bn(amount), quoteAmount: bn(q), ...(i % 2 ? { quoteMint: key() } : {}) });
    const args = { amount: amount.toString(), max_sol_cost: q.toString() };
    return { ix, expected: sdkExpected("alpha_fun_buy", "buy", args), sdkArgs: { amount: args.amount, quoteAmount: args.max_sol_cost } };
  });
  await sdkRun(pkg, "getSellV2InstructionRaw", "ALPHA_FUN", "sell_v2", async (i) => {
    const [amount, q] = [rU64(i), rU64(i)];
    const ix = await S.getSellV2InstructionRaw({ user: key(), mint: key(), creator: key(), amount: bn(amount), quoteAmount: bn(q), ...(i % 2 ? { quoteMint: key() } : {}) });
    const args = { amount: amount.toString(), min_sol_output: q.toString() };
    return { ix, expected: sdkExpected("alpha_fun_sell", "sell", args), sdkArgs: { amount: args.amount, quoteAmount: args.min_sol_output } };
  });
  const strs = (i) => {
    const s = (n) => (i === 0 ? "" : i === 1 ? longString(srng, n) : randString(srng, 80));
    return { name: s(150), symbol: s(60), uri: s(180) };
  };
  await sdkRun(pkg, "createInstruction", "ALPHA_FUN", "create", async (i) => {
    const t = strs(i);
    const ix = await S.createInstruction({ mint: key(), ...t, creator: key(), user: key() });
    return { ix, expected: sdkExpected("alpha_fun_create", "create", t), sdkArgs: t };
  });
  await sdkRun(pkg, "createV2Instruction", "ALPHA_FUN", "create_v2", async (i) => {
    const t = strs(i);
    const mayhemMode = i % 2 === 1;
    const creatorFeeBps = i % 3 === 0 ? undefined : rU64(i);
    const holderReward = i % 4 === 2;
    const quoteMint = i % 4 === 3 ? key() : undefined;
    const ix = await S.createV2Instruction({ mint: key(), ...t, creator: key(), user: key(), mayhemMode, cashback: i === 5, quoteMint, creatorFeeBps: creatorFeeBps === undefined ? undefined : bn(creatorFeeBps), holderReward });
    return {
      ix,
      expected: sdkExpected("alpha_fun_create", "create", t),
      sdkArgs: { ...t, mayhemMode, cashback: i === 5, quoteMint: quoteMint?.toBase58() ?? null, creatorFeeBps: creatorFeeBps?.toString() ?? null, holderReward },
    };
  });
}

async function pumpSwap() {
  const pkg = "@pump-fun/pump-swap-sdk";
  let A;
  try {
    A = require(pkg);
  } catch (e) {
    sdkReport.push({ source: pkg, ok: false, why: `import failed: ${e.message}` });
    return;
  }
  const S = A.PUMP_AMM_SDK;
  const AMM = new PublicKey(PROGRAMS.ALPHA_AMM.id);
  const info = (owner, len = 165) => ({ data: Buffer.alloc(len), owner, lamports: 1, executable: false });
  const globalConfig = () => ({
    admin: key(),
    lpFeeBasisPoints: new BN(20),
    protocolFeeBasisPoints: new BN(5),
    disableFlags: 0,
    protocolFeeRecipients: Array.from({ length: 8 }, key),
    coinCreatorFeeBasisPoints: new BN(5),
    adminSetCoinCreatorAuthority: key(),
    whitelistPda: key(),
    reservedFeeRecipient: key(),
    mayhemModeEnabled: true,
    reservedFeeRecipients: Array.from({ length: 7 }, key),
    isCashbackEnabled: true,
    buybackFeeRecipients: Array.from({ length: 8 }, key),
    buybackBasisPoints: new BN(0),
    boostAuthority: key(),
    boostEnabled: false,
    creatorFeeConfigurable: false,
    maxConfigurableCreatorFeeBps: new BN(0),
  });
  const pool = (i) => ({
    poolBump: 255,
    index: srng.int(65536),
    creator: key(),
    baseMint: key(),
    quoteMint: key(),
    lpMint: key(),
    poolBaseTokenAccount: key(),
    poolQuoteTokenAccount: key(),
    lpSupply: new BN(1000),
    coinCreator: i % 2 ? key() : PublicKey.default,
    isMayhemMode: i % 3 === 1,
    isCashbackCoin: i % 4 >= 2,
    virtualQuoteReserves: new BN(0),
    creatorFeeBps: new BN(0),
    canEditCreatorFee: false,
  });
  const swapState = (i) => {
    const p = pool(i);
    return {
      globalConfig: globalConfig(),
      feeConfig: null,
      poolKey: key(),
      poolAccountInfo: info(AMM, A.POOL_ACCOUNT_NEW_SIZE),
      pool: p,
      poolBaseAmount: new BN(1e9),
      poolQuoteAmount: new BN(1e9),
      baseTokenProgram: i % 2 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID,
      quoteTokenProgram: TOKEN_PROGRAM_ID,
      baseMint: p.baseMint,
      baseMintAccount: null,
      user: key(),
      userBaseTokenAccount: key(),
      userQuoteTokenAccount: key(),
      userBaseAccountInfo: i % 3 ? info(i % 2 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID) : null,
      userQuoteAccountInfo: i % 3 ? info(TOKEN_PROGRAM_ID) : null,
    };
  };
  const liqState = (i) => {
    const s = swapState(i);
    return { ...s, poolBaseTokenAccount: null, poolQuoteTokenAccount: null, userPoolTokenAccount: key(), userPoolAccountInfo: i % 2 ? info(TOKEN_2022_PROGRAM_ID) : null };
  };
  const remNote = (p) => `pool: coinCreator ${p.coinCreator.equals(PublicKey.default) ? "default" : "set"}, isCashbackCoin ${p.isCashbackCoin}`;
  await sdkRun(pkg, "PumpAmmSdk.buyInstructions", "ALPHA_AMM", "buy", async (i) => {
    const st = swapState(i);
    const [b, q] = [rU64(i), rU64(i)];
    const ix = await S.buyInstructions(st, bn(b), bn(q));
    const args = { base_amount_out: b.toString(), max_quote_amount_in: q.toString() };
    return { ix, expected: sdkExpected("alpha_amm_buy", "buy", args), sdkArgs: { baseOut: args.base_amount_out, maxQuoteIn: args.max_quote_amount_in }, notes: remNote(st.pool) };
  });
  await sdkRun(pkg, "PumpAmmSdk.sellInstructions", "ALPHA_AMM", "sell", async (i) => {
    const st = swapState(i);
    const [b, q] = [rU64(i), rU64(i)];
    const ix = await S.sellInstructions(st, bn(b), bn(q));
    const args = { base_amount_in: b.toString(), min_quote_amount_out: q.toString() };
    return { ix, expected: sdkExpected("alpha_amm_sell", "sell", args), sdkArgs: { baseAmountIn: args.base_amount_in, minQuoteAmountOut: args.min_quote_amount_out }, notes: remNote(st.pool) };
  });
  await sdkRun(pkg, "PumpAmmSdk.depositInstructionsInternal", "ALPHA_AMM", "deposit", async (i) => {
    const st = liqState(i);
    const [l, b, q] = [rU64(i), rU64(i), rU64(i)];
    const ix = await S.depositInstructionsInternal(st, bn(l), bn(b), bn(q));
    const args = { lp_token_amount_out: l.toString(), max_base_amount_in: b.toString(), max_quote_amount_in: q.toString() };
    return { ix, expected: sdkExpected("alpha_amm_deposit", "deposit", args), sdkArgs: { lpToken: args.lp_token_amount_out, maxBase: args.max_base_amount_in, maxQuote: args.max_quote_amount_in } };
  });
  await sdkRun(pkg, "PumpAmmSdk.withdrawInstructionsInternal", "ALPHA_AMM", "withdraw", async (i) => {
    const st = liqState(i);
    const [l, b, q] = [rU64(i), rU64(i), rU64(i)];
    const ix = await S.withdrawInstructionsInternal(st, bn(l), bn(b), bn(q));
    const args = { lp_token_amount_in: l.toString(), min_base_amount_out: b.toString(), min_quote_amount_out: q.toString() };
    return { ix, expected: sdkExpected("alpha_amm_withdraw", "withdraw", args), sdkArgs: { lpTokenAmountIn: args.lp_token_amount_in, minBaseAmountOut: args.min_base_amount_out, minQuoteAmountOut: args.min_quote_amount_out } };
  });
  await sdkRun(pkg, "PumpAmmSdk.createPoolInstructions", "ALPHA_AMM", "create_pool", async (i) => {
    const index = i === 0 ? 0 : i === 1 ? 65535 : srng.int(65536);
    const [b, q] = [rU64(i), rU64(i)];
    const st = {
      index,
      baseMint: key(),
      quoteMint: key(),
      creator: key(),
      globalConfig: globalConfig(),
      poolKey: key(),
      poolBaseTokenAccount: key(),
      poolQuoteTokenAccount: key(),
      baseTokenProgram: TOKEN_PROGRAM_ID,
      quoteTokenProgram: TOKEN_PROGRAM_ID,
      userBaseTokenAccount: key(),
      userQuoteTokenAccount: key(),
      userBaseAccountInfo: info(TOKEN_PROGRAM_ID),
      userQuoteAccountInfo: info(TOKEN_PROGRAM_ID),
      poolBaseAccountInfo: null,
      poolQuoteAccountInfo: null,
    };
    const creatorFeeBps = rU64(i);
    const canEditCreatorFee = i % 2 === 1;
    const ix = await S.createPoolInstructions(st, bn(b), bn(q), { creatorFeeBps: bn(creatorFeeBps), canEditCreatorFee });
    const args = { index: String(index), base_amount: b.toString(), quote_amount: q.toString() };
    return {
      ix,
      expected: sdkExpected("alpha_amm_create_pool", "create_pool", args),
      sdkArgs: { index, baseIn: args.base_amount, quoteIn: args.quote_amount, creatorFeeBps: creatorFeeBps.toString(), canEditCreatorFee },
      notes: "the SDK's bundled pump_amm IDL stops at can_edit_creator_fee: no is_holder_reward byte (trailing optional arg absent)",
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Meteora SDKs (GAMMA_DAMM_V2: @meteora-ag/cp-amm-sdk, GAMMA_DBC: @meteora-ag/dynamic-bonding-curve-sdk)
//
// Both SDKs want a web3.js Connection. It points at http://127.0.0.1:1 and its `fetch` throws, so
// any RPC call the SDK makes fails loudly instead of reaching a host. Builders that read chain
// state get it from synthetic objects: either as an argument (DAMM v2 swap / swap2 `poolState`) or
// through stubs of the specific fetches, listed where they are installed (README, "Meteora").
// Own PRNG stream, so these lines do not move when the builders above change.
// ---------------------------------------------------------------------------------------------
const mrng = new Rng(SEED ^ 0x4d4554n);
const mkey = () => new PublicKey(mrng.bytes(32));
const mU64 = (i) => (i === 0 ? 0n : i === 1 ? U64_MAX : mrng.float() < 0.25 ? mrng.pick(EDGE.u64) : mrng.bits(1 + mrng.int(64)));
const mU64nz = (i) => {
  const v = i === 0 ? 1n : mU64(i);
  return v === 0n ? 1n : v;
};
const mU128 = (i, min = 1n) => {
  if (i === 0) return min;
  if (i === 1) return U128_MAX;
  const v = mrng.float() < 0.3 ? mrng.pick(EDGE.u128) : mrng.bits(1 + mrng.int(128));
  return v < min ? min + v : v;
};
const mRange = (lo, hi) => lo + (mrng.bits(128) % (hi - lo + 1n)); // uniform-ish in [lo, hi]
const big = (x) => BigInt(x.toString());
const NATIVE_MINT = new PublicKey("So11111111111111111111111111111111111111112");
const ixsOf = (tx) => (tx.instructions ? tx.instructions : tx);
const METEORA_RPC = "http://127.0.0.1:1";
const offlineFetch = async (url) => {
  throw new Error(`offline: the SDK tried an RPC call (${url})`);
};

// Hand-written Borsh writer: the expected `config` / `pool_config` bytes are encoded from the
// builder's arguments independently of the SDK (and of Anchor), then compared with its output.
class BorshW {
  constructor() {
    this.parts = [];
  }
  uint(v, bytes) {
    const b = Buffer.alloc(bytes);
    let x = BigInt(v.toString());
    if (x < 0n || x >= 1n << BigInt(8 * bytes)) throw new Error(`value ${x} does not fit ${bytes} bytes`);
    for (let k = 0; k < bytes; k++, x >>= 8n) b[k] = Number(x & 0xffn);
    this.parts.push(b);
    return this;
  }
  u8(v) {
    return this.uint(v, 1);
  }
  u16(v) {
    return this.uint(v, 2);
  }
  u32(v) {
    return this.uint(v, 4);
  }
  u64(v) {
    return this.uint(v, 8);
  }
  u128(v) {
    return this.uint(v, 16);
  }
  bool(v) {
    return this.u8(v ? 1 : 0);
  }
  raw(bytes) {
    this.parts.push(Buffer.from(bytes));
    return this;
  }
  str(s) {
    const b = Buffer.from(s, "utf8");
    return this.u32(b.length).raw(b);
  }
  opt(v, write) {
    if (v === null || v === undefined) return this.u8(0);
    this.u8(1);
    write(v);
    return this;
  }
  hex() {
    return Buffer.concat(this.parts).toString("hex");
  }
}
// DAMM v2 InitializeCustomizablePoolParameters (also the params of initialize_pool_with_dynamic_config)
function dammCustomParamsHex(p) {
  const w = new BorshW();
  w.raw(p.poolFees.baseFee.data).u16(p.poolFees.compoundingFeeBps).u8(p.poolFees.padding);
  w.opt(p.poolFees.dynamicFee, (d) => w.u16(d.binStep).u128(d.binStepU128).u16(d.filterPeriod).u16(d.decayPeriod).u16(d.reductionFactor).u32(d.maxVolatilityAccumulator).u32(d.variableFeeControl));
  w.u128(p.sqrtMinPrice).u128(p.sqrtMaxPrice).bool(p.hasAlphaVault).u128(p.liquidityDelta).u128(p.initSqrtPrice).u8(p.activationType).u8(p.collectFeeMode);
  w.opt(p.activationPoint, (a) => w.u64(a));
  return w.hex();
}
// DAMM v2 InitializePoolParameters
const dammPoolParamsHex = (p) => {
  const w = new BorshW().u128(p.liquidityDelta).u128(p.initSqrtPrice);
  w.opt(p.activationPoint, (a) => w.u64(a));
  return w.hex();
};
// DBC InitializePoolParameters
const dbcPoolParamsHex = (p) => new BorshW().str(p.name).str(p.symbol).str(p.uri).hex();
// the builder's bytes must be the encoding of its arguments
function checkParams(ix, hexExpected, what) {
  const got = ix.data.subarray(8).toString("hex");
  if (got !== hexExpected) throw new Error(`${what}: SDK params bytes ${got} != independent encoding ${hexExpected}`);
  return hexExpected;
}
// one matching instruction out of a transaction (sdkRun filters again and checks there is one)
const pickIx = (ixs, prog, realIx) => {
  const disc = Buffer.from(idlIx(prog, realIx).discriminator);
  const m = ixsOf(ixs).filter((x) => x.programId.toBase58() === PROGRAMS[prog].id && x.data.subarray(0, 8).equals(disc));
  if (m.length !== 1) throw new Error(`expected one ${prog} ${realIx} instruction, got ${m.length}`);
  return m[0];
};
const jsonBN = (v) => (v === null || v === undefined ? null : v.toString());
const swap2Sdk = (mode, a0, a1) => (mode === 2 ? { swapMode: mode, amountOut: a0.toString(), maximumAmountIn: a1.toString() } : { swapMode: mode, amountIn: a0.toString(), minimumAmountOut: a1.toString() });
const swap2Expected = (mode, a0, a1) => sdkExpected("damm_v2_swap", "swap", swap2Args({ swap_mode: String(mode), amount_0: a0.toString(), amount_1: a1.toString() }));
// Builders that cannot run offline: tried once against the offline Connection, the error recorded
async function sdkProbe(pkg, fn, run) {
  const source = `${pkg}@${pkgVersion(pkg)} ${fn}`;
  try {
    await run();
    sdkReport.push({ source, ok: false, why: "probe: expected to need RPC, but it built offline (not used for vectors)" });
  } catch (e) {
    sdkReport.push({ source, ok: false, why: `needs RPC (not used as is): ${String(e && e.message ? e.message : e).split("\n")[0]}` });
  }
}

async function meteoraCpAmm() {
  const pkg = "@meteora-ag/cp-amm-sdk";
  let C;
  try {
    C = require(pkg);
  } catch (e) {
    sdkReport.push({ source: pkg, ok: false, why: `import failed: ${e.message}` });
    return;
  }
  const { Connection } = require("@solana/web3.js");
  const conn = new Connection(METEORA_RPC, { fetch: offlineFetch, disableRetryOnRateLimit: true });
  // stub (rate-limiter swaps only): the current slot / block time read by getCurrentPoint
  let clock = { slot: 0, time: 0 };
  conn.getSlot = async () => clock.slot;
  conn.getBlockTime = async () => clock.time;
  const amm = new C.CpAmm(conn);
  const tokenProgram = () => (mrng.float() < 0.5 ? TOKEN_PROGRAM_ID : TOKEN_2022_PROGRAM_ID);
  const progName = (p) => (p.equals(TOKEN_PROGRAM_ID) ? "token" : "token-2022");

  // add_liquidity: liquidity_delta u128 (saturated to u64 in min_lp_amount), two u64 thresholds
  await sdkRun(pkg, "CpAmm.buildAddLiquidityInstruction", "GAMMA_DAMM_V2", "add_liquidity", async (i) => {
    const [liq, a, b] = [mU128(i, 0n), mU64(i), mU64(i)];
    const ix = await amm.buildAddLiquidityInstruction({
      pool: mkey(), position: mkey(), positionNftAccount: mkey(), owner: mkey(), tokenAAccount: mkey(), tokenBAccount: mkey(),
      tokenAMint: mkey(), tokenBMint: mkey(), tokenAVault: mkey(), tokenBVault: mkey(), tokenAProgram: tokenProgram(), tokenBProgram: tokenProgram(),
      liquidityDelta: bn(liq), tokenAAmountThreshold: bn(a), tokenBAmountThreshold: bn(b),
    });
    const args = { max_token_a_amount: a.toString(), max_token_b_amount: b.toString(), min_lp_amount: sat64(liq.toString()) };
    return { ix, expected: sdkExpected("damm_v2_add_liquidity", "add_liquidity", args), sdkArgs: { liquidityDelta: liq.toString(), tokenAAmountThreshold: a.toString(), tokenBAmountThreshold: b.toString() } };
  });
  // remove_all_liquidity: lp_amount unset ("0")
  await sdkRun(pkg, "CpAmm.buildRemoveAllLiquidityInstruction", "GAMMA_DAMM_V2", "remove_all_liquidity", async (i) => {
    const [a, b] = [mU64(i), mU64(i)];
    const ix = await amm.buildRemoveAllLiquidityInstruction({
      poolAuthority: amm.poolAuthority, owner: mkey(), pool: mkey(), position: mkey(), positionNftAccount: mkey(), tokenAAccount: mkey(), tokenBAccount: mkey(),
      tokenAAmountThreshold: bn(a), tokenBAmountThreshold: bn(b), tokenAMint: mkey(), tokenBMint: mkey(), tokenAVault: mkey(), tokenBVault: mkey(),
      tokenAProgram: tokenProgram(), tokenBProgram: tokenProgram(),
    });
    const args = { lp_amount: "0", min_token_a_amount: a.toString(), min_token_b_amount: b.toString() };
    return { ix, expected: sdkExpected("damm_v2_remove_liquidity", "remove_liquidity", args), sdkArgs: { tokenAAmountThreshold: a.toString(), tokenBAmountThreshold: b.toString() } };
  });
  // remove_liquidity (a transaction: ATA creation, refresh_vesting when vestings are given, wSOL close)
  await sdkRun(pkg, "CpAmm.removeLiquidity", "GAMMA_DAMM_V2", "remove_liquidity", async (i) => {
    const [liq, a, b] = [mU128(i, 1n), mU64(i), mU64(i)];
    const vestings = Array.from({ length: i % 3 }, () => ({ account: mkey() }));
    const tokenBMint = i % 4 === 2 ? NATIVE_MINT : mkey();
    const tx = await amm.removeLiquidity({
      owner: mkey(), pool: mkey(), position: mkey(), positionNftAccount: mkey(), liquidityDelta: bn(liq), tokenAAmountThreshold: bn(a), tokenBAmountThreshold: bn(b),
      tokenAMint: mkey(), tokenBMint, tokenAVault: mkey(), tokenBVault: mkey(), tokenAProgram: tokenProgram(), tokenBProgram: TOKEN_PROGRAM_ID, vestings,
    });
    const args = { lp_amount: sat64(liq.toString()), min_token_a_amount: a.toString(), min_token_b_amount: b.toString() };
    return {
      ix: ixsOf(tx),
      expected: sdkExpected("damm_v2_remove_liquidity", "remove_liquidity", args),
      sdkArgs: { liquidityDelta: liq.toString(), tokenAAmountThreshold: a.toString(), tokenBAmountThreshold: b.toString(), vestings: vestings.length, tokenBIsNativeMint: tokenBMint.equals(NATIVE_MINT) },
      notes: `transaction of ${ixsOf(tx).length} instructions (${vestings.length ? "refresh_vesting, " : ""}ATA creation${tokenBMint.equals(NATIVE_MINT) ? ", wSOL close" : ""})`,
    };
  });

  // Pool creation parameters the SDK validates: base fee from its own getBaseFeeParams (time
  // scheduler linear / exponential, market-cap scheduler linear / exponential; the rate limiter is
  // deprecated for new pools), optional dynamic fee from getDynamicFeeParams, collect fee mode
  // BothToken / OnlyB / Compounding, price range inside [MIN_SQRT_PRICE, MAX_SQRT_PRICE].
  const MIN_SQRT = big(C.MIN_SQRT_PRICE);
  const MAX_SQRT = big(C.MAX_SQRT_PRICE);
  const DEAD = big(C.DEAD_LIQUIDITY);
  const customParams = (i) => {
    const baseFeeMode = [0, 1, 3, 4][i % 4];
    // starting >= 2 * ending keeps the exponential reduction factor >= 1 (else the SDK rejects it)
    const ending = i === 0 ? 1 : 1 + mrng.int(2000);
    const starting = i === 0 ? 1 : i === 1 ? 9900 : 2 * ending + mrng.int(9900 - 2 * ending + 1);
    let baseFeeArg;
    if (baseFeeMode <= 1) {
      const nPeriod = starting === ending ? 0 : 1 + mrng.int(1000);
      const totalDuration = nPeriod * (1 + mrng.int(3600));
      baseFeeArg = { baseFeeMode, feeTimeSchedulerParam: { startingFeeBps: starting, endingFeeBps: ending, numberOfPeriod: nPeriod, totalDuration } };
    } else {
      const nPeriod = 1 + mrng.int(100);
      baseFeeArg = {
        baseFeeMode,
        feeMarketCapSchedulerParam: { startingFeeBps: starting, endingFeeBps: ending, numberOfPeriod: nPeriod, priceMultiple: 2 + mrng.int(99), schedulerExpirationDuration: 1 + mrng.int(1e6) },
      };
    }
    const baseFee = C.getBaseFeeParams(baseFeeArg);
    const collectFeeMode = i === 0 ? 0 : i === 1 ? 2 : i % 3;
    const dynamicFee = i % 2 === 1 ? C.getDynamicFeeParams(ending) : null;
    const compoundingFeeBps = collectFeeMode === 2 ? (i === 1 ? 10000 : mrng.int(10001)) : 0;
    let sqrtMinPrice;
    let sqrtMaxPrice;
    let initSqrtPrice;
    if (i === 0) [sqrtMinPrice, sqrtMaxPrice, initSqrtPrice] = [MIN_SQRT, MIN_SQRT + 1n, MIN_SQRT];
    else if (i === 1) [sqrtMinPrice, sqrtMaxPrice, initSqrtPrice] = [MAX_SQRT - 1n, MAX_SQRT, MAX_SQRT];
    else {
      sqrtMinPrice = mRange(MIN_SQRT, MAX_SQRT - 1n);
      sqrtMaxPrice = mRange(sqrtMinPrice + 1n, MAX_SQRT);
      initSqrtPrice = mRange(sqrtMinPrice, sqrtMaxPrice);
    }
    const liquidityDelta = mU128(i, collectFeeMode === 2 ? DEAD + 1n : 1n);
    const activationType = i === 0 ? 0 : i === 1 ? 1 : mrng.int(2);
    const activationPoint = i % 2 === 0 && i !== 0 ? mU64(i) : i === 1 ? U64_MAX : null;
    const padding = i === 1 ? 255 : 0;
    return {
      baseFeeArg,
      poolFees: { baseFee, compoundingFeeBps, padding, dynamicFee },
      sqrtMinPrice,
      sqrtMaxPrice,
      initSqrtPrice,
      liquidityDelta,
      hasAlphaVault: i === 1 || (i > 1 && mrng.float() < 0.5),
      collectFeeMode,
      activationType,
      activationPoint,
    };
  };
  const customJson = (p) => ({
    baseFee: p.baseFeeArg,
    baseFeeData: Buffer.from(p.poolFees.baseFee.data).toString("hex"),
    compoundingFeeBps: p.poolFees.compoundingFeeBps,
    padding: p.poolFees.padding,
    dynamicFee: p.poolFees.dynamicFee ? Object.fromEntries(Object.entries(p.poolFees.dynamicFee).map(([k, v]) => [k, BN.isBN(v) ? v.toString() : v])) : null,
    sqrtMinPrice: p.sqrtMinPrice.toString(),
    sqrtMaxPrice: p.sqrtMaxPrice.toString(),
    initSqrtPrice: p.initSqrtPrice.toString(),
    liquidityDelta: p.liquidityDelta.toString(),
    hasAlphaVault: p.hasAlphaVault,
    collectFeeMode: p.collectFeeMode,
    activationType: p.activationType,
    activationPoint: jsonBN(p.activationPoint),
  });
  for (const [fn, realIx] of [
    ["createCustomPool", "initialize_customizable_pool"],
    ["createCustomPoolWithDynamicConfig", "initialize_pool_with_dynamic_config"],
  ]) {
    await sdkRun(pkg, `CpAmm.${fn}`, "GAMMA_DAMM_V2", realIx, async (i) => {
      const p = customParams(i);
      const tokenBMint = i % 4 === 3 ? NATIVE_MINT : mkey();
      const isLockLiquidity = i % 2 === 0;
      const r = await amm[fn]({
        tokenAMint: mkey(), tokenBMint, tokenAAmount: bn(mU64nz(i)), tokenBAmount: bn(mU64(i)),
        sqrtMinPrice: bn(p.sqrtMinPrice), sqrtMaxPrice: bn(p.sqrtMaxPrice), liquidityDelta: bn(p.liquidityDelta), initSqrtPrice: bn(p.initSqrtPrice),
        payer: mkey(), creator: mkey(), positionNft: mkey(),
        ...(fn === "createCustomPoolWithDynamicConfig" ? { config: mkey(), poolCreatorAuthority: mkey() } : {}),
        poolFees: p.poolFees, hasAlphaVault: p.hasAlphaVault, collectFeeMode: p.collectFeeMode,
        activationPoint: p.activationPoint === null ? null : bn(p.activationPoint), activationType: p.activationType,
        tokenAProgram: TOKEN_PROGRAM_ID, tokenBProgram: TOKEN_PROGRAM_ID, isLockLiquidity,
      });
      const ix = pickIx(r.tx, "GAMMA_DAMM_V2", realIx);
      const config = checkParams(ix, dammCustomParamsHex(p), fn);
      return {
        ix,
        expected: sdkExpected("damm_v2_create_pool", "create_pool", { config }),
        sdkArgs: { ...customJson(p), isLockLiquidity, tokenBIsNativeMint: tokenBMint.equals(NATIVE_MINT) },
        notes: "config = the params bytes, encoded independently from sdk_args (hand-written Borsh) and checked equal to the SDK's",
      };
    });
  }
  // initialize_pool: createPool reads the config account (fetchConfigState). Stub: the program's
  // account.config.fetchNullable returns a synthetic config (a non-rate-limiter base fee mode and
  // a collect fee mode, the only fields createPool reads).
  {
    const realFetch = amm._program.account.config.fetchNullable;
    let synthConfig = null;
    amm._program.account.config.fetchNullable = async () => synthConfig;
    await sdkRun(pkg, "CpAmm.createPool", "GAMMA_DAMM_V2", "initialize_pool", async (i) => {
      const collectFeeMode = i % 3;
      const podBaseFee = C.cpAmmCoder.types.encode("PodAlignedFeeTimeScheduler", {
        cliff_fee_numerator: new BN(2500000), base_fee_mode: i % 2, padding: [0, 0, 0, 0, 0], number_of_period: 0, period_frequency: new BN(0), reduction_factor: new BN(0),
      });
      synthConfig = { poolFees: { baseFee: { data: [...podBaseFee] } }, collectFeeMode };
      const p = {
        liquidityDelta: mU128(i, collectFeeMode === 2 ? DEAD + 1n : 1n),
        initSqrtPrice: i === 0 ? 0n : i === 1 ? U128_MAX : mU128(i, 0n),
        activationPoint: i === 1 ? U64_MAX : i % 2 === 0 && i !== 0 ? mU64(i) : null,
      };
      const isLockLiquidity = i % 2 === 1;
      const tokenBMint = i % 4 === 2 ? NATIVE_MINT : mkey();
      const tx = await amm.createPool({
        payer: mkey(), creator: mkey(), config: mkey(), positionNft: mkey(), tokenAMint: mkey(), tokenBMint,
        initSqrtPrice: bn(p.initSqrtPrice), liquidityDelta: bn(p.liquidityDelta), activationPoint: p.activationPoint === null ? null : bn(p.activationPoint),
        tokenAAmount: bn(mU64nz(i)), tokenBAmount: bn(mU64(i)), tokenAProgram: TOKEN_PROGRAM_ID, tokenBProgram: TOKEN_PROGRAM_ID, isLockLiquidity,
      });
      const ix = pickIx(tx, "GAMMA_DAMM_V2", "initialize_pool");
      const config = checkParams(ix, dammPoolParamsHex(p), "createPool");
      return {
        ix,
        expected: sdkExpected("damm_v2_create_pool", "create_pool", { config }),
        sdkArgs: { liquidityDelta: p.liquidityDelta.toString(), initSqrtPrice: p.initSqrtPrice.toString(), activationPoint: jsonBN(p.activationPoint), isLockLiquidity, tokenBIsNativeMint: tokenBMint.equals(NATIVE_MINT) },
        notes: `stub: CpAmm._program.account.config.fetchNullable returned a synthetic config (collectFeeMode ${collectFeeMode}, base fee mode ${i % 2})`,
      };
    });
    amm._program.account.config.fetchNullable = realFetch;
  }

  // swap / swap2 given a pre-built pool state (`poolState`: only poolFees.baseFee.baseFeeInfo.data,
  // activationType and activationPoint are read). With a rate-limiter base fee, a B->A trade inside
  // the limiter window adds the instructions sysvar as a remaining account; the current point comes
  // from the stubbed getSlot / getBlockTime.
  const poolState = (i) => {
    const rateLimiter = i % 4 === 1;
    const activationType = i % 2;
    const activationPoint = new BN(1_000_000);
    const data = rateLimiter
      ? C.cpAmmCoder.types.encode("PodAlignedFeeRateLimiter", {
          cliff_fee_numerator: new BN(10000000), base_fee_mode: 2, padding: [0, 0, 0, 0, 0], fee_increment_bps: 10, max_limiter_duration: 100, max_fee_bps: 5000, reference_amount: new BN(1e9),
        })
      : C.cpAmmCoder.types.encode("PodAlignedFeeTimeScheduler", {
          cliff_fee_numerator: new BN(2500000), base_fee_mode: i % 2, padding: [0, 0, 0, 0, 0], number_of_period: 0, period_frequency: new BN(0), reduction_factor: new BN(0),
        });
    clock = { slot: 1_000_050, time: 1_000_050 };
    return { rateLimiter, state: { poolFees: { baseFee: { baseFeeInfo: { data: [...data] } } }, activationType, activationPoint } };
  };
  const swapAccounts = (i) => {
    const tokenAMint = i % 4 === 2 ? NATIVE_MINT : mkey();
    const tokenBMint = mkey();
    const bToA = i % 2 === 1;
    return {
      payer: mkey(), pool: mkey(), inputTokenMint: bToA ? tokenBMint : tokenAMint, outputTokenMint: bToA ? tokenAMint : tokenBMint,
      tokenAVault: mkey(), tokenBVault: mkey(), tokenAMint, tokenBMint, tokenAProgram: TOKEN_PROGRAM_ID, tokenBProgram: i % 3 === 0 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID,
      referralTokenAccount: i % 3 === 1 ? mkey() : null, receiver: i % 4 === 3 ? mkey() : undefined,
    };
  };
  const swapNote = (ps, acc) =>
    `poolState base fee mode ${Buffer.from(ps.state.poolFees.baseFee.baseFeeInfo.data)[8]}${ps.rateLimiter ? " (rate limiter; stubbed getSlot/getBlockTime inside the window)" : ""}, ${acc.inputTokenMint.equals(acc.tokenAMint) ? "A->B" : "B->A"}, referral ${acc.referralTokenAccount ? "set" : "none"}`;
  await sdkRun(pkg, "CpAmm.swap", "GAMMA_DAMM_V2", "swap", async (i) => {
    const ps = poolState(i);
    const acc = swapAccounts(i);
    const [amountIn, minOut] = [mU64nz(i), mU64(i)];
    const tx = await amm.swap({ ...acc, amountIn: bn(amountIn), minimumAmountOut: bn(minOut), poolState: ps.state });
    const args = { amount_in: amountIn.toString(), minimum_amount_out: minOut.toString() };
    return { ix: ixsOf(tx), expected: sdkExpected("damm_v2_swap", "swap", args), sdkArgs: { amountIn: args.amount_in, minimumAmountOut: args.minimum_amount_out }, notes: swapNote(ps, acc) };
  });
  await sdkRun(pkg, "CpAmm.swap2", "GAMMA_DAMM_V2", "swap2", async (i) => {
    const ps = poolState(i);
    const acc = swapAccounts(i);
    const mode = i % 3; // SwapMode: ExactIn 0, PartialFill 1, ExactOut 2
    const [a0, a1] = [mU64nz(i), mU64(i)];
    const amounts = mode === 2 ? { amountOut: bn(a0), maximumAmountIn: bn(a1) } : { amountIn: bn(a0), minimumAmountOut: bn(a1) };
    const tx = await amm.swap2({ ...acc, ...amounts, swapMode: mode, poolState: ps.state });
    return { ix: ixsOf(tx), expected: swap2Expected(mode, a0, a1), sdkArgs: swap2Sdk(mode, a0, a1), notes: swapNote(ps, acc) };
  });

  // Not usable offline as is (tried once against the offline Connection):
  await sdkProbe(pkg, "CpAmm.swap (no poolState)", () =>
    amm.swap({ ...swapAccounts(2), amountIn: new BN(1), minimumAmountOut: new BN(0) }),
  );
  await sdkProbe(pkg, "CpAmm.createPool (no stub)", () =>
    amm.createPool({
      payer: mkey(), creator: mkey(), config: mkey(), positionNft: mkey(), tokenAMint: mkey(), tokenBMint: mkey(), initSqrtPrice: new BN(1), liquidityDelta: new BN(1),
      activationPoint: null, tokenAAmount: new BN(1), tokenBAmount: new BN(1), tokenAProgram: TOKEN_PROGRAM_ID, tokenBProgram: TOKEN_PROGRAM_ID, isLockLiquidity: false,
    }),
  );
}

async function meteoraDbc() {
  const pkg = "@meteora-ag/dynamic-bonding-curve-sdk";
  let D;
  let spl;
  try {
    D = require(pkg);
    spl = require("@solana/spl-token");
  } catch (e) {
    sdkReport.push({ source: pkg, ok: false, why: `import failed: ${e.message}` });
    return;
  }
  const { Connection } = require("@solana/web3.js");
  const conn = new Connection(METEORA_RPC, { fetch: offlineFetch, disableRetryOnRateLimit: true });
  const client = new D.DynamicBondingCurveClient(conn, "confirmed");

  // initialize_virtual_pool_with_*: builders on DynamicBondingCurveProgram that use only their
  // arguments (CreatorService.createPool wraps them but reads the config and the quote mint first)
  const strs = (i) => {
    const s = (n) => (i === 0 ? "" : i === 1 ? longString(mrng, n) : randString(mrng, 60));
    return { name: s(150), symbol: s(60), uri: s(180) };
  };
  for (const [fn, realIx] of [
    ["initializeSplPool", "initialize_virtual_pool_with_spl_token"],
    ["initializeToken2022Pool", "initialize_virtual_pool_with_token2022"],
    ["initializeToken2022PoolWithTransferHook", "initialize_virtual_pool_with_token2022_transfer_hook"],
  ]) {
    await sdkRun(pkg, `DynamicBondingCurveProgram.${fn}`, "GAMMA_DBC", realIx, async (i) => {
      const t = strs(i);
      const tokenBadge = i % 2 === 1 ? mkey() : undefined;
      const tx = await client.pool[fn]({
        ...t, pool: mkey(), config: mkey(), payer: mkey(), poolCreator: mkey(), baseMint: mkey(), baseVault: mkey(), quoteVault: mkey(), quoteMint: mkey(),
        tokenQuoteProgram: i % 3 === 2 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID, tokenBadge,
        ...(fn === "initializeSplPool" ? { mintMetadata: mkey() } : {}),
        ...(fn === "initializeToken2022PoolWithTransferHook" ? { transferHookProgram: mkey() } : {}),
      });
      const ix = pickIx(tx, "GAMMA_DBC", realIx);
      const pool_config = checkParams(ix, dbcPoolParamsHex(t), fn);
      return {
        ix,
        expected: sdkExpected("dbc_initialize", "initialize", { pool_config }),
        sdkArgs: { ...t, tokenBadge: !!tokenBadge },
        notes: "pool_config = the params bytes (name, symbol, uri), encoded independently from sdk_args and checked equal to the SDK's",
      };
    });
  }

  // PoolService.swap / swap2 / swap2WithTransferHook and MigrationService.migrateToDammV2 read the
  // virtual pool and its config. Stubs: each service's state.program.account.virtualPool /
  // .poolConfig.fetchNullable return synthetic objects; Connection.getAccountInfo answers from a
  // map of synthetic accounts (null for everything else, so the SDK emits create-ATA instructions);
  // getSlot / getBlockTime give a point inside the rate limiter window.
  let vp = null;
  let pc = null;
  for (const svc of [client.pool, client.migration]) {
    svc.state.program.account.virtualPool.fetchNullable = async () => vp;
    svc.state.program.account.poolConfig.fetchNullable = async () => pc;
  }
  const accounts = new Map();
  conn.getAccountInfo = async (pk) => accounts.get(pk.toBase58()) ?? null;
  conn.getSlot = async () => 1_000_050;
  conn.getBlockTime = async () => 1_000_050;
  const synthState = (i, extra = {}) => {
    const poolType = extra.poolType ?? i % 2;
    vp = { poolState: { config: mkey(), baseMint: extra.baseMint ?? mkey(), baseVault: mkey(), quoteVault: mkey(), poolType, activationPoint: new BN(1_000_000) } };
    const rateLimiter = i % 4 === 1;
    pc = {
      quoteMint: i % 4 === 2 ? NATIVE_MINT : mkey(),
      quoteTokenFlag: i % 3 === 1 ? 1 : 0,
      tokenType: poolType,
      activationType: i % 2,
      enableFirstSwapWithMinFee: i % 4 === 3,
      poolFees: { baseFee: rateLimiter ? { baseFeeMode: 2, firstFactor: 10, secondFactor: new BN(100), thirdFactor: new BN(1e9) } : { baseFeeMode: 0, firstFactor: 0, secondFactor: new BN(0), thirdFactor: new BN(0) } },
    };
    return `synthetic pool/config: base fee mode ${pc.poolFees.baseFee.baseFeeMode}, enableFirstSwapWithMinFee ${pc.enableFirstSwapWithMinFee}, quote ${pc.quoteMint.equals(NATIVE_MINT) ? "wSOL" : "other"}`;
  };
  await sdkRun(pkg, "PoolService.swap", "GAMMA_DBC", "swap", async (i) => {
    accounts.clear();
    const note = synthState(i);
    const [amountIn, minOut] = [mU64nz(i), mU64(i)];
    const swapBaseForQuote = i % 2 === 0;
    const tx = await client.pool.swap({ amountIn: bn(amountIn), minimumAmountOut: bn(minOut), swapBaseForQuote, owner: mkey(), payer: i % 3 === 0 ? mkey() : undefined, pool: mkey(), referralTokenAccount: i % 3 === 1 ? mkey() : null });
    const args = { amount_in: amountIn.toString(), minimum_amount_out: minOut.toString() };
    return { ix: ixsOf(tx), expected: sdkExpected("dbc_swap", "swap", args), sdkArgs: { amountIn: args.amount_in, minimumAmountOut: args.minimum_amount_out, swapBaseForQuote }, notes: note };
  });
  const dbcSwap2Expected = (mode, a0, a1) => sdkExpected("dbc_swap", "swap", swap2Args({ swap_mode: String(mode), amount_0: a0.toString(), amount_1: a1.toString() }));
  await sdkRun(pkg, "PoolService.swap2", "GAMMA_DBC", "swap2", async (i) => {
    accounts.clear();
    const note = synthState(i);
    const mode = i % 3;
    const [a0, a1] = [mU64nz(i), mU64(i)];
    const swapBaseForQuote = i % 2 === 0;
    const amounts = mode === 2 ? { amountOut: bn(a0), maximumAmountIn: bn(a1) } : { amountIn: bn(a0), minimumAmountOut: bn(a1) };
    const tx = await client.pool.swap2({ ...amounts, swapMode: mode, swapBaseForQuote, owner: mkey(), pool: mkey(), referralTokenAccount: i % 3 === 1 ? mkey() : null });
    return { ix: ixsOf(tx), expected: dbcSwap2Expected(mode, a0, a1), sdkArgs: { ...swap2Sdk(mode, a0, a1), swapBaseForQuote }, notes: note };
  });
  // swap2_with_transfer_hook: the base mint is (0) a legacy SPL mint: no hook accounts, (1) a
  // Token-2022 mint with a TransferHook extension and no extra-account-metas account, (2) the same
  // with an extra-account-metas account listing 1-2 fixed accounts. Synthetic account data, packed
  // with @solana/spl-token's layouts.
  const hookMint = (hookProgram) => {
    const len = spl.getMintLen([spl.ExtensionType.TransferHook]);
    const data = Buffer.alloc(len);
    spl.MintLayout.encode({ mintAuthorityOption: 0, mintAuthority: PublicKey.default, supply: 0n, decimals: 6, isInitialized: true, freezeAuthorityOption: 0, freezeAuthority: PublicKey.default }, data);
    data[spl.ACCOUNT_SIZE] = spl.AccountType.Mint;
    let o = spl.ACCOUNT_SIZE + spl.ACCOUNT_TYPE_SIZE;
    data.writeUInt16LE(spl.ExtensionType.TransferHook, o);
    data.writeUInt16LE(64, o + 2);
    PublicKey.default.toBuffer().copy(data, o + 4);
    hookProgram.toBuffer().copy(data, o + 36);
    return { data, owner: TOKEN_2022_PROGRAM_ID, lamports: 1, executable: false };
  };
  const extraMetas = (keys) => {
    const data = Buffer.alloc(8 + 4 + 4 + 35 * keys.length);
    data.writeUInt32LE(4 + 35 * keys.length, 8);
    data.writeUInt32LE(keys.length, 12);
    keys.forEach((k, j) => {
      const o = 16 + 35 * j;
      data[o] = 0; // fixed address
      k.toBuffer().copy(data, o + 1);
      data[o + 33] = 0;
      data[o + 34] = j % 2;
    });
    return { data, owner: mkey(), lamports: 1, executable: false };
  };
  const legacyMint = () => {
    const data = Buffer.alloc(spl.MINT_SIZE);
    spl.MintLayout.encode({ mintAuthorityOption: 0, mintAuthority: PublicKey.default, supply: 0n, decimals: 6, isInitialized: true, freezeAuthorityOption: 0, freezeAuthority: PublicKey.default }, data);
    return { data, owner: TOKEN_PROGRAM_ID, lamports: 1, executable: false };
  };
  await sdkRun(pkg, "PoolService.swap2WithTransferHook", "GAMMA_DBC", "swap2_with_transfer_hook", async (i) => {
    accounts.clear();
    const kind = i % 3;
    const baseMint = mkey();
    let nExtra = 0;
    if (kind === 0) accounts.set(baseMint.toBase58(), legacyMint());
    else {
      const hookProgram = mkey();
      accounts.set(baseMint.toBase58(), hookMint(hookProgram));
      if (kind === 2) {
        nExtra = 1 + (i % 2);
        accounts.set(spl.getExtraAccountMetaAddress(baseMint, hookProgram).toBase58(), extraMetas(Array.from({ length: nExtra }, mkey)));
      }
    }
    const note = synthState(i, { baseMint, poolType: kind === 0 ? 0 : 1 });
    const mode = i % 3 === 0 ? 2 : i % 3 === 1 ? 0 : 1;
    const [a0, a1] = [mU64nz(i), mU64(i)];
    const swapBaseForQuote = i % 2 === 0;
    const referral = i % 4 >= 2 ? mkey() : null;
    const amounts = mode === 2 ? { amountOut: bn(a0), maximumAmountIn: bn(a1) } : { amountIn: bn(a0), minimumAmountOut: bn(a1) };
    const tx = await client.pool.swap2WithTransferHook({ ...amounts, swapMode: mode, swapBaseForQuote, owner: mkey(), pool: mkey(), referralTokenAccount: referral });
    const hook = ["legacy SPL base mint (no hook accounts)", "Token-2022 base mint with TransferHook, no extra-account-metas account", `Token-2022 base mint with TransferHook, ${nExtra} extra account(s)`][kind];
    return {
      ix: ixsOf(tx),
      expected: dbcSwap2Expected(mode, a0, a1),
      sdkArgs: { ...swap2Sdk(mode, a0, a1), swapBaseForQuote, referral: !!referral },
      notes: `${hook}; ${note}; stub: Connection.getAccountInfo serves the synthetic mint / extra-account-metas accounts`,
    };
  });
  // migration_damm_v2: no arguments (data = the discriminator); the SDK reads pool and config
  await sdkRun(
    pkg,
    "MigrationService.migrateToDammV2",
    "GAMMA_DBC",
    "migration_damm_v2",
    async (i) => {
      accounts.clear();
      const note = synthState(i, { poolType: i % 2 });
      const r = await client.migration.migrateToDammV2({ pool: mkey(), dammConfig: mkey(), payer: mkey() });
      return { ix: ixsOf(r.transaction), expected: sdkExpected("dbc_migrate", "migrate", {}), sdkArgs: {}, notes: `${note}; token type ${i % 2}; position NFT keypairs come from Keypair.generate (not seeded; no key is written)` };
    },
    { cases: 2 },
  );

  // Not usable offline as is (tried once against a fresh offline Connection, no stubs):
  const bare = new D.DynamicBondingCurveClient(new Connection(METEORA_RPC, { fetch: offlineFetch, disableRetryOnRateLimit: true }), "confirmed");
  await sdkProbe(pkg, "MigrationService.migrateToDammV2 (no stub)", () => bare.migration.migrateToDammV2({ pool: mkey(), dammConfig: mkey(), payer: mkey() }));
  await sdkProbe(pkg, "PoolService.swap (no stub)", () => bare.pool.swap({ amountIn: new BN(1), minimumAmountOut: new BN(0), swapBaseForQuote: true, owner: mkey(), pool: mkey(), referralTokenAccount: null }));
  await sdkProbe(pkg, "CreatorService.createPool (no stub)", () =>
    bare.creator.createPool({ baseMint: mkey(), config: mkey(), name: "a", symbol: "b", uri: "c", payer: mkey(), poolCreator: mkey() }),
  );
}

await raydium();
await pump();
await pumpSwap();
await meteoraCpAmm();
await meteoraDbc();

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------
fs.mkdirSync(OUT_DIR, { recursive: true });
const write = (name, lines) => {
  const ids = new Set();
  for (const l of lines) {
    if (ids.has(l.id)) throw new Error(`duplicate id ${l.id}`);
    ids.add(l.id);
  }
  const text = lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
  fs.writeFileSync(path.join(OUT_DIR, name), text);
  return Buffer.byteLength(text);
};
const idlBytes = write("idl-vectors.jsonl", idlLines);
const sdkBytes = write("sdk-vectors.jsonl", sdkLines);

// Summary (stdout, also used for README tables)
const summary = {
  seed: `0x${SEED.toString(16)}`,
  versions: Object.fromEntries(["@coral-xyz/anchor", "@raydium-io/raydium-sdk-v2", "@pump-fun/pump-sdk", "@pump-fun/pump-swap-sdk", "@meteora-ag/cp-amm-sdk", "@meteora-ag/dynamic-bonding-curve-sdk", "@solana/web3.js", "@solana/spl-token"].map((p) => [p, pkgVersion(p)])),
  idl_sha256: IDL_SHA256,
  idl_vectors: { lines: idlLines.length, bytes: idlBytes },
  sdk_vectors: { lines: sdkLines.length, bytes: sdkBytes },
  idl_counts: counts,
  sdk_builders: sdkReport,
};
console.log(JSON.stringify(summary, null, 1));
