//! A slow, simple recognizer for [`Grammar`]: the reference for tests.
//!
//! It memoizes, for every (symbol, position), the set of positions where a
//! derivation of the symbol can end, trying every split of the input into
//! lexemes. It knows nothing of the Earley engine, so it checks the grammar's
//! language independently of the parser that will serve masks.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use derivre::{Regex, RegexBuilder};

use crate::grammar::{Grammar, Permutation, Symbol};

struct Memo<'g> {
    g: &'g Grammar,
    text: &'g [u8],
    regexes: HashMap<u32, Regex>,
    lex: HashMap<(u32, usize), Rc<Vec<usize>>>,
    nt: HashMap<(u32, usize), Rc<Vec<usize>>>,
    busy: std::collections::HashSet<(u32, usize)>,
    steps: u64,
    budget: u64,
}

impl Memo<'_> {
    fn lexeme_ends(&mut self, id: u32, pos: usize) -> Option<Rc<Vec<usize>>> {
        if let Some(v) = self.lex.get(&(id, pos)) {
            return Some(v.clone());
        }
        if !self.regexes.contains_key(&id) {
            let mut b = RegexBuilder::new();
            let e = b.mk(&self.g.lexemes[id as usize].regex).ok()?;
            self.regexes.insert(id, b.to_regex(e));
        }
        let r = self.regexes.get_mut(&id)?;
        let mut ends = Vec::new();
        let mut st = r.initial_state();
        let mut p = pos;
        while p < self.text.len() {
            st = r.transition(st, self.text[p]);
            p += 1;
            self.steps += 1;
            if st.is_dead() {
                break;
            }
            if r.is_accepting(st) {
                ends.push(p);
            }
        }
        let v = Rc::new(ends);
        self.lex.insert((id, pos), v.clone());
        Some(v)
    }

    fn ends(&mut self, sym: Symbol, pos: usize) -> Option<Rc<Vec<usize>>> {
        self.steps += 1;
        if self.steps > self.budget {
            return None;
        }
        match sym {
            Symbol::Lexeme(l) => self.lexeme_ends(l.0, pos),
            Symbol::Nonterminal(n) => {
                let key = (n.0, pos);
                if let Some(v) = self.nt.get(&key) {
                    return Some(v.clone());
                }
                if !self.busy.insert(key) {
                    return Some(Rc::new(Vec::new()));
                }
                let mut out: Vec<usize> = Vec::new();
                if let Some(p) = &self.g.nonterminals[n.0 as usize].permutation {
                    out = self.phrase_ends(p, pos)?;
                }
                let alts = &self.g.nonterminals[n.0 as usize].alternatives;
                for alt in alts {
                    let mut cur = vec![pos];
                    for &s in alt {
                        let mut next = Vec::new();
                        for &p in &cur {
                            next.extend(self.ends(s, p)?.iter().copied());
                        }
                        next.sort_unstable();
                        next.dedup();
                        cur = next;
                        if cur.is_empty() {
                            break;
                        }
                    }
                    out.extend(cur);
                }
                out.sort_unstable();
                out.dedup();
                self.busy.remove(&key);
                let v = Rc::new(out);
                self.nt.insert(key, v.clone());
                Some(v)
            }
        }
    }
}

impl Memo<'_> {
    /// Where a permutation phrase starting at `pos` can end: a search over
    /// (position, names used, members so far), every member tried at
    /// every state (exponential in the worst case; fine for tests).
    ///
    /// With distinct members the state also holds the sorted canonical
    /// values of the members so far (see [`json_key`]), and a member whose
    /// text (after the separator) spells a value held is refused.
    fn phrase_ends(&mut self, p: &Permutation, pos: usize) -> Option<Vec<usize>> {
        type State = (usize, Vec<u32>, u32, Vec<String>);
        let cap = p.max.unwrap_or(p.min.max(1));
        let names = p.members.iter().filter_map(|m| m.1).max().map_or(0, |n| n + 1);
        let mut seen: HashSet<State> = HashSet::new();
        let mut todo: Vec<State> = vec![(pos, Vec::new(), 0u32, Vec::new())];
        let mut out = Vec::new();
        while let Some(state) = todo.pop() {
            if !seen.insert(state.clone()) {
                continue;
            }
            let (at, used, count, values) = state;
            // Distinct members make the count matter (the values differ).
            let cap = if p.distinct { u32::MAX } else { cap };
            if count >= p.min && p.required.iter().all(|r| used.contains(r)) {
                out.push(at);
            }
            if p.max.is_some_and(|m| count >= m) {
                continue;
            }
            let starts = match (&p.separator, count) {
                (Some(sep), 1..) => self.ends(*sep, at)?.to_vec(),
                _ => vec![at],
            };
            // In an ordered phrase the names used are `0..k`: the next
            // member is the one named `k`, or an unnamed one after them all.
            let next = (used.len() < names as usize).then_some(used.len() as u32);
            for (sym, name) in &p.members {
                if name.is_some_and(|x| used.contains(&x)) || (p.ordered && *name != next) {
                    continue;
                }
                let mut next_used = used.clone();
                next_used.extend(*name);
                next_used.sort_unstable();
                let next_count = if p.max.is_some() { count + 1 } else { (count + 1).min(cap) };
                for &st in &starts {
                    for &e in self.ends(*sym, st)?.iter() {
                        let mut next_values = values.clone();
                        if p.distinct {
                            let key = json_key(&self.text[st..e]);
                            if values.contains(&key) {
                                continue;
                            }
                            next_values.push(key);
                            next_values.sort_unstable();
                        }
                        todo.push((e, next_used.clone(), next_count, next_values));
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }
}

/// A key equal for texts of equal JSON values (numbers as exact decimals,
/// strings decoded, object members sorted); a text that is not JSON is its
/// own key. Independent of the parser's canonical form, which tests
/// compare it with.
fn json_key(text: &[u8]) -> String {
    fn key(v: &serde_json::Value) -> String {
        use serde_json::Value;
        match v {
            Value::Number(n) => match crate::number::Decimal::from_json(n, 1000) {
                Some(d) => format!("#{d:?}"),
                None => format!("#{n}"),
            },
            Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
            Value::Array(items) => {
                format!("[{}]", items.iter().map(key).collect::<Vec<_>>().join(","))
            }
            Value::Object(m) => {
                let mut members: Vec<String> = m
                    .iter()
                    .map(|(k, v)| {
                        format!("{}:{}", serde_json::to_string(k).unwrap_or_default(), key(v))
                    })
                    .collect();
                members.sort_unstable();
                format!("{{{}}}", members.join(","))
            }
            other => other.to_string(),
        }
    }
    match serde_json::from_slice::<serde_json::Value>(text) {
        Ok(v) => key(&v),
        Err(_) => format!("raw:{}", String::from_utf8_lossy(text)),
    }
}

impl Grammar {
    /// Whether the grammar derives exactly `text`, by a slow reference
    /// algorithm (memoized search over all lexeme splits). `None` when the
    /// work budget (`budget` elementary steps) runs out.
    ///
    /// Meant for tests and harnesses, not for serving masks. Deeply nested
    /// inputs recurse deeply: call it on a thread with a large stack.
    pub fn naive_accepts(&self, text: &[u8], budget: u64) -> Option<bool> {
        let mut m = Memo {
            g: self,
            text,
            regexes: HashMap::new(),
            lex: HashMap::new(),
            nt: HashMap::new(),
            busy: Default::default(),
            steps: 0,
            budget,
        };
        let ends = m.ends(Symbol::Nonterminal(self.start), 0)?;
        Some(ends.contains(&text.len()))
    }
}
