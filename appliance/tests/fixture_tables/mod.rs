//! The reference fixtures' address lookup tables, shared by the tests that serve them: the
//! manifest's tables by address, and a table's account as the stand-in cluster serves it.

use decoder::lookup::{
    ADDRESS_LOOKUP_TABLE_PROGRAM_ID, LookupTableMeta, encode_lookup_table_account,
};
use serde_json::Value;
use testkit::cluster_rpc::StandinAccount;

pub type Key = [u8; 32];

pub fn key(text: &str) -> Key {
    bs58::decode(text).into_vec().unwrap().try_into().unwrap()
}

/// The manifest's tables: (address, addresses), in manifest order.
pub fn tables(manifest: &Value) -> Vec<(Key, Vec<Key>)> {
    manifest["address_lookup_tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|table| {
            let addresses = table["addresses"].as_array().unwrap();
            (
                key(table["address"].as_str().unwrap()),
                addresses.iter().map(|a| key(a.as_str().unwrap())).collect(),
            )
        })
        .collect()
}

/// A lookup-table account holding `addresses`, owned by the lookup-table program.
pub fn table_account(addresses: &[Key]) -> StandinAccount {
    let mut data = Vec::new();
    encode_lookup_table_account(&LookupTableMeta::new(Some([9; 32])), addresses, &mut data);
    StandinAccount {
        owner: bs58::encode(ADDRESS_LOOKUP_TABLE_PROGRAM_ID).into_string(),
        data,
        lamports: 1_000_000,
    }
}
