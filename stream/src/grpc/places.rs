//! `Places`: how many streams are open, in all, per remote address and per access token, with
//! their caps; and `OpenStream`, one stream's place, which counts the stream's end (once, by its
//! reason; `client_closed` when the stream is dropped without one, as on a cancel or reset) and
//! gives the place back when dropped. [`OpenStream::admit`] is how every streaming method takes
//! one: counted as started, or refused with `RESOURCE_EXHAUSTED` and counted as refused.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use thiserror::Error;

use tonic::Status;

use super::metrics::{DisconnectReason, StreamMetrics};

/// Why a call got no place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Refused {
    #[error("too many subscribers: {0} streams open (grpc.max_subscribers)")]
    Total(usize),
    #[error("too many subscribers from {ip}: {max} streams open (grpc.max_subscribers_per_ip)")]
    PerIp { ip: IpAddr, max: usize },
    #[error(
        "too many subscribers with this token: {0} streams open (grpc.max_subscribers_per_token)"
    )]
    PerToken(usize),
}

/// The caps on open streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaceCaps {
    pub total: usize,
    pub per_ip: usize,
    /// `None`: streams are not counted by token (authentication off).
    pub per_token: Option<usize>,
}

/// The caps and the per-address and per-token counts (one entry per address or token with a
/// stream open: at most `total` entries each).
#[derive(Debug)]
pub struct Places {
    caps: PlaceCaps,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
    per_token: Mutex<HashMap<Box<[u8]>, usize>>,
}

impl Places {
    pub fn new(caps: PlaceCaps) -> Self {
        Self {
            caps: PlaceCaps {
                total: caps.total.max(1),
                per_ip: caps.per_ip.max(1),
                per_token: caps.per_token.map(|max| max.max(1)),
            },
            per_ip: Mutex::new(HashMap::new()),
            per_token: Mutex::new(HashMap::new()),
        }
    }

    pub fn caps(&self) -> PlaceCaps {
        self.caps
    }
}

/// Counts one more under `key` unless it holds `max` already.
fn take_in<K: Hash + Eq>(map: &Mutex<HashMap<K, usize>>, key: K, max: usize) -> bool {
    let mut map = lock(map);
    let count = map.entry(key).or_insert(0);
    if *count >= max {
        return false;
    }
    *count += 1;
    true
}

/// Gives one back under `key`, removing the entry at zero.
fn release_in<K: Hash + Eq>(map: &Mutex<HashMap<K, usize>>, key: &K) {
    let mut map = lock(map);
    if let Some(count) = map.get_mut(key) {
        *count -= 1;
        if *count == 0 {
            map.remove(key);
        }
    }
}

fn lock<K>(map: &Mutex<HashMap<K, usize>>) -> MutexGuard<'_, HashMap<K, usize>> {
    // Each change is one insert or remove: consistent even after a panic elsewhere.
    map.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Who opened a stream: its remote address and the token it presented, when known.
#[derive(Debug, Clone, Copy, Default)]
pub struct Client<'a> {
    pub ip: Option<IpAddr>,
    pub token: Option<&'a [u8]>,
}

/// One open stream's place.
pub struct OpenStream {
    places: Arc<Places>,
    metrics: Arc<StreamMetrics>,
    ip: Option<IpAddr>,
    token: Option<Box<[u8]>>,
    counted: bool,
}

impl OpenStream {
    /// A place for a stream of `client`, or why there is none.
    pub fn take(
        places: &Arc<Places>,
        metrics: &Arc<StreamMetrics>,
        client: Client<'_>,
    ) -> Result<Self, Refused> {
        let open = metrics.open_streams.fetch_add(1, Ordering::AcqRel);
        // From here on, dropping `place` gives back what it holds.
        let mut place = Self {
            places: Arc::clone(places),
            metrics: Arc::clone(metrics),
            ip: None,
            token: None,
            counted: true,
        };
        let caps = places.caps;
        if open >= caps.total {
            return Err(Refused::Total(caps.total));
        }
        if let Some(ip) = client.ip {
            if !take_in(&places.per_ip, ip, caps.per_ip) {
                return Err(Refused::PerIp {
                    ip,
                    max: caps.per_ip,
                });
            }
            place.ip = Some(ip);
        }
        if let (Some(max), Some(token)) = (caps.per_token, client.token) {
            let token: Box<[u8]> = token.into();
            if !take_in(&places.per_token, token.clone(), max) {
                return Err(Refused::PerToken(max));
            }
            place.token = Some(token);
        }
        place.counted = false;
        Ok(place)
    }

