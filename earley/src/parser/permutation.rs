//! Permutation phrases in the parser (see `DESIGN.md`, "Permutation
//! phrases").
//!
//! An item of a phrase does not point into the flat rules: its position
//! has bit 31 ([`PHRASE`]) set and the other bits index a *phrase state*
//! interned here: the phrase, the number of members so far (saturated
//! where only "at least `min`" matters) and the set of names used. Equal
//! states get equal ids, so the row's duplicate filter works on them as on
//! any item, and a row holds one item per distinct state reached, not one
//! per subset of names.
//!
//! In the closure such an item predicts the wrapper of every member that
//! may come next (its name unused, below `max`, and the phrase can still
//! end afterwards) and completes the phrase when every required name is
//! used and `min` is reached. When a wrapper completes, the items of its
//! phrase in the origin row advance to the state with the member added.

use rustc_hash::FxHashMap;

use super::Parser;
use crate::compile::{NO_NAME, PermRule};
use crate::error::ParseError;

/// Bit 31 of an item's position: a phrase state, not a dot.
pub(super) const PHRASE: u32 = 1 << 31;

/// One phrase state.
///
/// Invariants: `missing` and `optional_used` count the required names not
/// yet used and the other names used, in the `words` words of the set at
/// `names_at` in [`PhraseStates::names`]; the state is *viable*: some
/// continuation ends the phrase.
#[derive(Clone, Copy, Debug)]
pub(super) struct PhraseState {
    pub(super) perm: u32,
    /// Members so far, at most `max` (saturated at `min` without `max`).
    count: u32,
    names_at: u32,
    missing: u32,
    optional_used: u32,
    /// The member list of a distinct phrase (`distinct.rs`), else `NONE`.
    pub(super) link: u32,
}

/// The phrase states of one parser, interned, with a cache of transitions.
/// States are never removed (rollback leaves them; they are facts about the
/// grammar, not about the text).
#[derive(Clone, Debug, Default)]
pub(super) struct PhraseStates {
    states: Vec<PhraseState>,
    /// The name sets of all states, `words` words each.
    names: Vec<u64>,
    /// (phrase, count, hash of the names) → the newest state with that key;
    /// `same_key[s]` links to the previous one (a chain, usually empty).
    index: FxHashMap<(u32, u32, u64), u32>,
    same_key: Vec<u32>,
    /// (state, member) → the next state, or `NONE`.
    next: FxHashMap<(u32, u32), u32>,
    pub(super) scratch: Vec<u64>,
}

pub(super) const NONE: u32 = u32::MAX;

/// Whether phrase state `st` can still end: the required names left fit
/// under `max`, and enough names (or a repeatable member) are left to
/// reach `min`.
fn viable(rule: &PermRule, count: u32, missing: u32, optional_used: u32) -> bool {
    let needed = count.saturating_add(missing);
    needed <= rule.max
        && (rule.repeatable || rule.min <= needed.saturating_add(rule.num_optional - optional_used))
}

fn has(names: &[u64], x: u32) -> bool {
    names[(x / 64) as usize] & (1 << (x % 64)) != 0
}

impl Parser {
    /// Phrase state `s`.
    pub(super) fn phrase_state(&self, s: u32) -> PhraseState {
        self.phrases.states[s as usize]
    }

    /// The names used in phrase state `s` (`words` words).
    pub(super) fn phrase_names(&self, s: u32, words: usize) -> &[u64] {
        let at = self.phrases.states[s as usize].names_at as usize;
        &self.phrases.names[at..at + words]
    }

    /// The item position of the initial state of phrase `k`.
    pub(super) fn phrase_start(&mut self, k: u32) -> Option<u32> {
        let words = self.g.perms[k as usize].words as usize;
        let mut scratch = std::mem::take(&mut self.phrases.scratch);
        scratch.clear();
        scratch.resize(words, 0);
        let missing = self.g.perms[k as usize].num_required;
        let s = self.intern_phrase(k, 0, &scratch, (missing, 0), NONE);
        self.phrases.scratch = scratch;
        s.map(|s| s | PHRASE)
    }

