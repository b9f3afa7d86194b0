//! The FEC set Merkle tree (format §7): leaf and node hashing, the root implied by one shred's
//! proof, and the whole 64-leaf tree with its proofs after recovery.
//!
//! ```text
//! leaf(shred) = SHA-256(0x00 "SOLANA_MERKLE_SHREDS_LEAF" ‖ shred[64 .. proof_offset))
//! join(a, b)  = SHA-256(0x01 "SOLANA_MERKLE_SHREDS_NODE" ‖ a[..20] ‖ b[..20])
//! ```
//! A level of odd length joins its last node with itself. The proof stored in a shred holds, bottom
//! up, the first 20 bytes of the sibling at each level. Costs: one leaf hash (~1 KB, ~16 SHA-256
//! blocks) plus six node hashes (2 blocks each) per shred.

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::shred::{MERKLE_PROOF_ENTRY_LEN, SHREDS_PER_FEC_SET};

/// A 32-byte SHA-256 output.
pub type Hash = [u8; 32];

const LEAF_PREFIX: &[u8] = b"\x00SOLANA_MERKLE_SHREDS_LEAF";
const NODE_PREFIX: &[u8] = b"\x01SOLANA_MERKLE_SHREDS_NODE";

/// Nodes of the complete tree over one FEC set: 64 + 32 + 16 + 8 + 4 + 2 + 1.
pub const FEC_SET_TREE_NODES: usize = 2 * SHREDS_PER_FEC_SET - 1;

/// Why a proof did not yield a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MerkleError {
    #[error("proof of {proof_len} bytes is not a whole number of 20-byte entries")]
    RaggedProof { proof_len: usize },
    #[error("erasure index {index} does not fit a proof of {entries} entries")]
    IndexBeyondProof { index: usize, entries: usize },
}

/// Hashes a leaf from the shred bytes `[64, proof_offset)`.
#[inline]
pub fn leaf_hash(leaf_input: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(LEAF_PREFIX);
    hasher.update(leaf_input);
    hasher.finalize().into()
}

/// Joins two children, each truncated to its first 20 bytes.
#[inline]
pub fn join(left: &[u8], right: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(NODE_PREFIX);
    hasher.update(&left[..MERKLE_PROOF_ENTRY_LEN]);
    hasher.update(&right[..MERKLE_PROOF_ENTRY_LEN]);
    hasher.finalize().into()
}

/// The root implied by a leaf at `index` and its bottom-up proof. All bits of `index` must be
/// consumed by the proof, or the shred claims a position the tree does not have.
pub fn root_from_proof(leaf: Hash, index: usize, proof: &[u8]) -> Result<Hash, MerkleError> {
    if !proof.len().is_multiple_of(MERKLE_PROOF_ENTRY_LEN) {
        return Err(MerkleError::RaggedProof {
            proof_len: proof.len(),
        });
    }
    let entries = proof.len() / MERKLE_PROOF_ENTRY_LEN;
    let mut node = leaf;
    let mut position = index;
    for sibling in proof.chunks_exact(MERKLE_PROOF_ENTRY_LEN) {
        node = if position.is_multiple_of(2) {
            join(&node, sibling)
        } else {
            join(sibling, &node)
        };
        position >>= 1;
    }
    if position != 0 {
        return Err(MerkleError::IndexBeyondProof { index, entries });
    }
    Ok(node)
}

/// The nodes on a leaf's path to the root, bottom up: `path[0]` the leaf, `path[6]` the root.
pub type ProofPath = [Hash; PROOF_LEVELS + 1];

/// Levels of a FEC set's tree below the root (proof entries per shred).
pub const PROOF_LEVELS: usize = 6;

/// Index of the first node of each level in level order (64 leaves, then 32, … 1).
const LEVEL_START: [usize; PROOF_LEVELS + 1] = [0, 64, 96, 112, 120, 124, 126];

