//! Lowering of normalized schemas to the grammar: scalars as lexemes,
//! arrays and objects as counting rules.

use std::collections::{HashMap, VecDeque};

use derivre::{JsonQuoteOptions, RegexAst};

use crate::build::Compiler;
use crate::error::{ErrorKind, Result};
use crate::grammar::{Grammar, Lexeme, LexemeId, Nonterminal, NonterminalId, Symbol};
use crate::ir::{ArraySchema, DefId, NumberSchema, ObjectSchema, Schema, StringSchema};
use crate::number;
use crate::options::{PropertyOrder, Whitespace};

/// The regex (over decoded characters) of a string schema's contents.
pub(crate) fn string_content_regex(s: &StringSchema, cap: Option<usize>) -> RegexAst {
    let mut parts = s.regexes.clone();
    let max = s.max_len.or(cap);
    if s.min_len > 0 || max.is_some() {
        let lo = s.min_len.min(u32::MAX as usize - 1) as u32;
        let hi = max.map_or(u32::MAX, |m| m.min(u32::MAX as usize - 1) as u32);
        parts.push(RegexAst::Repeat(Box::new(RegexAst::Regex("(?s:.)".to_string())), lo, hi));
    }
    match parts.len() {
        0 => RegexAst::Regex("(?s:.*)".to_string()),
        1 => parts.pop().unwrap_or(RegexAst::NoMatch),
        _ => RegexAst::And(parts),
    }
}

fn contains_not(ast: &RegexAst) -> bool {
    matches!(ast, RegexAst::Not(_)) || ast.get_args().iter().any(contains_not)
}

/// The JSON string literals whose decoded contents match `content`.
fn quote(content: RegexAst) -> RegexAst {
    // derivre quotes a complement as the complement of the quoted language,
    // which contains texts that are not JSON strings at all; intersecting
    // with all JSON strings restores the intended meaning.
    let negated = contains_not(&content);
    let q = RegexAst::JsonQuote(Box::new(content), JsonQuoteOptions::regular());
    if negated {
        RegexAst::And(vec![
            q,
            RegexAst::JsonQuote(
                Box::new(RegexAst::Regex("(?s:.*)".to_string())),
                JsonQuoteOptions::regular(),
            ),
        ])
    } else {
        q
    }
}

/// The JSON string literals whose decoded contents match `content` and are
/// none of `names` (literals). The names are excluded outside the quotes,
/// `quote(content) & ¬quote(names)`: quoting is structural (each decoded
/// text has the same spellings on both sides), so this is the language of
/// `quote(content & ¬names)`, but after the opening quote its derivative
/// has the shape `C*" & ¬(finite)` that derivre's prefix-containment check
/// reads: the slicer proves the string slices at a key start in
/// microseconds instead of exploring derivatives (slicer/DESIGN.md).
fn quote_except(content: RegexAst, names: &[RegexAst]) -> RegexAst {
    if names.is_empty() {
        return quote(content);
    }
    let known = quote(RegexAst::Or(names.to_vec()));
    RegexAst::And(vec![quote(content), RegexAst::Not(Box::new(known))])
}

pub(crate) struct Lowerer<'c, 'a> {
    c: &'c mut Compiler<'a>,
    lexemes: Vec<Lexeme>,
    lexeme_index: HashMap<String, LexemeId>,
    nts: Vec<Nonterminal>,
    defs: HashMap<DefId, NonterminalId>,
    pending: Vec<(DefId, NonterminalId)>,
    any: Option<NonterminalId>,
    lbrace: LexemeId,
    rbrace: LexemeId,
    lbracket: LexemeId,
    rbracket: LexemeId,
    comma: LexemeId,
    colon: LexemeId,
}

