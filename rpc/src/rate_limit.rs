//! Per-client token buckets (docs/decisions.md §B): `rate` tokens per second, at most `burst`
//! stored, one token per call (each call of a batch counts). The table of tracked clients is
//! bounded: when it is full, buckets that have refilled completely (indistinguishable from an
//! untracked client) are dropped; if none has, a new client is refused until one has (fail
//! closed, counted), and the sweep runs at most once per `sweep_interval`.
//!
//! IPv4 clients are keyed by address, IPv6 clients by their /64 prefix (one host usually holds a
//! whole /64, so per-address keys would let it mint buckets at will).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The limiter's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimitConfig {
    /// Tokens added per second.
    pub rate: f64,
    /// Bucket capacity.
    pub burst: u32,
    /// Most clients tracked at once.
    pub max_tracked: usize,
    /// Least time between two sweeps of a full table.
    pub sweep_interval: Duration,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        Self {
            rate: 100.0,
            burst: 100,
            max_tracked: 65_536,
            sweep_interval: Duration::from_millis(100),
        }
    }
}

impl RateLimitConfig {
    /// No effective limit (load tests from one address): a practically endless bucket.
    pub fn unlimited() -> Self {
        Self {
            rate: 1e12,
            burst: u32::MAX,
            ..Self::default()
        }
    }
}

/// The decision for one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Allowed,
    /// Not enough tokens; a retry after this long will find them.
    Limited {
        retry_after: Duration,
    },
    /// The table is full of active clients; this new one is refused for now.
    TableFull,
}

/// What `take_up_to` gave: `granted` of the tokens asked for, and the verdict on the rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grant {
    pub granted: u32,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

struct Table {
    buckets: HashMap<IpAddr, Bucket>,
    last_sweep: Option<Instant>,
}

/// Token buckets keyed by client.
pub struct RateLimiter {
    config: RateLimitConfig,
    table: Mutex<Table>,
    limited: AtomicU64,
    table_full: AtomicU64,
}

impl RateLimiter {
    pub fn new(config: RateLimitConfig) -> Self {
        Self {
            config,
            table: Mutex::new(Table {
                buckets: HashMap::new(),
                last_sweep: None,
            }),
            limited: AtomicU64::new(0),
            table_full: AtomicU64::new(0),
        }
    }

    pub fn config(&self) -> &RateLimitConfig {
        &self.config
    }

    /// Takes `cost` tokens from `client`'s bucket at time `now`, or says why not.
    pub fn check(&self, client: IpAddr, cost: u32, now: Instant) -> Verdict {
        self.charge(client, cost, false, now).verdict
    }

    /// Takes as many of `cost` tokens as `client`'s bucket holds (a batch: the calls that fit
    /// are served, docs/decisions.md §B). `granted` says how many; `verdict` is `Allowed` only
    /// when all were.
    pub fn take_up_to(&self, client: IpAddr, cost: u32, now: Instant) -> Grant {
        self.charge(client, cost, true, now)
    }

    fn charge(&self, client: IpAddr, cost: u32, partial: bool, now: Instant) -> Grant {
        let key = bucket_key(client);
        let burst = f64::from(self.config.burst);
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if !table.buckets.contains_key(&key) && table.buckets.len() >= self.config.max_tracked {
            self.sweep(&mut table, now);
            if table.buckets.len() >= self.config.max_tracked {
                self.table_full.fetch_add(1, Ordering::Relaxed);
                return Grant {
                    granted: 0,
                    verdict: Verdict::TableFull,
                };
            }
        }
        let bucket = table.buckets.entry(key).or_insert(Bucket {
            tokens: burst,
            updated: now,
        });
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.config.rate).min(burst);
        bucket.updated = now;
        let whole = f64::from(cost);
        if bucket.tokens >= whole {
            bucket.tokens -= whole;
            return Grant {
                granted: cost,
                verdict: Verdict::Allowed,
            };
        }
        // Whole tokens only: a call is never served on a fraction of one.
        let granted = if partial {
            (bucket.tokens.floor() as u32).min(cost)
        } else {
            0
        };
        bucket.tokens -= f64::from(granted);
        self.limited.fetch_add(1, Ordering::Relaxed);
        let missing = f64::from(cost - granted) - bucket.tokens;
        Grant {
            granted,
            verdict: Verdict::Limited {
                retry_after: Duration::from_secs_f64(missing.max(0.0) / self.config.rate),
            },
        }
    }

    /// Drops buckets that have refilled completely (at most once per sweep interval).
    fn sweep(&self, table: &mut Table, now: Instant) {
        if table
            .last_sweep
            .is_some_and(|last| now.saturating_duration_since(last) < self.config.sweep_interval)
        {
            return;
        }
        table.last_sweep = Some(now);
        let burst = f64::from(self.config.burst);
        let rate = self.config.rate;
        table.buckets.retain(|_, bucket| {
            let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
            bucket.tokens + elapsed * rate < burst
        });
    }

    /// Clients tracked now.
    pub fn tracked(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .buckets
            .len()
    }

    /// Requests refused for lack of tokens.
    pub fn limited_total(&self) -> u64 {
        self.limited.load(Ordering::Relaxed)
    }

    /// Requests refused because the table was full.
    pub fn table_full_total(&self) -> u64 {
        self.table_full.load(Ordering::Relaxed)
    }
}

