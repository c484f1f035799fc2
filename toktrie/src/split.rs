//! Split masks: a mask as a precomputed set plus a few small walks, for
//! positions where almost every token is allowed (free text).
//!
//! A [`SplitRecognizer`] has an *inner* state (for the Earley parser: the
//! lexer state of the lexeme in progress) whose steps do not depend on the
//! rest of the position as long as the bytes stay inside the current unit.
//! [`TokTrie::split`] walks the trie once with the inner steps only: the
//! tokens whose every byte stays inside are allowed at every position with
//! that inner state, whatever the rest; the nodes where an inner step gives
//! up (the *frontier*) are left to the full recognizer.
//! [`TokTrie::compute_mask_split`] then builds the mask of one position
//! from the split: copy the inside set (the trie's token set minus a short
//! list of outside words), step the full recognizer into each frontier node
//! from its parent's state (lifted from the inner state) and walk that
//! node's subtree as [`compute_mask_by_state`](TokTrie::compute_mask_by_state)
//! would. The result is the same set: each token is decided on its own path,
//! and on the inside part of that path the inner and full steps agree.
//!
//! A split names its frontier parents by inner state, which only means
//! something to the recognizer that made it. It also keeps each parent's
//! path (the bytes from the root), so that [`Split::localize`] can rebuild
//! it for another recognizer whose inner state at the start has the same
//! steps: one inner step per path byte, no trie walk. That is how a
//! split made by one matcher serves the other matchers of a grammar.
//!
//! [`TokTrie::split_from`] derives the split at one inner state from the
//! split at another: it walks only where the two states' paths differ, and
//! keeps the other's answers below every node where they meet.
//!
//! The split walk's loop reads and writes its depth stack and the inside
//! set unchecked, as the walk by state does (`walk.rs`; DESIGN.md,
//! "Unsafe"); nothing else here is `unsafe`.
#![allow(unsafe_code)]

use std::sync::Arc;

use crate::node::Node;
use crate::trie::{TokTrie, byte_group};
use crate::walk::{walk_subtree, walk_subtree_by_state};
use crate::{Recognizer, StateRecognizer, TokenSet};

/// A [`StateRecognizer`] with an inner state whose steps inside the current
/// unit do not depend on the rest of the position.
///
/// Contract, for every start state `s` of a walk with `inner(s) = i0`:
/// - if `inner_step(i0, b) = Some(j)` then `step(s, b) = Some(lift(s, j))`;
/// - if `inner_step(i, b) = Some(j)` for an inner state `i` reached from
///   `i0` by inner steps, then `step(lift(s, i), b) = Some(lift(s, j))`.
///
/// `inner_step` may give up (`None`) whenever it likes: the full `step`
/// decides those bytes. It must answer the same for the same arguments
/// every time (a split is reused at every position with the same inner
/// state).
pub trait SplitRecognizer: StateRecognizer {
    /// The inner part of a state.
    type Inner: Copy;

    /// The inner part of `state`.
    fn inner(&mut self, state: Self::State) -> Self::Inner;

    /// The inner state after `byte`, when the byte stays inside the current
    /// unit; `None` to leave the byte to [`step`](StateRecognizer::step).
    fn inner_step(&mut self, inner: Self::Inner, byte: u8) -> Option<Self::Inner>;

    /// The full state of a position reached from `start` by inner steps
    /// ending in `inner`.
    fn lift(&mut self, start: Self::State, inner: Self::Inner) -> Self::State;

    /// Whether `byte` is rejected at every position whose inner state is
    /// `inner`: for every start `s` whose inner state reaches `inner` by
    /// inner steps, `step(lift(s, inner), byte)` is `None`. A split leaves
    /// such nodes out altogether (their tokens are outside and nothing is
    /// walked below them per mask). The default, `false`, is always sound.
    fn inner_rejects(&mut self, inner: Self::Inner, byte: u8) -> bool {
        let _ = (inner, byte);
        false
    }

