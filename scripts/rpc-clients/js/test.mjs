// Queries the JSON-RPC archive (serving rpc/tests/fixtures/rpc) with @solana/web3.js's
// Connection: every response must pass web3.js's own response validation and hold the values of
// the fixture archive (blocks.json and the mainnet fixture transactions).
import assert from 'node:assert/strict';
import { Connection, PublicKey } from '@solana/web3.js';

const url = process.argv[2] ?? 'http://127.0.0.1:8899';
const connection = new Connection(url, 'confirmed');

const AMM = '4pCgZ28WbXfpq93VuwbJwjWTvfgesEds9PKXkXmMHUGWmYduKbieMpbckHUwQ8ugVdvrT3CYQDC3n9j4BzPLyJCz';
const DBC = '23BXcBmnM3S3kFxcR49poVKADhGyfdN8GtSGj4tjffFHAYRZHjLpZYWL2McmEMWQT2WcVDwa88CbzvU6N9NjCZCS';
const MEMO = '4FEMgz6UjnqDCSU8hk52bRSvRYaGZf4z4M8fwywML18abfGT3LQdXtVaQvVnQiVBfQ6K4wpZFdDCfggHMNCeLcxe';
const PAYER = 'D7S4hd9r7uMThu7PN2fjzaz1pr5gfGaZ6L4DNwj9tm2W';
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
const v0 = { maxSupportedTransactionVersion: 0 };

const amm = await connection.getTransaction(AMM, v0);
assert.equal(amm.slot, 371820726);
assert.equal(amm.blockTime, 1760004800);
assert.equal(amm.version, 'legacy');
assert.equal(amm.meta.fee, 12277);
assert.equal(amm.meta.computeUnitsConsumed, 150085);
assert.equal(amm.transaction.signatures[0], AMM);
assert.equal(amm.meta.err, null);

const dbc = await connection.getTransaction(DBC, v0);
assert.equal(dbc.version, 0);
assert.equal(dbc.meta.fee, 6200);
assert.equal(dbc.transaction.message.staticAccountKeys.length > 0, true);
assert.equal(dbc.meta.preTokenBalances[0].uiTokenAmount.uiAmountString, '54978.306017');

await assert.rejects(connection.getTransaction(DBC), /Transaction version \(0\) is not supported/);
assert.equal(await connection.getTransaction('1'.repeat(64), v0), null);

const parsed = await connection.getParsedTransaction(MEMO, v0);
const [transfer, memo] = parsed.transaction.message.instructions;
assert.equal(transfer.program, 'system');
assert.equal(transfer.parsed.type, 'transfer');
assert.equal(transfer.parsed.info.lamports, 1000000);
assert.equal(transfer.parsed.info.source, PAYER);
assert.equal(memo.parsed, 'hi');
assert.deepEqual(parsed.meta.err, { InstructionError: [1, { Custom: 6001 }] });
assert.equal(parsed.transaction.message.accountKeys[0].signer, true);

// getParsedTransaction of a real AMM buy: SPL Token and associated-token-account instructions
// come out parsed (the copy-trading view), the AMM program itself partially decoded.
const ammParsed = await connection.getParsedTransaction(AMM, v0);
const outer = ammParsed.transaction.message.instructions;
assert.deepEqual(
  outer.filter((ix) => ix.program === 'spl-associated-token-account').map((ix) => ix.parsed.type),
  ['create', 'create'],
);
assert.equal(outer[7].programId.toBase58(), 'pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA');
assert.equal(typeof outer[7].data, 'string');
const transfers = ammParsed.meta.innerInstructions
  .flatMap((group) => group.instructions)
  .filter((ix) => ix.program === 'spl-token' && ix.parsed.type === 'transferChecked');
assert.equal(transfers.length, 4);
assert.deepEqual(transfers[0].parsed.info.tokenAmount, {
  amount: '1205966600208', decimals: 6, uiAmount: 1205966.600208, uiAmountString: '1205966.600208',
});

const block = await connection.getBlock(371820726, v0);
assert.equal(block.parentSlot, 371820725);
assert.equal(block.transactions.length, 2);
assert.equal(block.transactions[1].transaction.signatures[0], MEMO);
assert.equal(block.rewards.length, 2);
assert.equal(block.rewards[0].rewardType, 'Fee');
// web3.js asks transactionDetails "signatures" (and rewards false) through getBlockSignatures.
const signaturesOnly = await connection.getBlockSignatures(371820726);
assert.deepEqual(signaturesOnly.signatures, [AMM, MEMO]);
const accounts = await connection.getBlock(371820726, { ...v0, transactionDetails: 'accounts' });
assert.equal(accounts.transactions[1].transaction.accountKeys[0].signer, true);
const none = await connection.getBlock(371820726, { ...v0, transactionDetails: 'none', rewards: false });
assert.equal(none.blockhash, block.blockhash);
await assert.rejects(connection.getBlock(371808931, v0), /Slot 371808931 was skipped/);

const rows = await connection.getSignaturesForAddress(new PublicKey(COMPUTE_BUDGET), { limit: 10 });
assert.ok(rows.length >= 3);
for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].slot >= rows[i].slot, 'newest first');
const memoRows = await connection.getSignaturesForAddress(new PublicKey(PAYER));
assert.equal(memoRows.length, 1);
assert.equal(memoRows[0].memo, '[2] hi');
assert.equal(memoRows[0].confirmationStatus, 'finalized');

assert.equal(await connection.getSlot(), 389243770);
assert.equal(await connection.getBlockTime(371808755), 1760000000);
assert.equal(await connection.getBlockTime(0), 1584368940);

// Batches and the rate limit (100 calls per second per IP, burst 100, docs/archive-rpc.md): a
// batch is always answered as an array, so getParsedTransactions (one batch) either returns
// every transaction or rejects with the -32429 error of the first call that did not fit.
const refill = () => new Promise((resolve) => setTimeout(resolve, 1100));
const cycle = (n) => Array.from({ length: n }, (_, i) => [AMM, DBC, MEMO][i % 3]);
await refill();
const hundred = await connection.getParsedTransactions(cycle(100), v0);
assert.equal(hundred.length, 100);
assert.equal(hundred[99].transaction.signatures[0], AMM);
assert.equal(hundred[2].transaction.message.instructions[0].parsed.type, 'transfer');
await refill();
await assert.rejects(connection.getParsedTransactions(cycle(101), v0), (error) => {
  assert.equal(error.name, 'SolanaJSONRPCError', `${error}`);
  assert.equal(error.code, -32429);
  assert.match(error.message, /rate limit exceeded: 100 requests per second per IP/);
  return true;
});
await refill();
const raw = await fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(cycle(101).map((signature, id) => ({
    jsonrpc: '2.0', id, method: 'getTransaction', params: [signature, v0],
  }))),
});
assert.equal(raw.status, 200);
const answers = await raw.json();
assert.equal(answers.length, 101);
assert.ok(answers.slice(0, 100).every((answer, id) => answer.id === id && answer.result.slot > 0));
assert.deepEqual(answers[100], {
  jsonrpc: '2.0', id: 100,
  error: { code: -32429, message: 'rate limit exceeded: 100 requests per second per IP' },
});
// Leave the bucket full for the next client (solana-py, same address).
await refill();

console.log('web3.js: every method parsed and matched');
