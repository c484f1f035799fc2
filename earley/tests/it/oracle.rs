//! A naive, independent model of the parser's semantics, for property tests.
//!
//! Lexing is simulated byte by byte with one `derivre::Regex` per lexeme (no
//! shared states, no byte classes, no caching across calls), and parsing is
//! a textbook Earley recognizer over sets of terminals, recomputed from
//! scratch with a fixpoint loop for every question. It shares no code with
//! the `earley` or `lexer` crates.

use derivre::{Regex, RegexAst, RegexBuilder};

/// A symbol of the oracle grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sym {
    /// Lexeme index.
    T(usize),
    /// Nonterminal index.
    N(usize),
}

/// A lexeme: its regex and whether it is lazy.
#[derive(Clone, Debug)]
pub(crate) struct OLexeme {
    pub(crate) pattern: String,
    pub(crate) lazy: bool,
}

/// A grammar: rules `(lhs, rhs)`, start nonterminal 0, optional ignore regex.
#[derive(Clone, Debug)]
pub(crate) struct OGrammar {
    pub(crate) lexemes: Vec<OLexeme>,
    pub(crate) num_nonterminals: usize,
    pub(crate) rules: Vec<(usize, Vec<Sym>)>,
    pub(crate) ignore: Option<String>,
}

pub(crate) struct Oracle {
    g: OGrammar,
    /// One compiled regex per lexeme, then the ignore regex.
    rx: Vec<Regex>,
    nullable_lexeme: Vec<bool>,
}

type OItem = (usize, usize, usize); // rule, dot, origin

impl Oracle {
    pub(crate) fn new(g: &OGrammar) -> Oracle {
        let mut rx = Vec::new();
        let mut patterns: Vec<&str> = g.lexemes.iter().map(|l| l.pattern.as_str()).collect();
        if let Some(ig) = &g.ignore {
            patterns.push(ig);
        }
        for p in patterns {
            let mut b = RegexBuilder::new();
            let e = b.mk(&RegexAst::Regex(p.to_string())).unwrap();
            rx.push(b.to_regex(e));
        }
        let nullable_lexeme = rx.iter_mut().map(|r| r.is_match_bytes(b"")).collect();
        Oracle { g: g.clone(), rx, nullable_lexeme }
    }

    fn skip(&self) -> Option<usize> {
        self.g.ignore.as_ref().map(|_| self.g.lexemes.len())
    }

    fn is_lazy(&self, l: usize) -> bool {
        l < self.g.lexemes.len() && self.g.lexemes[l].lazy
    }

    fn is_prefix(&mut self, l: usize, bytes: &[u8]) -> bool {
        let r = &mut self.rx[l];
        let s0 = r.initial_state();
        !r.transition_bytes(s0, bytes).is_dead()
    }

    fn matches(&mut self, l: usize, bytes: &[u8]) -> bool {
        !bytes.is_empty() && self.rx[l].is_match_bytes(bytes)
    }

    /// The Earley item sets after the terminal-set sequence `seq` (each
    /// element: the lexemes matched there).
    fn earley(&self, seq: &[Vec<usize>]) -> Vec<Vec<OItem>> {
        let mut sets: Vec<Vec<OItem>> = Vec::new();
        let mut first: Vec<OItem> = (0..self.g.rules.len())
            .filter(|&r| self.g.rules[r].0 == 0)
            .map(|r| (r, 0, 0))
            .collect();
        self.close(&mut first, 0, &sets);
        sets.push(first);
        for (i, matched) in seq.iter().enumerate() {
            let prev = &sets[i];
            let mut next = Vec::new();
            for &(r, d, o) in prev {
                if let Some(Sym::T(t)) = self.g.rules[r].1.get(d)
                    && matched.contains(t)
                {
                    push(&mut next, (r, d + 1, o));
                }
            }
            if self.skip().is_some_and(|s| matched.contains(&s)) {
                for &it in prev {
                    push(&mut next, it);
                }
            }
            self.close(&mut next, i + 1, &sets);
            sets.push(next);
        }
        sets
    }

