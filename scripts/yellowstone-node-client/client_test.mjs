// A client that is not ours: the published Yellowstone Node SDK (@triton-one/yellowstone-grpc, a
// napi-rs addon around the Rust yellowstone-grpc-client, tonic underneath) reading
// geyser.Geyser/SubscribeDeshred of a running appliance (its embedded default replay).
//
// Checks, on one session (each request replaces the session's filters; a request carrying a ping
// is answered with its pong and its filters are not applied, so a ping written after a filter
// change marks where the new filters hold):
//  1. a ping request is answered with the pong of its id, before any transaction;
//  2. filters {all: {}, novote: {vote: false}} plus interslot slot updates: every transaction's
//     signature is 64 bytes and is transaction.signatures[0], its message is well formed (32-byte
//     keys, loaded addresses and blockhash; instruction program indexes in range), its filters are
//     "all" plus "novote" exactly when it is not a vote, its completed data set's shred indexes
//     are ordered; slot updates (SLOT_FIRST_SHRED_RECEIVED, SLOT_COMPLETED) name their filter;
//  3. account filters on the pump program id (in 112 of the 585 transactions of the two replayed
//     fixture slots, always a static key, in no lookup table): include; required and exclude
//     against the token program (a static key of the legacy half of those 112, a lookup-table
//     address of the v0 half: the filters and the keys sent must agree on loaded addresses);
//     exclude against the memo program (a static key of 11 of the 112, in no lookup table); and a
//     vote filter no transaction matches;
//  4. a filter with an invalid key ends the stream with INVALID_ARGUMENT naming the key.
// Every wait has a timeout and the whole test stops itself after 55 s.
// Usage: node client_test.mjs ENDPOINT (http://HOST:PORT, or HOST:PORT)
import Client from "@triton-one/yellowstone-grpc";

const [endpointArg] = process.argv.slice(2);
if (!endpointArg) {
  console.error("usage: node client_test.mjs ENDPOINT");
  process.exit(2);
}
const endpoint = /^https?:\/\//.test(endpointArg) ? endpointArg : `http://${endpointArg}`;

const PUMP = "6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P";
const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111";
const BAD_KEY = "not-a-key";
const WANTED_ALL = 50;
const WANTED_PUMP = 30;
const STEP_MS = 15_000;
const TOTAL_MS = 55_000;

// SlotStatus of geyser.proto.
const SLOT_FIRST_SHRED_RECEIVED = 3;
const SLOT_COMPLETED = 4;

// The gRPC status codes by tonic's Display of a Code (tonic >= 0.13: "code: '<description>'") and
// by its Debug (older tonic: "status: InvalidArgument"): the SDK hands a stream's terminal status
// over as the text of a napi error, not as a numeric code.
const GRPC_CODES = [
  [1, "The operation was cancelled", "Cancelled"],
  [2, "Unknown error", "Unknown"],
  [3, "Client specified an invalid argument", "InvalidArgument"],
  [4, "Deadline expired before operation could complete", "DeadlineExceeded"],
  [5, "Some requested entity was not found", "NotFound"],
  [6, "Some entity that we attempted to create already exists", "AlreadyExists"],
  [7, "The caller does not have permission to execute the specified operation", "PermissionDenied"],
  [8, "Some resource has been exhausted", "ResourceExhausted"],
  [9, "The system is not in a state required for the operation's execution", "FailedPrecondition"],
  [10, "The operation was aborted", "Aborted"],
  [11, "Operation was attempted past the valid range", "OutOfRange"],
  [12, "Operation is not implemented or not supported", "Unimplemented"],
  [13, "Internal error", "Internal"],
  [14, "The service is currently unavailable", "Unavailable"],
  [15, "Unrecoverable data loss or corruption", "DataLoss"],
  [16, "The request does not have valid authentication credentials", "Unauthenticated"],
];

let step = "connecting";
const watchdog = setTimeout(() => {
  console.error(`yellowstone node client: FAILED: the test did not finish within ${TOTAL_MS / 1000} s (${step})`);
  process.exit(1);
}, TOTAL_MS);
watchdog.unref();

