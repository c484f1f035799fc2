//! Distinct members of permutation phrases (`uniqueItems`; see
//! `DESIGN.md`, "Distinct members").
//!
//! A phrase state of a distinct phrase carries, besides its count and
//! names, a *member list*: an interned chain of (the list before, origin
//! row, end row), one link per member so far. The rows name spans of the
//! text, so the list's identity does not depend on the text: sibling paths
//! of a mask walk that complete a member at the same row share a state,
//! and the states stay as few as for any phrase. Its meaning does: the
//! text between the offsets of rows `o` and `e` in the current chain. A row
//! in which a member was checked is *textual* and never reused (its items
//! depend on the bytes, not only on the lexemes scanned), so every row
//! above one was computed after it and the spans it names are the current
//! ones.
//!
//! When a member completes, its text (from its origin row's offset to the
//! boundary being computed) is put in canonical form (`json_value.rs`)
//! and compared, by hash then by bytes, with the members of the list; an
//! equal one refuses the step.
//!
//! Exact masks need one more check: a byte after which the lexeme in
//! progress must end (its state accepts and no byte continues it: the
//! closing quote of a string) decides the member's completion now, so the
//! parser computes the row after that lexeme at once and rejects the byte
//! when nothing can follow there ([`Parser::push_byte_distinct`]).

use lexer::StateId;
use rustc_hash::{FxHashMap, FxHashSet};

use super::json_value::canonical;
use super::permutation::{NONE, PHRASE};
use super::{Frame, Parser, RowKey, origin_of, pos_of};
use crate::compile::NO_NAME;
use crate::error::ParseError;

/// The text consumed for a special token or an end-of-sequence end (never
/// part of a JSON value, so a member holding it compares by its bytes).
const PLACEHOLDER: u8 = 0xFF;

/// Beyond this many cached member hashes, the cache is cleared.
const MAX_CACHED_HASHES: usize = 1 << 16;

/// The per-parser state of distinct phrases.
#[derive(Clone, Debug, Default)]
pub(super) struct Distinct {
    /// Member lists: (previous list or `NONE`, origin row, end row).
    links: Vec<(u32, u32, u32)>,
    link_index: FxHashMap<(u32, u32, u32), u32>,
    /// Per lexer state: whether every byte kills it.
    dead_for_all: FxHashMap<StateId, bool>,
    /// (end row id, origin row) → the hash of that member's canonical
    /// form (textual rows are never reused, so the id fixes the text).
    hashes: FxHashMap<(u64, u32), u64>,
    new_form: Vec<u8>,
    old_form: Vec<u8>,
    /// Whether the row being computed checked a member.
    pub(super) textual: bool,
    /// Set during a [`StateRecognizer`](toktrie::StateRecognizer) walk,
    /// which does not hand the parser its bytes.
    pub(super) by_state: bool,
    /// Set while a completion search runs (its own bytes start none).
    searching: bool,
    /// Bytes the running search may still push.
    search_left: usize,
    /// The byte offset where the running search started.
    search_offset: usize,
    /// Per lexer state: its completions without a backslash, at most
    /// `Limits::max_phrase_states + 1` (more than a phrase has members).
    raw_counts: FxHashMap<StateId, u64>,
    /// Per lexer state: the fewest bytes to an accepting state.
    distances: FxHashMap<StateId, u32>,
}

/// [`Row::scope`](super::Row) bit: the row holds a state of a searching
/// phrase (the phrase is open here).
pub(super) const OPENS: u8 = 1;
/// [`Row::scope`](super::Row) bit: the row is inside a searching phrase on
/// some parse: it opens one, or an item of it started in such a row.
pub(super) const INSIDE: u8 = 2;
/// [`Row::scope`](super::Row) bit: as [`OPENS`], for any distinct phrase.
const DISTINCT_OPENS: u8 = 4;
/// [`Row::scope`](super::Row) bit: as [`INSIDE`], for any distinct phrase.
const DISTINCT_INSIDE: u8 = 8;
/// [`Row::scope`](super::Row) bit: some searching phrase open here has a
/// member already (the row holds such a state, or an origin row has the
/// bit). Without one no member can repeat, and nothing needs a search.
pub(super) const TAKEN: u8 = 16;
/// [`Row::scope`](super::Row) bit: as [`TAKEN`], for any distinct phrase.
/// Only here do the parser's answers depend on the bytes of the text (a
/// member may equal an earlier one), so only here must a mask walk go by
/// bytes: before the first member of every phrase completes, a walk by
/// state serves.
pub(super) const DISTINCT_TAKEN: u8 = 32;

