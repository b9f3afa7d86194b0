//! Positioned reads (`pread`) over index and CAR files: one open handle per file, no seeks, safe
//! to share between threads. Implemented for local files and in-memory bytes (tests).

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

/// A local file opened once, read with `pread`.
#[derive(Debug)]
pub struct LocalFile {
    file: File,
    len: u64,
}

impl LocalFile {
    /// Opens `path` read-only.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(LocalFile { file, len })
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
        FileExt::read_exact_at(&self.file, buf, offset)
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
}