impl<'c, 'a> Lowerer<'c, 'a> {
    pub(crate) fn new(c: &'c mut Compiler<'a>) -> Lowerer<'c, 'a> {
        let ws = match &c.options.whitespace {
            Whitespace::Compact => None,
            Whitespace::Pattern(p) => {
                Some(RegexAst::Repeat(Box::new(RegexAst::Regex(p.clone())), 0, 1))
            }
        };
        let item_sep = RegexAst::Regex(c.options.item_separator.clone());
        let key_sep = RegexAst::Regex(c.options.key_separator.clone());
        let mut l = Lowerer {
            c,
            lexemes: Vec::new(),
            lexeme_index: HashMap::new(),
            nts: Vec::new(),
            defs: HashMap::new(),
            pending: Vec::new(),
            any: None,
            lbrace: LexemeId(0),
            rbrace: LexemeId(0),
            lbracket: LexemeId(0),
            rbracket: LexemeId(0),
            comma: LexemeId(0),
            colon: LexemeId(0),
        };
        let around = |before: bool, core: RegexAst, after: bool| {
            let mut v = Vec::new();
            if before {
                v.extend(ws.clone());
            }
            v.push(core);
            if after {
                v.extend(ws.clone());
            }
            RegexAst::Concat(v)
        };
        l.lbrace = l.lexeme("{", around(false, RegexAst::Literal("{".into()), true));
        l.rbrace = l.lexeme("}", around(true, RegexAst::Literal("}".into()), false));
        l.lbracket = l.lexeme("[", around(false, RegexAst::Literal("[".into()), true));
        l.rbracket = l.lexeme("]", around(true, RegexAst::Literal("]".into()), false));
        l.comma = l.lexeme(",", around(true, item_sep, true));
        l.colon = l.lexeme(":", around(true, key_sep, true));
        l
    }

    fn lexeme(&mut self, name: &str, regex: RegexAst) -> LexemeId {
        // derivre's Debug output is truncated: key on the whole tree.
        let mut key = format!("{name}\u{0}");
        crate::cache::write_key(&regex, &mut key);
        if let Some(&id) = self.lexeme_index.get(&key) {
            return id;
        }
        let id = LexemeId(self.lexemes.len() as u32);
        self.lexemes.push(Lexeme { name: name.to_string(), regex });
        self.lexeme_index.insert(key, id);
        id
    }

    fn new_nt(&mut self, name: String) -> Result<NonterminalId> {
        if self.nts.len() >= self.c.options.limits.max_nonterminals {
            return Err(self.c.err(
                ErrorKind::LimitExceeded,
                "",
                "",
                "too many grammar nonterminals",
            ));
        }
        let id = NonterminalId(self.nts.len() as u32);
        self.nts.push(Nonterminal { name, alternatives: Vec::new() });
        Ok(id)
    }

    fn set_alts(&mut self, nt: NonterminalId, alts: Vec<Vec<Symbol>>) {
        self.nts[nt.0 as usize].alternatives = alts;
    }

    fn alt_nt(&mut self, name: &str, alts: Vec<Vec<Symbol>>) -> Result<NonterminalId> {
        let nt = self.new_nt(name.to_string())?;
        self.set_alts(nt, alts);
        Ok(nt)
    }

    /// A lexeme for a non-empty regex, or `None` if it provably matches nothing.
    fn checked_lexeme(&mut self, name: &str, rx: RegexAst, check: bool) -> Result<Option<Symbol>> {
        if check && self.c.regex_is_empty(&rx)? == Some(true) {
            return Ok(None);
        }
        Ok(Some(Symbol::Lexeme(self.lexeme(name, rx))))
    }

