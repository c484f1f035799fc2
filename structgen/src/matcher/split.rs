//! The [`Matcher`]'s split masks: the fast path of free text.
//!
//! In free text (a structural tag's `any_text`, the text between triggered
//! tags) almost every token is allowed, and a plain walk visits the whole
//! trie on every step; the slicer cannot help, because the lexeme there is
//! lazy (it ends at the first trigger). But almost every token stays inside
//! the lexeme, and whether it does depends on the lexer state alone. So for
//! a lexer state seen twice (in free text, at once: see below), the
//! matcher asks the trie for its split
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
//! The matchers of one vocabulary also share their splits, whatever their
//! grammar. A lexer state can be named in a way every lexer understands
//! ([`Lexer::state_key`](lexer::Lexer::state_key): for each live lexeme,
//! whether it is lazy and its derivative), and two states with one name
//! step alike on every byte. The vocabulary's [`SharedSplits`] maps such
//! names to splits and to "seen" and "refused" marks. "Seen twice" counts
//! across matchers. But in free text most lexer states are met once per
//! request (the start of the text, each partial trigger), so there the
//! first request does not wait: it splits the text's start at once (the
//! lexeme's start state with a lazy lexeme live, whose next masks the
//! split serves), and derives the split at a later state of the same
//! lexeme, a partial trigger, from the start's
//! ([`TokTrie::split_from`]: it walks only the few subtrees where the two
//! states' paths have not met again, a fraction of a walk). It publishes
//! both, and every later request rebuilds them for its own lexer
//! ([`Split::localize`](toktrie::Split::localize): a few lexer steps) and
//! copies. Measured on the first request of a Hermes reasoning-and-answer
//! text on Llama-3 (`cargo xtask bench structural`, "cold"): six whole
//! walks before, two splits and three derivations now, the mean mask from
//! 0.72× to 0.27–0.35× llguidance's and the p99 from 1.8× to 0.22–0.29×
//! (with the split walk taking looping subtrees whole: `toktrie`'s
//! DESIGN.md, "The first request"). The free text of a tool-call syntax
//! is the same whatever the tools (text up to the syntax's triggers), so a
//! request with a new tool
//! list, a new grammar, takes the splits of the earlier ones. Masks are
//! the same whichever matcher made the split: a split holds only what the
//! inner steps proved, and the rest is walked by the matcher asking. The
//! store never blocks: a matcher that finds it locked goes on as if it
//! were empty. It keeps at most [`MAX_SHARED_SPLITS`] splits (the least
//! recently used gives way) and [`MAX_SHARED_KEYS`] names.
//!
//! A matcher's own splits also outlive it: when its lexer becomes its
//! grammar's learned start (see [`Grammar`](crate::Grammar)), its splits
//! and refusals go with it (they name that lexer's states), so the next
//! matchers of the grammar start with them instead of localizing shared
//! ones again.
//!
//! Grammars with distinct members (`uniqueItems`) have a second kind of
//! split, for positions where masks are walked by bytes (among taken
//! members, or where a walk by state gave up: `earley::TakenSplit`): its
//! inside tokens stay inside the lexeme
//! in progress with no member check or search, the rest is walked by
//! bytes ([`TokTrie::compute_mask_split_by_bytes`]). They are this
//! matcher's own, cached apart from the ordinary ones, and have no limit
//! on outside words and up to 4,096 frontier nodes, since the walk they
//! replace costs more than any split mask.
//!
//! Sharing is on for grammars with a lazy lexeme (free text that ends at
//! its first stop: structural tags, Lark `[lazy]` terminals), where it
//! pays. Naming a state prints its derivatives, which a JSON Schema's many
//! small first-seen states would pay on every walked mask for nothing
//! (MaskBench, every 20th dev schema: the median mask 25% slower with
//! names for every grammar).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use earley::Parser;
use lexer::{LexemeId, StateId};
use toktrie::{Derived, Split, SplitLimits, SplitRecognizer, StateRecognizer, TokTrie, TokenSet};

use crate::Matcher;

/// The default most splits a matcher keeps (see
/// [`Matcher::with_max_splits`]); each is a few KiB (a short list of outside
/// words and at most 1,024 frontier nodes).
pub const DEFAULT_MAX_SPLITS: usize = 32;