    /// The bytes on which `inner` steps to itself by an inner step, as a
    /// 256-bit set (bit `b % 64` of word `b / 64`); `None` (the default)
    /// when unknown. [`TokTrie::split`] then takes every subtree whose
    /// bytes all loop on its parent's state as inside without stepping (in
    /// free text, most of the trie). Every byte set here must satisfy
    /// `inner_step(inner, b) == Some(inner)`.
    fn inner_loops(&mut self, inner: Self::Inner) -> Option<[u64; 4]> {
        let _ = inner;
        None
    }
}

/// Limits of [`TokTrie::split`]: a split past them is refused (`None`),
/// since its mask would cost about as much as a plain walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SplitLimits {
    /// The most frontier nodes (each costs one full step per mask).
    pub max_frontier: usize,
    /// The most mask words holding an outside token (each costs one word
    /// operation per mask).
    pub max_outside_words: usize,
}

impl SplitLimits {
    /// Limits for `trie`: at most 1,024 frontier nodes, and outside tokens
    /// in at most half of the mask words. A split past half the words is
    /// a position where few tokens stay inside the lexeme (a lexeme's
    /// start), which a walk answers as fast; below it, the outside words
    /// cost at most one more pass over the mask than the copy.
    pub fn for_trie(trie: &TokTrie) -> SplitLimits {
        SplitLimits { max_frontier: 1024, max_outside_words: trie.vocab_size() / 64 / 2 + 1 }
    }
}

/// One node where an inner step gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Frontier<I> {
    /// The node's index in the trie.
    node: u32,
    /// The inner state of its parent; `None` when the parent is the root
    /// (the walk's start state itself).
    parent: Option<I>,
    /// The parent's path from the root: `Split::paths[path.0..path.1]`.
    path: (u32, u32),
}

/// The split of the trie at one inner state (see the module docs): the
/// tokens allowed by inner steps alone, and the frontier nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split<I> {
    /// `(word index, bits)`: the trie's node tokens that are not inside,
    /// in the words that have any (increasing word index); shared by the
    /// split's [localized](Split::localize) copies.
    outside: Arc<[(u32, u64)]>,
    /// Nodes where an inner step gave up, in trie order.
    frontier: Vec<Frontier<I>>,
    /// The frontier parents' paths, back to back (shared like `outside`).
    paths: Arc<[u8]>,
}

impl<I> Split<I> {
    /// The number of frontier nodes.
    pub fn frontier_len(&self) -> usize {
        self.frontier.len()
    }

    /// The number of mask words that hold an outside token.
    pub fn outside_words(&self) -> usize {
        self.outside.len()
    }

    /// Heap bytes held (the parts shared with localized copies counted
    /// in full).
    pub fn heap_size(&self) -> usize {
        self.outside.len() * size_of::<(u32, u64)>()
            + self.frontier.capacity() * size_of::<Frontier<I>>()
            + self.paths.len()
    }

    /// This split for `r`, whose inner state `start` must have the same
    /// inner steps as the state this split was made at (for the matcher:
    /// the same lexer state content in another matcher's lexer). Each
    /// frontier parent is found again by stepping `r` along its path;
    /// `None` when an inner step of `r` gives up on a path (then the
    /// states did not step alike, and the caller walks instead).
    ///
    /// Time: one inner step per path byte (at most the frontier length
    /// times the longest token), no trie walk.
    pub fn localize<R: SplitRecognizer + ?Sized>(
        &self,
        r: &mut R,
        start: R::Inner,
    ) -> Option<Split<R::Inner>> {
        let mut frontier = Vec::with_capacity(self.frontier.len());
        for f in &self.frontier {
            let path = &self.paths[f.path.0 as usize..f.path.1 as usize];
            let parent = match path {
                [] => None,
                _ => Some(path.iter().try_fold(start, |i, &b| r.inner_step(i, b))?),
            };
            frontier.push(Frontier { node: f.node, parent, path: f.path });
        }
        Some(Split { outside: self.outside.clone(), frontier, paths: self.paths.clone() })
    }
}

/// The smallest subtree a split walk tries to take whole (see
/// [`TokTrie::split`]): a smaller one saves at most a few steps for the
/// look-up of its parent's loops.
const MIN_WHOLE: usize = 4;

