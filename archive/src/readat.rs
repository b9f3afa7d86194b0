//! Positioned reads over index and CAR files: one open handle per file, no seeks, safe to share
//! between threads. Implemented for local files and in-memory bytes (tests).
//!
//! A local file is mapped into memory once at open (read-only, shared) and read by copying from
//! the mapping: with a warm page cache a lookup costs no system call (`pread` was a third of the
//! server's CPU time per getTransaction, several reads per lookup). Files that cannot be mapped
//! (empty files, or where `mmap` fails) are read with `pread`. Archive files are written once and
//! renamed into place by the builder, never rewritten in place; a file truncated underneath a
//! running server would fault on access (SIGBUS) instead of returning a short read.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Random-access reads of a file of known length.
pub trait ReadAt: Send + Sync {
    /// Fills `buf` from `offset`; a short file is an `UnexpectedEof` error.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Length in bytes.
    fn len(&self) -> u64;
    /// Whether one larger read beats several small ones (remote files: one round trip each).
    fn prefers_bulk(&self) -> bool {
        false
    }
    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Reads `len` bytes at `offset` that are likely read again (index buckets): remote files
    /// answer from a bounded cache ([`crate::rangecache`]); others read as [`ReadAt::read_vec`].
    fn read_shared(&self, offset: u64, len: usize) -> io::Result<std::sync::Arc<[u8]>> {
        self.read_vec(offset, len).map(std::sync::Arc::from)
    }
    /// Reads `len` bytes at `offset` into a new buffer.
    /// The range is checked against the length first, so a corrupt length cannot allocate more
    /// than the file holds.
    fn read_vec(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        if offset
            .checked_add(len as u64)
            .is_none_or(|end| end > self.len())
        {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {len} bytes at {offset} past the end ({})",
                    self.len()
                ),
            ));
        }
        let mut buf = vec![0u8; len];
        self.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }
}

/// A local file opened once, mapped read-only (or read with `pread` when it cannot be mapped).
#[derive(Debug)]
pub struct LocalFile {
    file: File,
    len: u64,
    map: Option<Mapping>,
}

/// A read-only shared mapping of a whole file.
#[derive(Debug)]
struct Mapping {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the mapping is read-only and never remapped while it lives; reading it from several
// threads at once is reading shared immutable memory.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn new(file: &File, len: u64) -> Option<Mapping> {
        use std::os::fd::AsRawFd;
        let len = usize::try_from(len).ok().filter(|&len| len > 0)?;
        // SAFETY: a fresh read-only mapping of an open descriptor; the kernel chooses the address
        // and checks the length against the file. The result is checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(Mapping {
            ptr: ptr.cast::<u8>().cast_const(),
            len,
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes until `drop` unmaps them.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region mapped in `new`; no borrow of it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.cast_mut().cast::<libc::c_void>(), self.len);
        }
    }
}

impl LocalFile {
    /// Opens `path` read-only and maps it.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        let map = Mapping::new(&file, len);
        Ok(LocalFile { file, len, map })
    }

    /// Opens `path` read-only without mapping it: every read is a `pread`.
    pub fn open_unmapped(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(LocalFile {
            file,
            len,
            map: None,
        })
    }

    /// Whether reads copy from a memory mapping (else they are `pread` calls).
    pub fn is_mapped(&self) -> bool {
        self.map.is_some()
    }
}

impl ReadAt for LocalFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|end| end > self.len) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {} bytes at {offset} past the end ({})",
                    buf.len(),
                    self.len
                ),
            ));
        }
        match &self.map {
            Some(map) => {
                // In range: checked against `len` (the mapped length) above.
                let start = offset as usize;
                buf.copy_from_slice(&map.bytes()[start..start + buf.len()]);
                Ok(())
            }
            None => FileExt::read_exact_at(&self.file, buf, offset),
        }
    }

    fn len(&self) -> u64 {
        self.len
    }
}

impl ReadAt for Vec<u8> {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn len(&self) -> u64 {
        Vec::len(self) as u64
    }
}

impl<T: ReadAt + ?Sized> ReadAt for Box<T> {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, offset)
    }

    fn len(&self) -> u64 {
        (**self).len()
    }

    fn prefers_bulk(&self) -> bool {
        (**self).prefers_bulk()
    }
    fn read_shared(&self, offset: u64, len: usize) -> io::Result<std::sync::Arc<[u8]>> {
        (**self).read_shared(offset, len)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn mapped_and_unmapped_reads_agree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let mapped = LocalFile::open(&path).unwrap();
        let plain = LocalFile::open_unmapped(&path).unwrap();
        assert!(mapped.is_mapped());
        assert!(!plain.is_mapped());
        for (offset, len) in [(0u64, 1usize), (5, 100), (9_990, 10), (4_096, 4_096)] {
            let a = mapped.read_vec(offset, len).unwrap();
            assert_eq!(a, plain.read_vec(offset, len).unwrap());
            assert_eq!(a, bytes[offset as usize..offset as usize + len]);
        }
        let mut buf = [0u8; 11];
        for file in [&mapped, &plain] {
            let error = ReadAt::read_exact_at(file, &mut buf, 9_990).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
        }
    }

    #[test]
    fn an_empty_file_opens_unmapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        std::fs::write(&path, b"").unwrap();
        let file = LocalFile::open(&path).unwrap();
        assert!(!file.is_mapped());
        assert_eq!(file.read_vec(0, 0).unwrap(), Vec::<u8>::new());
    }
}
