//! Real-time scheduling of the hot threads (`[workers] realtime_priority`): the receive threads
//! and the workers may run under `SCHED_FIFO`, so that when a burst of shreds arrives they take
//! the CPU from ordinary threads (the gRPC runtime, other processes) at once instead of waiting
//! for the fair scheduler. Meant for hosts where these threads share cores with other work; on
//! dedicated, isolated cores it changes nothing. Needs `CAP_SYS_NICE`; without it the thread
//! keeps its ordinary policy and a warning says so.
//!
//! Both kinds of thread block when idle (a worker parks after a few yields, a receive thread
//! waits in the kernel), so a real-time priority does not let them spin away a core; the
//! kernel's real-time throttling (`sched_rt_runtime_us`) bounds them regardless.

use tracing::{info, warn};

/// Highest `SCHED_FIFO` priority Linux accepts.
pub const MAX_PRIORITY: u8 = 99;

/// Moves the calling thread to `SCHED_FIFO` at `priority` (1..=99); 0 leaves it alone. Returns
/// whether the thread now runs under `SCHED_FIFO`.
pub fn make_current_thread_realtime(priority: u8, thread: &str) -> bool {
    if priority == 0 {
        return false;
    }
    let param = libc::sched_param {
        sched_priority: i32::from(priority.min(MAX_PRIORITY)),
    };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param that outlives the call.
    let status = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if status == 0 {
        info!(thread, priority, "thread runs under SCHED_FIFO");
        true
    } else {
        let error = std::io::Error::last_os_error();
        warn!(thread, priority, %error, "SCHED_FIFO refused (CAP_SYS_NICE?): ordinary scheduling");
        false
    }
}