/// How many states' loops one split walk asks for: the first met at a
/// subtree of at least [`MIN_WHOLE`] nodes, which in free text are the
/// text's start and the state after its first character, where most of the
/// walk is. Each costs 256 inner steps, most of them transitions the lexer
/// computes for this: callgrind, Llama-3's Hermes free text, instructions
/// per split: 13.4 million stepping every node, 5.7 million asking 2
/// states, 6.1 million asking 3, 6.4 million asking 4, 8.0 million asking
/// 16; asking only states met 8 or more times (at most 2 of them) 6.5
/// million; using only the transitions cached so far, 11.9 million.
const MAX_LOOPING: usize = 3;

/// The byte groups (`byte_group`) with a byte that does not loop in
/// `loops`; all of them when unknown.
fn leaving_groups(loops: Option<[u64; 4]>) -> u32 {
    let Some(loops) = loops else { return u32::MAX };
    (0..=255u8)
        .filter(|&b| loops[b as usize / 64] & (1 << (b % 64)) == 0)
        .fold(0, |g, b| g | 1 << byte_group(b))
}

/// Clears from `words` the tokens of `nodes` (a subtree found outside).
fn clear_tokens(words: &mut [u64], nodes: &[Node]) {
    for m in nodes {
        let t = m.token() as usize;
        words[t / 64] &= !(1 << (t % 64));
    }
}

/// What [`TokTrie::split_from`] found.
#[derive(Clone, Debug)]
pub enum Derived<I> {
    /// The split: the same as [`TokTrie::split`] would make.
    Split(Split<I>),
    /// The split exceeds the limits ([`TokTrie::split`] would refuse it).
    Refused,
    /// The walk went past its budget of visits.
    GaveUp,
}

