//! [`Node`]: one trie node packed in 8 bytes, and the limits the packing sets.

/// Bits of the `up` field: depths up to 4095 bytes.
const UP_BITS: u32 = 12;
/// Bits of the `size` field: up to about 4.2 million nodes a trie.
const SIZE_BITS: u32 = 22;
/// Bits of the `token` field: up to about 2.1 million token ids.
const TOKEN_BITS: u32 = 21;

const UP_SHIFT: u32 = 8;
const SIZE_SHIFT: u32 = UP_SHIFT + UP_BITS;
const LEAF_SHIFT: u32 = SIZE_SHIFT + SIZE_BITS;
const TOKEN_SHIFT: u32 = LEAF_SHIFT + 1;

/// The longest token (in bytes) a trie can hold.
pub const MAX_TOKEN_LEN: usize = (1 << UP_BITS) - 1;
/// The most nodes a trie can hold (root included).
pub const MAX_NODES: usize = (1 << SIZE_BITS) - 1;
/// The largest vocabulary size (ordinary and special ids) a trie can hold;
/// the id `vocab_size` itself marks "no token" in a node.
pub const MAX_VOCAB: usize = (1 << TOKEN_BITS) - 1;

/// One trie node in 64 bits, laid out in depth-first (pre-)order, so a node's
/// subtree is the `size` nodes starting at the node itself.
///
/// ```text
///  63         43  42  41          20 19        8 7      0
/// +-------------+----+--------------+-----------+--------+
/// | token (21)  |leaf| size (22)    | up (12)   | byte   |
/// +-------------+----+--------------+-----------+--------+
/// ```
///
/// - `byte`: the edge label from the parent (unused at the root).
/// - `up`: `depth(self) - depth(next) + 1`, where `next` is the first node
///   after this node's subtree in depth-first order (a virtual node of depth 1
///   after the last node), and the root has `up = 0`. A walk that has just
///   accepted a leaf pops `up` bytes; one that rejects any node pops `up - 1`.
/// - `size`: the number of nodes in the subtree, this node included; a
///   rejected node's subtree is skipped by adding `size` to the position.
/// - `leaf`: `size == 1`, kept as a bit of its own so that the walk turns it
///   into an all-ones or all-zeros mask with two shifts (see
///   [`Node::up_if_leaf`]) instead of a compare and a conditional move.
/// - `token`: the token id whose bytes spell the path to this node, or the
///   trie's `vocab_size` when no token ends here. That value is a real bit in
///   every `TokenSet` the walk writes to (the set's spare bit or a padding
///   id), so the walk marks every accepted node without a branch and clears
///   that one bit at the end.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Node(u64);

impl Node {
    /// Packs a node; the caller keeps each field within its limit.
    #[inline]
    pub(crate) fn new(byte: u8, up: usize, size: usize, token: u32) -> Node {
        debug_assert!(up <= MAX_TOKEN_LEN && size <= MAX_NODES && token as usize <= MAX_VOCAB);
        Node(
            byte as u64
                | (up as u64) << UP_SHIFT
                | (size as u64) << SIZE_SHIFT
                | ((size == 1) as u64) << LEAF_SHIFT
                | (token as u64) << TOKEN_SHIFT,
        )
    }

    #[inline(always)]
    pub(crate) fn byte(self) -> u8 {
        self.0 as u8
    }

    #[inline(always)]
    pub(crate) fn up(self) -> usize {
        ((self.0 >> UP_SHIFT) & ((1 << UP_BITS) - 1)) as usize
    }

    #[inline(always)]
    pub(crate) fn size(self) -> usize {
        ((self.0 >> SIZE_SHIFT) & ((1 << SIZE_BITS) - 1)) as usize
    }

    /// `up` for a leaf, 0 for an inner node: the pops due after the node
    /// was accepted. Branch-free: the leaf bit, shifted to the sign and
    /// back, is a mask of all ones or all zeros.
    #[inline(always)]
    pub(crate) fn up_if_leaf(self) -> usize {
        let mask = ((self.0 << (63 - LEAF_SHIFT)) as i64 >> 63) as usize;
        self.up() & mask
    }

    /// The token field (the trie's `vocab_size` when no token ends here).
    #[inline(always)]
    pub(crate) fn token(self) -> u32 {
        (self.0 >> TOKEN_SHIFT) as u32
    }

    pub(crate) fn with_up(self, up: usize) -> Node {
        Node::new(self.byte(), up, self.size(), self.token())
    }

    pub(crate) fn with_size(self, size: usize) -> Node {
        Node::new(self.byte(), self.up(), size, self.token())
    }

    pub(crate) fn with_token(self, token: u32) -> Node {
        Node::new(self.byte(), self.up(), self.size(), token)
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("byte", &self.byte())
            .field("up", &self.up())
            .field("size", &self.size())
            .field("token", &self.token())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_at_their_limits() {
        let n = Node::new(0xFF, MAX_TOKEN_LEN, MAX_NODES, MAX_VOCAB as u32);
        assert_eq!(
            (n.byte(), n.up(), n.size(), n.token()),
            (0xFF, MAX_TOKEN_LEN, MAX_NODES, MAX_VOCAB as u32)
        );
        let n = Node::new(7, 3, 5, 11);
        assert_eq!((n.byte(), n.up(), n.size(), n.token()), (7, 3, 5, 11));
        assert_eq!(n.with_up(9).up(), 9);
        assert_eq!(n.with_size(9).size(), 9);
        assert_eq!(n.with_token(9).token(), 9);
        assert_eq!((n.up_if_leaf(), n.with_size(1).up_if_leaf()), (0, 3));
        assert_eq!(Node::new(1, MAX_TOKEN_LEN, 1, MAX_VOCAB as u32).up_if_leaf(), MAX_TOKEN_LEN);
        assert_eq!(std::mem::size_of::<Node>(), 8);
    }
}
