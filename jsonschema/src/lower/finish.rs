//! The last pass: unproductive rules and phrase members removed, the
//! nonterminals reachable from the start renumbered.

use crate::grammar::{Grammar, Lexeme, Nonterminal, NonterminalId, Permutation, Symbol};

/// Whether a permutation phrase derives some string, when the symbols for
/// which `ok` holds do (the same test as the engine's: every required name
/// has a member, and the counts can be met).
fn phrase_derives(p: &Permutation, ok: impl Fn(&Symbol) -> bool) -> bool {
    let required = p.required.len() as u32;
    let need = required.max(p.min);
    if p.max.is_some_and(|m| need > m) {
        return false;
    }
    let mut named: Vec<u32> = Vec::new();
    let mut repeatable = false;
    for (s, name) in &p.members {
        if ok(s) {
            match name {
                Some(x) => named.push(*x),
                None => repeatable = true,
            }
        }
    }
    named.sort_unstable();
    named.dedup();
    if !p.required.iter().all(|r| named.binary_search(r).is_ok()) {
        return false;
    }
    let optional = named.len() as u32 - required;
    need == 0 || repeatable || need <= required + optional
}

/// Keeps the productive alternatives and the nonterminals reachable from the
/// start; `None` if the start is not productive.
pub(super) fn finish(
    lexemes: Vec<Lexeme>,
    nts: Vec<Nonterminal>,
    start: NonterminalId,
) -> Option<Grammar> {
    let n = nts.len();
    let mut productive = vec![false; n];
    let sym_ok = |s: &Symbol, productive: &[bool]| match s {
        Symbol::Lexeme(_) => true,
        Symbol::Nonterminal(x) => productive[x.0 as usize],
    };
    let alt_ok = |alt: &Vec<Symbol>, productive: &[bool]| alt.iter().all(|s| sym_ok(s, productive));
    let nt_ok = |nt: &Nonterminal, productive: &[bool]| match &nt.permutation {
        Some(p) => phrase_derives(p, |s| sym_ok(s, productive)),
        None => nt.alternatives.iter().any(|a| alt_ok(a, productive)),
    };
    // A fixpoint, whatever the order; nonterminals are made parents first,
    // so going from the last one up settles most of them in one pass (in
    // order, each pass settled one level: quadratic on deep schemas).
    loop {
        let mut changed = false;
        for (i, nt) in nts.iter().enumerate().rev() {
            if !productive[i] && nt_ok(nt, &productive) {
                productive[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if !productive[start.0 as usize] {
        return None;
    }
    // The symbols a nonterminal's kept rules use.
    let used = |nt: &Nonterminal| -> Vec<Symbol> {
        let mut v: Vec<Symbol> = Vec::new();
        for alt in nt.alternatives.iter().filter(|a| alt_ok(a, &productive)) {
            v.extend(alt.iter().copied());
        }
        if let Some(p) = &nt.permutation {
            v.extend(p.members.iter().map(|m| m.0).filter(|s| sym_ok(s, &productive)));
        }
        v
    };
    let mut new_id: Vec<Option<u32>> = vec![None; n];
    let mut order = vec![start.0 as usize];
    new_id[start.0 as usize] = Some(0);
    let mut k = 0;
    while k < order.len() {
        let i = order[k];
        k += 1;
        for s in used(&nts[i]) {
            if let Symbol::Nonterminal(x) = s {
                let x = x.0 as usize;
                if new_id[x].is_none() {
                    new_id[x] = Some(order.len() as u32);
                    order.push(x);
                }
            }
        }
    }
    let rename = |s: &Symbol| match s {
        Symbol::Nonterminal(x) => {
            Symbol::Nonterminal(NonterminalId(new_id[x.0 as usize].unwrap_or(0)))
        }
        l => *l,
    };
    let mut out = Vec::with_capacity(order.len());
    for &i in &order {
        let alternatives = nts[i]
            .alternatives
            .iter()
            .filter(|a| alt_ok(a, &productive))
            .map(|a| a.iter().map(rename).collect())
            .collect();
        let permutation = nts[i].permutation.as_ref().map(|p| Permutation {
            members: p
                .members
                .iter()
                .filter(|(s, _)| sym_ok(s, &productive))
                .map(|(s, name)| (rename(s), *name))
                .collect(),
            separator: p.separator.as_ref().map(rename),
            ..p.clone()
        });
        out.push(Nonterminal { name: nts[i].name.clone(), alternatives, permutation });
    }
    Some(Grammar { lexemes, nonterminals: out, start: NonterminalId(0) })
}
