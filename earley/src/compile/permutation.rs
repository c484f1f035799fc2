//! Permutation phrases at compile time: validation, the wrapper
//! nonterminals each member is predicted through, and the facts the
//! grammar analyses need (when a phrase derives something, when it derives
//! the empty string). The parser side is `parser/permutation.rs`.
//!
//! Every member gets two wrappers of its own, `first → m` and
//! `later → separator m` (one wrapper when there is no separator). They
//! are ordinary rules, so the Earley closure predicts and completes them
//! as usual; because no other rule uses them, a completed wrapper names
//! exactly one member of one phrase, which is what a phrase item needs to
//! advance.

use rustc_hash::FxHashMap;

use crate::error::GrammarError;
use crate::grammar::{Permutation, SymbolId, SymbolKind};

/// A phrase before the analyses: its members' wrappers, names renumbered
/// densely from 0.
pub(crate) struct PermDraft {
    pub(crate) lhs: SymbolId,
    /// Per member: (first wrapper, later wrapper, dense name).
    pub(crate) members: Vec<(SymbolId, SymbolId, Option<u32>)>,
    pub(crate) num_names: u32,
    /// Dense required names (sorted, no duplicates).
    pub(crate) required: Vec<u32>,
    pub(crate) separator: Option<SymbolId>,
    pub(crate) min: u32,
    pub(crate) max: Option<u32>,
    pub(crate) distinct: bool,
    pub(crate) search: bool,
    pub(crate) ordered: bool,
}

/// A compiled phrase, as the parser reads it.
///
/// Invariant: every member's wrappers are productive, every required name
/// has a member, and some choice of members satisfies the count bounds
/// (the phrase's left-hand side is productive).
#[derive(Clone, Debug)]
pub(crate) struct PermRule {
    pub(crate) lhs: u32,
    /// Per member: (first wrapper, later wrapper, name or [`NO_NAME`]).
    pub(crate) members: Vec<(u32, u32, u32)>,
    /// 64-bit words per set of names.
    pub(crate) words: u32,
    /// The required names, as a bit set of `words` words.
    pub(crate) required: Vec<u64>,
    pub(crate) num_required: u32,
    /// Names not required that some member uses.
    pub(crate) num_optional: u32,
    /// Whether some member has no name (may repeat).
    pub(crate) repeatable: bool,
    pub(crate) min: u32,
    /// The most members (`u32::MAX`: unbounded).
    pub(crate) max: u32,
    /// Whether members must be distinct JSON values (see
    /// [`Permutation::distinct`](crate::Permutation)).
    pub(crate) distinct: bool,
    /// Whether the parser searches for completions inside the phrase
    /// ([`Permutation::search`](crate::Permutation); only with `distinct`).
    pub(crate) search: bool,
    /// Whether members come in the order of their names
    /// ([`Permutation::ordered`](crate::Permutation)).
    pub(crate) ordered: bool,
    /// The number of names.
    pub(crate) num_names: u32,
}

/// The name of a member that may repeat.
pub(crate) const NO_NAME: u32 = u32::MAX;

/// Checks every phrase and adds the wrapper nonterminals and their rules.
pub(crate) fn draft(
    perms: Vec<(SymbolId, Permutation)>,
    kinds: &mut Vec<SymbolKind>,
    names: &mut Vec<String>,
    rules: &mut Vec<(SymbolId, Vec<SymbolId>)>,
) -> Result<Vec<PermDraft>, GrammarError> {
    let n = kinds.len();
    let check = |s: SymbolId| {
        if s.index() < n {
            Ok(())
        } else {
            Err(GrammarError::UnknownSymbol { id: s.index() as u32 })
        }
    };
    let mut defined = vec![false; n];
    for (lhs, _) in rules.iter() {
        defined[lhs.index()] = true;
    }
    let mut out = Vec::with_capacity(perms.len());
    for (lhs, p) in perms {
        check(lhs)?;
        let name = names[lhs.index()].clone();
        if kinds[lhs.index()] != SymbolKind::Nonterminal {
            return Err(GrammarError::NotANonterminal { name });
        }
        if std::mem::replace(&mut defined[lhs.index()], true) {
            return Err(GrammarError::Redefined { name });
        }
        for &(m, _) in &p.members {
            check(m)?;
        }
        if let Some(s) = p.separator {
            check(s)?;
        }
        if let Some(max) = p.max
            && p.min > max
        {
            return Err(GrammarError::BadRepeat { name, min: p.min, max });
        }
        // Dense names, in order of first appearance.
        let mut dense: FxHashMap<u32, u32> = FxHashMap::default();
        let mut densify = |x: u32| {
            let next = dense.len() as u32;
            *dense.entry(x).or_insert(next)
        };
        let mut members = Vec::with_capacity(p.members.len());
        for (i, &(m, nm)) in p.members.iter().enumerate() {
            let first = SymbolId::from_index(kinds.len());
            kinds.push(SymbolKind::Nonterminal);
            names.push(format!("{name}⟨{i}⟩"));
            rules.push((first, vec![m]));
            let later = match p.separator {
                Some(sep) => {
                    let later = SymbolId::from_index(kinds.len());
                    kinds.push(SymbolKind::Nonterminal);
                    names.push(format!("{name}⟨,{i}⟩"));
                    rules.push((later, vec![sep, m]));
                    later
                }
                None => first,
            };
            members.push((first, later, nm.map(&mut densify)));
        }
        let mut required: Vec<u32> = p.required.iter().map(|&x| densify(x)).collect();
        required.sort_unstable();
        required.dedup();
        if p.ordered && dense.iter().any(|(&x, &d)| x != d) {
            return Err(GrammarError::UnorderedNames { name });
        }
        out.push(PermDraft {
            lhs,
            members,
            num_names: dense.len() as u32,
            required,
            separator: p.separator,
            min: p.min,
            max: p.max,
            distinct: p.distinct,
            search: p.distinct && p.search,
            ordered: p.ordered,
        });
    }
    Ok(out)
}

