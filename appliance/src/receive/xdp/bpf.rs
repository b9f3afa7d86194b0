//! The `bpf(2)` system calls the AF_XDP path needs, on `#[repr(C)]` prefixes of `union bpf_attr`
//! (`include/uapi/linux/bpf.h`): create the XSKMAP, load the XDP program (with the verifier's log
//! on failure), set map entries, attach with a BPF link, and run the program on a test frame.
//!
//! Every call passes the size of its own struct; the kernel zero-fills the rest of its larger
//! union (`bpf_check_uarg_tail_zero`), so these prefixes stay valid on newer kernels. Every file
//! descriptor comes back as an [`OwnedFd`]: closing the link's fd detaches the program, and the
//! kernel closes it when the process dies, however it dies.
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use xdp_bpf::Insn;

use super::XdpError;

// Commands (`enum bpf_cmd`).
const BPF_MAP_CREATE: libc::c_int = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_int = 2;
const BPF_PROG_LOAD: libc::c_int = 5;
#[cfg(test)]
const BPF_PROG_TEST_RUN: libc::c_int = 10;
const BPF_LINK_CREATE: libc::c_int = 28;

/// `BPF_MAP_TYPE_XSKMAP` (`enum bpf_map_type`).
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
/// `BPF_PROG_TYPE_XDP` (`enum bpf_prog_type`).
const BPF_PROG_TYPE_XDP: u32 = 6;
/// `BPF_XDP` (`enum bpf_attach_type`): the attach type of an XDP link.
const BPF_XDP: u32 = 37;
/// `BPF_ANY`: create or update a map element.
const BPF_ANY: u64 = 0;

/// `XDP_FLAGS_SKB_MODE` and `XDP_FLAGS_DRV_MODE` (`include/uapi/linux/if_link.h`).
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// Verifier log size on a failed load: enough for this program's full trace many times over.
const VERIFIER_LOG_BYTES: usize = 64 * 1024;

#[repr(C)]
#[derive(Default)]
struct MapCreateAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

#[repr(C)]
#[derive(Default)]
struct MapElemAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

#[repr(C)]
#[derive(Default)]
struct LinkCreateAttr {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

#[cfg(test)]
#[repr(C)]
#[derive(Default)]
struct TestRunAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
}

/// Issues one `bpf(2)` command on `attr`.
///
/// # Safety
/// `T` must be the `#[repr(C)]` prefix of `union bpf_attr` that `cmd` reads, and every pointer
/// inside it must be valid for the kernel to read (or write, for output buffers) for the
/// duration of the call.
unsafe fn bpf<T>(cmd: libc::c_int, attr: &mut T) -> io::Result<libc::c_long> {
    // SAFETY: forwarded contract; the size passed is the struct's own size.
    let result = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            std::ptr::from_mut(attr),
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// Takes ownership of a file descriptor a successful call returned.
fn owned(fd: libc::c_long) -> OwnedFd {
    // SAFETY: `fd` was just returned by the kernel as a new descriptor that nothing else owns.
    unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) }
}

/// A 16-byte object name (NUL-padded, truncated), as `bpftool` shows it.
fn object_name(name: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (slot, byte) in out.iter_mut().take(15).zip(name.bytes()) {
        *slot = byte;
    }
    out
}

/// Creates an XSKMAP with `entries` slots (one per receive queue).
pub fn create_xskmap(entries: u32) -> Result<OwnedFd, XdpError> {
    let mut attr = MapCreateAttr {
        map_type: BPF_MAP_TYPE_XSKMAP,
        key_size: 4,
        value_size: 4,
        max_entries: entries,
        map_name: object_name("shred_xsks"),
        ..Default::default()
    };
    // SAFETY: MapCreateAttr is the BPF_MAP_CREATE prefix; it holds no pointers.
    let fd = unsafe { bpf(BPF_MAP_CREATE, &mut attr) }.map_err(XdpError::MapCreate)?;
    Ok(owned(fd))
}