/// The most lexer states one [`Parser::accept_distance`] explores.
const MAX_DISTANCE_STATES: usize = 4_096;

/// The deepest a completion search goes (bytes past its start).
const MAX_SEARCH_DEPTH: usize = 1_024;

/// The order in which a completion search tries bytes: what closes first
/// (quotes, brackets), then separators, digits (`0` last) and letters, what opens
/// more structure, the other printable bytes, then bytes of non-ASCII
/// characters, escapes and control bytes. Whitespace comes only where no
/// other byte may (`SEARCH_SPACE`): JSON never needs it elsewhere, and a
/// completion with it has one without it.
static SEARCH_ORDER: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| {
    let mut order: Vec<u8> = b"\"]},:".to_vec();
    // `0` last among the digits: after `0.` a search trying `0` first
    // would go down `0.000…` (a prefix of values, never one) for ever.
    order.extend(b'1'..=b'9');
    order.push(b'0');
    order.extend(b'a'..=b'z');
    order.extend(b'A'..=b'Z');
    order.extend(b"-.+_[{");
    let later = |b: u8| !order.contains(&b) && !SEARCH_SPACE.contains(&b) && b != b'\\';
    let mut rest: Vec<u8> = (0x21..0x7f).filter(|&b| later(b)).collect();
    rest.extend(0x80..=0xff);
    rest.push(b'\\');
    rest.extend((0..0x21).chain([0x7f]).filter(|&b| later(b)));
    order.extend(rest);
    order
});

/// Whitespace, tried by a completion search only where nothing else goes.
const SEARCH_SPACE: &[u8] = b" \t\n\r";

fn hash(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x0100_0000_01b3))
}

impl Parser {
    /// Whether the mask here must come from the byte-by-byte
    /// [`Recognizer`](toktrie::Recognizer) walk
    /// ([`TokTrie::compute_mask`](toktrie::TokTrie::compute_mask)): the
    /// position is inside a phrase with distinct members that has a member
    /// already, whose check reads the bytes of the text. Elsewhere a
    /// [`StateRecognizer`](toktrie::StateRecognizer) walk may serve, but
    /// one that reaches such a phrase (computes or reuses a row inside one)
    /// or completes a member after the first stops with
    /// [`ParseError::ByteWalkRequired`];
    /// [`take_byte_walk_required`](Parser::take_byte_walk_required) then
    /// clears it for a walk by bytes.
    pub fn needs_byte_walk(&self) -> bool {
        if !self.g.has_distinct {
            return false;
        }
        let Some(top) = self.frames.last() else { return true };
        let row = top.row() as usize;
        // The row after the lexeme in progress, when one was computed
        // (after `[`), counts too: a stale one only costs a byte walk.
        let inside = |r: &super::Row| r.scope & DISTINCT_TAKEN != 0;
        self.rows.get(row).is_none_or(inside) || self.rows.get(row + 1).is_some_and(inside)
    }

    /// Whether some phrase of the grammar has distinct members (its
    /// parsers keep the text; see [`needs_byte_walk`](Parser::needs_byte_walk)).
    pub fn has_distinct(&self) -> bool {
        self.g.has_distinct
    }

    /// Clears a [`ParseError::ByteWalkRequired`] left by a walk by state
    /// (every other error stays) and says whether there was one: the
    /// caller then walks again by bytes. The parser's position is
    /// unchanged (a walk never moves it).
    pub fn take_byte_walk_required(&mut self) -> bool {
        let required = matches!(self.error, Some(ParseError::ByteWalkRequired { .. }));
        if required {
            self.error = None;
        }
        required
    }

    /// The byte offset of row `o` (the row being computed when `o` is past
    /// the last row).
    fn row_offset(&self, o: u32) -> usize {
        match self.rows.get(o as usize) {
            Some(r) => r.offset as usize,
            None => self.boundary as usize,
        }
    }