function assert(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

function base58(bytes) {
  let n = 0n;
  for (const byte of bytes) n = n * 256n + BigInt(byte);
  let text = "";
  while (n > 0n) {
    text = BASE58[Number(n % 58n)] + text;
    n /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    text = "1" + text;
  }
  return text;
}

function equalBytes(a, b) {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function sameNames(actual, expected) {
  return JSON.stringify([...actual].sort()) === JSON.stringify([...expected].sort());
}

/** Every text of an error and its causes (napi errors carry the gRPC status in a cause). */
function errorTexts(error) {
  const texts = [];
  for (let e = error, depth = 0; e && depth < 10; e = e.cause, depth++) {
    texts.push(typeof e === "object" ? `${e.message ?? ""} ${e.details ?? ""}` : String(e));
  }
  return texts.join(" | ");
}

function describe(error) {
  const code = error && typeof error === "object" && "code" in error ? ` [code ${error.code}]` : "";
  return `${errorTexts(error)}${code}`;
}

/** The numeric gRPC status of a stream's terminal error, when one can be found. */
function grpcCode(error) {
  if (typeof error?.code === "number") return error.code;
  const text = errorTexts(error);
  const display = text.match(/code: '([^']+)'/)?.[1];
  const debug = text.match(/status: ([A-Z][A-Za-z]+)/)?.[1];
  return GRPC_CODES.find(([, description, name]) => description === display || name === debug)?.[0];
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The updates of a stream, read one at a time with a timeout; the stream's end or error is
 * reported once every update before it was read ('close' comes after 'error' or 'end'). */
class Updates {
  constructor(stream) {
    this.buffer = [];
    this.failure = null;
    this.closed = false;
    this.wake = null;
    const wake = () => {
      const resolve = this.wake;
      this.wake = null;
      resolve?.();
    };
    stream.on("data", (update) => {
      this.buffer.push(update);
      wake();
    });
    stream.on("error", (error) => {
      this.failure ??= error;
      wake();
    });
    stream.on("close", () => {
      this.closed = true;
      wake();
    });
  }

  /** The next update; `deadline` (a Date.now() time) bounds a whole step's reading. */
  async next(what, deadline = Date.now() + STEP_MS) {
    for (;;) {
      if (this.buffer.length > 0) return this.buffer.shift();
      if (this.failure) throw new StreamEnded(this.failure, what);
      if (this.closed) throw new StreamEnded(null, what);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

class StreamEnded extends Error {
  constructor(failure, what) {
    super(
      failure
        ? `the stream failed while waiting for ${what}: ${describe(failure)}`
        : `the stream ended while waiting for ${what}`,
    );
    this.failure = failure;
  }
}

function filter(fields = {}) {
  // The SDK's encoder needs the three repeated fields present.
  return { accountInclude: [], accountExclude: [], accountRequired: [], ...fields };
}

function request({ transactions = {}, slots = {}, ping } = {}) {
  return { deshredTransactions: transactions, slots, ping };
}

const stats = {
  transactions: 0,
  votes: 0,
  v0: 0,
  resolved: 0,
  slots: { [SLOT_FIRST_SHRED_RECEIVED]: 0, [SLOT_COMPLETED]: 0 },
  pings: 0,
  pump: 0,
  pumpToken: 0,
  pumpMemo: 0,
  stale: 0,
};

function checkCreatedAt(update, what) {
  const at = update.createdAt;
  assert(at instanceof Date && !Number.isNaN(at.getTime()), `${what}: created_at set`);
  assert(Math.abs(Date.now() - at.getTime()) < 60_000, `${what}: created_at ${at.toISOString()} is now`);
}

/** Checks one transaction update; returns its keys (static, then loaded) in base58. */
function checkTransaction(update) {
  const what = `transaction update ${stats.transactions + 1}`;
  checkCreatedAt(update, what);
  const deshred = update.deshredTransaction;
  assert(deshred?.transaction, `${what}: transaction info present`);
  assert(BigInt(deshred.slot) > 0n, `${what}: slot ${deshred.slot} > 0`);
  const info = deshred.transaction;
  const where = `${what} (slot ${deshred.slot}, signature ${base58(info.signature ?? [])})`;
  assert(info.signature instanceof Uint8Array && info.signature.length === 64, `${where}: 64-byte signature`);
  const tx = info.transaction;
  assert(tx?.message, `${where}: transaction and message present`);
  assert(tx.signatures.length >= 1, `${where}: signatures`);
  assert(tx.signatures.every((s) => s.length === 64), `${where}: 64-byte signatures`);
  assert(equalBytes(info.signature, tx.signatures[0]), `${where}: signature is signatures[0]`);
  const message = tx.message;
  assert(message.header, `${where}: header present`);
  assert(
    message.header.numRequiredSignatures === tx.signatures.length,
    `${where}: ${message.header.numRequiredSignatures} required signatures, ${tx.signatures.length} given`,
  );
  assert(message.accountKeys.length > 0, `${where}: account keys`);
  assert(message.accountKeys.every((k) => k.length === 32), `${where}: 32-byte account keys`);
  assert(message.recentBlockhash.length === 32, `${where}: 32-byte recent blockhash`);
  assert(message.instructions.length > 0, `${where}: instructions`);
  const loaded = [...info.loadedWritableAddresses, ...info.loadedReadonlyAddresses];
  assert(loaded.every((k) => k.length === 32), `${where}: 32-byte loaded addresses`);
  if (message.versioned) {
    stats.v0 += 1;
    const writable = message.addressTableLookups.reduce((n, l) => n + l.writableIndexes.length, 0);
    const readonly = message.addressTableLookups.reduce((n, l) => n + l.readonlyIndexes.length, 0);
    // Unresolved (the table is not known yet) or resolved in full.
    if (loaded.length > 0) {
      assert(
        info.loadedWritableAddresses.length === writable && info.loadedReadonlyAddresses.length === readonly,
        `${where}: loaded ${info.loadedWritableAddresses.length}+${info.loadedReadonlyAddresses.length} ` +
          `addresses for ${writable}+${readonly} lookup indexes`,
      );
      stats.resolved += 1;
    }
  } else {
    assert(message.addressTableLookups.length === 0, `${where}: a legacy message has no lookups`);
    assert(loaded.length === 0, `${where}: a legacy message loads no addresses`);
  }
  const keys = [...message.accountKeys, ...loaded].map(base58);
  for (const ix of message.instructions) {
    // A program is always a static key (lookup tables cannot load one).
    assert(ix.programIdIndex < message.accountKeys.length, `${where}: program index ${ix.programIdIndex} in range`);
  }
  const programs = message.instructions.map((ix) => keys[ix.programIdIndex]);
  if (info.isVote) {
    assert(programs.includes(VOTE_PROGRAM), `${where}: a vote calls the vote program (${programs})`);
    stats.votes += 1;
  }
  assert(
    Number.isInteger(info.completedDataSetStartingShredIndex) &&
      info.completedDataSetStartingShredIndex < info.completedDataSetEndingShredIndexExclusive,
    `${where}: completed data set [${info.completedDataSetStartingShredIndex}, ` +
      `${info.completedDataSetEndingShredIndexExclusive})`,
  );
  stats.transactions += 1;
  return { keys, info, where };
}

function checkSlot(update, filterName) {
  checkCreatedAt(update, "slot update");
  const slot = update.slot;
  assert(sameNames(update.filters, [filterName]), `slot update: filters ${JSON.stringify(update.filters)}`);
  assert(BigInt(slot.slot) > 0n, `slot update: slot ${slot.slot} > 0`);
  assert(
    slot.status === SLOT_FIRST_SHRED_RECEIVED || slot.status === SLOT_COMPLETED,
    `slot update: status ${slot.status} is FIRST_SHRED_RECEIVED or COMPLETED`,
  );
  if (slot.parent !== undefined) {
    assert(BigInt(slot.parent) < BigInt(slot.slot), `slot update: parent ${slot.parent} before ${slot.slot}`);
  }
  stats.slots[slot.status] += 1;
}

/** Reads updates until the pong of `id`, handing every other update but pings to `other`. */
async function untilPong(updates, id, what, other) {
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    const update = await updates.next(`the pong of ping ${id} (${what})`, deadline);
    if (update.ping) {
      stats.pings += 1;
    } else if (update.pong) {
      checkCreatedAt(update, `pong ${update.pong.id}`);
      assert(update.pong.id === id, `${what}: pong ${update.pong.id}, expected ${id}`);
      assert(update.filters.length === 0, `${what}: a pong has no filters (${update.filters})`);
      return;
    } else {
      other(update);
    }
  }
}

async function main() {
  const client = new Client(endpoint, undefined, {});
  await withTimeout(client.connect(), STEP_MS, `connect to ${endpoint}`);
  // Resolves once the server's response headers came: no request has been sent yet.
  step = "subscribing";
  const stream = await withTimeout(client.subscribeDeshred(), STEP_MS, "subscribeDeshred (response headers)");
  const updates = new Updates(stream);
  const write = (message) =>
    withTimeout(
      new Promise((resolve, reject) => stream.write(message, (error) => (error ? reject(error) : resolve()))),
      STEP_MS,
      "a request write",
    );

  // 1. The pong, before any transaction (the session has no filter yet).
  step = "step 1 (ping)";
  await write(request({ ping: { id: 42 } }));
  await untilPong(updates, 42, "step 1", (update) => {
    throw new Error(`step 1: an update before any filter: ${Object.keys(update)}`);
  });

  // 2. Everything, and the non-votes.
  step = "step 2 (all, novote, slots)";
  const allFilters = { all: filter(), novote: filter({ vote: false }) };
  const checkAll = (update) => {
    if (update.slot) {
      checkSlot(update, "interslot");
      return;
    }
    const { info, where } = checkTransaction(update);
    const expected = info.isVote ? ["all"] : ["all", "novote"];
    assert(
      sameNames(update.filters, expected),
      `${where}: filters ${JSON.stringify(update.filters)}, expected ${expected} (vote ${info.isVote})`,
    );
  };
  await write(request({ transactions: allFilters, slots: { interslot: { interslotUpdates: true } } }));
  await write(request({ ping: { id: 43 } }));
  // The first request had no filter: whatever comes before this pong came under the new ones.
  await untilPong(updates, 43, "step 2", checkAll);
  let deadline = Date.now() + STEP_MS;
  while (
    stats.transactions < WANTED_ALL ||
    stats.slots[SLOT_FIRST_SHRED_RECEIVED] === 0 ||
    stats.slots[SLOT_COMPLETED] === 0
  ) {
    const update = await updates.next(
      `${WANTED_ALL} transactions and both slot statuses (${stats.transactions}, ${JSON.stringify(stats.slots)})`,
      deadline,
    );
    if (update.ping) stats.pings += 1;
    else if (update.pong) throw new Error(`step 2: unexpected pong ${update.pong.id}`);
    else checkAll(update);
  }
  assert(
    stats.votes > 0 && stats.votes < stats.transactions,
    `step 2: votes and non-votes (${stats.votes} of ${stats.transactions})`,
  );

  // 3. Account filters: include, required, exclude, and a vote filter nothing matches.
  step = "step 3 (account filters)";
  const pumpFilters = {
    inc: filter({ accountInclude: [PUMP] }),
    req: filter({ accountRequired: [PUMP, TOKEN_PROGRAM] }),
    exc: filter({ accountRequired: [PUMP], accountExclude: [TOKEN_PROGRAM] }),
    nomemo: filter({ accountInclude: [PUMP], accountExclude: [MEMO_PROGRAM] }),
    vote: filter({ vote: true, accountInclude: [PUMP] }),
  };
  await write(request({ transactions: pumpFilters }));
  await write(request({ ping: { id: 44 } }));
  // Updates matched before the switch may still be on their way: skipped.
  await untilPong(updates, 44, "step 3", () => {
    stats.stale += 1;
  });
  deadline = Date.now() + STEP_MS;
  while (stats.pump < WANTED_PUMP) {
    const update = await updates.next(`${WANTED_PUMP} pump transactions (${stats.pump})`, deadline);
    if (update.ping) {
      stats.pings += 1;
      continue;
    }
    assert(!update.pong, `step 3: unexpected pong`);
    assert(!update.slot, `step 3: a slot update without a slot filter`);
    const { keys, info, where } = checkTransaction(update);
    assert(keys.includes(PUMP), `${where}: has ${PUMP} (keys ${keys})`);
    assert(!info.isVote, `${where}: not a vote`);
    const token = keys.includes(TOKEN_PROGRAM);
    const memo = keys.includes(MEMO_PROGRAM);
    const expected = ["inc", token ? "req" : "exc", ...(memo ? [] : ["nomemo"])];
    assert(
      sameNames(update.filters, expected),
      `${where}: filters ${JSON.stringify(update.filters)}, expected ${expected}`,
    );
    stats.pump += 1;
    if (token) stats.pumpToken += 1;
    if (memo) stats.pumpMemo += 1;
  }

  // 4. An invalid key ends the stream with INVALID_ARGUMENT naming it.
  step = "step 4 (invalid key)";
  await write(request({ transactions: { bad: filter({ accountInclude: [BAD_KEY] }) } }));
  let ended;
  deadline = Date.now() + STEP_MS;
  for (;;) {
    try {
      await updates.next("the stream's end after an invalid filter", deadline);
    } catch (error) {
      if (!(error instanceof StreamEnded)) throw error;
      ended = error;
      break;
    }
  }
  assert(ended.failure, "step 4: the stream ended without an error after an invalid filter");
  const code = grpcCode(ended.failure);
  const text = errorTexts(ended.failure);
  assert(code === 3, `step 4: INVALID_ARGUMENT (3), got ${code}: ${describe(ended.failure)}`);
  assert(text.includes(BAD_KEY), `step 4: the error names ${BAD_KEY}: ${text}`);
  stream.destroy();

  console.log(
    `yellowstone node client: ${stats.transactions} transactions (${stats.votes} votes, ${stats.v0} v0, ` +
      `${stats.resolved} with loaded addresses), ${stats.pump} pump (${stats.pumpToken} with the token program, ` +
      `${stats.pumpMemo} with memo), ` +
      `${stats.stale} skipped at the filter switch, ` +
      `${stats.slots[SLOT_FIRST_SHRED_RECEIVED]}+${stats.slots[SLOT_COMPLETED]} slot updates ` +
      `(first shred + completed), ${stats.pings} server pings, pongs 42/43/44, INVALID_ARGUMENT checked`,
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`yellowstone node client: FAILED: ${describe(error)}`);
    if (error?.stack) console.error(error.stack);
    process.exit(1);
  },
);