/// How many lexer states a matcher remembers having seen (for the
/// "seen twice" rule), beyond which new states are never split.
const MAX_SEEN: usize = 4096;

/// The most splits the matchers of one vocabulary share (each a few KiB;
/// see [`DEFAULT_MAX_SPLITS`]).
pub const MAX_SHARED_SPLITS: usize = 64;

/// The most lexer-state names the matchers of one vocabulary share.
pub const MAX_SHARED_KEYS: usize = 4096;

/// The largest derivative (in expression nodes) worth naming for the
/// shared store: the name costs about that much to print.
const MAX_KEY_NODES: usize = 2048;

/// What the matchers of a vocabulary know about a named lexer state.
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

/// One named state in the store, with the tick of its last use.
#[derive(Debug)]
struct Slot {
    shared: Shared,
    used: AtomicU64,
}

#[derive(Debug, Default)]
struct Store {
    slots: HashMap<String, Slot>,
    /// How many slots hold a split.
    splits: usize,
}

/// The splits shared by the matchers of one vocabulary, whatever their
/// grammar, by lexer-state name (see the module docs). At most
/// [`MAX_SHARED_SPLITS`] splits, the least recently used one giving way
/// to a new one; at most [`MAX_SHARED_KEYS`] names, the "seen" marks
/// (then the refusals) forgotten when they are all taken.
#[derive(Debug, Default)]
pub(crate) struct SharedSplits {
    store: RwLock<Store>,
    /// A clock for [`Slot::used`].
    clock: AtomicU64,
}

impl SharedSplits {
    /// The entry for `key`; `None` when absent or when the store is busy.
    fn get(&self, key: &str) -> Option<Shared> {
        let store = self.store.try_read().ok()?;
        let slot = store.slots.get(key)?;
        slot.used.store(self.clock.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        Some(slot.shared.clone())
    }

    /// Records `entry` for `key` unless the store is busy; never replaces
    /// a split or a refusal. Makes room as the type's docs say.
    fn put(&self, key: String, entry: Shared) {
        let Ok(mut store) = self.store.try_write() else { return };
        if let Some(Slot { shared: Shared::Split(_) | Shared::Refused, .. }) = store.slots.get(&key)
        {
            return;
        }
        let split = matches!(entry, Shared::Split(_));
        if split && store.splits >= MAX_SHARED_SPLITS {
            let oldest = store
                .slots
                .iter()
                .filter(|(_, s)| matches!(s.shared, Shared::Split(_)))
                .min_by_key(|(_, s)| s.used.load(Ordering::Relaxed))
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                store.slots.remove(&k);
                store.splits -= 1;
            }
        }
        if store.slots.len() >= MAX_SHARED_KEYS && !store.slots.contains_key(&key) {
            store.slots.retain(|_, s| !matches!(s.shared, Shared::Seen));
            if store.slots.len() >= MAX_SHARED_KEYS {
                store.slots.retain(|_, s| !matches!(s.shared, Shared::Refused));
            }
        }
        let used = AtomicU64::new(self.clock.fetch_add(1, Ordering::Relaxed));
        store.splits += split as usize;
        store.slots.insert(key, Slot { shared: entry, used });
    }

    /// Forgets every name and split.
    pub(crate) fn clear(&self) {
        // A writer waits here for readers' short look-ups: only an
        // explicit call (not a mask) comes here.
        let mut store = self.store.write().unwrap_or_else(|e| e.into_inner());
        *store = Store::default();
    }

    /// How many splits are stored.
    pub(crate) fn len(&self) -> usize {
        self.store.read().map_or(0, |s| s.splits)
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
    /// Splits for the walk by bytes among taken distinct members
    /// (`earley::TakenSplit`), keyed by its `key`; they answer differently
    /// from `entries`' at the same lexer state.
    taken: HashMap<(StateId, bool), Entry>,
    stats: SplitStats,
    /// The vocabulary's store: the same `Arc` in every matcher of the
    /// vocabulary.
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
    /// Splits derived from the split at the start of the lexeme in
    /// progress (each a walk of the few subtrees where the two lexer
    /// states differ).
    pub derived: u64,
    /// Splits refused (too many frontier nodes or outside words).
    pub refused: u64,
    /// Splits this matcher took from other matchers of its vocabulary
    /// (of its grammar or of another with the same free text).
    pub shared: u64,
    /// Splits this matcher started with: its grammar's learned start took
    /// them from a matcher dropped before (see [`Grammar`](crate::Grammar)).
    pub inherited: u64,
}

impl SplitCache {
    /// A cache of at most `max_splits` splits, sharing them through
    /// `shared` (the vocabulary's store).
    pub(crate) fn new(max_splits: usize, shared: Arc<SharedSplits>) -> SplitCache {
        SplitCache {
            max_splits,
            splits: 0,
            entries: HashMap::new(),
            taken: HashMap::new(),
            stats: SplitStats::default(),
            shared,
            sharing: None,
        }
    }

