//! [`TokTrie`]: the vocabulary's flat trie and its lookups.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::build::{BuildError, layout};
use crate::node::Node;
use crate::{TokenId, TokenSet};

/// What an id of the vocabulary is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum TokenKind {
    /// No token has this id (a gap in the vocabulary); never allowed.
    Hole,
    /// A token spelled by bytes, reachable by the walk.
    Ordinary,
    /// A special token (EOS, chat markers, reserved ids) known by its name,
    /// never reachable by bytes; see [`Recognizer::special_allowed`](crate::Recognizer::special_allowed).
    Special,
}

/// The tokenizer's vocabulary as a flat trie.
///
/// Ordinary tokens are laid out depth-first in one array of 8-byte nodes (see
/// `DESIGN.md`); special tokens live in a table of their own, addressable by
/// id and by name. A `TokTrie` is immutable and `Send + Sync`: one trie serves
/// any number of threads computing masks at once.
#[derive(Clone)]
pub struct TokTrie {
    /// The depth-first node array; `nodes[0]` is the root and `nodes[0].size()
    /// == nodes.len()`.
    pub(crate) nodes: Vec<Node>,
    /// Every id is below this; it is also the "no token" value of a node.
    pub(crate) vocab_size: usize,
    /// The kind of each id, `vocab_size` entries.
    kinds: Vec<TokenKind>,
    /// Token `i`'s bytes are `bytes[offsets[i]..offsets[i + 1]]` (empty for
    /// specials and holes); `vocab_size + 1` entries.
    offsets: Vec<usize>,
    bytes: Vec<u8>,
    /// `(primary, other)` pairs of ids with equal bytes, sorted; the node
    /// holds `primary`, the smallest id with those bytes.
    pub(crate) duplicates: Vec<(TokenId, TokenId)>,
    /// Special tokens sorted by id.
    pub(crate) specials: Vec<(TokenId, Box<str>)>,
    by_name: HashMap<Box<str>, TokenId>,
    /// End-of-sequence ids, sorted, without repeats.
    eos: Vec<TokenId>,
    max_token_len: usize,
    /// The tokens the nodes hold (every ordinary non-empty token but the
    /// duplicates): the base set of split masks (`split.rs`).
    pub(crate) node_tokens: TokenSet,
    /// `root_child[b]` is the index of the root's child for byte `b`, or 0.
    root_child: Box<[u32; 256]>,
    /// For each node, the byte groups ([`byte_group`]) of the bytes in its
    /// subtree, itself included, for split walks (`split.rs`): 4 bytes a
    /// node, built by [`TokTrie::prepare_split_summaries`] or the first
    /// split walk that uses it.
    subtree_groups: OnceLock<Box<[u32]>>,
}

/// The group of byte `b` in a node's `subtree_groups` summary, one of 32:
/// every ASCII letter and digit is group 31 (free text steps alike on
/// them), UTF-8 continuation bytes are 30, lead bytes 29, and the 66 other
/// ASCII bytes share groups 0–28 (two or three each).
pub(crate) const fn byte_group(b: u8) -> u32 {
    match b {
        b'0'..=b'9' | b'A'..=b'Z' | b'a'..=b'z' => 31,
        0x80..=0xBF => 30,
        0xC0..=0xFF => 29,
        // The 66 other ASCII bytes, numbered in order.
        _ => {
            let below = match b {
                0..=b'/' => b as u32,
                b':'..=b'@' => b as u32 - 10,
                b'['..=b'`' => b as u32 - 36,
                _ => b as u32 - 62,
            };
            below % 29
        }
    }
}

impl TokTrie {
    /// Builds the per-node summaries split walks use ([`TokTrie::split`]
    /// takes a subtree whose bytes all loop on its parent's state whole,
    /// without stepping): 4 bytes a node, one pass. Otherwise the first split walk
    /// that can use them builds them, and pays for touching that much new
    /// memory (a few ms for Llama-3's 274,521 nodes on a virtual machine,
    /// mostly page faults); a vocabulary calls this when built.
    pub fn prepare_split_summaries(&self) {
        self.subtree_groups();
    }

