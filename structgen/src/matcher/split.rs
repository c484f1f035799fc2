//! The [`Matcher`]'s split masks: the fast path of free text.
//!
//! In free text (a structural tag's `any_text`, the text between triggered
//! tags) almost every token is allowed, and a plain walk visits the whole
//! trie on every step; the slicer cannot help, because the lexeme there is
//! lazy (it ends at the first trigger). But almost every token stays inside
//! the lexeme, and whether it does depends on the lexer state alone. So for
//! a lexer state seen twice, the matcher asks the trie for its split
//! ([`TokTrie::split`]): the tokens the lexer state keeps inside the lexeme
//! (all but those that contain or complete a trigger, and the bytes that
//! cannot continue the text) and the few frontier nodes where a lexer step
//! leaves the lexeme. Every later mask at that lexer state is a copy of the
//! inside set plus the full walks below the frontier nodes
//! ([`TokTrie::compute_mask_split`]), about the cost of copying one mask.
//!
//! Masks are the same as the plain walk's (see `toktrie`'s `split.rs`: each
//! token is decided on its own path; inside the lexeme the parser's step is
//! the lexer's transition whatever the Earley row). Splits are cached per
//! matcher (lexer states are numbered per lexer), up to
//! [`DEFAULT_MAX_SPLITS`] of them; a split with too many frontier nodes or
//! outside words is refused once and never tried again for that state.

use std::collections::HashMap;
use std::sync::Arc;

use earley::Parser;
use lexer::StateId;
use toktrie::{Split, SplitLimits, SplitRecognizer, StateRecognizer, TokTrie, TokenSet};

use crate::Matcher;

/// The default most splits a matcher keeps (see
/// [`Matcher::with_max_splits`]); each is a few KiB (a short list of outside
/// words and at most 1,024 frontier nodes).
pub const DEFAULT_MAX_SPLITS: usize = 32;

/// How many lexer states a matcher remembers having seen (for the
/// "seen twice" rule), beyond which new states are never split.
const MAX_SEEN: usize = 4096;

/// What the matcher knows about a lexer state.
#[derive(Clone, Debug)]
enum Entry {
    /// Seen once at the start of a walked mask.
    Seen,
    /// Its split was refused (past the limits): always walked.
    Refused,
    /// Its split.
    Split(Arc<Split<StateId>>),
}

/// The matcher's cache of splits, by lexer state.
#[derive(Clone, Debug)]
pub(crate) struct SplitCache {
    max_splits: usize,
    splits: usize,
    entries: HashMap<StateId, Entry>,
    stats: SplitStats,
}

/// Counters of the split masks in one matcher.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SplitStats {
    /// Masks computed from a split.
    pub masks: u64,
    /// Splits computed (each one walk of the trie with lexer steps).
    pub splits: u64,
    /// Splits refused (too many frontier nodes or outside words).
    pub refused: u64,
}

impl Default for SplitCache {
    fn default() -> SplitCache {
        SplitCache::new(DEFAULT_MAX_SPLITS)
    }
}

impl SplitCache {
    pub(crate) fn new(max_splits: usize) -> SplitCache {
        SplitCache { max_splits, splits: 0, entries: HashMap::new(), stats: SplitStats::default() }
    }

    pub(crate) fn max_splits(&self) -> usize {
        self.max_splits
    }

    /// Computes the mask of `parser`'s position from a split when there is
    /// one (making it if the lexer state is seen the second time); `false`
    /// when the caller must walk.
    pub(crate) fn mask(
        &mut self,
        trie: &TokTrie,
        parser: &mut Parser,
        mask: &mut TokenSet,
    ) -> bool {
        if self.max_splits == 0 {
            return false;
        }
        let start = parser.start();
        let inner = parser.inner(start);
        let split = match self.entries.get(&inner) {
            Some(Entry::Split(s)) => s.clone(),
            Some(Entry::Refused) => return false,
            Some(Entry::Seen) if self.splits < self.max_splits => {
                match trie.split(parser, inner, &SplitLimits::for_trie(trie)) {
                    Some(s) => {
                        let s = Arc::new(s);
                        self.entries.insert(inner, Entry::Split(s.clone()));
                        self.splits += 1;
                        self.stats.splits += 1;
                        s
                    }
                    None => {
                        self.entries.insert(inner, Entry::Refused);
                        self.stats.refused += 1;
                        return false;
                    }
                }
            }
            Some(Entry::Seen) => return false,
            None => {
                if self.entries.len() < MAX_SEEN {
                    self.entries.insert(inner, Entry::Seen);
                }
                return false;
            }
        };
        trie.compute_mask_split(parser, &split, mask);
        self.stats.masks += 1;
        true
    }
}

impl Matcher {
    /// This matcher keeping at most `n` splits (`0`: no split masks, every
    /// mask walks the trie). Masks are the same either way; only the time
    /// to compute them in free text changes (see `matcher/split.rs`). The
    /// default is [`DEFAULT_MAX_SPLITS`].
    pub fn with_max_splits(mut self, n: usize) -> Matcher {
        if n != self.splits.max_splits() {
            self.splits = SplitCache::new(n);
        }
        self
    }

    /// The split masks' counters.
    pub fn split_stats(&self) -> SplitStats {
        self.splits.stats
    }
}
