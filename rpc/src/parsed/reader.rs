//! What the instruction parsers read: the instruction's account keys ([`Accounts`]) and its data
//! ([`Reader`], little-endian bincode/Borsh/SPL fields).

use crate::base58::b58;

/// The account keys of an instruction, in its account order.
#[derive(Clone, Copy)]
pub(super) struct Accounts<'a>(pub(super) &'a [String]);

impl<'a> Accounts<'a> {
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The key at `position`.
    pub(super) fn get(&self, position: usize) -> Option<&'a str> {
        self.0.get(position).map(String::as_str)
    }

    /// `Some` when there are at least `count` accounts (the validator's `check_num_accounts`).
    pub(super) fn need(&self, count: usize) -> Option<()> {
        (self.0.len() >= count).then_some(())
    }

    /// The keys from `position` on (empty when past the end).
    pub(super) fn keys(&self, position: usize) -> Option<Vec<String>> {
        Some(self.0.get(position..).unwrap_or_default().to_vec())
    }

    /// The accounts `start..end`.
    pub(super) fn slice(&self, start: usize, end: usize) -> Option<Accounts<'a>> {
        self.0.get(start..end).map(Accounts)
    }
}

/// Little-endian bincode reader over instruction data.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    pub(super) fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, tail) = self.0.split_first_chunk::<N>()?;
        self.0 = tail;
        Some(*head)
    }

    pub(super) fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|[byte]| byte)
    }

    pub(super) fn u16(&mut self) -> Option<u16> {
        self.take::<2>().map(u16::from_le_bytes)
    }

    pub(super) fn i8(&mut self) -> Option<i8> {
        self.take::<1>().map(i8::from_le_bytes)
    }

    pub(super) fn i16(&mut self) -> Option<i16> {
        self.take::<2>().map(i16::from_le_bytes)
    }

    pub(super) fn u32(&mut self) -> Option<u32> {
        self.take::<4>().map(u32::from_le_bytes)
    }

    pub(super) fn i64(&mut self) -> Option<i64> {
        self.take::<8>().map(i64::from_le_bytes)
    }

    pub(super) fn f64(&mut self) -> Option<f64> {
        self.take::<8>().map(f64::from_le_bytes)
    }

    /// A Borsh/bincode `bool` (only 0 and 1).
    pub(super) fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    /// An SPL `COption<Pubkey>` as packed by the token program: tag 0, or tag 1 and the key.
    /// `Some(None)` is "none"; `None` is malformed.
    pub(super) fn coption_key(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.key().map(Some),
            _ => None,
        }
    }

    /// An SPL `COption<u64>` (tag 0, or tag 1 and the value).
    pub(super) fn coption_u64(&mut self) -> Option<Option<u64>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.u64().map(Some),
            _ => None,
        }
    }

    /// A Borsh `Option<u64>` (same layout as `COption<u64>`).
    pub(super) fn option_u64(&mut self) -> Option<Option<u64>> {
        self.coption_u64()
    }

    /// A 32-byte key where all zeroes mean "none" (`OptionalNonZeroPubkey` / `MaybeNull`).
    pub(super) fn maybe_null_key(&mut self) -> Option<Option<String>> {
        let key = self.take::<32>()?;
        Some((key != [0; 32]).then(|| b58(&key)))
    }

    /// A Borsh `String`: u32 length, UTF-8 bytes.
    pub(super) fn borsh_string(&mut self) -> Option<String> {
        let len = usize::try_from(self.u32()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (text, tail) = self.0.split_at(len);
        self.0 = tail;
        std::str::from_utf8(text).ok().map(str::to_string)
    }

    /// `Some` when every byte was read (Borsh's `try_from_slice`).
    pub(super) fn finished(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }

    pub(super) fn u64(&mut self) -> Option<u64> {
        self.take::<8>().map(u64::from_le_bytes)
    }

    pub(super) fn key(&mut self) -> Option<String> {
        self.take::<32>().map(|key| b58(&key))
    }

    /// A bincode `String`: u64 length, UTF-8 bytes.
    pub(super) fn string(&mut self) -> Option<String> {
        let len = usize::try_from(self.u64()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (text, tail) = self.0.split_at(len);
        self.0 = tail;
        std::str::from_utf8(text).ok().map(str::to_string)
    }
}