    /// As [`OpenStream::take`], counted in `metrics` as a started session; a call without a
    /// place is counted as refused and answered `RESOURCE_EXHAUSTED` saying which cap it hit.
    pub fn admit(
        places: &Arc<Places>,
        metrics: &Arc<StreamMetrics>,
        client: Client<'_>,
    ) -> Result<Self, Status> {
        match Self::take(places, metrics, client) {
            Ok(place) => {
                metrics.sessions_started.fetch_add(1, Ordering::Relaxed);
                Ok(place)
            }
            Err(refused) => {
                metrics.sessions_refused.fetch_add(1, Ordering::Relaxed);
                Err(Status::resource_exhausted(refused.to_string()))
            }
        }
    }

    /// Counts the stream's end by `reason` (as [`OpenStream::ended`]) and gives back `status`,
    /// the last thing the stream sends.
    pub fn ending(&mut self, reason: DisconnectReason, status: Status) -> Status {
        self.ended(reason);
        status
    }

    /// Counts the stream's end by its reason, now (before its last status goes out); once.
    pub fn ended(&mut self, reason: DisconnectReason) {
        if !self.counted {
            self.metrics.disconnected(reason);
            self.counted = true;
        }
    }

    /// The end was counted elsewhere already (a lag, counted by the publisher).
    pub fn counted(&mut self) {
        self.counted = true;
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        // Dropped without a reason: the client cancelled or reset the call, or went away.
        self.ended(DisconnectReason::ClientClosed);
        if let Some(ip) = self.ip {
            release_in(&self.places.per_ip, &ip);
        }
        if let Some(token) = &self.token {
            release_in(&self.places.per_token, token);
        }
        self.metrics.open_streams.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Test code: a failed unwrap is a failed test.

    use super::*;

    fn places(per_token: Option<usize>) -> (Arc<Places>, Arc<StreamMetrics>) {
        let caps = PlaceCaps {
            total: 10,
            per_ip: 3,
            per_token,
        };
        (
            Arc::new(Places::new(caps)),
            Arc::new(StreamMetrics::default()),
        )
    }

    fn client<'a>(ip: u8, token: &'a [u8]) -> Client<'a> {
        Client {
            ip: Some(IpAddr::from([10, 0, 0, ip])),
            token: Some(token),
        }
    }

    #[test]
    fn a_token_is_capped_across_addresses_and_its_places_come_back() {
        let (places, metrics) = places(Some(2));
        let first = OpenStream::take(&places, &metrics, client(1, b"alpha")).unwrap();
        let second = OpenStream::take(&places, &metrics, client(2, b"alpha")).unwrap();
        let refused = OpenStream::take(&places, &metrics, client(3, b"alpha")).err();
        assert_eq!(refused, Some(Refused::PerToken(2)));
        // Another token from the same addresses is still admitted.
        let other = OpenStream::take(&places, &metrics, client(1, b"beta")).unwrap();
        assert_eq!(metrics.open_streams.load(Ordering::Acquire), 3);
        drop(first);
        let again = OpenStream::take(&places, &metrics, client(3, b"alpha")).unwrap();
        drop((second, other, again));
        assert_eq!(metrics.open_streams.load(Ordering::Acquire), 0);
        assert!(lock(&places.per_token).is_empty());
        assert!(lock(&places.per_ip).is_empty());
    }

    #[test]
    fn refusals_give_back_what_they_took_and_tokens_count_only_when_capped() {
        let (places, metrics) = places(None);
        let held: Vec<_> = (0..3)
            .map(|_| OpenStream::take(&places, &metrics, client(1, b"alpha")).unwrap())
            .collect();
        let refused = OpenStream::take(&places, &metrics, client(1, b"alpha")).err();
        assert!(matches!(refused, Some(Refused::PerIp { max: 3, .. })));
        assert_eq!(metrics.open_streams.load(Ordering::Acquire), 3);
        assert!(lock(&places.per_token).is_empty());
        drop(held);
        assert!(lock(&places.per_ip).is_empty());
        assert_eq!(metrics.open_streams.load(Ordering::Acquire), 0);
    }
}
