//! ECMA-262 `pattern` regexes translated to derivre regexes.
//!
//! JSON Schema patterns are ECMA-262 regexes searched anywhere in the string
//! (unanchored). The translation makes the search explicit (`.*` on each side
//! of an alternative unless it is anchored with `^`/`$`) and spells out the
//! classes whose meaning differs between the dialects: `\d`, `\w`, `\s` and
//! `.` are ASCII or ECMA-specific sets in ECMA-262 but Unicode-aware in
//! regex-syntax (`escape.rs`).
//!
//! Look-aheads are regular: `(?=L)` at a point of the pattern says that
//! the rest of the string starts with a match of `L`, so `P(?=L)R` is
//! `P·(L·Σ* ∩ R)` and `P(?!L)R` is `P·(¬(L·Σ*) ∩ R)`, where `R` is the
//! rest of the pattern up to the end of the string. Like anchors, a group
//! holding a look-ahead is distributed into the alternatives it expands to
//! (`(a(?!b)|c)d` is `a(?!b)d | cd`), so that each look-ahead sees the whole
//! rest of its alternative; a quantified group holding one, look-behinds,
//! backreferences and word boundaries are errors naming the construct.
//!
//! Syntax: the early errors of the ECMA-262 grammar are errors (`{2,1}`,
//! `[z-a]`, a quantifier with nothing to repeat, unbalanced groups and
//! classes, invalid or duplicate group names, an unknown `(?` group), with
//! the meanings of Unicode mode where the modes differ (`\p{..}`,
//! `\u{..}`); what Annex B gives a plain meaning (a `{` that starts no
//! quantifier, identity escapes of punctuation, `[\w-.]`) is read with it.

use derivre::RegexAst;

mod escape;
use escape::{Escape, push_literal};

/// Translates `pattern` into a regex matching exactly the strings in which
/// an ECMA-262 search for `pattern` succeeds.
pub(crate) fn translate(pattern: &str) -> Result<RegexAst, String> {
    let mut p = Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        names: Vec::new(),
        path: Vec::new(),
        disjunctions: 0,
    };
    let alts = p.alternation(0)?;
    if p.pos != p.chars.len() {
        return Err(format!("unbalanced `)` at offset {}", p.pos));
    }
    p.check_names()?;
    if alts.is_empty() {
        return Err("the pattern can never match (misplaced anchors)".to_string());
    }
    if alts.iter().all(|a| a.segs.iter().all(|s| matches!(s, Seg::Text(_)))) {
        // Without look-aheads the whole pattern is one regex text.
        let texts: Vec<String> = alts.iter().map(Alt::search_text).collect();
        return Ok(RegexAst::Regex(texts.join("|")));
    }
    let mut out: Vec<RegexAst> = alts.iter().map(|a| a.to_ast(true)).collect();
    Ok(if out.len() == 1 { out.pop().unwrap_or(RegexAst::NoMatch) } else { RegexAst::Or(out) })
}

/// The most anchored variants one pattern may expand to.
const MAX_ANCHOR_SPLITS: usize = 256;

/// The regex of any rest of the string.
const ANY: &str = "(?s:.*)";

/// A parsed atom: translated text, a group's variants, or a look-ahead.
enum Atom {
    Text(String),
    Group(Vec<Alt>),
    Look { negated: bool, alts: Vec<Alt> },
}

/// A piece of an alternative: regex text, or a look-ahead at this point.
#[derive(Clone)]
enum Seg {
    Text(String),
    Look { negated: bool, alts: Vec<Alt> },
}

/// One alternative of a pattern (or of a look-ahead's contents): anchored
/// at the start of the string, at its end, and its pieces in order.
#[derive(Clone)]
struct Alt {
    start: bool,
    end: bool,
    segs: Vec<Seg>,
}

impl Alt {
    fn empty() -> Alt {
        Alt { start: false, end: false, segs: Vec::new() }
    }

    /// Whether some piece consumes text (so `^` can no longer match).
    fn consumes(&self) -> bool {
        self.segs.iter().any(|s| matches!(s, Seg::Text(_)))
    }

    fn has_look(&self) -> bool {
        self.segs.iter().any(|s| matches!(s, Seg::Look { .. }))
    }

    fn push_text(&mut self, t: &str) {
        match self.segs.last_mut() {
            Some(Seg::Text(s)) => s.push_str(t),
            _ => self.segs.push(Seg::Text(t.to_string())),
        }
    }

