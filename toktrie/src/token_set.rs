//! [`TokenSet`]: a set of token ids as a plain bitset of `u64` words.

use crate::TokenId;

/// A set of token ids over a (possibly padded) vocabulary of `len` ids.
///
/// # Representation
/// One bit per id in `u64` words, id `i` at bit `i % 64` of word `i / 64`.
/// This is a plain `Vec<u64>` rather than a `bitvec`-style generic bit slice on
/// purpose: the trie walk sets one bit per accepted node, millions of times a
/// second, and with a fixed word type that store is a shift, an `or` and a
/// store with no bit-order or storage-type abstraction between them; the set
/// operations are word loops the compiler vectorizes.
///
/// # Invariants
/// - `words.len() == len / 64 + 1`: there is always at least one spare bit
///   past the last id. The trie walk uses bit `vocab_size` (an id that no
///   token has) as a sink for nodes without a token, so that marking a node
///   never needs a branch; the walk clears it again before returning.
/// - Every bit at an index `>= len` is zero outside a running walk.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TokenSet {
    /// The number of ids the set ranges over (the padded vocabulary size).
    len: usize,
    /// The bits; see the type's invariants.
    words: Vec<u64>,
}

impl TokenSet {
    /// The empty set over `len` ids (`0..len`).
    pub fn new(len: usize) -> TokenSet {
        TokenSet { len, words: vec![0; len / 64 + 1] }
    }

    /// The set of all `len` ids.
    pub fn full(len: usize) -> TokenSet {
        let mut set = TokenSet::new(len);
        set.fill();
        set
    }

    /// The number of ids the set ranges over (not the number of members;
    /// see [`count`](TokenSet::count)).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set ranges over no ids at all.
    #[inline]
    pub fn is_empty_range(&self) -> bool {
        self.len == 0
    }

    /// Whether no id is a member.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The number of members (population count).
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether `id` is a member; ids outside `0..len` never are.
    #[inline]
    pub fn contains(&self, id: TokenId) -> bool {
        let i = id.index();
        i < self.len && (self.words[i / 64] >> (i % 64)) & 1 == 1
    }

    /// Adds `id`; returns `false` (and changes nothing) when `id` is outside
    /// `0..len`.
    #[inline]
    pub fn insert(&mut self, id: TokenId) -> bool {
        let i = id.index();
        if i >= self.len {
            return false;
        }
        self.words[i / 64] |= 1 << (i % 64);
        true
    }