    pub(super) fn intern_phrase(
        &mut self,
        perm: u32,
        count: u32,
        names: &[u64],
        (missing, optional_used): (u32, u32),
        link: u32,
    ) -> Option<u32> {
        let ps = &mut self.phrases;
        let hash = names
            .iter()
            .fold(link as u64, |h, &w| (h.rotate_left(5) ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let key = (perm, count, hash);
        let mut at = ps.index.get(&key).copied().unwrap_or(NONE);
        while at != NONE {
            let st = ps.states[at as usize];
            let w = names.len();
            if st.link == link && ps.names[st.names_at as usize..st.names_at as usize + w] == *names
            {
                return Some(at);
            }
            at = ps.same_key[at as usize];
        }
        let limit = self.g.limits.max_phrase_states;
        if ps.states.len() >= limit {
            let offset = self.frames.len().saturating_sub(1);
            self.error = Some(ParseError::TooManyPhraseStates { limit, offset });
            return None;
        }
        let id = ps.states.len() as u32;
        let names_at = ps.names.len() as u32;
        ps.names.extend_from_slice(names);
        ps.states.push(PhraseState { perm, count, names_at, missing, optional_used, link });
        ps.same_key.push(ps.index.insert(key, id).unwrap_or(NONE));
        Some(id)
    }

    /// State `s`'s count, required names missing and optional names used
    /// after member `j`, or `None` when `j` may not come: its name is used,
    /// `max` is reached, or the phrase could no longer end.
    pub(super) fn phrase_after(&self, s: u32, j: usize) -> Option<(u32, u32, u32)> {
        let st = self.phrases.states[s as usize];
        let rule = &self.g.perms[st.perm as usize];
        if st.count >= rule.max {
            return None;
        }
        let (mut missing, mut optional_used) = (st.missing, st.optional_used);
        let name = rule.members[j].2;
        let at = st.names_at as usize;
        let used = &self.phrases.names[at..at + rule.words as usize];
        if rule.ordered {
            // The names used are always `0..k`: the next member is the one
            // named `k`, or an unnamed one once every name is used.
            let k = used.iter().map(|w| w.count_ones()).sum::<u32>();
            let next = if k < rule.num_names { k } else { NO_NAME };
            if name != next {
                return None;
            }
        }
        if name != NO_NAME {
            if has(used, name) {
                return None;
            }
            if has(&rule.required, name) {
                missing -= 1;
            } else {
                optional_used += 1;
            }
        }
        let next = st.count + 1;
        // Without a maximum only "at least `min`" matters.
        let count = if rule.max == u32::MAX { next.min(rule.min.max(1)) } else { next };
        viable(rule, count, missing, optional_used).then_some((count, missing, optional_used))
    }

    /// The state after member `j` comes in state `s`, if allowed.
    fn phrase_step(&mut self, s: u32, j: u32) -> Option<u32> {
        if let Some(&n) = self.phrases.next.get(&(s, j)) {
            return (n != NONE).then_some(n);
        }
        let next = self.phrase_after(s, j as usize).and_then(|(count, missing, optional_used)| {
            let st = self.phrases.states[s as usize];
            let rule = &self.g.perms[st.perm as usize];
            let (words, name) = (rule.words as usize, rule.members[j as usize].2);
            let mut scratch = std::mem::take(&mut self.phrases.scratch);
            scratch.clear();
            let at = st.names_at as usize;
            scratch.extend_from_slice(&self.phrases.names[at..at + words]);
            if name != NO_NAME {
                scratch[(name / 64) as usize] |= 1 << (name % 64);
            }
            let n = self.intern_phrase(st.perm, count, &scratch, (missing, optional_used), NONE);
            self.phrases.scratch = scratch;
            n
        });
        if self.error.is_none() {
            self.phrases.next.insert((s, j), next.unwrap_or(NONE));
        }
        next
    }

    /// The closure of phrase item (`pos`, `origin`) in row `d`: completes
    /// the phrase where it may end, predicts the members that may come.
    pub(super) fn close_phrase_item(&mut self, pos: u32, origin: u32, d: u32) {
        let s = pos & !PHRASE;
        let st = self.phrases.states[s as usize];
        let k = st.perm as usize;
        let (complete, num_members, lhs, distinct) = {
            let rule = &self.g.perms[k];
            (st.missing == 0 && st.count >= rule.min, rule.members.len(), rule.lhs, rule.distinct)
        };
        // An item of origin `d` completed the phrase with the empty string:
        // the phrase is nullable, so its users advanced at prediction.
        if complete && origin != d {
            self.complete_symbol(lhs, origin);
        }
        for j in 0..num_members {
            if self.phrase_after(s, j).is_none() {
                continue;
            }
            let (first, later, _) = self.g.perms[k].members[j];
            let w = if st.count == 0 { first } else { later };
            self.predict(w, d);
            if self.g.nullable[w as usize] {
                let n = if distinct {
                    self.distinct_step(s, j as u32, d)
                } else {
                    self.phrase_step(s, j as u32)
                };
                if let Some(n) = n {
                    self.add(super::item(n | PHRASE, origin));
                }
            }
        }
    }

    /// Phrase item `pos` after wrapper `w` completed from row `origin`
    /// (where the item is), if `w` belongs to its phrase and may come in
    /// its state.
    #[inline(never)]
    pub(super) fn advance_phrase(&mut self, pos: u32, w: u32, origin: u32) -> Option<u32> {
        let s = pos & !PHRASE;
        let (k, j) = self.g.perm_members[self.g.wrapper_of[w as usize] as usize - 1];
        let st = self.phrases.states[s as usize];
        if st.perm != k {
            return None;
        }
        // The first member comes through its `first` wrapper, later ones
        // through `later` (the same symbol without a separator).
        let (first, later, _) = self.g.perms[k as usize].members[j as usize];
        if w != if st.count == 0 { first } else { later } {
            return None;
        }
        if self.g.perms[k as usize].distinct {
            return self.distinct_step(s, j, origin).map(|n| n | PHRASE);
        }
        self.phrase_step(s, j).map(|n| n | PHRASE)
    }
}