/// Like [`root_from_proof`], returning every node of the path.
pub fn proof_path(leaf: Hash, index: usize, proof: &[u8]) -> Result<ProofPath, MerkleError> {
    if proof.len() != PROOF_LEVELS * MERKLE_PROOF_ENTRY_LEN {
        return Err(MerkleError::RaggedProof {
            proof_len: proof.len(),
        });
    }
    if index >= SHREDS_PER_FEC_SET {
        return Err(MerkleError::IndexBeyondProof {
            index,
            entries: PROOF_LEVELS,
        });
    }
    let mut path = [leaf; PROOF_LEVELS + 1];
    let mut position = index;
    for (level, sibling) in proof.chunks_exact(MERKLE_PROOF_ENTRY_LEN).enumerate() {
        let node = &path[level];
        path[level + 1] = if position.is_multiple_of(2) {
            join(node, sibling)
        } else {
            join(sibling, node)
        };
        position >>= 1;
    }
    Ok(path)
}

/// The authenticated nodes of one FEC set's tree (20-byte prefixes, all `join` reads), so that a
/// later shred's proof walk stops at the first node already known instead of hashing to the root.
///
/// Invariant: nodes enter the cache only along a path proven to reach the signed root, together
/// with that path's siblings. So when a node is known, the sibling of each of its ancestors is
/// known too, and a shred whose walk stops at a known node has its remaining proof entries
/// compared against those siblings: every stored proof is the authentic one, which recovery and
/// repair serving rely on.
#[derive(Clone)]
pub struct NodeCache {
    prefixes: [[u8; MERKLE_PROOF_ENTRY_LEN]; FEC_SET_TREE_NODES],
    known: u128,
}

impl Default for NodeCache {
    fn default() -> Self {
        Self {
            prefixes: [[0; MERKLE_PROOF_ENTRY_LEN]; FEC_SET_TREE_NODES],
            known: 0,
        }
    }
}

impl NodeCache {
    pub fn clear(&mut self) {
        self.known = 0;
    }

    fn slot(level: usize, position: usize) -> usize {
        LEVEL_START[level] + position
    }

    fn get(&self, level: usize, position: usize) -> Option<&[u8; MERKLE_PROOF_ENTRY_LEN]> {
        let slot = Self::slot(level, position);
        (self.known >> slot & 1 == 1).then(|| &self.prefixes[slot])
    }

    fn put(&mut self, level: usize, position: usize, node: &[u8]) {
        let slot = Self::slot(level, position);
        self.prefixes[slot].copy_from_slice(&node[..MERKLE_PROOF_ENTRY_LEN]);
        self.known |= 1 << slot;
    }

    /// Records an authenticated path (its nodes below the root) and its proof's siblings.
    pub fn record_path(&mut self, index: usize, path: &ProofPath, proof: &[u8]) {
        let mut position = index;
        for (level, sibling) in proof.chunks_exact(MERKLE_PROOF_ENTRY_LEN).enumerate() {
            self.put(level, position, &path[level]);
            self.put(level, position ^ 1, sibling);
            position >>= 1;
        }
    }

    /// Verifies a later shred of the set: hashes up from its leaf until a known node (or the
    /// root) and checks the rest of its proof against the cache. On success the new path is
    /// recorded. `root` is the set's signed root.
    pub fn verify(&mut self, index: usize, leaf: &Hash, proof: &[u8], root: &Hash) -> bool {
        if proof.len() != PROOF_LEVELS * MERKLE_PROOF_ENTRY_LEN || index >= SHREDS_PER_FEC_SET {
            return false;
        }
        let mut path = [*leaf; PROOF_LEVELS + 1];
        let mut position = index;
        let mut level = 0;
        while level < PROOF_LEVELS {
            if let Some(known) = self.get(level, position) {
                if known[..] != path[level][..MERKLE_PROOF_ENTRY_LEN] {
                    return false;
                }
                break;
            }
            let sibling =
                &proof[level * MERKLE_PROOF_ENTRY_LEN..(level + 1) * MERKLE_PROOF_ENTRY_LEN];
            let node = &path[level];
            path[level + 1] = if position.is_multiple_of(2) {
                join(node, sibling)
            } else {
                join(sibling, node)
            };
            position >>= 1;
            level += 1;
        }
        if level == PROOF_LEVELS && path[PROOF_LEVELS] != *root {
            return false;
        }
        // Above the known node the proof was not hashed: it must repeat the known siblings.
        for upper in level..PROOF_LEVELS {
            let entry =
                &proof[upper * MERKLE_PROOF_ENTRY_LEN..(upper + 1) * MERKLE_PROOF_ENTRY_LEN];
            match self.get(upper, position ^ 1) {
                Some(known) if known[..] == *entry => {}
                _ => return false,
            }
            position >>= 1;
        }
        let mut position = index;
        for (below, sibling) in proof
            .chunks_exact(MERKLE_PROOF_ENTRY_LEN)
            .enumerate()
            .take(level)
        {
            self.put(below, position, &path[below]);
            self.put(below, position ^ 1, sibling);
            position >>= 1;
        }
        true
    }
}