impl PermDraft {
    /// Every symbol a derivation of the phrase may use directly.
    pub(crate) fn successors(&self) -> impl Iterator<Item = SymbolId> + '_ {
        self.members.iter().flat_map(|&(f, l, _)| [f, l])
    }

    /// Whether the phrase derives some string when exactly the symbols
    /// `ok` holds for derive one (`ok(first)` for a member coming first,
    /// `ok(later)` after a separator). With `ok` = "productive" this is
    /// productivity; with `ok` = "nullable" it is nullability (a sequence
    /// of members deriving ε).
    pub(crate) fn derives(&self, ok: impl Fn(SymbolId) -> bool) -> bool {
        let max = self.max.unwrap_or(u32::MAX);
        // The fewest members a derivation has: every required name, and
        // at least `min`.
        let need = (self.required.len() as u32).max(self.min);
        if need > max {
            return false;
        }
        if need == 0 {
            return true;
        }
        // With more than one member, the later ones come as `later`
        // wrappers: if no later wrapper works, only one member fits.
        let usable = |&(f, l, _): &(SymbolId, SymbolId, Option<u32>)| {
            if need == 1 { ok(f) } else { ok(f) && ok(l) }
        };
        let mut has: Vec<bool> = vec![false; self.num_names as usize];
        let mut repeatable = false;
        for m in self.members.iter().filter(|m| usable(m)) {
            match m.2 {
                Some(x) => has[x as usize] = true,
                None => repeatable = true,
            }
        }
        if !self.required.iter().all(|&r| has[r as usize]) {
            return false;
        }
        let optional = has.iter().filter(|&&h| h).count() as u32 - self.required.len() as u32;
        repeatable || need <= self.required.len() as u32 + optional
    }

    /// The compiled phrase over the members whose wrappers are productive.
    ///
    /// Only called for productive phrases.
    pub(crate) fn compile(&self, productive: &[bool]) -> PermRule {
        let members: Vec<(u32, u32, u32)> = self
            .members
            .iter()
            .filter(|&&(f, _, _)| productive[f.index()])
            .map(|&(f, l, nm)| {
                // A later wrapper that derives nothing (an unproductive
                // separator) is never predicted: see `max` below.
                (f.index() as u32, l.index() as u32, nm.unwrap_or(NO_NAME))
            })
            .collect();
        let words = self.num_names.div_ceil(64);
        let mut required = vec![0u64; words as usize];
        for &r in &self.required {
            required[(r / 64) as usize] |= 1 << (r % 64);
        }
        let mut named = vec![false; self.num_names as usize];
        let mut repeatable = false;
        for &(_, _, nm) in &members {
            if nm == NO_NAME {
                repeatable = true;
            } else {
                named[nm as usize] = true;
            }
        }
        let num_optional = named
            .iter()
            .enumerate()
            .filter(|&(x, &h)| h && required[x / 64] & (1 << (x % 64)) == 0)
            .count() as u32;
        let sep_ok = self.separator.is_none_or(|s| productive[s.index()]);
        let max = self.max.unwrap_or(u32::MAX);
        PermRule {
            lhs: self.lhs.index() as u32,
            members,
            words,
            required,
            num_required: self.required.len() as u32,
            num_optional,
            repeatable,
            min: self.min,
            max: if sep_ok { max } else { max.min(1) },
            distinct: self.distinct,
            search: self.search,
            ordered: self.ordered,
            num_names: self.num_names,
        }
    }
}
