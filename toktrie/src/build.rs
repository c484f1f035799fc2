//! Building a [`TokTrie`]: the builder, its errors, and the depth-first
//! layout of sorted token byte strings.

use std::collections::HashMap;

use crate::TokenId;
use crate::node::{MAX_NODES, MAX_TOKEN_LEN, MAX_VOCAB, Node};
use crate::trie::{TokTrie, TokenKind};

/// Why a vocabulary could not be made into a trie.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A token id is at or past the declared vocabulary size.
    IdOutOfRange {
        /// The offending id.
        id: TokenId,
        /// The vocabulary size it had to stay below.
        vocab_size: usize,
    },
    /// The same id was given twice (as tokens, specials, or one of each).
    DuplicateId {
        /// The id given twice.
        id: TokenId,
    },
    /// A token is longer than the trie can hold.
    TokenTooLong {
        /// The token's id.
        id: TokenId,
        /// Its length in bytes.
        len: usize,
        /// The most bytes a token may have ([`MAX_TOKEN_LEN`]).
        max: usize,
    },
    /// The vocabulary size is larger than the trie can address.
    VocabTooLarge {
        /// The requested size.
        vocab_size: usize,
        /// The largest size supported ([`MAX_VOCAB`]).
        max: usize,
    },
    /// The tokens need more trie nodes than a node's size field can count.
    TooManyNodes {
        /// The most nodes supported ([`MAX_NODES`]).
        max: usize,
    },
    /// Two special tokens have the same name.
    DuplicateSpecialName {
        /// The shared name.
        name: String,
        /// The id that had it first.
        first: TokenId,
        /// The id that had it again.
        second: TokenId,
    },
    /// A special token has an empty name.
    EmptySpecialName {
        /// The special token's id.
        id: TokenId,
    },
    /// An end-of-sequence id is neither an ordinary nor a special token.
    EosNotInVocab {
        /// The id.
        id: TokenId,
    },
    /// An end-of-sequence name is not the name of a special token.
    UnknownEosName {
        /// The name.
        name: String,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::IdOutOfRange { id, vocab_size } => {
                write!(f, "token id {} is outside the vocabulary of {vocab_size} ids", id.0)
            }
            BuildError::DuplicateId { id } => write!(f, "token id {} is given twice", id.0),
            BuildError::TokenTooLong { id, len, max } => {
                write!(f, "token id {} has {len} bytes; at most {max} are supported", id.0)
            }
            BuildError::VocabTooLarge { vocab_size, max } => {
                write!(f, "vocabulary of {vocab_size} ids; at most {max} are supported")
            }
            BuildError::TooManyNodes { max } => {
                write!(f, "the tokens need more than {max} trie nodes")
            }
            BuildError::DuplicateSpecialName { name, first, second } => {
                write!(f, "special tokens {} and {} are both named {name:?}", first.0, second.0)
            }
            BuildError::EmptySpecialName { id } => {
                write!(f, "special token {} has an empty name", id.0)
            }
            BuildError::EosNotInVocab { id } => {
                write!(f, "end-of-sequence id {} is not a token of the vocabulary", id.0)
            }
            BuildError::UnknownEosName { name } => {
                write!(f, "end-of-sequence name {name:?} is not a special token")
            }
        }
    }
}

impl std::error::Error for BuildError {}

/// Collects a vocabulary and builds a [`TokTrie`] from it.
///
/// Ordinary tokens are byte strings reachable by the walk; special tokens
/// (EOS, chat markers, reserved ids) have a name, are kept out of the node
/// array entirely, and are offered to a recognizer through
/// [`Recognizer::special_allowed`](crate::Recognizer::special_allowed).
/// Ids never given are holes: never in any mask.
///
/// ```
/// use structgen_toktrie::{TokTrieBuilder, TokenId};
/// let trie = TokTrieBuilder::new()
///     .token(TokenId(0), b"a")
///     .token(TokenId(1), b"ab")
///     .special(TokenId(2), "<|endoftext|>")
///     .eos(TokenId(2))
///     .build()
///     .unwrap();
/// assert_eq!(trie.vocab_size(), 3);
/// assert_eq!(trie.special_by_name("<|endoftext|>"), Some(TokenId(2)));
/// ```
#[derive(Clone, Debug, Default)]
pub struct TokTrieBuilder {
    vocab_size: Option<usize>,
    tokens: Vec<(u32, Vec<u8>)>,
    specials: Vec<(u32, String)>,
    eos: Vec<u32>,
    eos_names: Vec<String>,
}