/// The complete tree over exactly [`SHREDS_PER_FEC_SET`] leaves, stored level by level in a fixed
/// array (no allocation): `nodes[0..64]` leaves, then 32, 16, … 1 (the root, last).
pub struct FecSetTree {
    nodes: [Hash; FEC_SET_TREE_NODES],
}

/// Leaves of one half of a FEC set's tree: its data shreds, or its coding shreds.
pub const HALF_TREE_LEAVES: usize = SHREDS_PER_FEC_SET / 2;
const HALF_TREE_NODES: usize = 2 * HALF_TREE_LEAVES - 1;

/// The subtree over one half of a FEC set (32 leaves). Its root is the level-5 node of the full
/// tree: the data half's root is the top proof entry of every coding shred, and the other way
/// round, so a half can be checked against any authenticated shred of the other half.
pub struct HalfTree {
    nodes: [Hash; HALF_TREE_NODES],
}

/// Fills the levels above the leaves at `nodes[..leaves]`; `leaves` is a power of two.
fn build_levels(nodes: &mut [Hash], leaves: usize) {
    let mut level_start = 0;
    let mut level_len = leaves;
    while level_len > 1 {
        let next_start = level_start + level_len;
        // A power-of-two leaf count keeps every level even: no self-joins are needed.
        debug_assert!(level_len.is_multiple_of(2));
        for pair in 0..level_len / 2 {
            let left = nodes[level_start + 2 * pair];
            let right = nodes[level_start + 2 * pair + 1];
            nodes[next_start + pair] = join(&left, &right);
        }
        level_start = next_start;
        level_len /= 2;
    }
}

/// Writes the bottom-up sibling prefixes of leaf `index`, one per 20-byte chunk of `out`.
fn write_path(nodes: &[Hash], leaves: usize, index: usize, out: &mut [u8]) {
    debug_assert!(index < leaves);
    let mut level_start = 0;
    let mut level_len = leaves;
    let mut position = index;
    for entry in out.chunks_exact_mut(MERKLE_PROOF_ENTRY_LEN) {
        let sibling = (position ^ 1).min(level_len - 1);
        entry.copy_from_slice(&nodes[level_start + sibling][..MERKLE_PROOF_ENTRY_LEN]);
        level_start += level_len;
        level_len /= 2;
        position >>= 1;
    }
}

impl FecSetTree {
    /// Builds the tree from 64 leaf hashes.
    pub fn from_leaves(leaves: &[Hash; SHREDS_PER_FEC_SET]) -> Self {
        let mut nodes = [[0u8; 32]; FEC_SET_TREE_NODES];
        nodes[..SHREDS_PER_FEC_SET].copy_from_slice(leaves);
        build_levels(&mut nodes, SHREDS_PER_FEC_SET);
        Self { nodes }
    }

    pub fn root(&self) -> &Hash {
        &self.nodes[FEC_SET_TREE_NODES - 1]
    }

    /// Writes the 6-entry proof of leaf `index` into `out` (120 bytes).
    pub fn write_proof(&self, index: usize, out: &mut [u8]) {
        debug_assert_eq!(out.len(), 6 * MERKLE_PROOF_ENTRY_LEN);
        write_path(&self.nodes, SHREDS_PER_FEC_SET, index, out);
    }
}

impl HalfTree {
    /// Builds the subtree from 32 leaf hashes.
    pub fn from_leaves(leaves: &[Hash]) -> Self {
        debug_assert_eq!(leaves.len(), HALF_TREE_LEAVES);
        let mut nodes = [[0u8; 32]; HALF_TREE_NODES];
        nodes[..HALF_TREE_LEAVES].copy_from_slice(&leaves[..HALF_TREE_LEAVES]);
        build_levels(&mut nodes, HALF_TREE_LEAVES);
        Self { nodes }
    }

