//! The Earley parser over lexemes, driven byte by byte.

use std::num::NonZeroU32;
use std::sync::Arc;

use lexer::{AcceptSetId, LexemeSet, Lexer, StateId};
use rustc_hash::FxHashSet;
use toktrie::TokenId;

use crate::error::ParseError;
use crate::grammar::{END, Grammar, GrammarInner, SpecialToken, SymbolKind};

mod complete;
mod distinct;
mod json_value;
mod options;
mod permutation;
mod recognize;
mod special;
mod split;
pub use options::MaxTokensOutcome;
use permutation::{PHRASE, PhraseStates};
pub use split::TakenSplit;

/// An Earley item packed in a `u64`: the dot (an index into the grammar's
/// flat right-hand sides, or with bit 31 set a permutation phrase state,
/// see `permutation.rs`) in the high half, the origin row in the low half.
type Item = u64;

#[inline]
fn item(pos: u32, origin: u32) -> Item {
    ((pos as u64) << 32) | origin as u64
}

#[inline]
fn pos_of(it: Item) -> u32 {
    (it >> 32) as u32
}

#[inline]
fn origin_of(it: Item) -> u32 {
    it as u32
}

/// What created a row from its parent: the lexemes scanned, or a special token.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum RowKey {
    Lexemes(AcceptSetId),
    Special(u32),
}

/// One Earley row (the item set at one lexeme boundary).
///
/// Invariant: `items[start..end]` are the row's items, closed under predict
/// and complete; `rows[i + 1]` was computed from `rows[i]` for every `i`.
#[derive(Clone, Copy, Debug)]
struct Row {
    start: u32,
    end: u32,
    /// The lexer state of the lexemes this row allows (plus `%ignore`).
    lexer_start: StateId,
    /// Whether the start rule is complete here: the text so far is a sentence.
    accepting: bool,
    key: RowKey,
    /// Unique per computed row: identifies the row and, through the chain
    /// invariant, every row below it.
    id: u64,
    /// The byte offset of the boundary, on the path that last reached the
    /// row (a reused row is reached after lexemes of other lengths too, so
    /// it is rewritten on reuse). Read only for distinct phrases.
    offset: u32,
    /// Whether a distinct phrase member was checked here: the items depend
    /// on the text, so the row is never reused (`parser/distinct.rs`).
    textual: bool,
    /// With searching distinct phrases: whether one is open here
    /// ([`distinct::OPENS`], [`distinct::INSIDE`]; `parser/distinct.rs`).
    scope: u8,
}

/// Identifies a parser position: equal keys mean equal masks. Two positions
/// compare equal when they have the same lexer state inside the same row
/// (the same computation of it), so a caller may reuse a mask.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PositionKey {
    state: StateId,
    row: u64,
    fresh: bool,
    /// With distinct phrases, a hash of the bytes of the lexeme in
    /// progress: there the mask also depends on them (which member the
    /// lexeme may still complete), not only on the lexer state.
    lexeme: u64,
}

/// The parser position after one pushed byte, in 8 bytes (frames are
/// pushed and popped on every trie node). Opaque: the
/// [`StateRecognizer`](toktrie::StateRecognizer) state of the mask walk.
///
/// Bit layout of `row_fresh`: bit 31 is `fresh` (no byte of the current
/// lexeme seen yet: `state` is the row's start state); bit 30 is always set
/// (so `Option<Frame>` is 8 bytes and comes back from a call in one
/// register); bits 0..30 are the row the current lexeme started at.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The lexer state within the current lexeme.
    state: StateId,
    row_fresh: NonZeroU32,
}

const FRESH: u32 = 1 << 31;
const PRESENT: u32 = 1 << 30;
/// Rows are numbered below this (the bits left in `row_fresh`).
const MAX_ROWS: u32 = PRESENT;