    /// The canonical form of the text `from..to` into `out`: its JSON
    /// form, or a marker byte and the raw bytes when it is not one value.
    fn member_form(&self, from: usize, to: usize, out: &mut Vec<u8>) {
        let to = to.min(self.text.len());
        let span = &self.text[from.min(to)..to];
        if !canonical(span, out) {
            out.clear();
            out.push(PLACEHOLDER);
            out.extend_from_slice(span);
        }
    }

    /// The state after member `j` of distinct phrase state `s`, the member
    /// spanning from row `origin` to the row being computed; `None` when it
    /// may not come (as for any phrase) or equals an earlier member.
    pub(super) fn distinct_step(&mut self, s: u32, j: u32, origin: u32) -> Option<u32> {
        let st = self.phrase_state(s);
        if st.link != NONE && self.distinct.by_state {
            // A comparison with earlier members, which reads the text.
            self.byte_walk_required();
            return None;
        }
        let (count, missing, optional_used) = self.phrase_after(s, j as usize)?;
        // The row's phrase states name spans by row id (see `hashes`).
        self.distinct.textual = true;
        let d = self.rows.len() as u32;
        if st.link != NONE && self.equals_earlier(st.link, origin) {
            return None;
        }
        let key = (st.link, origin, d);
        let next_link = match self.distinct.link_index.get(&key) {
            Some(&l) => l,
            None => {
                let l = self.distinct.links.len() as u32;
                self.distinct.links.push(key);
                self.distinct.link_index.insert(key, l);
                l
            }
        };
        let rule = &self.g.perms[st.perm as usize];
        let (words, name) = (rule.words as usize, rule.members[j as usize].2);
        let mut names = std::mem::take(&mut self.phrases.scratch);
        names.clear();
        names.extend_from_slice(self.phrase_names(s, words));
        if name != NO_NAME {
            names[(name / 64) as usize] |= 1 << (name % 64);
        }
        let n = self.intern_phrase(st.perm, count, &names, (missing, optional_used), next_link);
        self.phrases.scratch = names;
        n
    }

    /// Whether the member spanning from row `origin` to the boundary being
    /// computed equals a member of list `link` (canonical forms compared
    /// by hash, then by bytes).
    fn equals_earlier(&mut self, mut link: u32, origin: u32) -> bool {
        let mut new = std::mem::take(&mut self.distinct.new_form);
        let mut old = std::mem::take(&mut self.distinct.old_form);
        self.member_form(self.row_offset(origin), self.boundary as usize, &mut new);
        let h = hash(&new);
        let mut duplicate = false;
        while link != NONE {
            let (prev, o, e) = self.distinct.links[link as usize];
            let (from, to) = (self.row_offset(o), self.row_offset(e));
            let key = (self.rows[e as usize].id, o);
            let old_hash = match self.distinct.hashes.get(&key) {
                Some(&x) => x,
                None => {
                    self.member_form(from, to, &mut old);
                    let x = hash(&old);
                    if self.distinct.hashes.len() >= MAX_CACHED_HASHES {
                        self.distinct.hashes.clear();
                    }
                    self.distinct.hashes.insert(key, x);
                    x
                }
            };
            if old_hash == h {
                self.member_form(from, to, &mut old);
                if old == new {
                    duplicate = true;
                    break;
                }
            }
            link = prev;
        }
        self.distinct.new_form = new;
        self.distinct.old_form = old;
        duplicate
    }

    /// Whether every byte kills lexer state `s` (cached).
    fn dead_for_all(&mut self, s: StateId) -> bool {
        if let Some(&x) = self.distinct.dead_for_all.get(&s) {
            return x;
        }
        let x = self.lexer.next_is_dead_for_all(s);
        self.distinct.dead_for_all.insert(s, x);
        x
    }

    /// Whether something may follow row `r`: the text ends there, or a
    /// lexeme or a special token may come.
    fn row_viable(&mut self, r: usize) -> bool {
        let row = self.rows[r];
        row.accepting || !self.dead_for_all(row.lexer_start) || {
            (row.start..row.end).any(|i| {
                let sym = self.next_symbol(self.items[i as usize]);
                sym & crate::grammar::END == 0
                    && matches!(self.g.kinds[sym as usize], crate::grammar::SymbolKind::Special(_))
            })
        }
    }

