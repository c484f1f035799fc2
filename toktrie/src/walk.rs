//! The mask walk: [`TokTrie::compute_mask`] and its variants.
//!
//! One of the two modules of the crate allowed `unsafe` (the other is
//! `split.rs`): unchecked stores into the mask and unchecked accesses to
//! the depth stack of the walk by state, in the walks' loops (see
//! DESIGN.md, "Unsafe").
#![allow(unsafe_code)]

use crate::trie::TokTrie;
use crate::{Recognizer, StateRecognizer, TokenId, TokenSet};

impl TokTrie {
    /// Sets `mask` to exactly the tokens `r` allows at its current position:
    /// the ordinary tokens whose every byte `r` accepts in turn, the special
    /// tokens `r` allows through
    /// [`special_allowed`](Recognizer::special_allowed), and nothing else
    /// (no holes, no padding ids, no empty tokens).
    ///
    /// `mask` keeps its length if it is at least [`vocab_size`](TokTrie::vocab_size)
    /// (a padded vocabulary) and grows to it otherwise. `r` is left as it was
    /// found: every push is popped again.
    ///
    /// Time: O(visited nodes) calls of `try_push_byte`, at most the number of
    /// nodes (about 2·V), plus O(mask words + duplicates + specials).
    ///
    /// Generic over the recognizer so its methods inline into the loop; a
    /// `&mut dyn Recognizer` works too, at the cost of a call per byte.
    pub fn compute_mask<R: Recognizer + ?Sized>(&self, r: &mut R, mask: &mut TokenSet) {
        mask.clear();
        self.add_to_mask(r, mask);
    }

    /// Like [`compute_mask`](TokTrie::compute_mask) but adds the allowed
    /// tokens to `mask`, keeping its members (for walking several sub-tries,
    /// see [`subset`](TokTrie::subset), into one mask).
    pub fn add_to_mask<R: Recognizer + ?Sized>(&self, r: &mut R, mask: &mut TokenSet) {
        self.prepare(mask);
        r.trie_started();
        let pending = walk_subtree(self, r, mask.words_mut(), 0);
        r.pop_bytes(pending);
        self.add_allowed_specials(mask, |id| r.special_allowed(id));
        r.trie_finished();
        self.finish(mask);
    }

    /// Adds to `mask` the ordinary tokens that strictly extend `prefix` and
    /// whose bytes past `prefix` `r` accepts, for a recognizer already
    /// positioned after `prefix` (the caller pushed it). The token equal to
    /// `prefix` itself is not considered, and no special token is. Does
    /// nothing when no token starts with `prefix`.
    ///
    /// This walks one sub-trie only: O(size of the subtree) at most.
    pub fn add_extensions_to_mask<R: Recognizer + ?Sized>(
        &self,
        r: &mut R,
        mask: &mut TokenSet,
        prefix: &[u8],
    ) {
        let Some(node) = self.node_at(prefix) else { return };
        self.prepare(mask);
        r.trie_started();
        let pending = walk_subtree(self, r, mask.words_mut(), node);
        r.pop_bytes(pending);
        r.trie_finished();
        self.finish(mask);
    }

    /// Like [`compute_mask`](TokTrie::compute_mask), for a
    /// [`StateRecognizer`]: the walk keeps the states, one per depth.
    ///
    /// Time: O(visited nodes) calls of `step`, plus O(mask words +
    /// duplicates + specials); one allocation of `max_token_len + 1` states.
    pub fn compute_mask_by_state<R: StateRecognizer + ?Sized>(
        &self,
        r: &mut R,
        mask: &mut TokenSet,
    ) {
        mask.clear();
        self.add_to_mask_by_state(r, mask);
    }

    /// Like [`add_to_mask`](TokTrie::add_to_mask), for a [`StateRecognizer`].
    pub fn add_to_mask_by_state<R: StateRecognizer + ?Sized>(
        &self,
        r: &mut R,
        mask: &mut TokenSet,
    ) {
        self.prepare(mask);
        let mut stack = vec![r.start(); self.max_token_len() + 1];
        walk_subtree_by_state(self, r, mask.words_mut(), 0, &mut stack);
        self.add_allowed_specials(mask, |id| r.special_allowed(id));
        r.walk_finished();
        self.finish(mask);
    }

    /// Like [`add_extensions_to_mask`](TokTrie::add_extensions_to_mask), for
    /// a [`StateRecognizer`] whose start state is the one after `prefix`.
    pub fn add_extensions_to_mask_by_state<R: StateRecognizer + ?Sized>(
        &self,
        r: &mut R,
        mask: &mut TokenSet,
        prefix: &[u8],
    ) {
        let Some(node) = self.node_at(prefix) else { return };
        self.prepare(mask);
        let mut stack = vec![r.start(); self.max_token_len() + 1];
        walk_subtree_by_state(self, r, mask.words_mut(), node, &mut stack);
        r.walk_finished();
        self.finish(mask);
    }

    /// Adds the special tokens `allowed` accepts to `mask` (specials are
    /// kept outside the byte trie, so no walk reaches them).
    pub(crate) fn add_allowed_specials(
        &self,
        mask: &mut TokenSet,
        mut allowed: impl FnMut(TokenId) -> bool,
    ) {
        for &(id, _) in &self.specials {
            if allowed(id) {
                mask.insert(id);
            }
        }
    }

