//! A bounded cache of byte ranges read from remote files (compactindex bucket headers and
//! buckets, sig-exists buckets), least recently used first out. Without it every getTransaction
//! from an HTTP source fetched its index buckets again (hundreds of KB per lookup). One cache per
//! process ([`shared`]), bounded in bytes ([`configure`], `[archive] http_cache_mb`), with
//! counters for `/metrics` ([`RangeCache::render`]). Entries are keyed by the file's id (a new id
//! for every opened remote file, so a replaced epoch never meets the old one's bytes), offset and
//! length.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::lru::Lru;

/// Default bound of the shared cache.
pub const DEFAULT_BYTES: u64 = 256 << 20;

/// Bookkeeping charged per entry on top of its bytes (map and order entries).
const ENTRY_OVERHEAD: u64 = 96;

/// (file id, offset, length).
type Key = (u64, u64, u32);

/// A byte-bounded LRU cache of ranges.
pub struct RangeCache {
    lru: Lru<Key, Arc<[u8]>>,
}

/// Counter values (for tests and logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheCounts {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub bytes: u64,
    pub entries: u64,
}

static SHARED: OnceLock<Arc<RangeCache>> = OnceLock::new();
static NEXT_FILE: AtomicU64 = AtomicU64::new(1);

/// Sets the bound of the process-wide cache; only the first call (or the first use) counts.
/// Returns whether this call set it.
pub fn configure(bound: u64) -> bool {
    SHARED.set(Arc::new(RangeCache::new(bound))).is_ok()
}

/// The process-wide cache (created with [`DEFAULT_BYTES`] if [`configure`] was not called).
pub fn shared() -> Arc<RangeCache> {
    Arc::clone(SHARED.get_or_init(|| Arc::new(RangeCache::new(DEFAULT_BYTES))))
}

/// A fresh id for a newly opened file.
pub fn next_file_id() -> u64 {
    NEXT_FILE.fetch_add(1, Ordering::Relaxed)
}

impl RangeCache {
    /// A cache holding at most `bound` bytes (0 = caches nothing).
    pub fn new(bound: u64) -> Self {
        RangeCache {
            lru: Lru::new(bound),
        }
    }

    /// The bytes of `(file, offset, len)`: from the cache, or from `load` (then kept).
    pub fn get_or_load<E>(
        &self,
        file: u64,
        offset: u64,
        len: usize,
        load: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<Arc<[u8]>, E> {
        let Ok(len32) = u32::try_from(len) else {
            self.lru.count(false);
            return load().map(Arc::from);
        };
        let key = (file, offset, len32);
        let found = self.lru.touch(&key, Arc::clone);
        self.lru.count(found.is_some());
        if let Some(found) = found {
            return Ok(found);
        }
        // Loaded without the lock held: two threads missing the same range both fetch it.
        let bytes: Arc<[u8]> = Arc::from(load()?);
        let cost = bytes.len() as u64 + ENTRY_OVERHEAD;
        self.lru.upsert(key, cost, || Arc::clone(&bytes), |_| {});
        Ok(bytes)
    }

    pub fn counts(&self) -> CacheCounts {
        let c = self.lru.counts();
        CacheCounts {
            hits: c.hits,
            misses: c.misses,
            evictions: c.evictions,
            bytes: c.cost,
            entries: c.entries,
        }
    }

    /// The configured bound in bytes.
    pub fn bound(&self) -> u64 {
        self.lru.bound()
    }

    /// Appends the Prometheus text.
    pub fn render(&self, out: &mut String) {
        self.lru.render(
            out,
            "appliance_archive_http_cache",
            "bytes",
            "cache of remote archive byte ranges",
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn load(n: usize, fill: u8) -> impl FnOnce() -> Result<Vec<u8>, ()> {
        move || Ok(vec![fill; n])
    }

    #[test]
    fn hits_misses_and_least_recent_eviction() {
        // Room for two 100-byte entries (with overhead), not three.
        let cache = RangeCache::new(2 * (100 + ENTRY_OVERHEAD) + 10);
        assert_eq!(
            &*cache.get_or_load(1, 0, 100, load(100, 1)).unwrap(),
            &[1u8; 100][..]
        );
        cache.get_or_load(1, 100, 100, load(100, 2)).unwrap();
        // Hit on the first: it becomes the most recent; the second is evicted by a third.
        let again = cache
            .get_or_load(1, 0, 100, || Err::<Vec<u8>, ()>(()))
            .unwrap();
        assert_eq!(again[0], 1);
        cache.get_or_load(2, 0, 100, load(100, 3)).unwrap();
        let counts = cache.counts();
        assert_eq!((counts.hits, counts.misses, counts.evictions), (1, 3, 1));
        assert_eq!(counts.entries, 2);
        assert_eq!(counts.bytes, 2 * (100 + ENTRY_OVERHEAD));
        // The evicted range loads again; the kept one does not.
        assert!(
            cache
                .get_or_load(1, 100, 100, || Err::<Vec<u8>, ()>(()))
                .is_err()
        );
        assert!(
            cache
                .get_or_load(2, 0, 100, || Err::<Vec<u8>, ()>(()))
                .is_ok()
        );
    }

    #[test]
    fn too_large_and_zero_bound_are_not_kept() {
        let cache = RangeCache::new(50);
        cache.get_or_load(1, 0, 100, load(100, 1)).unwrap();
        cache.get_or_load(1, 0, 100, load(100, 1)).unwrap();
        assert_eq!(cache.counts().misses, 2);
        assert_eq!(cache.counts().bytes, 0);
        let none = RangeCache::new(0);
        none.get_or_load(1, 0, 1, load(1, 1)).unwrap();
        assert_eq!(none.counts().entries, 0);
    }

    #[test]
    fn rendered_names() {
        let cache = RangeCache::new(1000);
        cache.get_or_load(1, 0, 10, load(10, 1)).unwrap();
        let mut out = String::new();
        cache.render(&mut out);
        assert!(
            out.contains("appliance_archive_http_cache_misses_total 1\n"),
            "{out}"
        );
        assert!(
            out.contains("appliance_archive_http_cache_hits_total 0\n"),
            "{out}"
        );
        assert!(
            out.contains("appliance_archive_http_cache_bound_bytes 1000\n"),
            "{out}"
        );
    }
}