    /// Lowers the whole schema and the definitions it reaches.
    pub(crate) fn run(mut self, root: &Schema) -> Result<Grammar> {
        self.c.location.clear();
        let start_sym = self.lower(root, 0)?;
        while let Some((d, nt)) = self.pending.pop() {
            self.c.location = self.c.def_pointer(d).to_string();
            let s = self.c.resolve_def(d, 0)?;
            let sym = self.lower(&s, 0)?;
            self.set_alts(nt, sym.into_iter().map(|s| vec![s]).collect());
        }
        let Some(start_sym) = start_sym else {
            return Err(self.c.err(
                ErrorKind::Unsatisfiable,
                "",
                "",
                "the schema accepts no value",
            ));
        };
        let start = self.alt_nt("start", vec![vec![start_sym]])?;
        let rules: usize = self.nts.iter().map(|n| n.alternatives.len()).sum();
        if rules > self.c.options.limits.max_rules {
            return Err(self.c.err(ErrorKind::LimitExceeded, "", "", "too many grammar rules"));
        }
        finish(self.lexemes, self.nts, start).ok_or_else(|| {
            self.c.err(ErrorKind::Unsatisfiable, "", "", "the schema accepts no value")
        })
    }

    fn lower(&mut self, s: &Schema, depth: usize) -> Result<Option<Symbol>> {
        self.c.tick("", depth / 4)?;
        Ok(match s {
            Schema::Never => None,
            Schema::Any => Some(Symbol::Nonterminal(self.any()?)),
            Schema::Null => {
                Some(Symbol::Lexeme(self.lexeme("null", RegexAst::Literal("null".into()))))
            }
            Schema::Boolean(b) => {
                let rx = match b {
                    None => RegexAst::Regex("true|false".into()),
                    Some(b) => RegexAst::Literal(b.to_string()),
                };
                Some(Symbol::Lexeme(self.lexeme("boolean", rx)))
            }
            Schema::Number(n) => {
                let (rx, check) = self.number_regex(n);
                self.checked_lexeme(if n.integer { "integer" } else { "number" }, rx, check)?
            }
            Schema::String(st) => {
                let check = !(st.regexes.is_empty()
                    || (st.regexes.len() == 1
                        && matches!(st.regexes[0], RegexAst::Literal(_))
                        && st.min_len == 0
                        && st.max_len.is_none()));
                let content = string_content_regex(st, self.c.options.max_string_length);
                if check && self.c.regex_is_empty(&content)? == Some(true) {
                    return Ok(None);
                }
                Some(Symbol::Lexeme(self.lexeme("string", quote(content))))
            }
            Schema::Array(a) => self.array(a, depth)?,
            Schema::Object(o) => self.object(o, depth)?,
            Schema::AnyOf(bs) => {
                let mut lex = Vec::new();
                let mut alts = Vec::new();
                for b in bs {
                    match self.lower(b, depth + 1)? {
                        None => {}
                        Some(Symbol::Lexeme(l)) => lex.push(l),
                        Some(sym) => alts.push(vec![sym]),
                    }
                }
                if lex.len() == 1 {
                    alts.push(vec![Symbol::Lexeme(lex[0])]);
                } else if lex.len() > 1 {
                    let rx = RegexAst::Or(
                        lex.iter().map(|l| self.lexemes[l.0 as usize].regex.clone()).collect(),
                    );
                    alts.push(vec![Symbol::Lexeme(self.lexeme("scalar", rx))]);
                }
                match alts.len() {
                    0 => None,
                    1 => Some(alts[0][0]),
                    _ => Some(Symbol::Nonterminal(self.alt_nt("anyOf", alts)?)),
                }
            }
            Schema::Ref(d) => {
                if let Some(&nt) = self.defs.get(d) {
                    return Ok(Some(Symbol::Nonterminal(nt)));
                }
                let nt = self.new_nt(format!("def{d}"))?;
                self.defs.insert(*d, nt);
                self.pending.push((*d, nt));
                Some(Symbol::Nonterminal(nt))
            }
        })
    }

    fn any(&mut self) -> Result<NonterminalId> {
        if let Some(nt) = self.any {
            return Ok(nt);
        }
        let nt = self.new_nt("value".to_string())?;
        self.any = Some(nt);
        let sym = self.lower(&Schema::AnyOf(Schema::typed_any()), 1)?;
        self.set_alts(nt, sym.into_iter().map(|s| vec![s]).collect());
        Ok(nt)
    }