impl TokTrie {
    /// Splits the trie at `r`'s inner state `start` (see the module docs):
    /// one walk with [`inner_step`](SplitRecognizer::inner_step) only.
    /// `None` when the split exceeds `limits`.
    ///
    /// Time: O(nodes visited by inner steps) plus O(V/64).
    pub fn split<R: SplitRecognizer + ?Sized>(
        &self,
        r: &mut R,
        start: R::Inner,
        limits: &SplitLimits,
    ) -> Option<Split<R::Inner>>
    where
        R::Inner: PartialEq,
    {
        let nodes = &self.nodes;
        // A subtree whose bytes all loop on its parent's state stays in
        // that state throughout (see `SplitRecognizer::inner_loops`), so
        // all its tokens are inside, with no step. Where the start takes
        // most bytes (free text, a string's content: `whole`), the set
        // starts with every node's token, such a subtree costs nothing,
        // and the nodes found outside are cleared; otherwise the set
        // starts empty and the inside nodes are set (a narrow start
        // rejects most of the trie at once, which then costs nothing).
        let start_loops = r.inner_loops(start);
        let whole = start_loops.is_some()
            && (0..=255u8).filter(|&b| r.inner_step(start, b).is_some()).count() >= 128;
        let groups = if whole { self.subtree_groups() } else { &[] };
        // The groups leaving each of the first `MAX_LOOPING` states met at
        // a subtree of at least `MIN_WHOLE` nodes (`leaving_groups`); the
        // start, the first such state, already asked.
        let mut leaving: Vec<(R::Inner, u32)> = Vec::with_capacity(MAX_LOOPING);
        if whole {
            leaving.push((start, leaving_groups(start_loops)));
        }
        let mut inside =
            if whole { self.node_tokens.clone() } else { TokenSet::new(self.vocab_size) };
        let mut frontier = Vec::new();
        // `stack[d]` is the inner state after the node of depth `d` on the
        // current path (`stack[0]` the start), as in the walk by state.
        let mut stack = vec![start; self.max_token_len() + 1];
        // `bytes[..d]` is the path to the node of depth `d`.
        let mut bytes = vec![0u8; self.max_token_len() + 1];
        let mut paths = Vec::new();
        let words = inside.words_mut();
        let (mut d, mut p) = (1usize, 1usize);
        while p < nodes.len() {
            let n = nodes[p];
            debug_assert!((1..stack.len()).contains(&d));
            // SAFETY: as in `walk_subtree_by_state`: `1 <= d <= max_token_len`
            // for every node inside the trie, and both `stack` and `bytes`
            // hold `max_token_len + 1` entries. The checked indexes cost
            // about a tenth of this loop.
            let parent = unsafe { *stack.get_unchecked(d - 1) };
            if whole && n.size() >= MIN_WHOLE {
                let out = match leaving.iter().find(|(s, _)| *s == parent) {
                    Some(&(_, out)) => out,
                    None if leaving.len() < MAX_LOOPING => {
                        let out = leaving_groups(r.inner_loops(parent));
                        leaving.push((parent, out));
                        out
                    }
                    None => u32::MAX,
                };
                if groups[p] & out == 0 {
                    // Every byte below loops on `parent`: all inside, as set.
                    p += n.size();
                    d = (d + 1).wrapping_sub(n.up());
                    continue;
                }
            }
            match r.inner_step(parent, n.byte()) {
                Some(s) => {
                    let t = n.token() as usize;
                    debug_assert!(t / 64 < words.len());
                    // SAFETY: as above for `d`; `t <= vocab_size` and the
                    // set has room for bit `vocab_size` (the sink).
                    unsafe {
                        *stack.get_unchecked_mut(d) = s;
                        *bytes.get_unchecked_mut(d - 1) = n.byte();
                        *words.get_unchecked_mut(t / 64) |= 1 << (t % 64);
                    }
                    p += 1;
                    d = (d + 1).wrapping_sub(n.up_if_leaf());
                }
                None => {
                    if whole {
                        // Nothing below is inside.
                        clear_tokens(words, &nodes[p..p + n.size()]);
                    }
                    if r.inner_rejects(parent, n.byte()) {
                        // Rejected below every position: never walked.
                        p += n.size();
                        d = (d + 1).wrapping_sub(n.up());
                        continue;
                    }
                    if frontier.len() == limits.max_frontier {
                        return None;
                    }
                    let parent = (d > 1).then_some(parent);
                    let from = paths.len() as u32;
                    paths.extend_from_slice(&bytes[..d - 1]);
                    let path = (from, paths.len() as u32);
                    frontier.push(Frontier { node: p as u32, parent, path });
                    p += n.size();
                    d = (d + 1).wrapping_sub(n.up());
                }
            }
        }
        let outside = self.outside_of(&inside, limits)?;
        Some(Split { outside, frontier, paths: paths.into() })
    }