    /// [`push_byte`](Parser::push_byte) for a grammar with distinct
    /// phrases: keeps the text, and rejects a byte after which the lexeme
    /// in progress must end when nothing may follow that end (the end
    /// completes a member equal to an earlier one).
    pub(super) fn push_byte_distinct(&mut self, top: Frame, b: u8) -> bool {
        self.text.push(b);
        let Some(f) = self.step(top, b) else {
            self.text.pop();
            return false;
        };
        if !f.fresh()
            && let Some(acc) = self.lexer.accepting(f.state)
            && self.dead_for_all(f.state)
        {
            self.boundary = self.text.len() as u32;
            let viable = match self.push_row(f.row() as usize, RowKey::Lexemes(acc)) {
                Some(r) => self.row_viable(r),
                None => false,
            };
            if !viable {
                self.text.pop();
                return false;
            }
        }
        self.frames.push(f);
        self.stats.bytes_pushed += 1;
        if self.g.has_search
            && !self.distinct.searching
            && self
                .rows
                .get(f.row() as usize)
                .is_some_and(|r| r.scope & (INSIDE | TAKEN) == INSIDE | TAKEN)
            && !self.search_completion()
        {
            self.frames.pop();
            self.text.pop();
            return false;
        }
        true
    }

    /// [`Row::scope`](super::Row) of the row being computed at `d`, its
    /// items from `start`: [`OPENS`] when it holds a state of a searching
    /// phrase, [`INSIDE`] then or when an item's origin row is open or
    /// inside (a constituent started inside a searching phrase is still
    /// open, so the phrase is), and [`TAKEN`] when such a phrase has a
    /// member already; the same for any distinct phrase in
    /// [`DISTINCT_OPENS`], [`DISTINCT_INSIDE`] and [`DISTINCT_TAKEN`]. An
    /// over-approximation on ambiguous parses, which only costs searches
    /// and byte walks where none were needed. A walk by state that computes
    /// a row inside a distinct phrase with a member stops with
    /// [`ParseError::ByteWalkRequired`].
    pub(super) fn distinct_scope(&mut self, start: usize, d: u32) -> u8 {
        let mut scope = 0;
        for &it in &self.items[start..] {
            let pos = pos_of(it);
            if pos & PHRASE != 0 {
                let st = self.phrase_state(pos & !PHRASE);
                let rule = &self.g.perms[st.perm as usize];
                if rule.distinct {
                    scope |= DISTINCT_OPENS | DISTINCT_INSIDE;
                    if st.link != NONE {
                        scope |= DISTINCT_TAKEN;
                    }
                }
                if rule.search {
                    scope |= OPENS | INSIDE;
                    if st.link != NONE {
                        scope |= TAKEN;
                    }
                }
            }
            let o = origin_of(it);
            if o < d {
                let x = self.rows[o as usize].scope;
                if x & (OPENS | INSIDE) != 0 {
                    scope |= INSIDE | (x & TAKEN);
                }
                if x & (DISTINCT_OPENS | DISTINCT_INSIDE) != 0 {
                    scope |= DISTINCT_INSIDE | (x & DISTINCT_TAKEN);
                }
            }
        }
        if scope & DISTINCT_TAKEN != 0 && self.distinct.by_state {
            self.byte_walk_required();
        }
        scope
    }

    /// Stops a walk by state with [`ParseError::ByteWalkRequired`] (unless
    /// an error came first): it reached a distinct phrase with a member,
    /// computing or reusing a row inside one, or completed a member after
    /// the first.
    pub(super) fn byte_walk_required(&mut self) {
        if self.error.is_none() {
            self.error = Some(ParseError::ByteWalkRequired { offset: self.offset() });
        }
    }