    /// The text of an alternative without look-aheads.
    fn text(&self) -> String {
        let mut s = String::new();
        for seg in &self.segs {
            if let Seg::Text(t) = seg {
                s.push_str(t);
            }
        }
        s
    }

    /// The search regex text of an alternative without look-aheads.
    fn search_text(&self) -> String {
        let mut s = String::new();
        if !self.start {
            s.push_str(ANY);
        }
        s.push_str("(?:");
        s.push_str(&self.text());
        s.push(')');
        if !self.end {
            s.push_str(ANY);
        }
        s
    }

    /// The strings this alternative matches from their first character
    /// (`search`: from any position, unless anchored with `^`) up to the
    /// end of the string (`.*` after it unless anchored with `$`).
    fn to_ast(&self, search: bool) -> RegexAst {
        let any = || RegexAst::Regex(ANY.to_string());
        let mut rest = if self.end { RegexAst::EmptyString } else { any() };
        for seg in self.segs.iter().rev() {
            rest = match seg {
                Seg::Text(t) => RegexAst::Concat(vec![RegexAst::Regex(format!("(?:{t})")), rest]),
                Seg::Look { negated, alts } => {
                    let inner: Vec<RegexAst> = alts.iter().map(|a| a.to_ast(false)).collect();
                    let look = RegexAst::Or(inner);
                    let look = if *negated { RegexAst::Not(Box::new(look)) } else { look };
                    RegexAst::And(vec![look, rest])
                }
            };
        }
        if search && !self.start { RegexAst::Concat(vec![any(), rest]) } else { rest }
    }
}