    /// The split at inner state `start`, derived from `base`, the split at
    /// `base_start` (made by `r`, or [localized](Split::localize) for it):
    /// the same split as [`split`](TokTrie::split) at `start` would make,
    /// for the cost of walking only where the two starts' inner states
    /// differ.
    ///
    /// Below a node where both paths reach one inner state, every token and
    /// frontier node is decided alike from both starts (inner steps depend
    /// on the inner state and the byte alone), so that subtree keeps
    /// `base`'s answers. In free text the starts are the lexeme's start and
    /// a partial trigger (`</` of `</think>`): after almost every first
    /// byte both are back at the start, and only the few subtrees that go
    /// on spelling a trigger are walked.
    ///
    /// Gives up ([`Derived::GaveUp`]) once `max_visits` nodes have been
    /// visited (stepped or cleared): then the starts did not meet soon, and
    /// the caller is better off walking.
    ///
    /// Time: O(nodes visited), plus O(V/64) and the base's frontier.
    pub fn split_from<R: SplitRecognizer + ?Sized>(
        &self,
        r: &mut R,
        base: &Split<R::Inner>,
        base_start: R::Inner,
        start: R::Inner,
        limits: &SplitLimits,
        max_visits: usize,
    ) -> Derived<R::Inner>
    where
        R::Inner: PartialEq,
    {
        let nodes = &self.nodes;
        // The base's inside tokens, corrected below where `start` differs.
        let mut inside = TokenSet::new(self.vocab_size);
        self.fill_inside(base, &mut inside);
        // Subtrees whose answers are the base's, `[from, to)` in trie order.
        let mut kept: Vec<(u32, u32)> = Vec::new();
        let mut frontier = Vec::new();
        let mut paths = Vec::new();
        // `stack[d]`: the inner states after the node of depth `d` from
        // `start` and from `base_start` (`None` once the base's path has
        // left: gave up or was rejected).
        let mut stack = vec![(start, Some(base_start)); self.max_token_len() + 1];
        let mut bytes = vec![0u8; self.max_token_len() + 1];
        let mut visits = 0usize;
        let (mut d, mut p) = (1usize, 1usize);
        while p < nodes.len() {
            if visits > max_visits {
                return Derived::GaveUp;
            }
            let n = nodes[p];
            let (x, b) = stack[d - 1];
            visits += 1;
            match r.inner_step(x, n.byte()) {
                Some(s) => {
                    let sb = b.and_then(|b| r.inner_step(b, n.byte()));
                    if sb == Some(s) {
                        // Met: the base's answers hold for the whole subtree.
                        kept.push((p as u32, (p + n.size()) as u32));
                        p += n.size();
                        d = (d + 1).wrapping_sub(n.up());
                        continue;
                    }
                    stack[d] = (s, sb);
                    bytes[d - 1] = n.byte();
                    inside.words_mut()[n.token() as usize / 64] |= 1 << (n.token() % 64);
                    p += 1;
                    d = (d + 1).wrapping_sub(n.up_if_leaf());
                }
                None => {
                    // Nothing below is inside from `start`.
                    visits += n.size();
                    clear_tokens(inside.words_mut(), &nodes[p..p + n.size()]);
                    if !r.inner_rejects(x, n.byte()) {
                        let parent = (d > 1).then_some(x);
                        let from = paths.len() as u32;
                        paths.extend_from_slice(&bytes[..d - 1]);
                        frontier.push(Frontier {
                            node: p as u32,
                            parent,
                            path: (from, paths.len() as u32),
                        });
                    }
                    p += n.size();
                    d = (d + 1).wrapping_sub(n.up());
                }
            }
        }
        // The base's frontier nodes inside the kept subtrees (both lists in
        // trie order), with their paths.
        let mut ranges = kept.iter().peekable();
        for f in base.frontier.iter() {
            while ranges.next_if(|&&(_, to)| to <= f.node).is_some() {}
            let Some(&&(from, _)) = ranges.peek() else { break };
            if from <= f.node {
                let path = &base.paths[f.path.0 as usize..f.path.1 as usize];
                let at = paths.len() as u32;
                paths.extend_from_slice(path);
                frontier.push(Frontier {
                    node: f.node,
                    parent: f.parent,
                    path: (at, paths.len() as u32),
                });
            }
        }
        if frontier.len() > limits.max_frontier {
            return Derived::Refused;
        }
        // In trie order, the paths laid out in that order (as `split` lays
        // them out).
        frontier.sort_unstable_by_key(|f| f.node);
        let mut ordered = Vec::with_capacity(paths.len());
        for f in &mut frontier {
            let at = ordered.len() as u32;
            ordered.extend_from_slice(&paths[f.path.0 as usize..f.path.1 as usize]);
            f.path = (at, ordered.len() as u32);
        }
        match self.outside_of(&inside, limits) {
            Some(outside) => Derived::Split(Split { outside, frontier, paths: ordered.into() }),
            None => Derived::Refused,
        }
    }

    /// The outside words of a split whose inside tokens are `inside`;
    /// `None` past `limits`.
    fn outside_of(&self, inside: &TokenSet, limits: &SplitLimits) -> Option<Arc<[(u32, u64)]>> {
        let mut outside = Vec::new();
        for (i, (&all, &ins)) in
            self.node_tokens.as_words().iter().zip(inside.as_words()).enumerate()
        {
            let out = all & !ins;
            if out != 0 {
                if outside.len() == limits.max_outside_words {
                    return None;
                }
                outside.push((i as u32, out));
            }
        }
        Some(outside.into())
    }