impl Frame {
    #[inline]
    fn new(state: StateId, row: u32, fresh: bool) -> Frame {
        let bits = row | PRESENT | if fresh { FRESH } else { 0 };
        Frame { state, row_fresh: NonZeroU32::new(bits).unwrap_or(NonZeroU32::MIN) }
    }

    /// The frame after a byte inside the current lexeme: `state`, same row,
    /// not fresh.
    #[inline(always)]
    fn within(self, state: StateId) -> Frame {
        // `| PRESENT` (already set) lets the compiler see the bits non-zero.
        let bits = (self.row_fresh.get() & !FRESH) | PRESENT;
        Frame { state, row_fresh: NonZeroU32::new(bits).unwrap_or(NonZeroU32::MIN) }
    }

    #[inline]
    fn row(self) -> u32 {
        self.row_fresh.get() & !(FRESH | PRESENT)
    }

    #[inline]
    fn fresh(self) -> bool {
        self.row_fresh.get() & FRESH != 0
    }
}

/// Counters of the parser's work, for benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParserStats {
    /// Bytes pushed successfully: consumed bytes, and trie nodes accepted
    /// by walks through [`Recognizer`](toktrie::Recognizer) (not those through
    /// [`StateRecognizer`](toktrie::StateRecognizer), whose loop keeps no counter).
    pub bytes_pushed: u64,
    /// Rows computed by scan/predict/complete.
    pub rows_computed: u64,
    /// Rows reused from the cache instead of being computed again.
    pub rows_reused: u64,
    /// Earley items computed.
    pub items_computed: u64,
}

/// An Earley parser over one [`Grammar`]; the [`Recognizer`](toktrie::Recognizer) of the mask walk.
///
/// The parser keeps a stack of frames, one per consumed byte; the trie walk
/// pushes bytes above the consumed ones and pops them again. See the crate
/// documentation and `DESIGN.md`.
#[derive(Clone, Debug)]
pub struct Parser {
    g: Arc<GrammarInner>,
    lexer: Lexer,
    items: Vec<Item>,
    rows: Vec<Row>,
    frames: Vec<Frame>,
    /// Resolved special tokens: inclusive id ranges per special index.
    specials: Vec<Vec<(u32, u32)>>,
    error: Option<ParseError>,
    step_items: usize,
    stats: ParserStats,
    // scratch space for row computation
    seen: FxHashSet<Item>,
    predicted: Vec<u32>,
    generation: u32,
    allowed: LexemeSet,
    next_row_id: u64,
    /// The hidden length of the last lexeme with `stop=` that sealed a
    /// frame (see `options.rs`); reset by [`begin_step`](Parser::begin_step).
    hidden_pending: u32,
    /// The states of permutation phrases met so far.
    phrases: PhraseStates,
    /// Per row number: the index of a large row's items by expected
    /// symbol, for completion (see `parser/complete.rs`).
    row_index: Vec<complete::RowIndex>,
    /// With distinct phrases only: the byte of each frame above the start
    /// (`text.len() == frames.len() - 1` between calls), else empty.
    text: Vec<u8>,
    /// The byte offset of the boundary of the row being computed.
    boundary: u32,
    distinct: distinct::Distinct,
}