/// Sets `map[key] = value` (for the XSKMAP: queue index → AF_XDP socket fd).
pub fn update_map(map: &OwnedFd, key: u32, value: u32) -> Result<(), XdpError> {
    let mut attr = MapElemAttr {
        map_fd: map.as_raw_fd() as u32,
        key: std::ptr::from_ref(&key) as u64,
        value: std::ptr::from_ref(&value) as u64,
        flags: BPF_ANY,
        ..Default::default()
    };
    // SAFETY: MapElemAttr is the BPF_MAP_UPDATE_ELEM prefix; `key` and `value` are live u32s
    // matching the map's key and value sizes, read by the kernel during the call only.
    unsafe { bpf(BPF_MAP_UPDATE_ELEM, &mut attr) }.map_err(XdpError::MapUpdate)?;
    Ok(())
}

/// Loads an XDP program. On failure the load is repeated with the verifier log enabled and the
/// log is returned in the error.
pub fn load_xdp(program: &[Insn]) -> Result<OwnedFd, XdpError> {
    let bytes = xdp_bpf::to_bytes(program);
    let license = CString::from(c"Apache-2.0");
    let load = |log: Option<&mut Vec<u8>>| {
        let mut attr = ProgLoadAttr {
            prog_type: BPF_PROG_TYPE_XDP,
            insn_cnt: program.len() as u32,
            insns: bytes.as_ptr() as u64,
            license: license.as_ptr() as u64,
            prog_name: object_name("shred_redirect"),
            expected_attach_type: BPF_XDP,
            ..Default::default()
        };
        if let Some(log) = log {
            attr.log_level = 1;
            attr.log_size = log.len() as u32;
            attr.log_buf = log.as_mut_ptr() as u64;
        }
        // SAFETY: ProgLoadAttr is the BPF_PROG_LOAD prefix; `bytes` (insn_cnt × 8 bytes), the
        // NUL-terminated licence and the log buffer (log_size bytes, writable) outlive the call.
        unsafe { bpf(BPF_PROG_LOAD, &mut attr) }
    };
    match load(None) {
        Ok(fd) => Ok(owned(fd)),
        Err(first) => {
            let mut log = vec![0u8; VERIFIER_LOG_BYTES];
            let retry = load(Some(&mut log));
            if let Ok(fd) = retry {
                return Ok(owned(fd));
            }
            let end = log.iter().position(|&byte| byte == 0).unwrap_or(log.len());
            Err(XdpError::ProgramLoad {
                error: first,
                verifier_log: String::from_utf8_lossy(&log[..end]).into_owned(),
            })
        }
    }
}

/// Attaches `program` to the interface with a BPF link in the given mode
/// ([`XDP_FLAGS_SKB_MODE`] or [`XDP_FLAGS_DRV_MODE`]). Dropping the returned fd detaches it.
pub fn attach_xdp_link(program: &OwnedFd, ifindex: u32, mode_flags: u32) -> io::Result<OwnedFd> {
    let mut attr = LinkCreateAttr {
        prog_fd: program.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type: BPF_XDP,
        flags: mode_flags,
    };
    // SAFETY: LinkCreateAttr is the BPF_LINK_CREATE prefix; it holds no pointers.
    let fd = unsafe { bpf(BPF_LINK_CREATE, &mut attr) }?;
    Ok(owned(fd))
}

/// Runs `program` once on `frame` (`BPF_PROG_TEST_RUN`) and returns its XDP verdict.
#[cfg(test)]
pub fn test_run(program: &OwnedFd, frame: &[u8]) -> io::Result<u32> {
    let mut out = vec![0u8; frame.len() + 512];
    let mut attr = TestRunAttr {
        prog_fd: program.as_raw_fd() as u32,
        data_size_in: frame.len() as u32,
        data_size_out: out.len() as u32,
        data_in: frame.as_ptr() as u64,
        data_out: out.as_mut_ptr() as u64,
        repeat: 1,
        ..Default::default()
    };
    // SAFETY: TestRunAttr is the BPF_PROG_TEST_RUN prefix; `frame` is readable for
    // data_size_in bytes and `out` writable for data_size_out bytes during the call.
    unsafe { bpf(BPF_PROG_TEST_RUN, &mut attr) }?;
    Ok(attr.retval)
}
