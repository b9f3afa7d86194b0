//! Archive read failures logged once each: a damaged piece is hit by every request that needs it,
//! so the first failure with a given message (file and offset) is a warning and the repeats are
//! debug lines. The set of messages already logged is bounded; when full it starts over.

use std::collections::HashSet;
use std::sync::Mutex;

use archive::ArchiveError;

/// Distinct failure messages remembered before the set starts over.
const REMEMBERED: usize = 256;

static LOGGED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Logs `error` at warn the first time its message is seen, at debug afterwards.
pub fn log_archive_failure(error: &ArchiveError) {
    let message = error.to_string();
    if first_time(&message) {
        tracing::warn!(error = %message, label = error.label(), "archive read failed");
    } else {
        tracing::debug!(error = %message, label = error.label(), "archive read failed again");
    }
}

fn first_time(message: &str) -> bool {
    let Ok(mut logged) = LOGGED.lock() else {
        return true;
    };
    let logged = logged.get_or_insert_with(HashSet::new);
    if logged.contains(message) {
        return false;
    }
    if logged.len() >= REMEMBERED {
        logged.clear();
    }
    logged.insert(message.to_owned());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_new_once_and_the_set_stays_bounded() {
        assert!(first_time("damage-log test: x at offset 1"));
        assert!(!first_time("damage-log test: x at offset 1"));
        for i in 0..2 * REMEMBERED {
            first_time(&format!("damage-log test: y {i}"));
        }
        let size = LOGGED.lock().unwrap().as_ref().map_or(0, HashSet::len);
        assert!(size <= REMEMBERED);
    }
}
