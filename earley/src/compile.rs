//! From a [`GrammarBuilder`] to a flat [`Grammar`]: validation, desugaring
//! of nullable lexemes, permutation phrases, pruning, nullability,
//! flattening.

use std::sync::Arc;

mod permutation;
pub(crate) use permutation::{NO_NAME, PermRule};

use lexer::{LexemeSpec, Lexer, RegexAst};

use crate::error::GrammarError;
use crate::grammar::{END, Grammar, GrammarBuilder, GrammarInner, Limits, SymbolId, SymbolKind};

pub(crate) fn compile(
    builder: GrammarBuilder,
    start: SymbolId,
    limits: Limits,
) -> Result<Grammar, GrammarError> {
    let mut parts = builder.into_parts();
    if let Some(e) = parts.pending_error.take() {
        return Err(e);
    }
    let n = parts.kinds.len();
    let check = |s: SymbolId| {
        if s.index() < n {
            Ok(())
        } else {
            Err(GrammarError::UnknownSymbol { id: s.index() as u32 })
        }
    };
    check(start)?;
    for (lhs, rhs) in &parts.rules {
        check(*lhs)?;
        for &s in rhs {
            check(s)?;
        }
        if parts.kinds[lhs.index()] != SymbolKind::Nonterminal {
            return Err(GrammarError::NotANonterminal { name: parts.names[lhs.index()].clone() });
        }
    }

    let mut kinds = parts.kinds;
    let mut names = parts.names;
    let mut rules = parts.rules;
    let perms = permutation::draft(parts.permutations, &mut kinds, &mut names, &mut rules)?;
    let n = kinds.len();
    let mut perm_of = vec![0u32; n];
    for (k, p) in perms.iter().enumerate() {
        perm_of[p.lhs.index()] = k as u32 + 1;
    }
    let successors = |s: usize, rules: &[(SymbolId, Vec<SymbolId>)], by_lhs: &[Vec<usize>]| {
        let of_rules = by_lhs[s].iter().flat_map(move |&r| rules[r].1.iter().copied());
        let of_perm =
            perm_of[s].checked_sub(1).into_iter().flat_map(|k| perms[k as usize].successors());
        of_rules.chain(of_perm).collect::<Vec<SymbolId>>()
    };

    // Undefined nonterminals reachable from the start (over all rules).
    {
        let mut has_rule = vec![false; n];
        for (lhs, _) in &rules {
            has_rule[lhs.index()] = true;
        }
        for p in &perms {
            has_rule[p.lhs.index()] = true;
        }
        let by_lhs = group_by_lhs(n, &rules);
        let mut seen = vec![false; n];
        let mut todo = vec![start.index()];
        seen[start.index()] = true;
        while let Some(s) = todo.pop() {
            if kinds[s] != SymbolKind::Nonterminal {
                continue;
            }
            if !has_rule[s] {
                return Err(GrammarError::Undefined { name: names[s].clone() });
            }
            for x in successors(s, &rules, &by_lhs) {
                if !seen[x.index()] {
                    seen[x.index()] = true;
                    todo.push(x.index());
                }
            }
        }
    }

    // The %ignore lexeme.
    let skip = if parts.ignore.is_empty() {
        None
    } else {
        let ast = if parts.ignore.len() == 1 {
            parts.ignore.pop().unwrap_or(RegexAst::NoMatch)
        } else {
            RegexAst::Or(std::mem::take(&mut parts.ignore))
        };
        Some(parts.lexemes.add(LexemeSpec::new("%ignore", ast)))
    };
    let lexer = Lexer::new(&parts.lexemes, limits.lexer)?;

    // Nullable lexemes become `X? → X | ε`; the lexer matches only X's
    // non-empty part.
    let mut replace: Vec<Option<SymbolId>> = vec![None; n];
    for s in 0..n {
        if let SymbolKind::Lexeme(l) = kinds[s]
            && lexer.is_nullable(l)
        {
            let opt = SymbolId::from_index(kinds.len());
            kinds.push(SymbolKind::Nonterminal);
            names.push(format!("{}?", names[s]));
            replace[s] = Some(opt);
        }
    }
    for (_, rhs) in rules.iter_mut() {
        for x in rhs.iter_mut() {
            if let Some(r) = replace[x.index()] {
                *x = r;
            }
        }
    }
    for (s, r) in replace.iter().enumerate() {
        if let Some(opt) = *r {
            rules.push((opt, vec![SymbolId::from_index(s)]));
            rules.push((opt, vec![]));
        }
    }
    let start = replace[start.index()].unwrap_or(start);

    // The synthetic start S' → S.
    let super_start = SymbolId::from_index(kinds.len());
    kinds.push(SymbolKind::Nonterminal);
    names.push("⟨start⟩".to_string());
    let start_rule = rules.len();
    rules.push((super_start, vec![start]));

    let n = kinds.len();
    if n > limits.max_symbols {
        return Err(GrammarError::TooLarge { what: "symbols", limit: limits.max_symbols });
    }
    if rules.len() > limits.max_rules {
        return Err(GrammarError::TooLarge { what: "rules", limit: limits.max_rules });
    }

    // Productive symbols (worklist with per-rule counters of unknown symbols).
    let mut productive = vec![false; n];
    for s in 0..n {
        productive[s] = match kinds[s] {
            SymbolKind::Lexeme(l) => !lexer.matches_nothing(l),
            SymbolKind::Special(_) => true,
            SymbolKind::Nonterminal => false,
        };
    }
    let mut uses: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut missing: Vec<usize> = Vec::with_capacity(rules.len());
    let mut todo = Vec::new();
    for (r, (lhs, rhs)) in rules.iter().enumerate() {
        let m = rhs.iter().filter(|x| !productive[x.index()]).count();
        for x in rhs.iter().filter(|x| !productive[x.index()]) {
            uses[x.index()].push(r);
        }
        missing.push(m);
        if m == 0 && !productive[lhs.index()] {
            productive[lhs.index()] = true;
            todo.push(lhs.index());
        }
    }
    // A phrase becomes productive once enough of its members are.
    let all_perms: Vec<&permutation::PermDraft> = perms.iter().collect();
    let derives = |p: &permutation::PermDraft, marked: &[bool]| p.derives(|x| marked[x.index()]);
    propagate(&mut productive, todo, &uses, &mut missing, &rules, &all_perms, derives);
    if !productive[super_start.index()] {
        let orig = rules[start_rule].1[0];
        return Err(GrammarError::EmptyLanguage { start: names[orig.index()].clone() });
    }
    let keep: Vec<bool> = missing.iter().map(|&m| m == 0).collect();

    // Reachable over the kept rules.
    let by_lhs = group_by_lhs(n, &rules);
    let mut reachable = vec![false; n];
    reachable[super_start.index()] = true;
    let mut todo = vec![super_start.index()];
    while let Some(s) = todo.pop() {
        let kept = by_lhs[s].iter().filter(|&&r| keep[r]).flat_map(|&r| rules[r].1.iter().copied());
        let perm = perm_of.get(s).and_then(|k| k.checked_sub(1)).filter(|_| productive[s]);
        let of_perm = perm.into_iter().flat_map(|k| perms[k as usize].successors());
        for x in kept.chain(of_perm.filter(|x| productive[x.index()])) {
            if !reachable[x.index()] {
                reachable[x.index()] = true;
                todo.push(x.index());
            }
        }
    }
    let final_rules: Vec<usize> =
        (0..rules.len()).filter(|&r| keep[r] && reachable[rules[r].0.index()]).collect();

    // Nullable symbols (worklist again).
    let mut nullable = vec![false; n];
    let mut uses: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut left: Vec<usize> = vec![0; rules.len()];
    let mut todo = Vec::new();
    for &r in &final_rules {
        let (lhs, rhs) = &rules[r];
        let nonterminals = rhs.iter().filter(|x| kinds[x.index()] == SymbolKind::Nonterminal);
        let has_terminal = rhs.iter().any(|x| kinds[x.index()] != SymbolKind::Nonterminal);
        if has_terminal {
            left[r] = usize::MAX;
            continue;
        }
        left[r] = rhs.len();
        for x in nonterminals {
            uses[x.index()].push(r);
        }
        if rhs.is_empty() && !nullable[lhs.index()] {
            nullable[lhs.index()] = true;
            todo.push(lhs.index());
        }
    }
    let live_perms: Vec<&permutation::PermDraft> =
        perms.iter().filter(|p| productive[p.lhs.index()] && reachable[p.lhs.index()]).collect();
    let derives_empty = |p: &permutation::PermDraft, marked: &[bool]| {
        p.derives(|x| marked[x.index()] && productive[x.index()])
    };
    propagate(&mut nullable, todo, &uses, &mut left, &rules, &live_perms, derives_empty);

    // The phrases the parser sees, and their wrappers.
    let mut perm_of = vec![0u32; n];
    let mut wrapper_of = vec![0u32; n];
    let mut compiled_perms = Vec::with_capacity(live_perms.len());
    let mut perm_members = Vec::new();
    for p in &live_perms {
        let k = compiled_perms.len() as u32;
        let rule = p.compile(&productive);
        perm_of[rule.lhs as usize] = k + 1;
        for (j, &(first, later, _)) in rule.members.iter().enumerate() {
            perm_members.push((k, j as u32));
            wrapper_of[first as usize] = perm_members.len() as u32;
            wrapper_of[later as usize] = perm_members.len() as u32;
        }
        compiled_perms.push(rule);
    }

    // Flatten.
    let mut rhs_flat = Vec::new();
    let mut rules_of = vec![(0u32, 0u32); n];
    let mut rule_starts = Vec::with_capacity(final_rules.len());
    let mut sorted = final_rules.clone();
    sorted.sort_by_key(|&r| rules[r].0);
    let mut accept_pos = 0;
    for &r in &sorted {
        let (lhs, rhs) = &rules[r];
        let l = lhs.index();
        if rules_of[l] == (0, 0) {
            rules_of[l] = (rule_starts.len() as u32, rule_starts.len() as u32);
        }
        rules_of[l].1 += 1;
        rule_starts.push(rhs_flat.len() as u32);
        rhs_flat.extend(rhs.iter().map(|x| x.index() as u32));
        if r == start_rule {
            accept_pos = rhs_flat.len() as u32;
        }
        rhs_flat.push(END | l as u32);
    }
    // Item positions with bit 31 set are permutation-phrase states.
    if rhs_flat.len() >= 1 << 31 {
        return Err(GrammarError::TooLarge { what: "rule symbols", limit: 1 << 31 });
    }

    let has_distinct = compiled_perms.iter().any(|p| p.distinct);
    let has_search = compiled_perms.iter().any(|p| p.search);
    Ok(Grammar {
        inner: Arc::new(GrammarInner {
            has_distinct,
            has_search,
            lexer,
            names,
            kinds,
            specials: parts.specials,
            rhs: rhs_flat,
            rules_of,
            rule_starts,
            nullable,
            perms: compiled_perms,
            perm_of,
            wrapper_of,
            perm_members,
            start: super_start.index() as u32,
            accept_pos,
            skip,
            initial_ignore: parts.initial_ignore,
            ignore_once: parts.ignore_once,
            limits,
            num_rules: final_rules.len(),
        }),
    })
}