    /// Each node's [`byte_group`] summary of its subtree (in one backward
    /// pass: a node's summary is its byte's group and its children's
    /// summaries, each child visited once).
    pub(crate) fn subtree_groups(&self) -> &[u32] {
        self.subtree_groups.get_or_init(|| {
            let nodes = &self.nodes;
            let mut groups = vec![0u32; nodes.len()];
            for p in (1..nodes.len()).rev() {
                let mut g = 1u32 << byte_group(nodes[p].byte());
                let (mut c, end) = (p + 1, p + nodes[p].size());
                while c < end {
                    g |= groups[c];
                    c += nodes[c].size();
                }
                groups[p] = g;
            }
            groups.into()
        })
    }

    /// A trie where token `i` has the bytes `tokens[i]` and there are no
    /// special tokens (use [`TokTrieBuilder`](crate::TokTrieBuilder) for them).
    pub fn from_token_bytes<B: AsRef<[u8]>>(tokens: &[B]) -> Result<TokTrie, BuildError> {
        let builder = crate::TokTrieBuilder::new().vocab_size(tokens.len());
        builder.tokens(tokens.iter().enumerate().map(|(i, b)| (i as u32, b.as_ref()))).build()
    }

    /// Assembles a trie from validated parts (called by the builder).
    pub(crate) fn assemble(
        kinds: Vec<TokenKind>,
        token_bytes: &[Vec<u8>],
        specials: Vec<(TokenId, Box<str>)>,
        by_name: HashMap<Box<str>, TokenId>,
        eos: Vec<TokenId>,
    ) -> Result<TokTrie, BuildError> {
        let vocab_size = kinds.len();
        let ordinary: Vec<(&[u8], u32)> = token_bytes
            .iter()
            .enumerate()
            .filter(|(i, b)| kinds[*i] == TokenKind::Ordinary && !b.is_empty())
            .map(|(i, b)| (b.as_slice(), i as u32))
            .collect();
        let mut layout = layout(ordinary, vocab_size)?;
        layout.duplicates.sort_unstable();
        let mut offsets = Vec::with_capacity(vocab_size + 1);
        let mut bytes = Vec::with_capacity(token_bytes.iter().map(Vec::len).sum());
        offsets.push(0);
        for b in token_bytes {
            bytes.extend_from_slice(b);
            offsets.push(bytes.len());
        }
        let max_token_len = token_bytes.iter().map(Vec::len).max().unwrap_or(0);
        let mut trie = TokTrie {
            nodes: layout.nodes,
            vocab_size,
            kinds,
            offsets,
            bytes,
            duplicates: layout.duplicates,
            specials,
            by_name,
            eos,
            max_token_len,
            root_child: Box::new([0; 256]),
            node_tokens: TokenSet::new(vocab_size),
            subtree_groups: OnceLock::new(),
        };
        for i in 0..trie.nodes.len() {
            let t = trie.nodes[i].token();
            if (t as usize) < vocab_size {
                trie.node_tokens.insert(TokenId(t));
            }
        }
        let children: Vec<(u8, usize)> =
            trie.children(0).map(|c| (trie.nodes[c].byte(), c)).collect();
        for (b, c) in children {
            trie.root_child[b as usize] = c as u32;
        }
        Ok(trie)
    }