    /// Removes `id` (a no-op for ids outside `0..len`).
    #[inline]
    pub fn remove(&mut self, id: TokenId) {
        let i = id.index();
        if i < self.len {
            self.words[i / 64] &= !(1 << (i % 64));
        }
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Adds every id in `0..len`.
    pub fn fill(&mut self) {
        self.words.fill(!0);
        self.clear_tail();
    }

    /// Replaces the set by its complement within `0..len`.
    pub fn negate(&mut self) {
        for w in &mut self.words {
            *w = !*w;
        }
        self.clear_tail();
    }

    /// Changes the range to `0..len`, dropping members at or past `len`.
    pub fn resize(&mut self, len: usize) {
        self.words.resize(len / 64 + 1, 0);
        self.len = len;
        self.clear_tail();
    }

    /// `self = self ∪ other`. Members of `other` outside `self`'s range are
    /// dropped.
    pub fn union_with(&mut self, other: &TokenSet) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= *b;
        }
        self.clear_tail();
    }

    /// `self = self ∩ other`.
    pub fn intersect_with(&mut self, other: &TokenSet) {
        let n = other.words.len().min(self.words.len());
        for (a, b) in self.words[..n].iter_mut().zip(&other.words) {
            *a &= *b;
        }
        self.words[n..].fill(0);
    }

    /// `self = self \ other`.
    pub fn subtract(&mut self, other: &TokenSet) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !*b;
        }
    }

    /// Whether every member of `self` is a member of `other`.
    pub fn is_subset(&self, other: &TokenSet) -> bool {
        self.words
            .iter()
            .enumerate()
            .all(|(i, &a)| a & !other.words.get(i).copied().unwrap_or(0) == 0)
    }

    /// The members in increasing order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { words: &self.words, index: 0, current: self.words.first().copied().unwrap_or(0) }
    }

    /// The words of the bitset (id `i` is bit `i % 64` of word `i / 64`);
    /// there are `len / 64 + 1` of them and bits at or past `len` are zero.
    /// Engines that upload masks to a GPU read these directly.
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// The number of 32-bit words of a bitmask row over `len` ids
    /// (`ceil(len / 32)`), the layout engines share (see
    /// [`write_bitmask`](TokenSet::write_bitmask)).
    pub fn bitmask_words(len: usize) -> usize {
        len.div_ceil(32)
    }

    /// Writes the set into `row` in the 32-bit bitmask layout that
    /// XGrammar, llguidance and outlines-core share and vLLM applies with
    /// one kernel: id `i` is bit `i % 32` of word `i / 32`. Every word of
    /// `row` is written: words past the set's own are cleared (padding
    /// for a model whose vocabulary is larger than the tokenizer's), and
    /// so are bits past `len`. Returns `false`, writing nothing, when `row`
    /// holds fewer than [`bitmask_words`](TokenSet::bitmask_words)`(len)`
    /// words.
    ///
    /// O(len / 32 + row.len()).
    pub fn write_bitmask(&self, row: &mut [u32]) -> bool {
        let need = Self::bitmask_words(self.len);
        if row.len() < need {
            return false;
        }
        let (head, tail) = row.split_at_mut(need);
        // Little-endian halves of each u64 word are the two u32 words.
        // Whole pairs first, with no branch in the loop (it compiles to a
        // copy: a branch per pair made it cost 4-8 times a row copy on
        // o200k, the whole of a cached mask's time), then an odd last word.
        let mut pairs = head.chunks_exact_mut(2);
        for (pair, &word) in (&mut pairs).zip(&self.words) {
            pair[0] = word as u32;
            pair[1] = (word >> 32) as u32;
        }
        if let [last] = pairs.into_remainder() {
            *last = self.words[need / 2] as u32;
        }
        tail.fill(0);
        true
    }

    /// Sets `logits[i]` to negative infinity for every id `i` that is not a
    /// member. Ids at or past `len` (padding) are never members, so a logits
    /// slice longer than the set is masked entirely past `len`; a shorter
    /// slice is masked as far as it goes.
    pub fn apply_to_logits(&self, logits: &mut [f32]) {
        for (chunk, &word) in logits.chunks_mut(64).zip(&self.words) {
            if word == !0 {
                continue;
            }
            for (bit, logit) in chunk.iter_mut().enumerate() {
                if (word >> bit) & 1 == 0 {
                    *logit = f32::NEG_INFINITY;
                }
            }
        }
        let covered = self.words.len() * 64;
        if logits.len() > covered {
            logits[covered..].fill(f32::NEG_INFINITY);
        }
    }

    /// Mutable access to the words for the trie walk, which keeps the
    /// invariants by clearing its sink bit before it returns.
    #[inline]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// Zeroes the bits at or past `len` (the invariant).
    fn clear_tail(&mut self) {
        let last = self.len / 64;
        self.words[last] &= (1u64 << (self.len % 64)) - 1;
        for w in &mut self.words[last + 1..] {
            *w = 0;
        }
    }
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 16;
        write!(f, "TokenSet(len={}, count={}, {{", self.len, self.count())?;
        for (i, id) in self.iter().take(SHOWN).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", id.0)?;
        }
        if self.count() > SHOWN {
            f.write_str(", …")?;
        }
        f.write_str("})")
    }
}

impl<'a> IntoIterator for &'a TokenSet {
    type Item = TokenId;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The members of a [`TokenSet`] in increasing order.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    words: &'a [u64],
    /// The index of the word `current` came from.
    index: usize,
    /// The bits of `words[index]` not yet yielded.
    current: u64,
}

impl Iterator for Iter<'_> {
    type Item = TokenId;

    #[inline]
    fn next(&mut self) -> Option<TokenId> {
        while self.current == 0 {
            self.index += 1;
            self.current = *self.words.get(self.index)?;
        }
        let bit = self.current.trailing_zeros() as usize;
        self.current &= self.current - 1;
        Some(TokenId((self.index * 64 + bit) as u32))
    }
}
