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
//!
//! The matchers of one grammar also share their splits. A matcher's lexer
//! is a clone of the grammar's start, so a lexer state can be named in a
//! way every matcher understands ([`Lexer::state_key`](lexer::Lexer::state_key):
//! the live lexemes and their derivatives). The grammar's [`SharedSplits`]
//! maps such names to splits and to "seen" and "refused" marks. "Seen
//! twice" counts across matchers: in free text most lexer states are met
//! once per request (the start of the text, each partial trigger), so the
//! first request walks, the second makes the split and publishes it, and
//! every later request rebuilds it for its own lexer
//! ([`Split::localize`](toktrie::Split::localize): a few lexer steps) and
//! copies. Masks are the same whichever matcher made the split: a split
//! holds only what the inner steps proved, and the rest is walked by the
//! matcher asking. The store never blocks: a matcher that finds it locked
//! goes on as if it were empty. It keeps at most [`MAX_SHARED_SPLITS`]
//! splits and [`MAX_SHARED_KEYS`] names.
//!
//! Sharing is on for grammars with a lazy lexeme (free text that ends at
//! its first stop: structural tags, Lark `[lazy]` terminals), where it
//! pays. Naming a state prints its derivatives, which a JSON Schema's many
//! small first-seen states would pay on every walked mask for nothing
//! (MaskBench, every 20th dev schema: the median mask 25% slower with
//! names for every grammar).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use earley::Parser;
use lexer::{LexemeId, StateId};
use toktrie::{Split, SplitLimits, SplitRecognizer, StateRecognizer, TokTrie, TokenSet};

use crate::Matcher;

/// The default most splits a matcher keeps (see
/// [`Matcher::with_max_splits`]); each is a few KiB (a short list of outside
/// words and at most 1,024 frontier nodes).
pub const DEFAULT_MAX_SPLITS: usize = 32;

/// How many lexer states a matcher remembers having seen (for the
/// "seen twice" rule), beyond which new states are never split.
const MAX_SEEN: usize = 4096;

/// The most splits the matchers of one grammar share (each a few KiB; see
/// [`DEFAULT_MAX_SPLITS`]).
pub const MAX_SHARED_SPLITS: usize = 64;

/// The most lexer-state names the matchers of one grammar share.
pub const MAX_SHARED_KEYS: usize = 4096;

/// The largest derivative (in expression nodes) worth naming for the
/// shared store: the name costs about that much to print.
const MAX_KEY_NODES: usize = 2048;

/// What the matchers of a grammar know about a named lexer state.
#[derive(Clone, Debug)]
enum Shared {
    /// Seen by one matcher.
    Seen,
    /// Its split was refused.
    Refused,
    /// Its split, as its maker's lexer numbers states (rebuilt by
    /// [`Split::localize`](toktrie::Split::localize) for another lexer).
    Split(Arc<Split<StateId>>),
}

/// The splits shared by the matchers of one grammar, by lexer-state name
/// (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct SharedSplits {
    map: RwLock<HashMap<String, Shared>>,
}

impl SharedSplits {
    /// The entry for `key`; `None` when absent or when the store is busy.
    fn get(&self, key: &str) -> Option<Shared> {
        self.map.try_read().ok()?.get(key).cloned()
    }

    /// Records `entry` for `key` unless the store is busy or full; never
    /// replaces a split or a refusal.
    fn put(&self, key: String, entry: Shared) {
        let Ok(mut map) = self.map.try_write() else { return };
        let splits = matches!(entry, Shared::Split(_));
        if map.len() >= MAX_SHARED_KEYS && !map.contains_key(&key) {
            return;
        }
        if splits
            && map.values().filter(|e| matches!(e, Shared::Split(_))).count() >= MAX_SHARED_SPLITS
        {
            return;
        }
        match map.get(&key) {
            Some(Shared::Split(_) | Shared::Refused) => {}
            _ => {
                map.insert(key, entry);
            }
        }
    }
}

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
    /// The grammar's store: the same `Arc` in every matcher cloned from
    /// one start.
    shared: Arc<SharedSplits>,
    /// Whether this grammar shares splits (it has a lazy lexeme); `None`
    /// until the first split question.
    sharing: Option<bool>,
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
    /// Splits this matcher took from the grammar's other matchers.
    pub shared: u64,
}