impl TokTrieBuilder {
    /// An empty builder.
    pub fn new() -> TokTrieBuilder {
        TokTrieBuilder::default()
    }

    /// Declares the vocabulary size (every id must be below it). Without it,
    /// the size is one more than the largest id given.
    pub fn vocab_size(mut self, vocab_size: usize) -> TokTrieBuilder {
        self.vocab_size = Some(vocab_size);
        self
    }

    /// Adds an ordinary token. Several ids may share the same bytes; an
    /// empty token is kept (its bytes are empty) but is never in a mask,
    /// since emitting it would not advance the text.
    pub fn token(mut self, id: TokenId, bytes: &[u8]) -> TokTrieBuilder {
        self.tokens.push((id.0, bytes.to_vec()));
        self
    }

    /// Adds ordinary tokens from `(id, bytes)` pairs.
    pub fn tokens<'a>(
        mut self,
        tokens: impl IntoIterator<Item = (u32, &'a [u8])>,
    ) -> TokTrieBuilder {
        self.tokens.extend(tokens.into_iter().map(|(id, b)| (id, b.to_vec())));
        self
    }

    /// Adds a special token, addressable by `id` and by `name`.
    pub fn special(mut self, id: TokenId, name: &str) -> TokTrieBuilder {
        self.specials.push((id.0, name.to_owned()));
        self
    }

    /// Marks `id` as an end-of-sequence token (there may be several).
    pub fn eos(mut self, id: TokenId) -> TokTrieBuilder {
        self.eos.push(id.0);
        self
    }

    /// Marks the special token named `name` as an end-of-sequence token.
    pub fn eos_name(mut self, name: &str) -> TokTrieBuilder {
        self.eos_names.push(name.to_owned());
        self
    }

    /// Validates the vocabulary and lays out the trie.
    ///
    /// Takes O(B log V) time for `B` total token bytes and `V` tokens (a sort
    /// of the byte strings) and never panics.
    pub fn build(self) -> Result<TokTrie, BuildError> {
        let max_id = self.tokens.iter().map(|t| t.0).chain(self.specials.iter().map(|s| s.0)).max();
        let vocab_size = self.vocab_size.unwrap_or_else(|| max_id.map_or(0, |m| m as usize + 1));
        if vocab_size > MAX_VOCAB {
            return Err(BuildError::VocabTooLarge { vocab_size, max: MAX_VOCAB });
        }
        let mut kinds = vec![TokenKind::Hole; vocab_size];
        for &(id, ref bytes) in &self.tokens {
            let slot = claim(&mut kinds, id, vocab_size)?;
            if bytes.len() > MAX_TOKEN_LEN {
                return Err(BuildError::TokenTooLong {
                    id: TokenId(id),
                    len: bytes.len(),
                    max: MAX_TOKEN_LEN,
                });
            }
            *slot = TokenKind::Ordinary;
        }
        let mut by_name: HashMap<Box<str>, TokenId> = HashMap::new();
        for &(id, ref name) in &self.specials {
            let slot = claim(&mut kinds, id, vocab_size)?;
            *slot = TokenKind::Special;
            if name.is_empty() {
                return Err(BuildError::EmptySpecialName { id: TokenId(id) });
            }
            if let Some(&first) = by_name.get(name.as_str()) {
                return Err(BuildError::DuplicateSpecialName {
                    name: name.clone(),
                    first,
                    second: TokenId(id),
                });
            }
            by_name.insert(name.as_str().into(), TokenId(id));
        }
        let mut eos = Vec::new();
        for &id in &self.eos {
            if kinds.get(id as usize).is_none_or(|k| *k == TokenKind::Hole) {
                return Err(BuildError::EosNotInVocab { id: TokenId(id) });
            }
            eos.push(TokenId(id));
        }
        for name in &self.eos_names {
            match by_name.get(name.as_str()) {
                Some(&id) => eos.push(id),
                None => return Err(BuildError::UnknownEosName { name: name.clone() }),
            }
        }
        eos.sort_unstable();
        eos.dedup();

        let mut token_bytes = vec![Vec::new(); vocab_size];
        for (id, bytes) in self.tokens {
            token_bytes[id as usize] = bytes;
        }
        let mut specials: Vec<(TokenId, Box<str>)> =
            self.specials.into_iter().map(|(id, name)| (TokenId(id), name.into())).collect();
        specials.sort_unstable_by_key(|s| s.0);
        TokTrie::assemble(kinds, &token_bytes, specials, by_name, eos)
    }
}

