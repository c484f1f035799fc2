//! From a [`GrammarBuilder`] to a flat [`Grammar`]: validation, desugaring
//! of nullable lexemes, pruning, nullability, flattening.

use std::sync::Arc;

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

    // Undefined nonterminals reachable from the start (over all rules).
    {
        let mut has_rule = vec![false; n];
        for (lhs, _) in &parts.rules {
            has_rule[lhs.index()] = true;
        }
        let by_lhs = group_by_lhs(n, &parts.rules);
        let mut seen = vec![false; n];
        let mut todo = vec![start.index()];
        seen[start.index()] = true;
        while let Some(s) = todo.pop() {
            if parts.kinds[s] != SymbolKind::Nonterminal {
                continue;
            }
            if !has_rule[s] {
                return Err(GrammarError::Undefined { name: parts.names[s].clone() });
            }
            for &r in &by_lhs[s] {
                for &x in &parts.rules[r].1 {
                    if !seen[x.index()] {
                        seen[x.index()] = true;
                        todo.push(x.index());
                    }
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

    let mut kinds = parts.kinds;
    let mut names = parts.names;
    let mut rules = parts.rules;

    // Nullable lexemes become `X? → X | ε`; the lexer matches only X's
    // non-empty part.
    let mut replace: Vec<Option<SymbolId>> = vec![None; n];
    for s in 0..n {
        if let SymbolKind::Lexeme(l) = kinds[s] {
            if lexer.is_nullable(l) {
                let opt = SymbolId::from_index(kinds.len());
                kinds.push(SymbolKind::Nonterminal);
                names.push(format!("{}?", names[s]));
                replace[s] = Some(opt);
            }
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
    while let Some(s) = todo.pop() {
        for &r in &uses[s] {
            missing[r] -= 1;
            let lhs = rules[r].0.index();
            if missing[r] == 0 && !productive[lhs] {
                productive[lhs] = true;
                todo.push(lhs);
            }
        }
    }
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
        for &r in &by_lhs[s] {
            if !keep[r] {
                continue;
            }
            for x in &rules[r].1 {
                if !reachable[x.index()] {
                    reachable[x.index()] = true;
                    todo.push(x.index());
                }
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
    while let Some(s) = todo.pop() {
        for &r in &uses[s] {
            left[r] -= 1;
            let lhs = rules[r].0.index();
            if left[r] == 0 && !nullable[lhs] {
                nullable[lhs] = true;
                todo.push(lhs);
            }
        }
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

    Ok(Grammar {
        inner: Arc::new(GrammarInner {
            lexer,
            warm_lexer: std::sync::Mutex::new(None),
            names,
            kinds,
            specials: parts.specials,
            rhs: rhs_flat,
            rules_of,
            rule_starts,
            nullable,
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

fn group_by_lhs(n: usize, rules: &[(SymbolId, Vec<SymbolId>)]) -> Vec<Vec<usize>> {
    let mut by_lhs = vec![Vec::new(); n];
    for (r, (lhs, _)) in rules.iter().enumerate() {
        by_lhs[lhs.index()].push(r);
    }
    by_lhs
}