    pub(crate) fn max_splits(&self) -> usize {
        self.max_splits
    }

    pub(crate) fn num_splits(&self) -> usize {
        self.splits
    }

    /// Replaces this cache's entries with `other`'s splits and refusals,
    /// up to this cache's bound, without the "seen once" marks (a
    /// heuristic, and the bulk of the entries). The caller gives this
    /// cache's matcher `other`'s lexer (see `Grammar::offer_lexer`): the
    /// lexer states of `other`'s entries mean the same in it, which is not
    /// so for entries this cache holds now (made by a lexer that may not be
    /// an ancestor of `other`'s). A split holds what the lexer proved, so
    /// it gives the same masks in any matcher whose lexer numbers states
    /// alike.
    pub(crate) fn replace_with(&mut self, other: &SplitCache) {
        self.entries.clear();
        self.taken.clear();
        self.splits = 0;
        for (&state, e) in &other.entries {
            match e {
                Entry::Seen => {}
                Entry::Refused => {
                    self.entries.insert(state, Entry::Refused);
                }
                Entry::Split(s) if self.splits < self.max_splits => {
                    self.entries.insert(state, Entry::Split(s.clone()));
                    self.splits += 1;
                }
                Entry::Split(_) => {}
            }
        }
        self.stats.inherited = self.splits as u64;
    }