/// Marks symbols to a fixpoint from the marked ones in `todo`: a rule whose
/// counter `left[r]` (its body symbols not marked yet, as listed in `uses`)
/// drops to zero marks its left-hand side; a phrase is marked when
/// `phrase_holds` says so of it given the marks so far.
fn propagate(
    marked: &mut [bool],
    mut todo: Vec<usize>,
    uses: &[Vec<usize>],
    left: &mut [usize],
    rules: &[(SymbolId, Vec<SymbolId>)],
    phrases: &[&permutation::PermDraft],
    phrase_holds: impl Fn(&permutation::PermDraft, &[bool]) -> bool,
) {
    loop {
        while let Some(s) = todo.pop() {
            for &r in &uses[s] {
                left[r] -= 1;
                let lhs = rules[r].0.index();
                if left[r] == 0 && !marked[lhs] {
                    marked[lhs] = true;
                    todo.push(lhs);
                }
            }
        }
        for p in phrases {
            let l = p.lhs.index();
            if !marked[l] && phrase_holds(p, marked) {
                marked[l] = true;
                todo.push(l);
            }
        }
        if todo.is_empty() {
            break;
        }
    }
}

fn group_by_lhs(n: usize, rules: &[(SymbolId, Vec<SymbolId>)]) -> Vec<Vec<usize>> {
    let mut by_lhs = vec![Vec::new(); n];
    for (r, (lhs, _)) in rules.iter().enumerate() {
        by_lhs[lhs.index()].push(r);
    }
    by_lhs
}
