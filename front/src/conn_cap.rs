//! Open connections per remote address, capped: each accepted connection takes an [`IpSlot`]
//! (refused when its address already holds the cap), given back when the slot is dropped with the
//! connection. The gRPC accept loop and the HTTP server each keep one. The map holds one entry per
//! address with a connection open, so it is bounded by the open connections.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::exposition::{Kind, family, sample, single};

/// The per-address counts, with the gauges `/metrics` reports.
#[derive(Debug, Default)]
pub struct PerIpCap {
    open_by_ip: Mutex<HashMap<IpAddr, usize>>,
    open: AtomicUsize,
    refused: AtomicU64,
}

impl PerIpCap {
    /// Connections holding a slot now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Connections refused so far because their address was at the cap.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    fn map(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        // Each change is one insert or remove: consistent even after a panic elsewhere.
        self.open_by_ip
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for a connection from `ip`, or `None` (counted) when `ip` holds `cap` (at least one)
    /// already.
    pub fn try_take(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<IpSlot> {
        let mut map = self.map();
        let count = map.entry(ip).or_insert(0);
        if *count >= cap.max(1) {
            drop(map);
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *count += 1;
        self.open.fetch_add(1, Ordering::Relaxed);
        Some(IpSlot {
            ip,
            owner: Arc::clone(self),
        })
    }

    /// The HTTP listener's families: open connections and per-address refusals.
    pub fn render_http_metrics(&self, out: &mut String) {
        single(
            out,
            "appliance_http_connections_open",
            Kind::Gauge,
            Some("TCP connections the HTTP listener holds open."),
            self.open(),
        );
        family(
            out,
            "appliance_http_connections_refused_total",
            Kind::Counter,
            Some(
                "HTTP connections closed at accept: their address held http.max_connections_per_ip.",
            ),
        );
        let refused = "appliance_http_connections_refused_total";
        sample(out, refused, &[("reason", "per_ip")], self.refused());
    }

    fn give_back(&self, ip: IpAddr) {
        let mut map = self.map();
        if let Some(count) = map.get_mut(&ip) {
            *count -= 1;
            if *count == 0 {
                map.remove(&ip);
            }
        }
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One connection's place; given back when dropped.
#[derive(Debug)]
pub struct IpSlot {
    ip: IpAddr,
    owner: Arc<PerIpCap>,
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        self.owner.give_back(self.ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_per_ip_count_is_capped_and_returned() {
        let cap = Arc::new(PerIpCap::default());
        let ip = IpAddr::from([10, 0, 0, 1]);
        let first = cap.try_take(ip, 2);
        let second = cap.try_take(ip, 2);
        assert!(first.is_some() && second.is_some());
        assert!(cap.try_take(ip, 2).is_none());
        let other = cap.try_take(IpAddr::from([10, 0, 0, 2]), 2);
        assert!(other.is_some());
        assert_eq!((cap.open(), cap.refused()), (3, 1));
        drop(first);
        let again = cap.try_take(ip, 2);
        assert!(again.is_some());
        drop((second, again));
        assert!(!cap.map().contains_key(&ip));
        assert_eq!(cap.open(), 1);
    }
}