    /// Computes the mask of `parser`'s position from a split when there is
    /// one (making it if the lexer state is seen the second time, or first
    /// in free text: see the module docs); `false` when the caller must
    /// walk.
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
                // Not split here yet: ask the vocabulary's other matchers.
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
                    // First seen, in free text: derived from the split at
                    // the lexeme's start when there is one (a partial
                    // trigger costs a few small walks, not a whole one).
                    (None, _) if sharing && self.derive(trie, parser, inner, &key) => {
                        match self.entries.get(&inner) {
                            Some(Entry::Split(s)) => s.clone(),
                            _ => return false,
                        }
                    }
                    // Seen twice, here or across matchers, or the start
                    // of free text (where the next states' splits derive
                    // from this one): split it.
                    (local, shared)
                        if matches!(local, Some(Entry::Seen))
                            || matches!(shared, Some(Shared::Seen))
                            || (sharing && free_text_start(parser, inner)) =>
                    {
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

    /// Sets `mask` from a split at a position of a grammar with distinct
    /// members (`uniqueItems`) whose mask is walked by bytes: the
    /// tokens that stay inside the lexeme in progress with no member check
    /// or search are the split's inside set, the rest is walked by bytes
    /// (see `earley::TakenSplit`). The same "seen twice" rule as
    /// [`mask`](Self::mask), with this matcher's own splits only (the
    /// inner steps depend on the phrase, not only on the lexer state).
    /// `false` when no split serves: the caller walks.
    pub(crate) fn taken_mask(
        &mut self,
        trie: &TokTrie,
        parser: &mut Parser,
        mask: &mut TokenSet,
    ) -> bool {
        if self.max_splits == 0 {
            return false;
        }
        let Some(mut r) = parser.taken_split() else { return false };
        let key = r.key();
        let split = match self.taken.get(&key) {
            Some(Entry::Split(s)) => s.clone(),
            Some(Entry::Refused) => return false,
            Some(Entry::Seen) if self.splits < self.max_splits => {
                let mut limits = SplitLimits::for_trie(trie);
                limits.max_frontier = 4096;
                limits.max_outside_words = usize::MAX;
                match trie.split(&mut r, key.0, &limits) {
                    Some(s) => {
                        let s = Arc::new(s);
                        self.taken.insert(key, Entry::Split(s.clone()));
                        self.splits += 1;
                        self.stats.splits += 1;
                        s
                    }
                    None => {
                        self.taken.insert(key, Entry::Refused);
                        self.stats.refused += 1;
                        return false;
                    }
                }
            }
            Some(Entry::Seen) => return false,
            None => {
                if self.taken.len() < MAX_SEEN {
                    self.taken.insert(key, Entry::Seen);
                }
                return false;
            }
        };
        if !trie.compute_mask_split_by_bytes(r.parser(), &split, mask) {
            return false;
        }
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

    /// Derives the split at `inner` from this matcher's split at the start
    /// of the lexeme in progress ([`TokTrie::split_from`]), keeps the
    /// answer (a split or a refusal) and shares it under `key`. `false`
    /// when there is no such split, or when the derivation gave up after
    /// visiting a sixteenth of the trie (the states did not meet soon; a
    /// failed try costs at most that much of a walk).
    fn derive(
        &mut self,
        trie: &TokTrie,
        parser: &mut Parser,
        inner: StateId,
        key: &Option<String>,
    ) -> bool {
        let Some(base_start) = parser.lexeme_start().filter(|&s| s != inner) else {
            return false;
        };
        let base = match self.entries.get(&base_start).cloned() {
            Some(Entry::Split(s)) => s,
            Some(Entry::Refused) => return false,
            // The text's start, never asked for a mask (a token went past
            // it): split it now, as its first mask would have.
            _ if self.splits + 1 < self.max_splits && free_text_start(parser, base_start) => {
                let key = parser.lexer().state_key(base_start, MAX_KEY_NODES);
                match self.localize_or_make(trie, parser, base_start, key) {
                    Some(s) => s,
                    None => return false,
                }
            }
            _ => return false,
        };
        let limits = SplitLimits::for_trie(trie);
        let budget = trie.num_nodes() / 16;
        match trie.split_from(parser, &base, base_start, inner, &limits, budget) {
            Derived::Split(s) => {
                let s = self.keep(inner, s);
                self.stats.derived += 1;
                if let Some(k) = key {
                    self.shared.put(k.clone(), Shared::Split(s));
                }
            }
            Derived::Refused => {
                self.entries.insert(inner, Entry::Refused);
                self.stats.refused += 1;
                if let Some(k) = key {
                    self.shared.put(k.clone(), Shared::Refused);
                }
            }
            Derived::GaveUp => return false,
        }
        true
    }

    /// The split at `state` from the vocabulary's store under `key`, or
    /// made here when the store has no answer; `None` when refused.
    fn localize_or_make(
        &mut self,
        trie: &TokTrie,
        parser: &mut Parser,
        state: StateId,
        key: Option<String>,
    ) -> Option<Arc<Split<StateId>>> {
        match key.as_deref().and_then(|k| self.shared.get(k)) {
            Some(Shared::Split(s)) => match s.localize(parser, state) {
                Some(s) => {
                    self.stats.shared += 1;
                    Some(self.keep(state, s))
                }
                None => {
                    self.entries.insert(state, Entry::Refused);
                    None
                }
            },
            Some(Shared::Refused) => {
                self.entries.insert(state, Entry::Refused);
                None
            }
            Some(Shared::Seen) | None => self.make(trie, parser, state, key),
        }
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

/// Whether `inner` starts a lexeme of free text: it is the lexeme's start
/// state and a lazy lexeme is live in it.
fn free_text_start(parser: &Parser, inner: StateId) -> bool {
    let lexer = parser.lexer();
    parser.lexeme_start() == Some(inner) && lexer.live_lexemes(inner).any(|l| lexer.is_lazy(l))
}

impl Matcher {
    /// This matcher keeping at most `n` splits (`0`: no split masks, every
    /// mask walks the trie). Masks are the same either way; only the time
    /// to compute them in free text changes (see `matcher/split.rs`). The
    /// default is [`DEFAULT_MAX_SPLITS`].
    pub fn with_max_splits(mut self, n: usize) -> Matcher {
        if n != self.splits.max_splits() {
            self.splits = SplitCache::new(n, self.splits.shared.clone());
        }
        self
    }

    /// The split masks' counters.
    pub fn split_stats(&self) -> SplitStats {
        self.splits.stats
    }
}
