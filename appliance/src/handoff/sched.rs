//! Real-time scheduling of the hot threads (`[workers] realtime_priority`): the receive threads
//! and the workers may run under `SCHED_FIFO`, so that when a burst of shreds arrives they take
//! the CPU from ordinary threads (the gRPC runtime, other processes) at once instead of waiting
//! for the fair scheduler. Meant for hosts where these threads share cores with other work; on
//! dedicated, isolated cores it changes nothing. Needs `CAP_SYS_NICE`; without it the thread
//! keeps its ordinary policy and a warning says so.
//!
//! The gRPC runtime's worker threads may run under `SCHED_FIFO` too (`[grpc] realtime_priority`),
//! meant below the pipeline's priority: a published update then reaches its subscribers' tasks
//! at once instead of waiting for an ordinary thread's time slice on a busy core, and the
//! runtime never takes a core from a worker in the middle of a set.
//!
//! All of these threads block when idle (a worker parks after a few yields, a receive thread
//! waits in the kernel, a runtime thread parks), so a real-time priority does not let them spin
//! away a core; the kernel's real-time throttling (`sched_rt_runtime_us`) bounds them
//! regardless. The policy is set with `SCHED_RESET_ON_FORK`: a thread such a thread creates (the
//! runtime's blocking pool) starts with ordinary scheduling.

use tracing::{info, warn};

use crate::config::MAX_PRIORITY;

/// Moves the calling thread to `SCHED_FIFO` at `priority` (1..=99); 0 leaves it alone. Returns
/// whether the thread now runs under `SCHED_FIFO`.
pub fn make_current_thread_realtime(priority: u8, thread: &str) -> bool {
    if priority == 0 {
        return false;
    }
    let param = libc::sched_param {
        sched_priority: i32::from(priority.min(MAX_PRIORITY)),
    };
    let policy = libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK;
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param that outlives the call.
    let status = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if status == 0 {
        info!(thread, priority, "thread runs under SCHED_FIFO");
        true
    } else {
        let error = std::io::Error::last_os_error();
        warn!(thread, priority, %error, "SCHED_FIFO refused (CAP_SYS_NICE?): ordinary scheduling");
        false
    }
}

thread_local! {
    /// Whether this thread already asked for its real-time policy (see `make_realtime_once`).
    static POLICY_SET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// [`make_current_thread_realtime`] on the first call from each thread, nothing afterwards. For
/// the runtime's park hook: only its worker threads park (not its blocking pool), and each parks
/// as soon as it is first idle, so every worker thread gets the policy once, before it sleeps.
pub fn make_realtime_once(priority: u8, thread: &str) {
    if !POLICY_SET.replace(true) {
        make_current_thread_realtime(priority, thread);
    }
}
