// An appliance started without --archive or --upstream (scripts/rpc-client-test.sh): web3.js
// must meet a JSON-RPC error on POST / (code -32601 saying why), not an HTTP 404 body.
import assert from 'node:assert/strict';
import { Connection } from '@solana/web3.js';

const url = process.argv[2];
const connection = new Connection(url, 'confirmed');
for (const call of [() => connection.getSlot(), () => connection.getBlock(1, { maxSupportedTransactionVersion: 0 })]) {
  await assert.rejects(call(), (error) => {
    assert.equal(error.name, 'SolanaJSONRPCError', `${error}`);
    assert.equal(error.code, -32601);
    assert.match(error.message, /serves no JSON-RPC archive \(start it with --archive or --upstream\)/);
    return true;
  });
}
console.log('web3.js: POST / without an archive answers a JSON-RPC error');