    fn number_regex(&self, n: &NumberSchema) -> (RegexAst, bool) {
        let bounded = n.min.is_some()
            || n.max.is_some()
            || !n.multiple_of.is_empty()
            || !n.excluded.is_empty()
            || !n.not_multiple_of.is_empty()
            || n.non_integer;
        let form = if n.non_integer {
            r"-?(0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*"
        } else if n.integer {
            // draft-04 counts 1.0 as a non-integer; later drafts as an integer.
            if self.c.options.integer_zero_fraction && self.c.index.draft >= 6 {
                r"-?(0|[1-9][0-9]*)(\.0+)?"
            } else {
                r"-?(0|[1-9][0-9]*)"
            }
        } else if bounded {
            number::PLAIN_NUMBER
        } else {
            number::JSON_NUMBER
        };
        let mut parts = vec![RegexAst::Regex(form.to_string())];
        if let Some(b) = &n.min {
            parts.push(number::ge(b));
        }
        if let Some(b) = &n.max {
            parts.push(number::le(b));
        }
        for d in &n.multiple_of {
            if let Some(rx) = number::multiple_of(d) {
                parts.push(rx);
            } else {
                parts.push(RegexAst::NoMatch);
            }
        }
        for d in &n.not_multiple_of {
            match number::multiple_of(d) {
                Some(rx) => parts.push(RegexAst::Not(Box::new(rx))),
                None => parts.push(RegexAst::NoMatch),
            }
        }
        for v in &n.excluded {
            parts.push(RegexAst::Not(Box::new(number::equal(v))));
        }
        let check = parts.len() > 2 || (n.integer && bounded);
        if parts.len() == 1 {
            (parts.pop().unwrap_or(RegexAst::NoMatch), false)
        } else {
            (RegexAst::And(parts), check)
        }
    }

    fn array(&mut self, a: &ArraySchema, depth: usize) -> Result<Option<Symbol>> {
        let mut max = a.max;
        if a.unique && max.is_none_or(|m| m > 1) {
            if self.c.options.lenient {
                self.c.warnings.push("uniqueItems ignored".to_string());
            } else {
                return Err(self.c.err(
                    ErrorKind::Inexpressible,
                    "uniqueItems",
                    "",
                    "uniqueItems over more than one item cannot be expressed",
                ));
            }
        }
        let k = a.prefix.len();
        let mut prefix = Vec::with_capacity(k);
        for p in &a.prefix {
            let sym = self.lower(p, depth + 1)?;
            if sym.is_none() {
                max = Some(max.map_or(prefix.len(), |m| m.min(prefix.len())));
                break;
            }
            prefix.push(sym);
        }
        let items = if max.is_some_and(|m| m <= prefix.len()) {
            None
        } else {
            self.lower(&a.items, depth + 1)?
        };
        if items.is_none() {
            max = Some(max.map_or(prefix.len(), |m| m.min(prefix.len())));
        }
        if max.is_some_and(|m| m < a.min) {
            return Ok(None);
        }
        let k = prefix.len();
        let top = max.unwrap_or(k.max(a.min).max(1));
        if a.contains.is_empty() && a.contains_at_most.is_empty() {
            let mut ids = Vec::with_capacity(top + 1);
            for _ in 0..=top {
                ids.push(self.new_nt("array-rest".to_string())?);
            }
            for i in 0..=top {
                let mut alts = Vec::new();
                if i >= a.min {
                    alts.push(vec![Symbol::Lexeme(self.rbracket)]);
                }
                let el = if i < k { prefix[i] } else { items };
                let can_add = max.is_none_or(|m| i < m);
                if let (Some(el), true) = (el, can_add) {
                    let next = if max.is_some() { i + 1 } else { (i + 1).min(top) };
                    let mut alt = Vec::new();
                    if i > 0 {
                        alt.push(Symbol::Lexeme(self.comma));
                    }
                    alt.push(el);
                    alt.push(Symbol::Nonterminal(ids[next]));
                    alts.push(alt);
                }
                self.set_alts(ids[i], alts);
            }
            let nt = self.alt_nt(
                "array",
                vec![vec![Symbol::Lexeme(self.lbracket), Symbol::Nonterminal(ids[0])]],
            )?;
            return Ok(Some(Symbol::Nonterminal(nt)));
        }
        self.array_contains(a, &prefix, items, max, top, depth)
    }