    /// Whether what the parser consumed, the byte just pushed included, has
    /// a completion that leaves every searching phrase (or ends the text):
    /// a depth-first search over bytes in [`SEARCH_ORDER`], with this
    /// parser's own pushes and pops, so every duplicate member on the way
    /// is refused as in any walk. Sets [`ParseError::SearchTooLong`] past
    /// [`Limits::max_search_bytes`](crate::Limits) pushes.
    fn search_completion(&mut self) -> bool {
        self.distinct.searching = true;
        self.distinct.search_left = self.g.limits.max_search_bytes;
        self.distinct.search_offset = self.offset();
        let found = self.search_from(0);
        self.distinct.searching = false;
        found
    }

    fn search_from(&mut self, depth: usize) -> bool {
        if let Some(v) = self.search_verdict() {
            return v;
        }
        if depth >= MAX_SEARCH_DEPTH {
            self.fail_search();
            return false;
        }
        let mut pushed = false;
        for b in self.search_candidates() {
            if self.search_byte(b, depth, &mut pushed) {
                return true;
            }
            if self.error.is_some() {
                return false;
            }
        }
        if !pushed {
            for &b in SEARCH_SPACE {
                if self.search_byte(b, depth, &mut pushed) {
                    return true;
                }
                if self.error.is_some() {
                    return false;
                }
            }
        }
        false
    }

    /// The bytes a search tries at the current position, in
    /// [`SEARCH_ORDER`] but first those after which the lexeme in progress
    /// is nearest to its end ([`accept_distance`](Self::accept_distance);
    /// a byte that ends an accepting lexeme counts as 0): so the first
    /// choices finish every lexeme (after `"a` in `"a+b"` comes `b`, not
    /// `a` for ever).
    fn search_candidates(&mut self) -> Vec<u8> {
        let Some(&f) = self.frames.last() else { return Vec::new() };
        let accepting = self.lexer.accepting(f.state).is_some();
        let mut keyed: Vec<(u32, u8)> = Vec::with_capacity(SEARCH_ORDER.len());
        for &b in SEARCH_ORDER.iter() {
            let t = self.lexer.next(f.state, b);
            if !t.is_dead() {
                keyed.push((self.accept_distance(t), b));
            } else if accepting {
                keyed.push((0, b));
            }
        }
        keyed.sort_by_key(|&(d, _)| d);
        keyed.into_iter().map(|(_, b)| b).collect()
    }

    /// The fewest bytes from lexer state `s` to an accepting state (a
    /// breadth-first search, memoized; `u32::MAX / 2` past
    /// [`MAX_DISTANCE_STATES`] states).
    fn accept_distance(&mut self, s: StateId) -> u32 {
        if let Some(&d) = self.distinct.distances.get(&s) {
            return d;
        }
        let mut frontier = vec![s];
        let mut seen: FxHashSet<StateId> = FxHashSet::default();
        seen.insert(s);
        let mut d = 0;
        let found = loop {
            if frontier.iter().any(|&x| self.lexer.accepting(x).is_some()) {
                break d;
            }
            if frontier.is_empty() || seen.len() > MAX_DISTANCE_STATES {
                break u32::MAX / 2;
            }
            let mut next = Vec::new();
            for &x in &frontier {
                for b in 0..=255u8 {
                    let t = self.lexer.next(x, b);
                    if !t.is_dead() && seen.insert(t) {
                        next.push(t);
                    }
                }
            }
            frontier = next;
            d += 1;
        };
        self.distinct.distances.insert(s, found);
        found
    }

    /// Pushes `b` and searches on from there; `pushed` records that it
    /// could be pushed.
    fn search_byte(&mut self, b: u8, depth: usize, pushed: &mut bool) -> bool {
        if self.distinct.search_left == 0 {
            self.fail_search();
            return false;
        }
        self.distinct.search_left -= 1;
        let Some(&top) = self.frames.last() else { return false };
        if !self.push_byte_distinct(top, b) {
            return false;
        }
        *pushed = true;
        let found = self.search_from(depth + 1);
        self.pop_bytes(1);
        found
    }

    fn fail_search(&mut self) {
        if self.error.is_none() {
            let limit = self.g.limits.max_search_bytes;
            let offset = self.distinct.search_offset;
            self.error = Some(ParseError::SearchTooLong { limit, offset });
        }
    }