/// The kind slot of `id`, if `id` is in range and not yet taken.
fn claim(
    kinds: &mut [TokenKind],
    id: u32,
    vocab_size: usize,
) -> Result<&mut TokenKind, BuildError> {
    match kinds.get_mut(id as usize) {
        None => Err(BuildError::IdOutOfRange { id: TokenId(id), vocab_size }),
        Some(TokenKind::Hole) => Ok(&mut kinds[id as usize]),
        Some(_) => Err(BuildError::DuplicateId { id: TokenId(id) }),
    }
}

/// The node array and the duplicate pairs for the non-empty ordinary tokens.
pub(crate) struct Layout {
    pub(crate) nodes: Vec<Node>,
    /// `(primary, other)`: `other` has the same bytes as `primary`, the
    /// smallest id with those bytes, which is the one the node holds.
    pub(crate) duplicates: Vec<(TokenId, TokenId)>,
}

/// Lays out the trie of `tokens` (non-empty byte strings with their ids) in
/// depth-first order; `vocab_size` is the "no token" value of a node.
///
/// Sorting makes depth-first order the order of the strings themselves: each
/// string adds the nodes below its longest common prefix with the previous
/// one, and the nodes deeper than that prefix are closed (their `size` and
/// `up` become known) just before.
pub(crate) fn layout(
    mut tokens: Vec<(&[u8], u32)>,
    vocab_size: usize,
) -> Result<Layout, BuildError> {
    tokens.sort_unstable();
    let none = vocab_size as u32;
    let mut nodes = vec![Node::new(0, 0, 1, none)];
    let mut duplicates = Vec::new();
    // open[d] is the index of the open node at depth d (open[0] is the root).
    let mut open: Vec<usize> = vec![0];
    let mut prev: &[u8] = &[];
    let mut prev_id = none;
    for (bytes, id) in tokens {
        if bytes == prev {
            duplicates.push((TokenId(prev_id), TokenId(id)));
            continue;
        }
        let lcp = prev.iter().zip(bytes).take_while(|(a, b)| a == b).count();
        close(&mut nodes, &mut open, lcp + 1);
        if nodes.len() + (bytes.len() - lcp) > MAX_NODES {
            return Err(BuildError::TooManyNodes { max: MAX_NODES });
        }
        for &b in &bytes[lcp..] {
            open.push(nodes.len());
            nodes.push(Node::new(b, 0, 1, none));
        }
        let last = nodes.len() - 1;
        nodes[last] = nodes[last].with_token(id);
        prev = bytes;
        prev_id = id;
    }
    close(&mut nodes, &mut open, 1);
    nodes[0] = Node::new(0, 0, nodes.len(), none);
    Ok(Layout { nodes, duplicates })
}

/// Closes the open nodes at depths `>= next_depth`, whose subtrees end here;
/// the next node laid out (if any) has depth `next_depth`.
fn close(nodes: &mut [Node], open: &mut Vec<usize>, next_depth: usize) {
    let end = nodes.len();
    while open.len() > next_depth {
        let depth = open.len() - 1;
        let Some(index) = open.pop() else { break };
        nodes[index] = nodes[index].with_size(end - index).with_up(depth + 1 - next_depth);
    }
}
