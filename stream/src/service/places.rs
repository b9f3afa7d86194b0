//! `Places`: how many streams are open, in all and per remote address, with their caps; and
//! `OpenStream`, one stream's place, which counts the stream's end (once, by its reason;
//! `client_closed` when the stream is dropped without one, as on a cancel or reset) and gives the
//! place back when dropped.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use thiserror::Error;

use super::{DisconnectReason, StreamMetrics};

/// Why a call got no place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Refused {
    #[error("too many subscribers: {0} streams open (grpc.max_subscribers)")]
    Total(usize),
    #[error("too many subscribers from {ip}: {max} streams open (grpc.max_subscribers_per_ip)")]
    PerIp { ip: IpAddr, max: usize },
}

/// The caps and the per-address counts (one entry per address with a stream open: at most
/// `max_total` entries).
#[derive(Debug)]
pub struct Places {
    max_total: usize,
    max_per_ip: usize,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
}

impl Places {
    pub fn new(max_total: usize, max_per_ip: usize) -> Self {
        Self {
            max_total: max_total.max(1),
            max_per_ip: max_per_ip.max(1),
            per_ip: Mutex::new(HashMap::new()),
        }
    }

    pub fn max_total(&self) -> usize {
        self.max_total
    }

    pub fn max_per_ip(&self) -> usize {
        self.max_per_ip
    }

    fn per_ip(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        // Each change is one insert or remove: consistent even after a panic elsewhere.
        self.per_ip
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn release_ip(&self, ip: IpAddr) {
        let mut per_ip = self.per_ip();
        if let Some(count) = per_ip.get_mut(&ip) {
            *count -= 1;
            if *count == 0 {
                per_ip.remove(&ip);
            }
        }
    }
}

/// One open stream's place.
pub struct OpenStream {
    places: Arc<Places>,
    metrics: Arc<StreamMetrics>,
    ip: Option<IpAddr>,
    counted: bool,
}

impl OpenStream {
    /// A place for a stream from `remote`, or why there is none.
    pub fn take(
        places: &Arc<Places>,
        metrics: &Arc<StreamMetrics>,
        remote: Option<IpAddr>,
    ) -> Result<Self, Refused> {
        let open = metrics.open_streams.fetch_add(1, Ordering::AcqRel);
        if open >= places.max_total {
            metrics.open_streams.fetch_sub(1, Ordering::AcqRel);
            return Err(Refused::Total(places.max_total));
        }
        if let Some(ip) = remote {
            let mut per_ip = places.per_ip();
            let count = per_ip.entry(ip).or_insert(0);
            if *count >= places.max_per_ip {
                drop(per_ip);
                metrics.open_streams.fetch_sub(1, Ordering::AcqRel);
                return Err(Refused::PerIp {
                    ip,
                    max: places.max_per_ip,
                });
            }
            *count += 1;
        }
        Ok(Self {
            places: Arc::clone(places),
            metrics: Arc::clone(metrics),
            ip: remote,
            counted: false,
        })
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
            self.places.release_ip(ip);
        }
        self.metrics.open_streams.fetch_sub(1, Ordering::AcqRel);
    }
}
