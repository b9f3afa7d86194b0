//! Validation of the merged configuration: every bound checked, the first violation named by
//! its field (and flag).

use super::{Config, ConfigError};

/// `value` within `min..=max`, else an error naming `field`.
fn within(field: &'static str, value: usize, min: usize, max: usize) -> Result<(), ConfigError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::Invalid {
            field,
            reason: format!("{value} is outside {min}..={max}"),
        })
    }
}

/// `*`, or `http(s)://host[:port]` with nothing after the host (what a browser sends as
/// `Origin`).
fn is_origin(text: &str) -> bool {
    if text == "*" {
        return true;
    }
    let Some(rest) = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
    else {
        return false;
    };
    !rest.is_empty()
        && !rest.starts_with(':')
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
}

impl Config {
    /// Checks every bound; the first violation is the error.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_sources()?;
        self.validate_frontends()?;
        self.validate_decoder()?;
        self.validate_archive()?;
        self.validate_workers()?;
        self.validate_cluster()?;
        self.validate_lookup_tables()?;
        self.insights.durations()?;
        Ok(())
    }

    fn validate_sources(&self) -> Result<(), ConfigError> {
        within("sources.receive_batch", self.sources.receive_batch, 1, 1024)?;
        within("sources.ring_slots", self.sources.ring_slots, 64, 1 << 24)?;
        if !self.sources.ring_slots.is_power_of_two() {
            return Err(ConfigError::Invalid {
                field: "sources.ring_slots",
                reason: format!("{} is not a power of two", self.sources.ring_slots),
            });
        }
        within(
            "sources.socket_buffer_bytes",
            self.sources.socket_buffer_bytes,
            64 << 10,
            1 << 30,
        )?;
        self.validate_relay()?;
        if self.replay.rate == 0 {
            return Err(ConfigError::Invalid {
                field: "replay.rate",
                reason: "must be positive".into(),
            });
        }
        Ok(())
    }

    /// A relay re-serves its origin's stream: no shreds of its own, and an http(s) origin.
    fn validate_relay(&self) -> Result<(), ConfigError> {
        let Some(origin) = &self.sources.relay else {
            return Ok(());
        };
        if !(origin.starts_with("http://") || origin.starts_with("https://")) {
            return Err(ConfigError::Invalid {
                field: "sources.relay",
                reason: format!("{origin:?} is not an http:// or https:// gRPC address"),
            });
        }
        let shreds = !self.sources.udp.is_empty()
            || !self.sources.xdp.is_empty()
            || self.replay.file.is_some();
        if shreds {
            return Err(ConfigError::Invalid {
                field: "sources.relay",
                reason: "a relay takes no shred source (udp, xdp, replay): it re-serves its origin"
                    .into(),
            });
        }
        if self.sources.stream == super::StreamMode::Off {
            return Err(ConfigError::Invalid {
                field: "sources.relay",
                reason: "a relay streams: sources.stream = \"off\" contradicts it".into(),
            });
        }
        Ok(())
    }

    fn validate_frontends(&self) -> Result<(), ConfigError> {
        within(
            "grpc.subscriber_queue",
            self.grpc.subscriber_queue,
            1,
            1 << 22,
        )?;
        within("grpc.max_filters", self.grpc.max_filters, 1, 4096)?;
        within("grpc.recent_slots", self.grpc.recent_slots, 0, 100_000)?;
        within(
            "grpc.recent_bytes",
            self.grpc.recent_bytes,
            1 << 20,
            1 << 40,
        )?;
        within(
            "http.body_timeout_secs",
            self.http.body_timeout_secs as usize,
            1,
            3600,
        )?;
        within(
            "http.max_connections_per_ip",
            self.http.max_connections_per_ip,
            1,
            1_000_000,
        )?;
        within(
            "grpc.max_connections_per_ip",
            self.grpc.max_connections_per_ip,
            1,
            1_000_000,
        )?;
        within(
            "grpc.first_bytes_timeout_secs",
            self.grpc.first_bytes_timeout_secs as usize,
            1,
            3600,
        )?;
        within("grpc.max_keys", self.grpc.max_keys, 1, 1_000_000)?;
        within(
            "grpc.max_subscribers",
            self.grpc.max_subscribers,
            1,
            1_000_000,
        )?;
        within(
            "grpc.max_subscribers_per_token",
            self.grpc.max_subscribers_per_token,
            1,
            1_000_000,
        )?;
        if self.grpc.tls_cert.is_some() != self.grpc.tls_key.is_some() {
            return Err(ConfigError::Invalid {
                field: "grpc.tls_cert",
                reason: "tls_cert and tls_key go together".into(),
            });
        }
        within("http.workers", self.http.workers, 1, 64)?;
        for origin in &self.http.cors_origins {
            if !is_origin(origin) {
                return Err(ConfigError::Invalid {
                    field: "http.cors_origins (--cors-origin)",
                    reason: format!(
                        "{origin:?} is neither \"*\" nor an origin like https://app.example:8443"
                    ),
                });
            }
        }
        Ok(())
    }

    fn validate_decoder(&self) -> Result<(), ConfigError> {
        let d = &self.decoder;
        within(
            "decoder.max_sets_in_flight",
            d.max_sets_in_flight,
            64,
            1 << 20,
        )?;
        within(
            "decoder.completed_sets_remembered",
            d.completed_sets_remembered,
            64,
            1 << 22,
        )?;
        within(
            "decoder.max_slots_in_flight",
            d.max_slots_in_flight,
            2,
            1 << 16,
        )?;
        within(
            "decoder.slot_lookback",
            d.slot_lookback as usize,
            1,
            1 << 16,
        )?;
        within(
            "decoder.max_slots_ahead",
            d.max_slots_ahead as usize,
            1,
            1 << 20,
        )?;
        within(
            "decoder.max_batch_bytes",
            d.max_batch_bytes,
            1 << 20,
            1 << 30,
        )?;
        within(
            "decoder.max_pending_batches",
            d.max_pending_batches,
            1,
            1 << 20,
        )?;
        within("decoder.max_open_streams", d.max_open_streams, 1, 1 << 16)?;
        Ok(())
    }

    fn validate_archive(&self) -> Result<(), ConfigError> {
        self.archive.catalog_interval()?;
        within(
            "archive.http_cache_mb",
            self.archive.http_cache_mb,
            0,
            1 << 20,
        )?;
        within(
            "archive.slot_memo_entries",
            self.archive.slot_memo_entries,
            0,
            1 << 24,
        )?;
        for url in self.archive.upstream.iter() {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Invalid {
                    field: "archive.upstream",
                    reason: format!("{url:?} is not an http(s) URL"),
                });
            }
        }
        Ok(())
    }

    fn validate_workers(&self) -> Result<(), ConfigError> {
        if let Some(count) = self.workers.count {
            within("workers.count (--workers)", count, 1, 64)?;
        }
        within(
            "workers.forward_slots",
            self.workers.forward_slots,
            64,
            1 << 20,
        )?;
        within(
            "workers.park_timeout_us",
            self.workers.park_timeout_us as usize,
            10,
            1_000_000,
        )?;
        within(
            "workers.realtime_priority (--realtime-priority)",
            usize::from(self.workers.realtime_priority),
            0,
            usize::from(super::MAX_PRIORITY),
        )?;
        within(
            "grpc.realtime_priority (--grpc-realtime-priority)",
            usize::from(self.grpc.realtime_priority),
            0,
            usize::from(super::MAX_PRIORITY),
        )?;
        if let Some(count) = self.workers.count
            && self.workers.cores.len() > count
        {
            return Err(ConfigError::Invalid {
                field: "workers.cores (--worker-cores)",
                reason: format!("{} cores for {count} workers", self.workers.cores.len()),
            });
        }
        Ok(())
    }

    fn validate_cluster(&self) -> Result<(), ConfigError> {
        let cluster = &self.cluster;
        for url in cluster.rpc.iter() {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Invalid {
                    field: "cluster.rpc (--rpc)",
                    reason: format!("{url:?} is not an http(s) URL"),
                });
            }
        }
        for key in &cluster.leaders {
            decoder::LeaderSchedule::key_from_base58(key).map_err(|error| {
                ConfigError::Invalid {
                    field: "cluster.leaders (--leader)",
                    reason: error.to_string(),
                }
            })?;
        }
        within(
            "cluster.timeout_secs",
            cluster.timeout_secs as usize,
            1,
            600,
        )?;
        within(
            "cluster.max_response_mb",
            cluster.max_response_mb as usize,
            1,
            1024,
        )?;
        Ok(())
    }

    fn validate_lookup_tables(&self) -> Result<(), ConfigError> {
        let tables = &self.lookup_tables;
        within(
            "lookup_tables.max_entries",
            tables.max_entries,
            1,
            10_000_000,
        )?;
        within("lookup_tables.max_mb", tables.max_mb, 1, 1 << 20)?;
        within("lookup_tables.fetch_queue", tables.fetch_queue, 1, 1 << 20)?;
        within(
            "lookup_tables.confirm_after_secs",
            tables.confirm_after_secs as usize,
            1,
            86_400,
        )?;
        Ok(())
    }
}