    /// Arrays with `contains`: the state also counts, per constraint, the
    /// matching items seen (saturating at its minimum; an upper bound
    /// `maxContains` is a constraint of its own, whose count stops at the
    /// bound and whose non-matching items are written as its complement).
    fn array_contains(
        &mut self,
        a: &ArraySchema,
        prefix: &[Option<Symbol>],
        items: Option<Symbol>,
        max: Option<usize>,
        top: usize,
        depth: usize,
    ) -> Result<Option<Symbol>> {
        // (schema, its complement when bounded above, minimum, cap): a count
        // saturates at `cap`, which a bounded constraint never passes.
        let cons: Vec<(&Schema, Option<&Schema>, usize, usize)> = a
            .contains
            .iter()
            .map(|(s, n)| (s, None, *n, *n))
            .chain(a.contains_at_most.iter().map(|(s, not_s, m)| (s, Some(not_s), 0, *m)))
            .collect();
        let nc = cons.len();
        let states: usize = cons.iter().map(|c| c.3 + 1).product();
        if nc > 3 || states > 64 {
            return Err(self.c.err(
                ErrorKind::LimitExceeded,
                "contains",
                "",
                "too many or too large contains/minContains constraints on one array",
            ));
        }
        let k = prefix.len();
        // Element options per position class (prefix index, or `k` for items):
        // (value symbol, subset of constraints it satisfies).
        let mut opts: Vec<Vec<(Symbol, u32)>> = Vec::with_capacity(k + 1);
        for i in 0..=k {
            let base = if i < k { a.prefix[i].clone() } else { (*a.items).clone() };
            let plain = if i < k { prefix[i] } else { items };
            let mut o = Vec::new();
            if let Some(p) = plain {
                let bounded = cons.iter().any(|c| c.1.is_some());
                if !bounded {
                    o.push((p, 0u32));
                }
                for mask in u32::from(!bounded)..(1 << nc) {
                    let mut v = base.clone();
                    for (t, (s, not_s, _, _)) in cons.iter().enumerate() {
                        if mask & (1 << t) != 0 {
                            v = self.c.intersect(v, (*s).clone(), depth + 1)?;
                        } else if let Some(not_s) = not_s {
                            v = self.c.intersect(v, (*not_s).clone(), depth + 1)?;
                        }
                    }
                    if let Some(sym) = self.lower(&v, depth + 1)? {
                        o.push((sym, mask));
                    }
                }
            }
            opts.push(o);
        }
        let bump = |counts: &[usize], mask: u32| -> Vec<usize> {
            counts
                .iter()
                .enumerate()
                .map(|(t, &c)| if mask & (1 << t) != 0 { (c + 1).min(cons[t].3) } else { c })
                .collect()
        };
        // An item matching a bounded constraint whose count is at its bound
        // would exceed it.
        let exceeds = |counts: &[usize], mask: u32| {
            cons.iter()
                .enumerate()
                .any(|(t, c)| c.1.is_some() && mask & (1 << t) != 0 && counts[t] >= c.3)
        };
        type Key = (usize, Vec<usize>);
        let mut ids: HashMap<Key, NonterminalId> = HashMap::new();
        let mut queue: VecDeque<Key> = VecDeque::new();
        let mut get =
            |l: &mut Self, key: Key, queue: &mut VecDeque<Key>| -> Result<NonterminalId> {
                if let Some(&id) = ids.get(&key) {
                    return Ok(id);
                }
                let id = l.new_nt("array-rest".to_string())?;
                ids.insert(key.clone(), id);
                queue.push_back(key);
                Ok(id)
            };
        let first = get(self, (0, vec![0; nc]), &mut queue)?;
        while let Some((i, counts)) = queue.pop_front() {
            let id = get(self, (i, counts.clone()), &mut queue)?;
            let mut alts = Vec::new();
            let done = counts.iter().zip(&cons).all(|(c, con)| *c >= con.2);
            if i >= a.min && done {
                alts.push(vec![Symbol::Lexeme(self.rbracket)]);
            }
            if max.is_none_or(|m| i < m) {
                let next_i = if max.is_some() { i + 1 } else { (i + 1).min(top.max(k)) };
                for &(sym, mask) in &opts[i.min(k)] {
                    if exceeds(&counts, mask) {
                        continue;
                    }
                    let next = get(self, (next_i, bump(&counts, mask)), &mut queue)?;
                    let mut alt = Vec::new();
                    if i > 0 {
                        alt.push(Symbol::Lexeme(self.comma));
                    }
                    alt.push(sym);
                    alt.push(Symbol::Nonterminal(next));
                    alts.push(alt);
                }
            }
            self.set_alts(id, alts);
        }
        let nt = self.alt_nt(
            "array",
            vec![vec![Symbol::Lexeme(self.lbracket), Symbol::Nonterminal(first)]],
        )?;
        Ok(Some(Symbol::Nonterminal(nt)))
    }

