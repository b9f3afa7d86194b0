//! `IndexSet`: a small ascending set of indices (matched filters of one subscription, matched legs
//! of one update), inline for the first 64 and heap-allocated beyond.

/// A set of `u32` indices, iterated in ascending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexSet {
    /// Indices below 64.
    Small(u64),
    /// Any indices: bit `i % 64` of word `i / 64`.
    Large(Vec<u64>),
}

impl Default for IndexSet {
    fn default() -> Self {
        Self::Small(0)
    }
}

impl IndexSet {
    /// An empty set sized for indices below `capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        if capacity <= 64 {
            Self::Small(0)
        } else {
            Self::Large(vec![0; capacity.div_ceil(64)])
        }
    }

    /// Every index below `count`.
    pub fn all_below(count: usize) -> Self {
        let mut set = Self::with_capacity(count);
        for index in 0..count {
            set.insert(index);
        }
        set
    }

    pub fn insert(&mut self, index: usize) {
        match self {
            Self::Small(bits) if index < 64 => *bits |= 1 << index,
            Self::Small(bits) => {
                let mut words = vec![*bits];
                words.resize(index / 64 + 1, 0);
                words[index / 64] |= 1 << (index % 64);
                *self = Self::Large(words);
            }
            Self::Large(words) => {
                if words.len() <= index / 64 {
                    words.resize(index / 64 + 1, 0);
                }
                words[index / 64] |= 1 << (index % 64);
            }
        }
    }

    pub fn contains(&self, index: usize) -> bool {
        match self {
            Self::Small(bits) => index < 64 && bits >> index & 1 == 1,
            Self::Large(words) => words
                .get(index / 64)
                .is_some_and(|word| word >> (index % 64) & 1 == 1),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Self::Small(bits) => *bits == 0,
            Self::Large(words) => words.iter().all(|word| *word == 0),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Self::Small(bits) => bits.count_ones() as usize,
            Self::Large(words) => words.iter().map(|word| word.count_ones() as usize).sum(),
        }
    }

    /// The indices in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let words: &[u64] = match self {
            Self::Small(bits) => std::slice::from_ref(bits),
            Self::Large(words) => words,
        };
        words.iter().enumerate().flat_map(|(position, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(position * 64 + bit)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn iterates_the_inserted_indices_in_order(mut indices in proptest::collection::vec(0usize..300, 0..40), capacity in 0usize..300) {
            let mut set = IndexSet::with_capacity(capacity);
            for &index in &indices {
                set.insert(index);
            }
            indices.sort_unstable();
            indices.dedup();
            prop_assert_eq!(set.iter().collect::<Vec<_>>(), indices.clone());
            prop_assert_eq!(set.len(), indices.len());
            prop_assert_eq!(set.is_empty(), indices.is_empty());
            for index in 0..300 {
                prop_assert_eq!(set.contains(index), indices.binary_search(&index).is_ok());
            }
        }
    }

    #[test]
    fn all_below_holds_every_index() {
        assert_eq!(IndexSet::all_below(3).iter().collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(IndexSet::all_below(130).len(), 130);
        assert!(IndexSet::all_below(0).is_empty());
    }
}
