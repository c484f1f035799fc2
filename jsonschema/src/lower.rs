//! Lowering of normalized schemas to the grammar: scalars as lexemes,
//! arrays and objects as counting rules or permutation phrases
//! (`array.rs`, `object.rs`), then the productive, reachable part
//! (`finish.rs`).

use std::collections::HashMap;

use derivre::{JsonQuoteOptions, RegexAst};

use crate::build::Compiler;
use crate::error::{ErrorKind, Result};
use crate::grammar::{Grammar, Lexeme, LexemeId, Nonterminal, NonterminalId, Permutation, Symbol};
use crate::ir::{DefId, NumberSchema, Schema, StringSchema};
use crate::number;
use crate::options::Whitespace;

pub(crate) mod array;
mod finish;
mod object;
use finish::finish;

/// The regex (over decoded characters) of a string schema's contents.
/// A repetition count for derivre, where `u32::MAX` means unbounded: counts
/// stop one below it.
pub(crate) fn repeat_count(n: usize) -> u32 {
    n.min(u32::MAX as usize - 1) as u32
}

/// From `lo` to `hi` characters of any kind (`None`: no upper bound).
pub(crate) fn any_chars(lo: usize, hi: Option<usize>) -> RegexAst {
    let any = RegexAst::Regex("(?s:.)".to_string());
    RegexAst::Repeat(Box::new(any), repeat_count(lo), hi.map_or(u32::MAX, repeat_count))
}

pub(crate) fn string_content_regex(s: &StringSchema, cap: Option<usize>) -> RegexAst {
    let mut parts = s.regexes.clone();
    let max = s.max_len.or(cap);
    if s.min_len > 0 || max.is_some() {
        parts.push(any_chars(s.min_len, max));
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

/// Whether the members of a phrase must be distinct JSON values
/// (`uniqueItems`), and how the parser keeps masks exact then.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Distinct {
    No,
    /// Every prefix of a member has infinitely many completions.
    Free,
    /// The parser searches for a completion (`lower/array.rs`).
    Searched,
    /// As `Searched`, with the members in the order of their names
    /// (`prefixItems`; [`earley::Permutation::ordered`]).
    SearchedInOrder,
}

/// Numbers inside the items of a searched distinct array: one spelling
/// per value (no exponent, no trailing zero in the fraction), so that a
/// completion search meets finitely many spellings of each value.
const CANONICAL_NUMBER: &str = r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?";

pub(crate) struct Lowerer<'c, 'a> {
    c: &'c mut Compiler<'a>,
    lexemes: Vec<Lexeme>,
    lexeme_index: HashMap<String, LexemeId>,
    nts: Vec<Nonterminal>,
    /// Per definition and [`canonical`](Self::canonical) mode: its nonterminal.
    defs: HashMap<(DefId, bool), NonterminalId>,
    pending: Vec<(DefId, NonterminalId, bool)>,
    any: [Option<NonterminalId>; 2],
    /// Lowering the items of a searched distinct array: numbers are
    /// written in [`CANONICAL_NUMBER`] form (a documented subset).
    canonical: bool,
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
            any: [None, None],
            canonical: false,
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
        self.nts.push(Nonterminal { name, alternatives: Vec::new(), permutation: None });
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

    /// `open P close` with `P` a permutation phrase of `members`,
    /// `,`-separated, with `min` to `max` members (`counts`, clamped to
    /// `u32`): an object in any order, or an array of distinct values.
    fn bracketed_phrase(
        &mut self,
        name: &str,
        (open, close): (LexemeId, LexemeId),
        members: Vec<(Symbol, Option<u32>)>,
        required: Vec<u32>,
        (min, max): (usize, Option<usize>),
        distinct: Distinct,
    ) -> Result<Symbol> {
        let to_u32 = |x: usize| x.min(u32::MAX as usize) as u32;
        let phrase = self.new_nt(format!("{name}-members"))?;
        self.nts[phrase.0 as usize].permutation = Some(Permutation {
            members,
            required,
            separator: Some(Symbol::Lexeme(self.comma)),
            min: to_u32(min),
            max: max.map(to_u32),
            distinct: distinct != Distinct::No,
            search: matches!(distinct, Distinct::Searched | Distinct::SearchedInOrder),
            ordered: distinct == Distinct::SearchedInOrder,
        });
        let rhs = vec![Symbol::Lexeme(open), Symbol::Nonterminal(phrase), Symbol::Lexeme(close)];
        Ok(Symbol::Nonterminal(self.alt_nt(name, vec![rhs])?))
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
        while let Some((d, nt, canonical)) = self.pending.pop() {
            self.c.location = self.c.def_pointer(d).to_string();
            let s = self.c.resolve_def(d, 0)?;
            self.canonical = canonical;
            let sym = self.lower(&s, 0)?;
            self.set_alts(nt, sym.into_iter().map(|s| vec![s]).collect());
        }
        self.canonical = false;
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
                let (mut rx, mut check) = self.number_regex(n);
                if self.canonical {
                    let form = RegexAst::Regex(CANONICAL_NUMBER.into());
                    rx = RegexAst::And(vec![rx, form]);
                    check = true;
                }
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
                let key = (*d, self.canonical);
                if let Some(&nt) = self.defs.get(&key) {
                    return Ok(Some(Symbol::Nonterminal(nt)));
                }
                let nt = self.new_nt(format!("def{d}"))?;
                self.defs.insert(key, nt);
                self.pending.push((*d, nt, self.canonical));
                Some(Symbol::Nonterminal(nt))
            }
        })
    }

    fn any(&mut self) -> Result<NonterminalId> {
        let mode = usize::from(self.canonical);
        if let Some(nt) = self.any[mode] {
            return Ok(nt);
        }
        let nt = self.new_nt("value".to_string())?;
        self.any[mode] = Some(nt);
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
        // A single value (`const`, an `enum` member) is not the model's
        // choice: never capped.
        let single = matches!((&n.min, &n.max), (Some(a), Some(b))
            if a.value == b.value && !a.exclusive && !b.exclusive);
        let capped = self.c.options.max_number_length.filter(|_| !single);
        if let Some(cap) = capped {
            // Every character of a number is ASCII: a byte count is a
            // character count.
            let any = RegexAst::Regex("[-+.eE0-9]".to_string());
            parts.push(RegexAst::Repeat(Box::new(any), 0, repeat_count(cap)));
        }
        // A cap can empty a bounded set (`minimum: 1e30` under 20
        // characters): checked like the other intersections.
        let check = parts.len() > 2 || (n.integer && bounded) || (capped.is_some() && bounded);
        if parts.len() == 1 {
            (parts.pop().unwrap_or(RegexAst::NoMatch), false)
        } else {
            (RegexAst::And(parts), check)
        }
    }
}