impl Parser {
    /// A parser at the start of the text. `special` resolves the names of
    /// special tokens (`<|eom_id|>`) to token ids.
    ///
    /// # Errors
    /// [`ParseError::UnknownSpecialToken`] for a name `special` does not
    /// know; a limit exceeded while computing the first row.
    pub fn new(
        grammar: &Grammar,
        special: &dyn Fn(&str) -> Option<TokenId>,
    ) -> Result<Parser, ParseError> {
        let g = grammar.inner.clone();
        let mut specials = Vec::with_capacity(g.specials.len());
        for s in &g.specials {
            specials.push(match s {
                SpecialToken::Ids(r) => r.clone(),
                SpecialToken::Name(n) => match special(n) {
                    Some(t) => vec![(t.0, t.0)],
                    None => return Err(ParseError::UnknownSpecialToken { name: n.clone() }),
                },
            });
        }
        let n = g.kinds.len();
        // A parser starts from the grammar's own lexer; the front door may
        // later give it one that learned more (see `set_lexer`).
        let lexer = g.lexer.clone();
        let mut p = Parser {
            lexer,
            g,
            items: Vec::new(),
            rows: Vec::new(),
            frames: Vec::new(),
            specials,
            error: None,
            step_items: 0,
            stats: ParserStats::default(),
            seen: FxHashSet::default(),
            predicted: vec![0; n],
            generation: 0,
            allowed: LexemeSet::default(),
            next_row_id: 0,
            hidden_pending: 0,
            phrases: PhraseStates::default(),
            row_index: Vec::new(),
            text: Vec::new(),
            boundary: 0,
            distinct: distinct::Distinct::default(),
        };
        // Row 0: predict the synthetic start symbol.
        let start = p.g.start;
        p.compute_row(None, RowKey::Special(u32::MAX), |p| {
            let (a, b) = p.g.rules_of[start as usize];
            for r in a..b {
                let s = p.g.rule_starts[r as usize];
                p.add(item(s, 0));
            }
        });
        p.check()?;
        let row0 = p.rows[0];
        p.frames.push(Frame::new(row0.lexer_start, 0, true));
        Ok(p)
    }

    /// The error that stopped the parser, if any (sticky).
    pub fn error(&self) -> Option<&ParseError> {
        self.error.as_ref()
    }