impl Default for SplitCache {
    fn default() -> SplitCache {
        SplitCache::new(DEFAULT_MAX_SPLITS)
    }
}

impl SplitCache {
    pub(crate) fn new(max_splits: usize) -> SplitCache {
        SplitCache {
            max_splits,
            splits: 0,
            entries: HashMap::new(),
            stats: SplitStats::default(),
            shared: Arc::default(),
            sharing: None,
        }
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
        let local = self.entries.get(&inner).cloned();
        let split = match local {
            Some(Entry::Split(s)) => s,
            Some(Entry::Refused) => return false,
            Some(Entry::Seen) | None if self.splits < self.max_splits => {
                // Not split here yet: ask the grammar's other matchers.
                let sharing = self.shares(parser.lexer());
                let key = sharing.then(|| parser.lexer().state_key(inner, MAX_KEY_NODES)).flatten();
                let shared = key.as_deref().and_then(|k| self.shared.get(k));
                match (local, shared) {
                    (_, Some(Shared::Split(s))) => {
                        let Some(s) = s.localize(parser, inner) else {
                            self.entries.insert(inner, Entry::Refused);
                            return false;
                        };
                        self.stats.shared += 1;
                        self.keep(inner, s)
                    }
                    (_, Some(Shared::Refused)) => {
                        self.entries.insert(inner, Entry::Refused);
                        return false;
                    }
                    // Seen twice, here or across matchers: split it.
                    (Some(Entry::Seen), _) | (_, Some(Shared::Seen)) => {
                        match self.make(trie, parser, inner, key) {
                            Some(s) => s,
                            None => return false,
                        }
                    }
                    _ => {
                        if self.entries.len() < MAX_SEEN {
                            self.entries.insert(inner, Entry::Seen);
                        }
                        if let Some(k) = key {
                            self.shared.put(k, Shared::Seen);
                        }
                        return false;
                    }
                }
            }
            Some(Entry::Seen) | None => return false,
        };
        trie.compute_mask_split(parser, &split, mask);
        self.stats.masks += 1;
        true
    }

    /// Whether this matcher's grammar shares splits: it has a lazy lexeme
    /// (free text), and splits are on.
    pub(crate) fn shares(&mut self, lexer: &lexer::Lexer) -> bool {
        self.max_splits > 0
            && *self.sharing.get_or_insert_with(|| {
                (0..lexer.num_lexemes()).any(|i| lexer.is_lazy(LexemeId(i as u32)))
            })
    }

    /// Keeps `split` as this matcher's split at `inner`.
    fn keep(&mut self, inner: StateId, split: Split<StateId>) -> Arc<Split<StateId>> {
        let s = Arc::new(split);
        self.entries.insert(inner, Entry::Split(s.clone()));
        self.splits += 1;
        s
    }

    /// Splits the trie at `inner`, keeps the answer (a split or a
    /// refusal) and shares it under `key`.
    fn make(
        &mut self,
        trie: &TokTrie,
        parser: &mut Parser,
        inner: StateId,
        key: Option<String>,
    ) -> Option<Arc<Split<StateId>>> {
        match trie.split(parser, inner, &SplitLimits::for_trie(trie)) {
            Some(s) => {
                let s = self.keep(inner, s);
                self.stats.splits += 1;
                if let Some(k) = key {
                    self.shared.put(k, Shared::Split(s.clone()));
                }
                Some(s)
            }
            None => {
                self.entries.insert(inner, Entry::Refused);
                self.stats.refused += 1;
                if let Some(k) = key {
                    self.shared.put(k, Shared::Refused);
                }
                None
            }
        }
    }
}

impl Matcher {
    /// This matcher keeping at most `n` splits (`0`: no split masks, every
    /// mask walks the trie). Masks are the same either way; only the time
    /// to compute them in free text changes (see `matcher/split.rs`). The
    /// default is [`DEFAULT_MAX_SPLITS`].
    pub fn with_max_splits(mut self, n: usize) -> Matcher {
        if n != self.splits.max_splits() {
            let shared = self.splits.shared.clone();
            self.splits = SplitCache { shared, ..SplitCache::new(n) };
        }
        self
    }

    /// The split masks' counters.
    pub fn split_stats(&self) -> SplitStats {
        self.splits.stats
    }
}
