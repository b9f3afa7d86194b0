//! `lookup::parse_lookup_table_account` on arbitrary account data: parsing never panics; an
//! accepted account's addresses are the whole input after the 56-byte metadata area, re-encoding
//! it gives the same length and addresses and parses back to the same table; the cache takes it
//! as a snapshot, exports it and imports the export unchanged. The same bytes also go to the
//! instruction parser and to the cache's import (stored entries are read back from disk).
#![no_main]

use decoder::lookup::{
    self, CacheConfig, LOOKUP_TABLE_META_LEN_BYTES, LookupInstruction, LookupTableCache,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut cache = LookupTableCache::new(CacheConfig {
        max_entries: 2,
        max_bytes: LookupTableCache::MIN_BYTES,
    })
    .expect("valid bounds");
    let key = [7; 32];
    if let Ok(account) = lookup::parse_lookup_table_account(data) {
        let span = decoder_fuzz::span_within(data, account.addresses.as_flattened());
        assert_eq!(span, LOOKUP_TABLE_META_LEN_BYTES..data.len());
        let mut encoded = Vec::new();
        lookup::encode_lookup_table_account(&account.meta, account.addresses, &mut encoded);
        assert_eq!(encoded.len(), data.len());
        assert_eq!(lookup::parse_lookup_table_account(&encoded), Ok(account));
        cache.apply_snapshot(&key, &account, 1);
        let mut exported = Vec::new();
        assert!(cache.export_entry(&key, &mut exported));
        let mut fresh = LookupTableCache::new(cache.config()).expect("valid bounds");
        fresh.import_entry(&key, &exported).expect("own export imports");
        let (before, after) = (cache.peek(&key), fresh.peek(&key));
        let (before, after) = (before.expect("cached"), after.expect("imported"));
        assert_eq!(before.meta, after.meta);
        assert_eq!(before.addresses, after.addresses);
        assert_eq!(before.addresses, account.addresses);
    }
    if let Ok(LookupInstruction::Extend { new_addresses }) = lookup::parse_lookup_instruction(data)
    {
        let span = decoder_fuzz::span_within(data, new_addresses.as_flattened());
        assert_eq!(span.start, 12);
    }
    if cache.import_entry(&[8; 32], data).is_ok() {
        let mut exported = Vec::new();
        assert!(cache.export_entry(&[8; 32], &mut exported));
        assert_eq!(exported, data, "a stored entry has one encoding");
    }
    assert!(cache.bytes() <= cache.config().max_bytes && cache.len() <= 2);
});