    pub fn root(&self) -> &Hash {
        &self.nodes[HALF_TREE_NODES - 1]
    }

    /// Writes the first 5 proof entries (100 bytes) of leaf `index` within its half; the sixth is
    /// the other half's root.
    pub fn write_proof(&self, index: usize, out: &mut [u8]) {
        debug_assert_eq!(out.len(), 5 * MERKLE_PROOF_ENTRY_LEN);
        write_path(&self.nodes, HALF_TREE_LEAVES, index, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves() -> [Hash; SHREDS_PER_FEC_SET] {
        let mut leaves = [[0u8; 32]; SHREDS_PER_FEC_SET];
        for (index, leaf) in leaves.iter_mut().enumerate() {
            *leaf = leaf_hash(&[index as u8; 100]);
        }
        leaves
    }

    #[test]
    fn every_proof_leads_to_the_root() {
        let leaves = leaves();
        let tree = FecSetTree::from_leaves(&leaves);
        for (index, leaf) in leaves.iter().enumerate() {
            let mut proof = [0u8; 120];
            tree.write_proof(index, &mut proof);
            assert_eq!(&root_from_proof(*leaf, index, &proof).unwrap(), tree.root());
            // The same proof at a neighbouring position must not verify.
            let other = index ^ 1;
            assert_ne!(&root_from_proof(*leaf, other, &proof).unwrap(), tree.root());
        }
    }

    #[test]
    fn half_trees_are_the_full_trees_level_five() {
        let leaves = leaves();
        let tree = FecSetTree::from_leaves(&leaves);
        let data = HalfTree::from_leaves(&leaves[..32]);
        let coding = HalfTree::from_leaves(&leaves[32..]);
        assert_eq!(&join(data.root(), coding.root()), tree.root());
        let mut full = [0u8; 120];
        let mut half = [0u8; 100];
        tree.write_proof(7, &mut full);
        data.write_proof(7, &mut half);
        assert_eq!(&full[..100], &half[..]);
        assert_eq!(&full[100..], &coding.root()[..20]);
    }

    #[test]
    fn node_cache_accepts_every_honest_proof_and_rejects_altered_ones() {
        let leaves = leaves();
        let tree = FecSetTree::from_leaves(&leaves);
        let proof_of = |index: usize| {
            let mut proof = [0u8; 120];
            tree.write_proof(index, &mut proof);
            proof
        };
        let mut cache = NodeCache::default();
        let first = proof_of(5);
        cache.record_path(5, &proof_path(leaves[5], 5, &first).unwrap(), &first);
        for index in [4, 6, 63, 32, 0, 7, 40] {
            // A wrong top entry: the walk stops early at a known node, the entry check rejects it.
            let mut altered = proof_of(index);
            altered[119] ^= 1;
            assert!(
                !cache
                    .clone()
                    .verify(index, &leaves[index], &altered, tree.root())
            );
            // A wrong leaf.
            let proof = proof_of(index);
            assert!(
                !cache
                    .clone()
                    .verify(index, &leaves[index ^ 1], &proof, tree.root())
            );
            assert!(
                cache.verify(index, &leaves[index], &proof, tree.root()),
                "{index}"
            );
        }
        // Every leaf is now verified with at most a few joins; all still pass.
        for (index, leaf) in leaves.iter().enumerate() {
            assert!(cache.verify(index, leaf, &proof_of(index), tree.root()));
        }
    }

    #[test]
    fn root_from_proof_rejects_bad_shapes() {
        let leaf = [7u8; 32];
        assert_eq!(
            root_from_proof(leaf, 0, &[0u8; 19]),
            Err(MerkleError::RaggedProof { proof_len: 19 })
        );
        assert_eq!(
            root_from_proof(leaf, 64, &[0u8; 120]),
            Err(MerkleError::IndexBeyondProof {
                index: 64,
                entries: 6
            })
        );
    }

    #[test]
    fn join_uses_20_byte_prefixes() {
        let mut a = [1u8; 32];
        let b = [2u8; 32];
        let joined = join(&a, &b);
        a[25] ^= 0xFF;
        assert_eq!(join(&a, &b), joined);
        a[5] ^= 0xFF;
        assert_ne!(join(&a, &b), joined);
    }
}