    /// Grows `mask` to the vocabulary if needed, so the sink bit exists.
    pub(crate) fn prepare(&self, mask: &mut TokenSet) {
        if mask.len() < self.vocab_size {
            mask.resize(self.vocab_size);
        }
    }

    /// Clears the sink bit and copies each duplicate's membership from the
    /// token its node holds.
    pub(crate) fn finish(&self, mask: &mut TokenSet) {
        let sink = self.vocab_size;
        mask.words_mut()[sink / 64] &= !(1u64 << (sink % 64));
        for &(primary, other) in &self.duplicates {
            if mask.contains(primary) {
                mask.insert(other);
            }
        }
    }
}

/// Walks the subtree of node `root` (the root itself excluded) with `r`,
/// setting the bit of every accepted node's token in `words` (the sink bit
/// `vocab_size` for nodes without one). Returns the number of bytes still
/// pushed, which the caller pops.
///
/// The loop body is one recognizer call and a handful of arithmetic and
/// conditional moves: the bit is set unconditionally (shifted by the accept
/// flag), and the next position and pending pop count are selected, not
/// branched on, from the node's `size` and `up` fields (see `Node`).
#[inline(always)]
pub(crate) fn walk_subtree<R: Recognizer + ?Sized>(
    trie: &TokTrie,
    r: &mut R,
    words: &mut [u64],
    root: usize,
) -> usize {
    let nodes = &trie.nodes[root..root + trie.nodes[root].size()];
    let root_up = nodes[0].up();
    let mut pending = 0;
    let mut p = 1;
    while p < nodes.len() {
        let n = nodes[p];
        r.pop_bytes(pending);
        if r.try_push_byte(n.byte()) {
            let t = n.token() as usize;
            debug_assert!(t / 64 < words.len());
            // SAFETY: `t <= trie.vocab_size` (the builder stores ids below
            // `vocab_size` and the sink `vocab_size` itself), and the caller's
            // `prepare` made the set at least `vocab_size` long, so it has
            // `len / 64 + 1 > vocab_size / 64` words. The checked index cost
            // 8-10% of the walk (DESIGN.md, "Unsafe").
            unsafe { *words.get_unchecked_mut(t / 64) |= 1 << (t % 64) };
            p += 1;
            pending = n.up_if_leaf();
        } else {
            p += n.size();
            pending = n.up() - 1;
        }
    }
    // `pending` counts down to the depth of the node after the subtree;
    // stop at `root`'s depth instead (see DESIGN.md, "Pop accounting").
    pending.saturating_sub(root_up)
}

/// Walks the subtree of node `root` (the root excluded) with a
/// [`StateRecognizer`] started in `stack[0]`, setting the bit of every
/// accepted node's token in `words` as [`walk_subtree`] does. `stack` has
/// at least `max_token_len + 1` states (the caller allocates it once for
/// several walks).
///
/// `stack[d]` holds the state after the node of depth `d` below `root` on
/// the current path (`stack[0] = start`). A node of depth `d` steps from
/// `stack[d - 1]`; the next node's depth follows from `up` (see `Node`):
/// `d + 1` after an accepted inner node, `d + 1 - up` after an accepted leaf
/// or a rejected node. So climbing costs no call, and a state stored for a
/// leaf (never read) costs one store instead of a branch.
#[inline(always)]
pub(crate) fn walk_subtree_by_state<R: StateRecognizer + ?Sized>(
    trie: &TokTrie,
    r: &mut R,
    words: &mut [u64],
    root: usize,
    stack: &mut [R::State],
) {
    let nodes = &trie.nodes[root..root + trie.nodes[root].size()];
    // Depths below `root` are at most the longest token's length; the
    // unchecked accesses below rely on the stack holding that many.
    assert!(stack.len() > trie.max_token_len());
    let mut d = 1usize;
    let mut p = 1;
    while p < nodes.len() {
        let n = nodes[p];
        debug_assert!((1..stack.len()).contains(&d));
        // SAFETY: `d` is the depth below `root` of node `p` (the builder's
        // `up` fields give the next node's depth, as the pop accounting of
        // `walk_subtree` relies on), so `1 <= d <= max_token_len` while `p`
        // is inside the subtree: every node spells a prefix of a token; and
        // `stack.len() > max_token_len` (asserted above). The checked
        // indexes cost two compares and a register a node.
        let parent = unsafe { *stack.get_unchecked(d - 1) };
        match r.step(parent, n.byte()) {
            Some(s) => {
                // SAFETY: as above, `d < stack.len()`.
                unsafe { *stack.get_unchecked_mut(d) = s };
                let t = n.token() as usize;
                debug_assert!(t / 64 < words.len());
                // SAFETY: as in `walk_subtree`: `t <= trie.vocab_size` and
                // the caller's `prepare` made `words` hold bit `vocab_size`.
                unsafe { *words.get_unchecked_mut(t / 64) |= 1 << (t % 64) };
                p += 1;
                // Wraps past the root's depth only after the last node.
                d = (d + 1).wrapping_sub(n.up_if_leaf());
            }
            None => {
                p += n.size();
                d = (d + 1).wrapping_sub(n.up());
            }
        }
    }
}
