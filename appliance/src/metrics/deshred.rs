//! The Prometheus text of Yellowstone's `SubscribeDeshred` (`stream::deshred`): what was
//! published, its sessions (started, refused, open, ended by reason), updates sent and dropped
//! for lag, pongs and refused requests. The highest slot seen is `GetSlot`'s answer.

use std::sync::atomic::{AtomicU64, Ordering};

use ::stream::deshred::DeshredFeed;
use ::stream::service::DisconnectReason;
use front::exposition::{Kind, by_label, counter, single};

pub(super) fn render(feed: &DeshredFeed, out: &mut String) {
    let load = |value: &AtomicU64| value.load(Ordering::Relaxed);
    let published = feed.counters();
    let sessions = feed.sessions();
    for (name, help, value) in [
        (
            "appliance_deshred_transactions_published_total",
            "Transactions published to SubscribeDeshred sessions (encoded once each).",
            load(&published.transactions_published),
        ),
        (
            "appliance_deshred_bytes_published_total",
            "Encoded bytes of the transactions published to SubscribeDeshred sessions.",
            load(&published.bytes_published),
        ),
        (
            "appliance_deshred_slot_updates_published_total",
            "Slot updates (first shred received, completed) published to SubscribeDeshred sessions.",
            load(&published.slot_updates_published),
        ),
        (
            "appliance_deshred_sessions_total",
            "SubscribeDeshred streams started.",
            load(&sessions.sessions_started),
        ),
        (
            "appliance_deshred_sessions_refused_total",
            "SubscribeDeshred calls refused by the subscriber caps (grpc.max_subscribers, per IP, per token).",
            load(&sessions.sessions_refused),
        ),
        (
            "appliance_deshred_updates_sent_total",
            "Updates sent, summed over SubscribeDeshred sessions.",
            load(&sessions.updates_sent),
        ),
        (
            "appliance_deshred_updates_dropped_total",
            "Updates SubscribeDeshred sessions missed by falling behind grpc.deshred_queue.",
            load(&sessions.updates_dropped_lag),
        ),
        (
            "appliance_deshred_pongs_total",
            "Pongs sent in answer to SubscribeDeshred client pings.",
            load(&published.pongs),
        ),
        (
            "appliance_deshred_requests_refused_total",
            "SubscribeDeshred requests refused (a bad filter: INVALID_ARGUMENT).",
            load(&published.requests_refused),
        ),
    ] {
        counter(out, name, help, value);
    }
    by_label(
        out,
        "appliance_deshred_disconnects_total",
        "SubscribeDeshred sessions ended, by reason.",
        "reason",
        DisconnectReason::ALL
            .iter()
            .map(|reason| (reason.label(), sessions.disconnects(*reason))),
    );
    single(
        out,
        "appliance_deshred_sessions_open",
        Kind::Gauge,
        Some("SubscribeDeshred streams open."),
        sessions.open_streams.load(Ordering::Relaxed),
    );
    single(
        out,
        "appliance_deshred_highest_slot",
        Kind::Gauge,
        Some("The highest slot shreds showed (GetSlot's answer)."),
        feed.highest_slot(),
    );
}
