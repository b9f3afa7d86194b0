//! Typed `setsockopt`/`getsockopt` over plain-old-data values, and the socket option numbers the
//! `libc` crate does not export for every target. The numbers are the `asm-generic/socket.h`
//! values used by x86_64, aarch64 and riscv64 (mips, sparc, powerpc and parisc differ; the
//! appliance targets the former).
#![deny(unsafe_op_in_unsafe_fn)]

use std::io;
use std::os::fd::RawFd;

pub const SO_RCVBUFFORCE: libc::c_int = 33;
/// `SO_TIMESTAMPNS_OLD`, which is `SO_TIMESTAMPNS` wherever `time_t` is 64-bit.
pub const SO_TIMESTAMPNS: libc::c_int = 35;
pub const SCM_TIMESTAMPNS: libc::c_int = SO_TIMESTAMPNS;
pub const SO_MEMINFO: libc::c_int = 55;
/// `UDP_GRO` (linux/udp.h, level `SOL_UDP`): deliver a coalesced run of equal-sized datagrams
/// as one message, its segment size in a control message of the same type.
pub const UDP_GRO: libc::c_int = 104;
pub const SO_BUSY_POLL: libc::c_int = 46;
pub const SO_PREFER_BUSY_POLL: libc::c_int = 69;
pub const SO_BUSY_POLL_BUDGET: libc::c_int = 70;

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
compile_error!("socket option numbers are only checked for x86_64, aarch64 and riscv64");

/// Marker for values that may be passed to and filled by the kernel byte-for-byte: `#[repr(C)]`
/// structs or integers with no padding-sensitive invariants, valid for any bit pattern.
///
/// # Safety
/// Implementors must be plain old data: every bit pattern is a valid value.
pub unsafe trait Pod: Copy {}

// SAFETY: integers and the libc AF_XDP structs are plain old data.
unsafe impl Pod for libc::c_int {}
// SAFETY: as above.
unsafe impl Pod for libc::xdp_umem_reg {}
// SAFETY: as above.
unsafe impl Pod for libc::xdp_mmap_offsets {}
// SAFETY: as above.
unsafe impl Pod for libc::xdp_statistics {}
// SAFETY: as above (the `SO_MEMINFO` array).
unsafe impl Pod for [u32; 9] {}

/// An all-zero `T`.
pub fn zeroed<T: Pod>() -> T {
    // SAFETY: `T: Pod`, so the all-zero bit pattern is a valid value.
    unsafe { std::mem::zeroed() }
}

/// `setsockopt(fd, level, name, &value, sizeof value)`.
pub fn set<T: Pod>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` is a live, readable `T` of the size passed; the kernel only reads it.
    let result = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            std::ptr::from_ref(value).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `getsockopt` into a `T`; also returns the length the kernel wrote.
pub fn get<T: Pod>(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<(T, usize)> {
    let mut value = zeroed::<T>();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is writable for `len` bytes; `T: Pod`, so whatever the kernel writes (at
    // most `len` bytes, the rest stays zero) is a valid `T`.
    let result = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            std::ptr::from_mut(&mut value).cast(),
            &mut len,
        )
    };
    if result == 0 {
        Ok((value, len as usize))
    } else {
        Err(io::Error::last_os_error())
    }
}