    fn close(&self, set: &mut Vec<OItem>, here: usize, sets: &[Vec<OItem>]) {
        loop {
            let before = set.len();
            let snapshot = set.clone();
            for &(r, d, o) in &snapshot {
                let rhs = &self.g.rules[r].1;
                match rhs.get(d) {
                    None => {
                        let lhs = self.g.rules[r].0;
                        let origin_set: Vec<OItem> =
                            if o == here { snapshot.clone() } else { sets[o].clone() };
                        for (r2, d2, o2) in origin_set {
                            if self.g.rules[r2].1.get(d2) == Some(&Sym::N(lhs)) {
                                push(set, (r2, d2 + 1, o2));
                            }
                        }
                    }
                    Some(Sym::N(n)) => {
                        for r2 in 0..self.g.rules.len() {
                            if self.g.rules[r2].0 == *n {
                                push(set, (r2, 0, here));
                            }
                        }
                    }
                    Some(Sym::T(t)) => {
                        if self.nullable_lexeme[*t] {
                            push(set, (r, d + 1, o));
                        }
                    }
                }
            }
            if set.len() == before {
                break;
            }
        }
    }

    fn allowed(&self, seq: &[Vec<usize>]) -> (Vec<usize>, bool) {
        let sets = self.earley(seq);
        let last = sets.last().unwrap();
        let mut allowed = Vec::new();
        let mut accepting = false;
        for &(r, d, o) in last {
            match self.g.rules[r].1.get(d) {
                Some(Sym::T(t)) => push(&mut allowed, *t),
                None => accepting |= self.g.rules[r].0 == 0 && o == 0,
                _ => {}
            }
        }
        if let Some(s) = self.skip()
            && !allowed.is_empty()
            && !seq.is_empty()
        {
            push(&mut allowed, s);
        }
        (allowed, accepting)
    }

    /// Runs the lexing rules over `text`: `None` when some byte is rejected,
    /// otherwise the lexeme sequence and the bytes of the unfinished lexeme.
    fn lex(&mut self, text: &[u8]) -> Option<(Vec<Vec<usize>>, Vec<u8>)> {
        let mut seq: Vec<Vec<usize>> = Vec::new();
        let mut partial: Vec<u8> = Vec::new();
        for &b in text {
            let (allowed, _) = self.allowed(&seq);
            let mut ext = partial.clone();
            ext.push(b);
            let live: Vec<usize> =
                allowed.iter().copied().filter(|&l| self.is_prefix(l, &ext)).collect();
            if !live.is_empty() {
                partial = ext;
            } else {
                if partial.is_empty() {
                    return None;
                }
                let matched: Vec<usize> =
                    allowed.iter().copied().filter(|&l| self.matches(l, &partial)).collect();
                if matched.is_empty() {
                    return None;
                }
                seq.push(matched);
                let (allowed, _) = self.allowed(&seq);
                let live: Vec<usize> =
                    allowed.iter().copied().filter(|&l| self.is_prefix(l, &[b])).collect();
                if live.is_empty() {
                    return None;
                }
                partial = vec![b];
            }
            // a lazy lexeme ends as soon as it matches
            let (allowed, _) = self.allowed(&seq);
            let matched: Vec<usize> =
                allowed.iter().copied().filter(|&l| self.matches(l, &partial)).collect();
            if matched.iter().any(|&l| self.is_lazy(l)) {
                seq.push(matched);
                partial.clear();
            }
        }
        Some((seq, partial))
    }

    /// Whether `text` can be extended to a sentence under the lexing rules
    /// (here: is not rejected; the parser allows at least one continuation
    /// whenever it accepts, since rows never dead-end in the grammars tested).
    pub(crate) fn viable(&mut self, text: &[u8]) -> bool {
        self.lex(text).is_some()
    }

    /// Whether `text` is a sentence.
    pub(crate) fn accepts(&mut self, text: &[u8]) -> bool {
        let Some((mut seq, partial)) = self.lex(text) else { return false };
        if !partial.is_empty() {
            let (allowed, _) = self.allowed(&seq);
            let matched: Vec<usize> =
                allowed.iter().copied().filter(|&l| self.matches(l, &partial)).collect();
            if matched.is_empty() {
                return false;
            }
            seq.push(matched);
        }
        self.allowed(&seq).1
    }
}

fn push<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}