    /// Sets `mask` to the tokens `r` allows at its current position, from
    /// `split`, the split at `r`'s current inner state: the same set as
    /// [`compute_mask_by_state`](TokTrie::compute_mask_by_state).
    ///
    /// Time: O(V/64) word copies, plus one `step` per frontier node and the
    /// walks of the accepted frontier nodes' subtrees.
    pub fn compute_mask_split<R: SplitRecognizer + ?Sized>(
        &self,
        r: &mut R,
        split: &Split<R::Inner>,
        mask: &mut TokenSet,
    ) {
        self.fill_inside(split, mask);
        let start = r.start();
        let mut stack = vec![start; self.max_token_len() + 1];
        for f in &split.frontier {
            let parent = match f.parent {
                Some(i) => r.lift(start, i),
                None => start,
            };
            let node = f.node as usize;
            let n = self.nodes[node];
            if let Some(s) = r.step(parent, n.byte()) {
                let t = n.token() as usize;
                mask.words_mut()[t / 64] |= 1 << (t % 64);
                if n.size() > 1 {
                    stack[0] = s;
                    walk_subtree_by_state(self, r, mask.words_mut(), node, &mut stack);
                }
            }
        }
        self.add_allowed_specials(mask, |id| r.special_allowed(id));
        r.walk_finished();
        self.finish(mask);
    }

    /// Sets `mask` to `split`'s inside tokens: the trie's tokens minus the
    /// outside words.
    fn fill_inside<I>(&self, split: &Split<I>, mask: &mut TokenSet) {
        self.prepare(mask);
        let words = mask.words_mut();
        let all = self.node_tokens.as_words();
        words[..all.len()].copy_from_slice(all);
        words[all.len()..].fill(0);
        for &(i, out) in split.outside.iter() {
            words[i as usize] &= !out;
        }
    }

    /// [`compute_mask_split`](TokTrie::compute_mask_split) for a
    /// [`Recognizer`], the byte-by-byte protocol: for each frontier node it
    /// pushes the parent's path, then the node's byte, and walks the
    /// node's subtree as [`compute_mask`](TokTrie::compute_mask) would.
    /// For a recognizer whose answers need the bytes (the Earley parser
    /// among distinct members), with a split whose inner steps are sound
    /// for it. Returns `false`, with `mask` unspecified, when a path byte
    /// is refused (the inner steps did not hold here: the caller walks the
    /// whole trie instead).
    ///
    /// Time: O(V/64) word copies, plus one push per path byte and frontier
    /// node, and the walks of the accepted frontier nodes' subtrees.
    pub fn compute_mask_split_by_bytes<R: Recognizer + ?Sized, I>(
        &self,
        r: &mut R,
        split: &Split<I>,
        mask: &mut TokenSet,
    ) -> bool {
        self.fill_inside(split, mask);
        r.trie_started();
        let mut ok = true;
        // The path pushed now: frontier nodes come in trie order, so the
        // next parent's path shares a prefix with it, which stays pushed.
        let mut pushed: &[u8] = &[];
        for f in &split.frontier {
            let path = &split.paths[f.path.0 as usize..f.path.1 as usize];
            let common = pushed.iter().zip(path).take_while(|(a, b)| a == b).count();
            r.pop_bytes(pushed.len() - common);
            let more = path[common..].iter().take_while(|&&b| r.try_push_byte(b)).count();
            pushed = &path[..common + more];
            if pushed.len() < path.len() {
                ok = false;
                break;
            }
            let node = f.node as usize;
            let n = self.nodes[node];
            if r.try_push_byte(n.byte()) {
                let t = n.token() as usize;
                mask.words_mut()[t / 64] |= 1 << (t % 64);
                let pending = walk_subtree(self, r, mask.words_mut(), node);
                r.pop_bytes(pending + 1);
            }
        }
        r.pop_bytes(pushed.len());
        if ok {
            self.add_allowed_specials(mask, |id| r.special_allowed(id));
        }
        r.trie_finished();
        self.finish(mask);
        ok
    }
}
