//! Shared helpers of the benchmarks: loading fixture shreds in their framings.