    /// The ways to emit one member: (value symbol, witness bits it sets), for
    /// a key matching `key_rx` (or named `name`) whose plain schema is `s`.
    fn member_options(
        &mut self,
        o: &ObjectSchema,
        s: &Schema,
        name: Option<&str>,
        depth: usize,
    ) -> Result<Vec<(u32, Schema)>> {
        let mut out = vec![(0u32, s.clone())];
        let n = o.witnesses.len();
        for mask in 1u32..(1 << n) {
            let mut v = s.clone();
            let mut ok = true;
            for (w, (rx, ws)) in o.witnesses.iter().enumerate() {
                if mask & (1 << w) == 0 {
                    continue;
                }
                if let Some(name) = name {
                    if !self.c.regex_matches(rx, name)? {
                        ok = false;
                        break;
                    }
                }
                v = self.c.intersect(v, ws.clone(), depth + 1)?;
            }
            if ok && !v.is_never() {
                out.push((mask, v));
            }
        }
        Ok(out)
    }

    fn object(&mut self, o: &ObjectSchema, depth: usize) -> Result<Option<Symbol>> {
        let nw = o.witnesses.len();
        if nw > 3 {
            return Err(self.c.err(
                ErrorKind::LimitExceeded,
                "",
                "",
                "more than 3 negated member constraints on one object",
            ));
        }
        let full = (1u32 << nw) - 1;
        // (key lexeme, [(value symbol, witness bits)], required)
        type Opts = Vec<(Symbol, u32)>;
        let mut props: Vec<(String, Opts, bool)> = Vec::new();
        let mut named: Vec<(String, Schema, bool)> = Vec::new();
        for (k, s) in &o.properties {
            named.push((k.clone(), s.clone(), o.required.contains(k)));
        }
        for r in &o.required {
            if !named.iter().any(|(k, _, _)| k == r) {
                let s = self.c.key_schema(o, r)?;
                named.push((r.clone(), s, true));
            }
        }
        for (k, s, req) in &named {
            let mut opts = Vec::new();
            for (bits, v) in self.member_options(o, s, Some(k), depth)? {
                if let Some(sym) = self.lower(&v, depth + 1)? {
                    opts.push((sym, bits));
                }
            }
            if opts.is_empty() && *req {
                return Ok(None);
            }
            props.push((k.clone(), opts, *req));
        }
        let names: Vec<RegexAst> =
            named.iter().map(|(k, _, _)| RegexAst::Literal(k.clone())).collect();
        // (key lexeme, value symbol, witness bits)
        let mut regions: Vec<(LexemeId, Symbol, u32)> = Vec::new();
        for (rx, s) in &o.regions {
            let base_rx = if names.is_empty() {
                rx.clone()
            } else {
                RegexAst::And(vec![
                    rx.clone(),
                    RegexAst::Not(Box::new(RegexAst::Or(names.clone()))),
                ])
            };
            for (bits, v) in self.member_options(o, s, None, depth)? {
                let mut parts = vec![base_rx.clone()];
                for (w, (wrx, _)) in o.witnesses.iter().enumerate() {
                    if bits & (1 << w) != 0 {
                        parts.push(wrx.clone());
                    }
                }
                let mut content = parts.clone();
                content[0] = rx.clone();
                let key_rx = if parts.len() == 1 { base_rx.clone() } else { RegexAst::And(parts) };
                let is_any = matches!(&key_rx, RegexAst::Regex(r) if r == "(?s:.*)");
                if !is_any && self.c.regex_is_empty(&key_rx)? == Some(true) {
                    continue;
                }
                let Some(vs) = self.lower(&v, depth + 1)? else { continue };
                let content = if content.len() == 1 { rx.clone() } else { RegexAst::And(content) };
                let key = self.lexeme("key", quote_except(content, &names));
                regions.push((key, vs, bits));
            }
        }
        let n = props.len();
        let cap = o.max.unwrap_or(o.min.max(1));
        let inc = |c: usize| if o.max.is_some() { c + 1 } else { (c + 1).min(cap) };
        type Key = (usize, usize, u32);
        let mut ids: HashMap<Key, NonterminalId> = HashMap::new();
        let mut queue: VecDeque<Key> = VecDeque::new();
        let mut get = |l: &mut Self, k: Key, queue: &mut VecDeque<Key>| -> Result<NonterminalId> {
            if let Some(&id) = ids.get(&k) {
                return Ok(id);
            }
            let id = l.new_nt("object-rest".to_string())?;
            ids.insert(k, id);
            queue.push_back(k);
            Ok(id)
        };
        let first = get(self, (0, 0, 0), &mut queue)?;
        let mut keys = Vec::with_capacity(n);
        for (k, _, _) in &props {
            keys.push(self.lexeme("key", quote(RegexAst::Literal(k.clone()))));
        }
        // In any order, the first component of a key is the set of listed
        // names already written (bit `j` for `props[j]`) instead of the
        // index of the next one in schema order.
        let any_order = match self.c.options.property_order {
            PropertyOrder::Any { max_listed } => n <= max_listed.min(16),
            _ => false,
        };
        // The set of required names, as bits (only in any order, where
        // `n <= 16`; in schema order `n` is unbounded).
        let required: usize = if any_order {
            props.iter().enumerate().filter(|(_, p)| p.2).map(|(j, _)| 1 << j).sum()
        } else {
            0
        };
        while let Some((i, c, mask)) = queue.pop_front() {
            let id = get(self, (i, c, mask), &mut queue)?;
            let can_add = o.max.is_none_or(|m| c < m);
            let mut alts = Vec::new();
            let member = |l: &Self, key: LexemeId, value: Symbol, next: NonterminalId| {
                let mut alt = Vec::with_capacity(5);
                if c > 0 {
                    alt.push(Symbol::Lexeme(l.comma));
                }
                alt.extend([
                    Symbol::Lexeme(key),
                    Symbol::Lexeme(l.colon),
                    value,
                    Symbol::Nonterminal(next),
                ]);
                alt
            };
            if any_order {
                let used = i;
                if can_add {
                    for (j, (_, opts, _)) in props.iter().enumerate() {
                        if used & (1 << j) != 0 {
                            continue;
                        }
                        for &(sym, bits) in opts {
                            let next = get(self, (used | 1 << j, inc(c), mask | bits), &mut queue)?;
                            alts.push(member(self, keys[j], sym, next));
                        }
                    }
                    for &(key, vs, bits) in &regions {
                        let next = get(self, (used, inc(c), mask | bits), &mut queue)?;
                        alts.push(member(self, key, vs, next));
                    }
                }
                if required & !used == 0 && c >= o.min && mask == full {
                    alts.push(vec![Symbol::Lexeme(self.rbrace)]);
                }
            } else if i < n {
                if can_add {
                    for &(sym, bits) in &props[i].1 {
                        let next = get(self, (i + 1, inc(c), mask | bits), &mut queue)?;
                        alts.push(member(self, keys[i], sym, next));
                    }
                }
                if !props[i].2 {
                    alts.push(vec![Symbol::Nonterminal(get(self, (i + 1, c, mask), &mut queue)?)]);
                }
            } else {
                if c >= o.min && mask == full {
                    alts.push(vec![Symbol::Lexeme(self.rbrace)]);
                }
                if can_add {
                    for &(key, vs, bits) in &regions {
                        let next = get(self, (n, inc(c), mask | bits), &mut queue)?;
                        alts.push(member(self, key, vs, next));
                    }
                }
            }
            self.set_alts(id, alts);
        }
        let nt = self.alt_nt(
            "object",
            vec![vec![Symbol::Lexeme(self.lbrace), Symbol::Nonterminal(first)]],
        )?;
        Ok(Some(Symbol::Nonterminal(nt)))
    }
}

