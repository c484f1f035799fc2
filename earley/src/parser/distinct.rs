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
use rustc_hash::FxHashMap;

use super::json_value::canonical;
use super::permutation::NONE;
use super::{Frame, Parser, RowKey};
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
}

fn hash(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x0100_0000_01b3))
}

impl Parser {
    /// Whether masks must come from the byte-by-byte
    /// [`Recognizer`](toktrie::Recognizer) walk
    /// ([`TokTrie::compute_mask`](toktrie::TokTrie::compute_mask)): the
    /// grammar has a phrase with distinct members, whose check reads the
    /// bytes of the text. A [`StateRecognizer`](toktrie::StateRecognizer)
    /// walk over such a grammar stops with
    /// [`ParseError::ByteWalkRequired`] when a member completes.
    pub fn needs_byte_walk(&self) -> bool {
        self.g.has_distinct
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
        if self.distinct.by_state {
            self.error = Some(ParseError::ByteWalkRequired { offset: self.offset() });
            return None;
        }
        let (count, missing, optional_used) = self.phrase_after(s, j as usize)?;
        self.distinct.textual = true;
        let d = self.rows.len() as u32;
        let mut new = std::mem::take(&mut self.distinct.new_form);
        let mut old = std::mem::take(&mut self.distinct.old_form);
        self.member_form(self.row_offset(origin), self.boundary as usize, &mut new);
        let h = hash(&new);
        let st = self.phrase_state(s);
        let mut link = st.link;
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
        if duplicate {
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
        true
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
