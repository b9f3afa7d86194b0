"""Queries the JSON-RPC archive (serving rpc/tests/fixtures/rpc) with solana-py; its responses are
parsed by solders' strict typed deserializers, so every shape must match the validator's."""
import sys

from solana.rpc.api import Client
from solders.pubkey import Pubkey
from solders.signature import Signature

URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8899"
client = Client(URL, commitment="confirmed")

AMM = "4pCgZ28WbXfpq93VuwbJwjWTvfgesEds9PKXkXmMHUGWmYduKbieMpbckHUwQ8ugVdvrT3CYQDC3n9j4BzPLyJCz"
DBC = "23BXcBmnM3S3kFxcR49poVKADhGyfdN8GtSGj4tjffFHAYRZHjLpZYWL2McmEMWQT2WcVDwa88CbzvU6N9NjCZCS"
LOOKUP = "2G2YFBmJBjeUMjBW73RvpNJqKq9eEsZ6DtASecvgTQvKM6JZPQQtc3teHDtLvxUgycJxxygyXy2bpcKc4RtAcYw8"
MEMO = "4FEMgz6UjnqDCSU8hk52bRSvRYaGZf4z4M8fwywML18abfGT3LQdXtVaQvVnQiVBfQ6K4wpZFdDCfggHMNCeLcxe"
PAYER = "D7S4hd9r7uMThu7PN2fjzaz1pr5gfGaZ6L4DNwj9tm2W"
COMPUTE_BUDGET = "ComputeBudget111111111111111111111111111111"

amm = client.get_transaction(Signature.from_string(AMM), max_supported_transaction_version=0).value
assert amm.slot == 371820726, amm.slot
assert amm.block_time == 1760004800
assert amm.transaction.meta.fee == 12277
assert str(amm.transaction.transaction.signatures[0]) == AMM

for signature, fee in [(DBC, 6200), (LOOKUP, 105000)]:
    tx = client.get_transaction(
        Signature.from_string(signature), encoding="base64", max_supported_transaction_version=0
    ).value
    assert tx.transaction.meta.fee == fee
    assert str(tx.transaction.transaction.signatures[0]) == signature

lookup = client.get_transaction(Signature.from_string(LOOKUP), max_supported_transaction_version=0).value
assert len(lookup.transaction.meta.loaded_addresses.writable) == 4
parsed = client.get_transaction(
    Signature.from_string(MEMO), encoding="jsonParsed", max_supported_transaction_version=0
).value
instructions = parsed.transaction.transaction.message.instructions
assert instructions[0].parsed["type"] == "transfer"
assert instructions[1].parsed == "hi"

block = client.get_block(371820726, max_supported_transaction_version=0).value
assert block.parent_slot == 371820725
assert len(block.transactions) == 2
assert block.block_time == 1760004800
assert len(block.rewards) == 2

rows = client.get_signatures_for_address(Pubkey.from_string(COMPUTE_BUDGET), limit=10).value
assert len(rows) >= 3
assert all(rows[i].slot >= rows[i + 1].slot for i in range(len(rows) - 1))
memo_rows = client.get_signatures_for_address(Pubkey.from_string(PAYER)).value
assert memo_rows[0].memo == "[2] hi"
assert str(memo_rows[0].signature) == MEMO

assert client.get_slot().value == 389243770
assert client.get_block_time(371808755).value == 1760000000
print("solana-py: every method parsed and matched")