    /// `Err` when the parser or its lexer hit a limit or a rejection.
    pub fn check(&mut self) -> Result<(), ParseError> {
        if self.error.is_none()
            && let Some(e) = self.lexer.error()
        {
            self.error = Some(ParseError::Lexer { error: e.clone(), offset: self.offset() });
        }
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The current position's key (see [`PositionKey`]).
    pub fn position_key(&self) -> PositionKey {
        let top = self.frames.last().copied().unwrap_or(Frame::new(StateId::DEAD, 0, true));
        let row = self.rows.get(top.row() as usize).map_or(0, |r| r.id);
        let lexeme = if self.g.has_distinct { self.lexeme_hash(top) } else { 0 };
        PositionKey { state: top.state, row, fresh: top.fresh(), lexeme }
    }

    /// Work counters since the parser was created.
    pub fn stats(&self) -> ParserStats {
        self.stats
    }

    /// The lexer (for its statistics).
    pub fn lexer(&self) -> &Lexer {
        &self.lexer
    }

    /// Replaces the lexer with `lexer`, which must descend from the lexer
    /// this parser's state was computed with: a copy of it that learned
    /// more (lexers only ever add states and expressions), so that every
    /// state, lexeme and expression id this parser holds means the same in
    /// it. It need not descend from the lexer it replaces: the `structgen`
    /// front door gives a grammar's start (a parser computed with the
    /// first lexer) the lexer of any matcher copied from it, whatever
    /// lexer the start held meanwhile.
    pub fn set_lexer(&mut self, lexer: Lexer) {
        self.lexer = lexer;
    }

    /// The lexer state of the lexeme in progress (the state the next pushed
    /// byte steps from) and the lexer, for containment checks on it (the
    /// slicer's [`Lexer::state_contains_prefixes`]).
    pub fn lexer_state_mut(&mut self) -> (StateId, &mut Lexer) {
        let state = self.frames.last().map_or(StateId::DEAD, |f| f.state);
        (state, &mut self.lexer)
    }

    /// The number of bytes consumed (frames above the start).
    pub fn num_bytes(&self) -> usize {
        self.frames.len() - 1
    }

    /// The byte offset errors report: the frames above the start (the
    /// consumed bytes, plus during a mask walk the bytes pushed by it).
    fn offset(&self) -> usize {
        self.frames.len().saturating_sub(1)
    }

    /// Starts a new step (one mask or one token) for
    /// [`Limits::max_items_per_step`](crate::Limits) and the lexer's
    /// [`LexerLimits::step_fuel`](lexer::LexerLimits).
    pub fn begin_step(&mut self) {
        self.step_items = 0;
        self.hidden_pending = 0;
        self.lexer.begin_step();
    }

    /// Consumes one byte of text.
    ///
    /// Returns `Ok(false)` (and changes nothing) when the grammar does not
    /// allow the byte here.
    ///
    /// # Errors
    /// A limit exceeded (the parser then stays in the error state).
    pub fn try_consume_byte(&mut self, byte: u8) -> Result<bool, ParseError> {
        self.check()?;
        let ok = self.push_byte(byte);
        self.check()?;
        Ok(ok)
    }

    /// Undoes the last `n` consumed bytes or special tokens (each special
    /// token counts as one); never pops the start frame.
    #[inline]
    pub fn pop_bytes(&mut self, n: usize) {
        // Called for every trie node, mostly with 0: keep it branch-light.
        if n != 0 {
            let keep = self.frames.len().saturating_sub(n).max(1);
            self.frames.truncate(keep);
            if self.g.has_distinct {
                self.text.truncate(keep - 1);
            }
        }
    }

    /// Whether the text consumed so far is a sentence of the grammar (the
    /// current lexeme, if any, ending here).
    ///
    /// # Errors
    /// A limit exceeded.
    pub fn is_accepting(&mut self) -> Result<bool, ParseError> {
        self.check()?;
        let acc = match self.boundary_row() {
            Some(r) => self.rows[r].accepting,
            None => false,
        };
        self.check()?;
        Ok(acc)
    }

    /// Whether any byte or special token may come next; `false` means only
    /// the end of the sequence remains (when accepting) or nothing at all.
    /// Costs at most 256 lexer look-ups, far less than a mask.
    pub fn can_extend(&mut self) -> bool {
        let Some(&top) = self.frames.last() else { return false };
        if !top.fresh() && (0..=255u8).any(|b| !self.lexer.next(top.state, b).is_dead()) {
            return true;
        }
        match self.boundary_row() {
            Some(r) => {
                let row = self.rows[r];
                !self.lexer.next_is_dead_for_all(row.lexer_start) || self.any_special_allowed()
            }
            None => false,
        }
    }

    /// Ends the current lexeme now when no byte can continue it (every live
    /// lexeme is final: a literal just completed): the top frame becomes
    /// the fresh start of the next lexeme, the position every next byte
    /// passes through anyway, so the grammar's answers do not change. A
    /// mask computed there starts from the next lexeme's lexer state, which
    /// every request meets alike (the split masks of free text after a
    /// tag's begin text), instead of from a state that only ends. Returns
    /// whether it did; never for grammars that check distinct members
    /// (their text walk keeps lexemes open).
    pub fn close_final_lexeme(&mut self) -> bool {
        let Some(&top) = self.frames.last() else { return false };
        if top.fresh() || self.g.has_distinct || !top.state.is_plain() {
            return false;
        }
        if !self.lexer.is_final(top.state) {
            return false;
        }
        let Some(r) = self.boundary_row() else { return false };
        let state = self.rows[r].lexer_start;
        if let Some(f) = self.frames.last_mut() {
            *f = Frame::new(state, r as u32, true);
        }
        true
    }

    /// The row at which the next lexeme would start if the current one ended
    /// here, or `None` when the current lexeme cannot end here.
    fn boundary_row(&mut self) -> Option<usize> {
        let top = *self.frames.last()?;
        if top.fresh() {
            return Some(top.row() as usize);
        }
        let acc = self.lexer.accepting(top.state)?;
        self.boundary = self.text.len() as u32;
        self.push_row(top.row() as usize, RowKey::Lexemes(acc))
    }

    /// Pushes one byte (consuming text, outside the walk).
    fn push_byte(&mut self, b: u8) -> bool {
        let Some(&top) = self.frames.last() else { return false };
        if self.g.has_distinct {
            return self.push_byte_distinct(top, b);
        }
        match self.step(top, b) {
            Some(f) => {
                self.frames.push(f);
                self.stats.bytes_pushed += 1;
                true
            }
            None => false,
        }
    }

    /// The position after byte `b` from position `top`, or `None` when the
    /// grammar rejects `b` there: the core of the trie walk. Inside a
    /// lexeme this is one table look-up; the rest is out of line.
    #[inline(always)]
    fn step(&mut self, top: Frame, b: u8) -> Option<Frame> {
        if let Some(next) = self.lexer.next_plain(top.state, b) {
            return Some(top.within(next));
        }
        self.step_slow(top, b)
    }

    /// [`step`](Parser::step) when the transition is not cached yet, or `b`
    /// ends the current lexeme (the lexer's answer is dead), or a lazy
    /// lexeme ends with `b`.
    #[inline(never)]
    fn step_slow(&mut self, top: Frame, b: u8) -> Option<Frame> {
        let next = self.lexer.next(top.state, b);
        if !next.is_dead() {
            if next.is_plain() {
                return Some(top.within(next));
            }
            return self.end_lazy(top.row() as usize, next, b);
        }
        // The byte does not continue the lexeme: it must end here (greedy)
        // and the byte must start the next one.
        if top.fresh() {
            return None;
        }
        let acc = self.lexer.accepting(top.state)?;
        // The lexeme ends before `b`, which `push_byte_distinct` has put in
        // the text already.
        self.boundary = self.text.len().saturating_sub(1) as u32;
        let r = self.push_row(top.row() as usize, RowKey::Lexemes(acc))?;
        let next = self.lexer.next(self.rows[r].lexer_start, b);
        if next.is_dead() {
            return None;
        }
        if next.is_lazy_end() {
            return self.end_lazy(r, next, b);
        }
        Some(Frame::new(next, r as u32, false))
    }

    /// A lazy lexeme matched at `state` (started at `row`) with byte `b`:
    /// it ends now (a hidden stop text is handled in `options.rs`).
    fn end_lazy(&mut self, row: usize, state: StateId, b: u8) -> Option<Frame> {
        let acc = self.lexer.accepting(state)?;
        // The lexeme ends after `b` (in the text already).
        self.boundary = self.text.len() as u32;
        let r = self.push_row(row, RowKey::Lexemes(acc))?;
        if self.lexer.hidden_len(state) != 0 {
            return self.end_hidden(r, state, b);
        }
        Some(Frame::new(self.rows[r].lexer_start, r as u32, true))
    }

    /// The row after scanning `key` at row `parent`: reused when the cached
    /// row above `parent` was made by the same key, computed otherwise.
    /// `None` when the row is empty or a limit is exceeded.
    #[inline]
    fn push_row(&mut self, parent: usize, key: RowKey) -> Option<usize> {
        let d = parent + 1;
        if let Some(r) = self.rows.get_mut(d)
            && r.key == key
            && !r.textual
        {
            // The common case in a walk: siblings ending the same lexeme.
            r.offset = self.boundary;
            let (empty, scope) = (r.start == r.end, r.scope);
            self.stats.rows_reused += 1;
            if scope & distinct::DISTINCT_TAKEN != 0 && self.distinct.by_state {
                // A walk by state reaching a distinct phrase with members,
                // as when the row is computed (`parser/distinct.rs`).
                self.byte_walk_required();
                return None;
            }
            return if empty { None } else { Some(d) };
        }
        self.compute_pushed_row(parent, key)
    }

    /// [`push_row`](Parser::push_row) when the cached row cannot be reused.
    #[inline(never)]
    fn compute_pushed_row(&mut self, parent: usize, key: RowKey) -> Option<usize> {
        let d = parent + 1;
        if self.error.is_some() {
            return None;
        }
        if d as u64 >= MAX_ROWS as u64 {
            // Frames pack the row in 30 bits.
            self.error =
                Some(ParseError::TooManyItems { limit: MAX_ROWS as usize, offset: self.offset() });
            return None;
        }
        self.rows.truncate(d);
        self.items.truncate(self.rows[parent].end as usize);
        let p = self.rows[parent];
        let (skip_scanned, only_skip) = match key {
            RowKey::Lexemes(acc) => {
                let set = self.lexer.accept_set(acc);
                let skip = self.g.skip.is_some_and(|s| set.contains(&s));
                (skip, skip && set.len() == 1)
            }
            RowKey::Special(_) => (false, false),
        };
        if only_skip {
            // Only `%ignore` matched: the parse state does not change
            // (with `ignore_once`, `%ignore` may not come again here).
            self.next_row_id += 1;
            let lexer_start =
                if self.g.ignore_once { self.without_skip(p.lexer_start) } else { p.lexer_start };
            let (offset, textual) = (self.boundary, false);
            self.rows.push(Row { key, id: self.next_row_id, lexer_start, offset, textual, ..p });
            self.stats.rows_computed += 1;
            return Some(d);
        }
        self.compute_row(Some(parent), key, |s| {
            for i in p.start..p.end {
                let it = s.items[i as usize];
                let pos = pos_of(it);
                if pos & PHRASE != 0 {
                    // A phrase item expects wrappers (nonterminals): it
                    // scans nothing, and `%ignore` leaves it in place.
                    if skip_scanned {
                        s.add(it);
                    }
                    continue;
                }
                let sym = s.g.rhs[pos as usize];
                if sym & END != 0 {
                    continue;
                }
                let scans = match (s.g.kinds[sym as usize].clone(), key) {
                    (SymbolKind::Lexeme(l), RowKey::Lexemes(acc)) => {
                        s.lexer.accept_set(acc).binary_search(&l).is_ok()
                    }
                    (SymbolKind::Special(x), RowKey::Special(y)) => x == y,
                    _ => false,
                };
                if scans {
                    s.add(item(pos + 1, origin_of(it)));
                }
                if skip_scanned {
                    s.add(it);
                }
            }
        });
        if self.error.is_some() {
            self.rows.truncate(d);
            return None;
        }
        let r = self.rows[d];
        if r.start == r.end { None } else { Some(d) }
    }

    /// Computes a new row on top of the item vector: `seed` adds the kernel
    /// items, then predict/complete run to closure.
    fn compute_row(&mut self, parent: Option<usize>, key: RowKey, seed: impl FnOnce(&mut Parser)) {
        let d = parent.map_or(0, |p| p + 1) as u32;
        let start = self.items.len();
        self.distinct.textual = false;
        self.seen.clear();
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.predicted.iter_mut().for_each(|x| *x = 0);
            self.generation = 1;
        }
        seed(self);
        let mut i = start;
        let max_row = self.g.limits.max_items_per_row;
        while i < self.items.len() {
            if self.items.len() - start > max_row {
                self.error =
                    Some(ParseError::TooManyItems { limit: max_row, offset: self.offset() });
                self.items.truncate(start);
                return;
            }
            let it = self.items[i];
            i += 1;
            let pos = pos_of(it);
            let origin = origin_of(it);
            let Some(&sym) = self.g.rhs.get(pos as usize) else {
                self.close_phrase_item(pos, origin, d);
                continue;
            };
            if sym & END != 0 {
                // Complete. Items with origin == d completed a nullable
                // symbol, already advanced at prediction time.
                if origin != d {
                    self.complete_symbol(sym & !END, origin);
                }
            } else if self.g.kinds[sym as usize] == SymbolKind::Nonterminal {
                self.predict(sym, d);
                if self.g.nullable[sym as usize] {
                    self.add(item(pos + 1, origin));
                }
            }
        }
        let n = self.items.len() - start;
        self.step_items += n;
        self.stats.items_computed += n as u64;
        self.stats.rows_computed += 1;
        let max_step = self.g.limits.max_items_per_step;
        if self.step_items > max_step {
            self.error =
                Some(ParseError::StepTooExpensive { limit: max_step, offset: self.offset() });
            self.items.truncate(start);
            return;
        }
        // Allowed lexemes and acceptance.
        self.allowed.clear();
        let mut accepting = false;
        let mut any_terminal = false;
        for j in start..self.items.len() {
            let it = self.items[j];
            let sym = self.next_symbol(it);
            if sym & END != 0 {
                if pos_of(it) == self.g.accept_pos && origin_of(it) == 0 {
                    accepting = true;
                }
            } else {
                match self.g.kinds[sym as usize] {
                    SymbolKind::Lexeme(l) => {
                        self.allowed.insert(l);
                        any_terminal = true;
                    }
                    SymbolKind::Special(_) => any_terminal = true,
                    SymbolKind::Nonterminal => {}
                }
            }
        }
        // `%ignore` only where some terminal may follow it (never after the
        // end of the sentence), and in the first row only when allowed.
        if let Some(skip) = self.g.skip
            && any_terminal
            && (d > 0 || self.g.initial_ignore)
        {
            self.allowed.insert(skip);
        }
        let lexer_start = self.lexer.start_state(&self.allowed);
        let scope = if self.g.has_distinct { self.distinct_scope(start, d) } else { 0 };
        self.next_row_id += 1;
        self.rows.push(Row {
            start: start as u32,
            end: self.items.len() as u32,
            lexer_start,
            accepting,
            key,
            id: self.next_row_id,
            offset: self.boundary,
            textual: self.distinct.textual,
            scope,
        });
    }