/// IPv4 address, or the /64 prefix of an IPv6 address (IPv4-mapped addresses count as IPv4).
fn bucket_key(client: IpAddr) -> IpAddr {
    match client {
        IpAddr::V4(_) => client,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn burst_then_refill_at_the_rate() {
        let limiter = RateLimiter::new(RateLimitConfig::default());
        let start = Instant::now();
        for _ in 0..100 {
            assert_eq!(limiter.check(ip(1), 1, start), Verdict::Allowed);
        }
        let Verdict::Limited { retry_after } = limiter.check(ip(1), 1, start) else {
            panic!("the 101st call in the same instant must be limited")
        };
        assert!((retry_after.as_secs_f64() - 0.01).abs() < 1e-9);
        // Another client has its own bucket.
        assert_eq!(limiter.check(ip(2), 1, start), Verdict::Allowed);
        // 50 ms later, 5 tokens are back.
        let later = start + Duration::from_millis(50);
        for _ in 0..5 {
            assert_eq!(limiter.check(ip(1), 1, later), Verdict::Allowed);
        }
        assert!(matches!(
            limiter.check(ip(1), 1, later),
            Verdict::Limited { .. }
        ));
        assert_eq!(limiter.limited_total(), 2);
    }

    #[test]
    fn a_batch_costs_one_token_per_call() {
        let limiter = RateLimiter::new(RateLimitConfig::default());
        let now = Instant::now();
        assert_eq!(limiter.check(ip(1), 60, now), Verdict::Allowed);
        assert!(matches!(
            limiter.check(ip(1), 41, now),
            Verdict::Limited { .. }
        ));
        assert_eq!(limiter.check(ip(1), 40, now), Verdict::Allowed);
    }

    #[test]
    fn a_batch_takes_what_the_bucket_holds() {
        let limiter = RateLimiter::new(RateLimitConfig::default());
        let now = Instant::now();
        assert_eq!(limiter.take_up_to(ip(1), 30, now).granted, 30);
        let grant = limiter.take_up_to(ip(1), 101, now);
        assert_eq!(grant.granted, 70);
        let Verdict::Limited { retry_after } = grant.verdict else {
            panic!("31 calls were refused: {grant:?}")
        };
        // 31 tokens missing at 100 per second.
        assert!((retry_after.as_secs_f64() - 0.31).abs() < 1e-9);
        // The bucket is empty now: nothing of a next batch fits.
        assert_eq!(limiter.take_up_to(ip(1), 5, now).granted, 0);
        // 25 ms later two and a half tokens are back: two whole calls fit.
        let later = now + Duration::from_millis(25);
        assert_eq!(limiter.take_up_to(ip(1), 5, later).granted, 2);
        assert_eq!(limiter.limited_total(), 3);
    }

    #[test]
    fn the_table_is_bounded() {
        let limiter = RateLimiter::new(RateLimitConfig {
            max_tracked: 2,
            ..RateLimitConfig::default()
        });
        let now = Instant::now();
        assert_eq!(limiter.check(ip(1), 1, now), Verdict::Allowed);
        assert_eq!(limiter.check(ip(2), 1, now), Verdict::Allowed);
        assert_eq!(limiter.check(ip(3), 1, now), Verdict::TableFull);
        assert_eq!(limiter.tracked(), 2);
        // One second later both buckets are full again and may be dropped.
        let later = now + Duration::from_secs(1);
        assert_eq!(limiter.check(ip(3), 1, later), Verdict::Allowed);
        assert_eq!(limiter.tracked(), 1);
        assert_eq!(limiter.table_full_total(), 1);
    }

    #[test]
    fn ipv6_clients_share_their_slash_64() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(bucket_key(a), bucket_key(b));
        assert_ne!(bucket_key(a), bucket_key(c));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(bucket_key(mapped), ip(1));
    }
}