    /// The trie of the ids in `keep` only (ordinary and special; EOS ids kept
    /// if kept), with the same id numbering and vocabulary size. The slicer
    /// walks such sub-tries, one per slice of the vocabulary.
    pub fn subset(&self, keep: &TokenSet) -> Result<TokTrie, BuildError> {
        let kept = |id: usize| keep.contains(TokenId(id as u32));
        let kinds: Vec<TokenKind> = self
            .kinds
            .iter()
            .enumerate()
            .map(|(i, &k)| if kept(i) { k } else { TokenKind::Hole })
            .collect();
        let token_bytes: Vec<Vec<u8>> = (0..self.vocab_size)
            .map(|i| {
                if kinds[i] == TokenKind::Ordinary {
                    self.raw_bytes(i).to_vec()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let specials: Vec<(TokenId, Box<str>)> =
            self.specials.iter().filter(|s| kept(s.0.index())).cloned().collect();
        let by_name = specials.iter().map(|(id, name)| (name.clone(), *id)).collect();
        let eos = self.eos.iter().copied().filter(|id| kept(id.index())).collect();
        TokTrie::assemble(kinds, &token_bytes, specials, by_name, eos)
    }

    /// The number of ids (ordinary, special and holes); masks range over at
    /// least this many.
    #[inline]
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// A new empty [`TokenSet`] over this vocabulary.
    pub fn token_set(&self) -> TokenSet {
        TokenSet::new(self.vocab_size)
    }

    /// The number of nodes, root included (about twice the vocabulary size
    /// for BPE vocabularies).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The bytes of one node (8).
    pub const fn node_size_bytes() -> usize {
        std::mem::size_of::<Node>()
    }

    /// The length of the longest token, in bytes.
    pub fn max_token_len(&self) -> usize {
        self.max_token_len
    }

    /// What `id` is; ids outside the vocabulary are holes.
    pub fn kind(&self, id: TokenId) -> TokenKind {
        self.kinds.get(id.index()).copied().unwrap_or(TokenKind::Hole)
    }

    /// The bytes of an ordinary token (`None` for specials, holes and ids
    /// outside the vocabulary).
    pub fn token_bytes(&self, id: TokenId) -> Option<&[u8]> {
        (self.kind(id) == TokenKind::Ordinary).then(|| self.raw_bytes(id.index()))
    }

    fn raw_bytes(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The name of a special token.
    pub fn special_name(&self, id: TokenId) -> Option<&str> {
        let i = self.specials.binary_search_by_key(&id, |s| s.0).ok()?;
        Some(&self.specials[i].1)
    }

    /// The special token called `name`.
    pub fn special_by_name(&self, name: &str) -> Option<TokenId> {
        self.by_name.get(name).copied()
    }

    /// The special tokens as `(id, name)`, by increasing id.
    pub fn specials(&self) -> impl Iterator<Item = (TokenId, &str)> + '_ {
        self.specials.iter().map(|(id, name)| (*id, &**name))
    }

    /// The end-of-sequence ids, sorted.
    pub fn eos_tokens(&self) -> &[TokenId] {
        &self.eos
    }

    /// The marker form of a special token: byte 0xFF (never part of UTF-8)
    /// followed by its name. Decoders that must keep specials visible in a
    /// byte stream use it; [`special_by_marker`](TokTrie::special_by_marker)
    /// reverses it.
    pub fn special_marker(&self, id: TokenId) -> Option<Vec<u8>> {
        let name = self.special_name(id)?;
        let mut out = Vec::with_capacity(name.len() + 1);
        out.push(SPECIAL_MARKER);
        out.extend_from_slice(name.as_bytes());
        Some(out)
    }

    /// The special token whose marker form is exactly `bytes`.
    pub fn special_by_marker(&self, bytes: &[u8]) -> Option<TokenId> {
        let (&first, name) = bytes.split_first()?;
        if first != SPECIAL_MARKER {
            return None;
        }
        self.special_by_name(std::str::from_utf8(name).ok()?)
    }

    /// The bytes of the ordinary tokens in `ids`, concatenated; specials and
    /// holes add nothing.
    pub fn decode(&self, ids: &[TokenId]) -> Vec<u8> {
        let mut out = Vec::new();
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id).unwrap_or(&[]));
        }
        out
    }

    /// The smallest ordinary id whose bytes are exactly `bytes` (empty tokens
    /// are not in the trie: `token_id(b"")` is `None`).
    pub fn token_id(&self, bytes: &[u8]) -> Option<TokenId> {
        let node = self.node_at(bytes)?;
        self.node_token(node)
    }

    /// The ids of every ordinary token with the same bytes as `id`, `id`
    /// included (more than one for vocabularies with duplicate tokens).
    pub fn same_bytes(&self, id: TokenId) -> Vec<TokenId> {
        match self.token_bytes(id).and_then(|b| self.token_id(b)) {
            None => Vec::new(),
            Some(primary) => {
                let mut out = vec![primary];
                out.extend(self.duplicates_of(primary));
                out
            }
        }
    }

