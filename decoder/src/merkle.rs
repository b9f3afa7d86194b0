//! The FEC set Merkle tree (spec §7): leaf and node hashing, the root implied by one shred's
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