/// Keeps the productive alternatives and the nonterminals reachable from the
/// start; `None` if the start is not productive.
fn finish(lexemes: Vec<Lexeme>, nts: Vec<Nonterminal>, start: NonterminalId) -> Option<Grammar> {
    let n = nts.len();
    let mut productive = vec![false; n];
    let alt_ok = |alt: &Vec<Symbol>, productive: &[bool]| {
        alt.iter().all(|s| match s {
            Symbol::Lexeme(_) => true,
            Symbol::Nonterminal(x) => productive[x.0 as usize],
        })
    };
    loop {
        let mut changed = false;
        for (i, nt) in nts.iter().enumerate() {
            if !productive[i] && nt.alternatives.iter().any(|a| alt_ok(a, &productive)) {
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
    let mut new_id: Vec<Option<u32>> = vec![None; n];
    let mut order = vec![start.0 as usize];
    new_id[start.0 as usize] = Some(0);
    let mut k = 0;
    while k < order.len() {
        let i = order[k];
        k += 1;
        for alt in &nts[i].alternatives {
            if !alt_ok(alt, &productive) {
                continue;
            }
            for s in alt {
                if let Symbol::Nonterminal(x) = s {
                    let x = x.0 as usize;
                    if new_id[x].is_none() {
                        new_id[x] = Some(order.len() as u32);
                        order.push(x);
                    }
                }
            }
        }
    }
    let mut out = Vec::with_capacity(order.len());
    for &i in &order {
        let alternatives = nts[i]
            .alternatives
            .iter()
            .filter(|a| alt_ok(a, &productive))
            .map(|a| {
                a.iter()
                    .map(|s| match s {
                        Symbol::Nonterminal(x) => {
                            Symbol::Nonterminal(NonterminalId(new_id[x.0 as usize].unwrap_or(0)))
                        }
                        l => *l,
                    })
                    .collect()
            })
            .collect();
        out.push(Nonterminal { name: nts[i].name.clone(), alternatives });
    }
    Some(Grammar { lexemes, nonterminals: out, start: NonterminalId(0) })
}
