//! The `ServerTiming` clock: wall clock, nanoseconds since the Unix epoch (`CLOCK_REALTIME`, the
//! clock of the kernel's receive timestamps). Every stamp of the six is read from this one clock.

/// Now, in nanoseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}