    /// The search's answer at the current position without going deeper:
    /// found when the lexeme just ended leaves every searching phrase (or
    /// ends the text), or when the lexeme in progress is a string with more
    /// completions (counted without escapes, so each a different value)
    /// than a phrase can have members: then some completion differs from
    /// every earlier member, at every level. `None`: search on.
    fn search_verdict(&mut self) -> Option<bool> {
        let f = *self.frames.last()?;
        if f.fresh() {
            return None;
        }
        let row = f.row() as usize;
        if self.lexer.accepting(f.state).is_some() && self.dead_for_all(f.state) {
            // The row after the lexeme was computed by `push_byte_distinct`.
            let after = self.rows.get(row + 1)?;
            return (after.scope & INSIDE == 0 || after.accepting).then_some(true);
        }
        let offset = self.rows.get(row)?.offset as usize;
        if self.text.get(offset) == Some(&b'"') && self.many_completions(f.state) {
            return Some(true);
        }
        None
    }

    /// The number of completions of lexer state `root` with no backslash
    /// (each decodes to a different string), at most `cap`; a cycle of live
    /// states counts as `cap`. An iterative depth-first count, memoized per
    /// state.
    fn raw_completions(&mut self, root: StateId, cap: u64) -> u64 {
        if let Some(&n) = self.distinct.raw_counts.get(&root) {
            return n;
        }
        let accepts = |p: &Parser, s: StateId| u64::from(p.lexer.accepting(s).is_some());
        let mut stack: Vec<(StateId, u16, u64)> = vec![(root, 0, accepts(self, root))];
        let mut on_stack: FxHashSet<StateId> = FxHashSet::default();
        on_stack.insert(root);
        loop {
            let Some(top) = stack.last_mut() else { return cap };
            let (s, next, sum) = *top;
            if next > 255 || sum >= cap {
                let n = sum.min(cap);
                self.distinct.raw_counts.insert(s, n);
                on_stack.remove(&s);
                stack.pop();
                match stack.last_mut() {
                    Some(parent) => parent.2 = parent.2.saturating_add(n),
                    None => return n,
                }
                continue;
            }
            top.1 += 1;
            let b = next as u8;
            if b == b'\\' {
                continue;
            }
            let t = self.lexer.next(s, b);
            if t.is_dead() {
                continue;
            }
            if on_stack.contains(&t) {
                // A cycle of live states: infinitely many completions.
                top.2 = cap;
                continue;
            }
            if let Some(&n) = self.distinct.raw_counts.get(&t) {
                top.2 = top.2.saturating_add(n);
                continue;
            }
            let first = accepts(self, t);
            stack.push((t, 0, first));
            on_stack.insert(t);
        }
    }

    /// Whether a byte walk among taken distinct members accepts a plain
    /// step into lexer state `s` with no check: `s` does not end the lexeme
    /// (accepting with no byte after), and in a searching phrase
    /// (`searching`), a string in state `s` has more completions than a
    /// phrase has members (see `search_verdict`; the caller knows the
    /// lexeme is a string).
    pub(super) fn free_inside(&mut self, s: StateId, searching: bool) -> bool {
        if self.lexer.accepting(s).is_some() && self.dead_for_all(s) {
            return false;
        }
        !searching || self.many_completions(s)
    }

    /// Whether a string lexeme in state `s` has more completions without a
    /// backslash (each a different value) than a phrase can have members
    /// (`Limits::max_phrase_states`): then one differs from every earlier
    /// member.
    fn many_completions(&mut self, s: StateId) -> bool {
        let cap = self.g.limits.max_phrase_states as u64 + 1;
        self.raw_completions(s, cap) >= cap
    }

    /// A hash of the bytes of the lexeme in progress at frame `top` (the
    /// top frame): from its row's offset to the end of the text.
    pub(super) fn lexeme_hash(&self, top: Frame) -> u64 {
        let from = self.rows.get(top.row() as usize).map_or(0, |r| r.offset as usize);
        hash(&self.text[from.min(self.text.len())..])
    }

    /// Keeps the text as long as the frames after `frames` changed
    /// without a byte (a special token, an end-of-sequence end).
    pub(super) fn sync_text(&mut self) {
        if self.g.has_distinct {
            self.text.resize(self.frames.len() - 1, PLACEHOLDER);
        }
    }
}
