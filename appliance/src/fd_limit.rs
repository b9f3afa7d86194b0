//! The process's descriptor limit: raised at start from its soft value to its hard value (what an
//! unprivileged process may do), and reported, so that connection floods hit the per-IP caps and
//! deadlines long before `EMFILE`.

use tracing::{info, warn};

/// Soft and hard `RLIMIT_NOFILE` after [`raise`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    pub soft: u64,
    pub hard: u64,
}

/// Raises the soft descriptor limit to the hard one; returns the limit in force afterwards.
pub fn raise() -> Option<FdLimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable `rlimit` for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        warn!(error = %std::io::Error::last_os_error(), "descriptor limit unknown");
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: `raised` is a valid `rlimit`; the kernel only reads it.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        } else {
            warn!(error = %std::io::Error::last_os_error(), "descriptor limit not raised");
        }
    }
    let limit = FdLimit {
        soft: limit.rlim_cur,
        hard: limit.rlim_max,
    };
    info!(soft = limit.soft, hard = limit.hard, "descriptor limit");
    Some(limit)
}

#[cfg(test)]
mod tests {
    #[test]
    fn after_raising_the_soft_limit_is_the_hard_one() {
        let limit = super::raise().unwrap();
        assert_eq!(limit.soft, limit.hard);
    }
}