pub(crate) struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Each group name with the path (disjunction, alternative index) of
    /// where it stands, for the duplicate-name early error.
    names: Vec<(String, Vec<(usize, usize)>)>,
    /// The disjunctions (and their alternative) enclosing the position.
    path: Vec<(usize, usize)>,
    /// Disjunctions seen so far (their ids).
    disjunctions: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self, depth: usize) -> Result<Vec<Alt>, String> {
        if depth > 64 {
            return Err("groups nested too deeply".to_string());
        }
        self.path.push((self.disjunctions, 0));
        self.disjunctions += 1;
        let mut alts = self.sequence(depth)?;
        while self.eat('|') {
            if let Some(top) = self.path.last_mut() {
                top.1 += 1;
            }
            alts.extend(self.sequence(depth)?);
        }
        self.path.pop();
        if alts.len() > MAX_ANCHOR_SPLITS {
            return Err("too many anchored alternatives".to_string());
        }
        Ok(alts)
    }

    /// One alternative, as the anchored variants it expands to.
    ///
    /// Anchors and look-aheads inside groups are hoisted: `(^a|b)c` becomes
    /// the variants `^ac` and `bc`. A variant where `^` follows consumed
    /// text, or text follows `$`, can never match (no multiline flag) and
    /// is dropped.
    fn sequence(&mut self, depth: usize) -> Result<Vec<Alt>, String> {
        let mut partials = vec![Alt::empty()];
        loop {
            match self.peek() {
                None | Some('|') | Some(')') => break,
                Some('^') => {
                    self.pos += 1;
                    partials.retain(|p| !p.consumes());
                    for p in &mut partials {
                        p.start = true;
                    }
                }
                Some('$') => {
                    self.pos += 1;
                    for p in &mut partials {
                        p.end = true;
                    }
                }
                Some(_) => {
                    let atom = self.atom(depth)?;
                    let (quant, min) = self.quantifier()?;
                    match atom {
                        Atom::Text(t) => {
                            partials.retain(|p| !p.end);
                            for p in &mut partials {
                                p.push_text(&t);
                                p.push_text(&quant);
                            }
                        }
                        // Annex B lets a look-ahead be quantified: optional
                        // when it may repeat zero times, plain otherwise.
                        Atom::Look { .. } if min == Some(0) => {}
                        Atom::Look { negated, alts } => {
                            for p in &mut partials {
                                p.segs.push(Seg::Look { negated, alts: alts.clone() });
                            }
                        }
                        Atom::Group(inner) => {
                            let hoist = inner.iter().any(|a| a.start || a.end || a.has_look());
                            if !hoist {
                                let bodies: Vec<String> = inner.iter().map(Alt::text).collect();
                                let t = format!("(?:{}){quant}", bodies.join("|"));
                                partials.retain(|p| !p.end);
                                for p in &mut partials {
                                    p.push_text(&t);
                                }
                                continue;
                            }
                            if !quant.is_empty() {
                                let what = if inner.iter().any(Alt::has_look) {
                                    "a look-ahead"
                                } else {
                                    "`^` or `$`"
                                };
                                return Err(format!(
                                    "a quantified group containing {what} is not supported"
                                ));
                            }
                            partials = Parser::hoist(&partials, &inner)?;
                        }
                    }
                }
            }
        }
        Ok(partials)
    }

    /// The variants of `partials` followed by one of a group's variants.
    fn hoist(partials: &[Alt], inner: &[Alt]) -> Result<Vec<Alt>, String> {
        let mut next = Vec::new();
        for p in partials {
            for g in inner {
                if (g.start && p.consumes()) || (p.end && g.consumes()) {
                    continue;
                }
                let mut alt = Alt { start: p.start || g.start, end: p.end || g.end, ..p.clone() };
                for seg in &g.segs {
                    match seg {
                        Seg::Text(t) => alt.push_text(&format!("(?:{t})")),
                        look => alt.segs.push(look.clone()),
                    }
                }
                if g.segs.is_empty() {
                    alt.push_text("(?:)");
                }
                next.push(alt);
            }
            if next.len() > MAX_ANCHOR_SPLITS {
                return Err("too many anchored alternatives".to_string());
            }
        }
        Ok(next)
    }

    /// Parses a quantifier if one follows: its regex-syntax text and its
    /// minimum count (`None` when there is no quantifier).
    fn quantifier(&mut self) -> Result<(String, Option<u64>), String> {
        let (q, min) = match self.peek() {
            Some(c @ ('*' | '+' | '?')) => {
                self.pos += 1;
                (c.to_string(), Some(u64::from(c == '+')))
            }
            Some('{') => match self.braces()? {
                Some((text, len, min)) => {
                    self.pos += len;
                    (text, Some(min))
                }
                None => return Ok((String::new(), None)),
            },
            _ => return Ok((String::new(), None)),
        };
        // A lazy quantifier matches the same set of whole strings.
        self.eat('?');
        if matches!(self.peek(), Some('*' | '+' | '?')) || self.braces()?.is_some() {
            return Err("quantifier follows a quantifier".to_string());
        }
        Ok((q, min))
    }

    /// `{n}`, `{n,}`, `{n,m}` at the current position: text, length and
    /// `n`; `None` when the text there is not a quantifier (Annex B reads
    /// such a `{` as itself); an error when `m < n` (an early error).
    fn braces(&self) -> Result<Option<(String, usize, u64)>, String> {
        if self.peek() != Some('{') {
            return Ok(None);
        }
        let mut i = self.pos + 1;
        let digits = |i: &mut usize| {
            let start = *i;
            while self.chars.get(*i).is_some_and(char::is_ascii_digit) {
                *i += 1;
            }
            self.chars[start..*i].iter().collect::<String>()
        };
        let n = digits(&mut i);
        if n.is_empty() {
            return Ok(None);
        }
        let mut m = None;
        if self.chars.get(i) == Some(&',') {
            i += 1;
            m = Some(digits(&mut i));
        }
        if self.chars.get(i) != Some(&'}') {
            return Ok(None);
        }
        let count =
            |s: &str| s.parse::<u64>().map_err(|_| format!("repetition count {s} is too large"));
        let lo = count(&n)?;
        let text = match &m {
            None => format!("{{{lo}}}"),
            Some(m) if m.is_empty() => format!("{{{lo},}}"),
            Some(m) => {
                let hi = count(m)?;
                if hi < lo {
                    return Err(format!("numbers out of order in `{{{n},{m}}}`"));
                }
                format!("{{{lo},{hi}}}")
            }
        };
        Ok(Some((text, i + 1 - self.pos, lo)))
    }

    fn atom(&mut self, depth: usize) -> Result<Atom, String> {
        let c = self.peek().ok_or("unexpected end")?;
        self.pos += 1;
        match c {
            '(' => self.group(depth),
            '[' => self.class().map(Atom::Text),
            '.' => Ok(Atom::Text(r"[^\n\r\x{2028}\x{2029}]".to_string())),
            '\\' => match self.escape(false)? {
                Escape::Char(c) => {
                    let mut s = String::new();
                    push_literal(&mut s, c, false);
                    Ok(Atom::Text(s))
                }
                Escape::Class(set, negated) => {
                    Ok(Atom::Text(format!("[{}{}]", if negated { "^" } else { "" }, set)))
                }
                Escape::Raw(s) => Ok(Atom::Text(s)),
            },
            '*' | '+' | '?' => Err(format!("nothing to repeat before `{c}`")),
            '{' if {
                self.pos -= 1;
                let q = self.braces()?.is_some();
                self.pos += 1;
                q
            } =>
            {
                Err("nothing to repeat before `{`".to_string())
            }
            ')' => Err("unbalanced `)`".to_string()),
            c => {
                let mut s = String::new();
                push_literal(&mut s, c, false);
                Ok(Atom::Text(s))
            }
        }
    }

    /// A group after its `(`: capturing, named, non-capturing, or a
    /// look-ahead.
    fn group(&mut self, depth: usize) -> Result<Atom, String> {
        let mut look = None;
        if self.eat('?') {
            match (self.peek(), self.peek_at(1)) {
                (Some(':'), _) => self.pos += 1,
                (Some(c @ ('=' | '!')), _) => {
                    self.pos += 1;
                    look = Some(c == '!');
                }
                (Some('<'), Some('=' | '!')) => {
                    return Err("look-behind assertions are not supported".to_string());
                }
                (Some('<'), _) => {
                    self.pos += 1;
                    self.group_name()?;
                }
                (Some(c), _) if "imsx-".contains(c) => {
                    return Err("pattern modifiers `(?flags:...)` are not supported".to_string());
                }
                _ => return Err("invalid group: `(?` must start `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!` or `(?<name>`".to_string()),
            }
        }
        let alts = self.alternation(depth + 1)?;
        if !self.eat(')') {
            return Err("unclosed group".to_string());
        }
        match look {
            None => Ok(Atom::Group(alts)),
            Some(negated) => {
                if alts.iter().any(|a| a.start) {
                    return Err("`^` inside a look-ahead is not supported".to_string());
                }
                Ok(Atom::Look { negated, alts })
            }
        }
    }

    /// The name of `(?<name>...)` after its `<`, up to and including `>`:
    /// an identifier (an early error otherwise).
    fn group_name(&mut self) -> Result<(), String> {
        let mut name = String::new();
        loop {
            let c = self.peek().ok_or("unterminated group name")?;
            self.pos += 1;
            if c == '>' {
                break;
            }
            let ok = if name.is_empty() {
                c == '$' || c == '_' || c.is_alphabetic()
            } else {
                c == '$' || c == '_' || c.is_alphanumeric() || c == '\u{200C}' || c == '\u{200D}'
            };
            if !ok {
                return Err(format!("invalid group name starting {name:?}"));
            }
            name.push(c);
        }
        if name.is_empty() {
            return Err("empty group name".to_string());
        }
        self.names.push((name, self.path.clone()));
        Ok(())
    }

    /// The duplicate-name early error: two groups may share a name only
    /// when they stand in different alternatives of one disjunction.
    fn check_names(&self) -> Result<(), String> {
        for (i, (a, pa)) in self.names.iter().enumerate() {
            for (b, pb) in &self.names[i + 1..] {
                if a != b {
                    continue;
                }
                let exclusive =
                    pa.iter().zip(pb).take_while(|(x, y)| x.0 == y.0).any(|(x, y)| x.1 != y.1);
                if !exclusive {
                    return Err(format!("duplicate group name {a:?}"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::translate;

    #[test]
    fn early_errors() {
        for bad in [
            "^\\d{2,1}$",
            "a{3,2}",
            "{2}",
            "a**",
            "a{2}{3}",
            "*a",
            "a|+",
            "(?:a",
            "a)",
            "[a",
            "[z-a]",
            "(?<1a>x)",
            "(?<>x)",
            "(?<a>x)(?<a>y)",
            "(?<a>x)|((?<a>y)(?<a>z))",
            "(?x)",
            "(?i:a)",
            "(?<=a)b",
            "^*",
            "a{99999999999999999999999}",
            "\\",
        ] {
            assert!(translate(bad).is_err(), "{bad:?} should be an error");
        }
        for good in [
            "x{",
            "x{,3}",
            "a{2,}",
            "a{2,2}",
            "}",
            "]",
            "(?<a>x)|(?<a>y)",
            "(?<$_é1>x)",
            "[\\w-.]",
            "[.-\\d]",
            "\\c1",
            "(?=a)*b",
            "(?=a)+a",
        ] {
            assert!(translate(good).is_ok(), "{good:?} should translate");
        }
    }
}