    /// The longest-match-first tokenization of `bytes` with ordinary tokens.
    /// This is not the tokenizer's own (BPE) tokenization; it is a cheap,
    /// always-available one for tests and for text without a tokenizer.
    /// O(n·L) for `n` bytes and longest token `L`.
    pub fn greedy_tokenize(&self, bytes: &[u8]) -> Result<Vec<TokenId>, NoTokenAt> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < bytes.len() {
            let mut best = None;
            let mut node = 0;
            for (i, &b) in bytes[pos..].iter().enumerate() {
                match self.child(node, b) {
                    None => break,
                    Some(c) => {
                        node = c;
                        if let Some(id) = self.node_token(c) {
                            best = Some((id, i + 1));
                        }
                    }
                }
            }
            let (id, len) = best.ok_or(NoTokenAt { offset: pos })?;
            out.push(id);
            pos += len;
        }
        Ok(out)
    }

    /// The ordinary tokens that are prefixes of `bytes` (`bytes` itself
    /// included when it is a token), shortest first, duplicates included.
    pub fn prefix_tokens(&self, bytes: &[u8]) -> Vec<TokenId> {
        let mut out = Vec::new();
        let mut node = 0;
        for &b in bytes {
            match self.child(node, b) {
                None => break,
                Some(c) => {
                    node = c;
                    if let Some(id) = self.node_token(c) {
                        out.push(id);
                        out.extend(self.duplicates_of(id));
                    }
                }
            }
        }
        out
    }

    /// Adds to `set` every ordinary token that starts with `prefix` (`prefix`
    /// itself included when it is a token; every non-empty token when
    /// `prefix` is empty). `set` grows to the vocabulary size if shorter.
    pub fn tokens_with_prefix(&self, prefix: &[u8], set: &mut TokenSet) {
        if set.len() < self.vocab_size {
            set.resize(self.vocab_size);
        }
        let Some(node) = self.node_at(prefix) else { return };
        let end = node + self.nodes[node].size();
        for n in &self.nodes[node..end] {
            if let Some(id) = self.token_of(*n) {
                set.insert(id);
                for other in self.duplicates_of(id) {
                    set.insert(other);
                }
            }
        }
    }

    /// Whether some ordinary token is strictly longer than `bytes` and starts
    /// with it.
    pub fn has_extension(&self, bytes: &[u8]) -> bool {
        self.node_at(bytes).is_some_and(|n| self.nodes[n].size() > 1)
    }

    /// The tokens of `ids` given as duplicates of `primary`.
    pub(crate) fn duplicates_of(&self, primary: TokenId) -> impl Iterator<Item = TokenId> + '_ {
        let start = self.duplicates.partition_point(|d| d.0 < primary);
        self.duplicates[start..].iter().take_while(move |d| d.0 == primary).map(|d| d.1)
    }

    /// The node reached from the root by `bytes`.
    pub(crate) fn node_at(&self, bytes: &[u8]) -> Option<usize> {
        let mut node = 0;
        for &b in bytes {
            node = self.child(node, b)?;
        }
        Some(node)
    }

    /// The child of `node` along `byte`.
    pub(crate) fn child(&self, node: usize, byte: u8) -> Option<usize> {
        if node == 0 {
            let c = self.root_child[byte as usize] as usize;
            return (c != 0).then_some(c);
        }
        self.children(node).find(|&c| self.nodes[c].byte() == byte)
    }

    /// The children of `node`, in byte order.
    fn children(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        let end = node + self.nodes[node].size();
        let mut next = node + 1;
        std::iter::from_fn(move || {
            if next >= end {
                return None;
            }
            let c = next;
            next += self.nodes[c].size();
            Some(c)
        })
    }

    fn node_token(&self, node: usize) -> Option<TokenId> {
        self.token_of(self.nodes[node])
    }

    fn token_of(&self, n: Node) -> Option<TokenId> {
        let t = n.token();
        (t as usize != self.vocab_size).then_some(TokenId(t))
    }
}

/// The marker byte of a special token's byte form (see
/// [`TokTrie::special_marker`]); it never occurs in UTF-8.
pub const SPECIAL_MARKER: u8 = 0xFF;

impl std::fmt::Debug for TokTrie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokTrie")
            .field("vocab_size", &self.vocab_size)
            .field("nodes", &self.nodes.len())
            .field("duplicates", &self.duplicates.len())
            .field("specials", &self.specials.len())
            .field("eos", &self.eos)
            .field("max_token_len", &self.max_token_len)
            .finish()
    }
}

/// [`TokTrie::greedy_tokenize`] found no token starting at `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoTokenAt {
    /// The byte offset where no ordinary token matches.
    pub offset: usize,
}

impl std::fmt::Display for NoTokenAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no token matches the bytes at offset {}", self.offset)
    }
}

impl std::error::Error for NoTokenAt {}