    /// Predicts nonterminal `sym` in row `d` (once per row): its rules, or
    /// the initial state of the permutation phrase defining it.
    #[inline]
    fn predict(&mut self, sym: u32, d: u32) {
        if self.predicted[sym as usize] == self.generation {
            return;
        }
        self.predicted[sym as usize] = self.generation;
        let (a, b) = self.g.rules_of[sym as usize];
        for r in a..b {
            let s = self.g.rule_starts[r as usize];
            self.add(item(s, d));
        }
        if let Some(k) = self.g.perm_of[sym as usize].checked_sub(1)
            && let Some(p) = self.phrase_start(k)
        {
            self.add(item(p, d));
        }
    }

    /// `lhs` was derived from row `origin` to here: advances the items of
    /// that row expecting it.
    #[inline]
    fn complete_symbol(&mut self, lhs: u32, origin: u32) {
        let o = self.rows[origin as usize];
        let wrapper = self.g.wrapper_of[lhs as usize] != 0;
        if o.end - o.start > complete::INDEX_MIN {
            self.complete_indexed(lhs, origin, wrapper);
            return;
        }
        for j in o.start..o.end {
            let jt = self.items[j as usize];
            let jp = pos_of(jt);
            match self.g.rhs.get(jp as usize) {
                Some(&x) => {
                    if x == lhs {
                        self.add(item(jp + 1, origin_of(jt)));
                    }
                }
                // A phrase item: it advances on a wrapper of its phrase.
                None => {
                    if wrapper && let Some(n) = self.advance_phrase(jp, lhs, origin) {
                        self.add(item(n, origin_of(jt)));
                    }
                }
            }
        }
    }

    /// The symbol after an item's dot, or `END | lhs` for a completed rule;
    /// a phrase item reads as completed by no symbol (`END | !END`): it
    /// expects only nonterminals, which callers of this skip.
    #[inline]
    fn next_symbol(&self, it: Item) -> u32 {
        self.g.rhs.get(pos_of(it) as usize).copied().unwrap_or(u32::MAX)
    }

    #[inline]
    fn add(&mut self, it: Item) {
        if self.seen.insert(it) {
            self.items.push(it);
        }
    }
}
