// A client that is not ours: @grpc/grpc-js with @grpc/proto-loader (protobufjs underneath, which
// keeps only the last occurrence of a message field) reading proto/stream.proto at run time,
// subscribed to a running appliance (its embedded default replay).
//
// Checks: the pong answers the ping first; filtered transactions carry the filter id, a 64-byte
// signature and six non-zero, non-decreasing timing stamps (a field written twice would lose the
// first five here); delta updates, when the feed has any, carry their whole envelope (signature,
// keys, instructions) and timing (the embedded capture has none: the encode-once unit tests of
// stream/src/fanout/encode.rs walk a delta's wire bytes); slot notifications arrive; an invalid filter is refused with INVALID_ARGUMENT naming it.
// Usage: node client_test.mjs PROTO HOST:PORT
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";

const [protoPath, address] = process.argv.slice(2);
const definition = protoLoader.loadSync(protoPath, {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const { stream } = grpc.loadPackageDefinition(definition);
const client = new stream.Stream(address, grpc.credentials.createInsecure());
const WANTED = 20;

function assert(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

function checkTiming(timing, what) {
  assert(timing, `${what}: server_timing present`);
  const stamps = [
    timing.first_read_unix_nanos,
    timing.capture_done_unix_nanos,
    timing.deshred_done_unix_nanos,
    timing.decode_done_unix_nanos,
    timing.publish_unix_nanos,
    timing.subscriber_recv_unix_nanos,
  ].map(BigInt);
  assert(stamps.every((s) => s > 0n), `${what}: all six stamps set ${stamps}`);
  for (let i = 1; i < stamps.length; i++) {
    assert(stamps[i - 1] <= stamps[i], `${what}: stamps non-decreasing ${stamps}`);
  }
}

function checkEnvelope(tx, filter, what) {
  assert(tx.signature.length === 64, `${what}: 64-byte signature`);
  assert(tx.signer.length === 32, `${what}: 32-byte signer`);
  assert(tx.account_keys.length > 0, `${what}: account keys`);
  assert(tx.matched_filters.includes(filter), `${what}: matched filter ${tx.matched_filters}`);
  checkTiming(tx.server_timing, what);
}

function subscribe() {
  return new Promise((resolve, reject) => {
    const call = client.SubscribeDecoded();
    const seen = { transactions: 0, deltas: 0, slots: 0, pong: false };
    let first = true;
    call.on("data", (update) => {
      try {
        if (first) {
          assert(update.update === "pong" && update.pong === 7, `first update is the pong: ${update.update}`);
          seen.pong = true;
          first = false;
          return;
        }
        if (update.update === "slot") {
          assert(BigInt(update.slot.slot) > 0n, "slot number");
          seen.slots += 1;
        } else if (update.update === "transaction") {
          const tx = update.transaction;
          checkEnvelope(tx, "all", "transaction");
          assert(tx.decoded_instructions.length > 0, "transaction: decoded instructions");
          seen.transactions += 1;
        } else if (update.update === "delta") {
          const delta = update.delta;
          assert(delta.envelope, "delta: envelope present");
          checkEnvelope(delta.envelope, "all", "delta envelope");
          assert(delta.dex_legs.length > 0, "delta: legs");
          seen.deltas += 1;
        }
        if (seen.transactions >= WANTED && seen.slots >= 1) {
          call.cancel();
          resolve(seen);
        }
      } catch (error) {
        call.cancel();
        reject(error);
      }
    });
    call.on("error", (error) => {
      if (error.code !== grpc.status.CANCELLED) reject(error);
    });
    // Every program, the aggregator's included, so that deltas come too.
    call.write({ subscriptions: { all: {} }, ping_id: 7 });
    setTimeout(() => {
      call.cancel();
      reject(new Error(`timed out: ${JSON.stringify(seen)}`));
    }, 90_000).unref();
  });
}

function refused() {
  return new Promise((resolve, reject) => {
    const call = client.SubscribeDecoded();
    call.on("data", () => {});
    call.on("error", (error) => {
      try {
        assert(error.code === grpc.status.INVALID_ARGUMENT, `INVALID_ARGUMENT, got ${error.code}`);
        assert(error.details.includes("broken") && error.details.includes("not-a-key!"), error.details);
        resolve();
      } catch (failure) {
        reject(failure);
      }
    });
    call.on("end", () => reject(new Error("an invalid filter was accepted")));
    call.write({ subscriptions: { broken: { accounts_include: ["not-a-key!"] } } });
  });
}

const seen = await subscribe();
await refused();
client.close();
console.log(`node client: ok (${seen.transactions} transactions, ${seen.deltas} deltas, ${seen.slots} slots, INVALID_ARGUMENT checked)`);
