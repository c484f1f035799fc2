//! Lowering a structural tag to the Lark dialect.
//!
//! Each format is lowered together with what follows it (its *tail*, a
//! list of items), because free text needs to know where it ends: free
//! text followed by the text `E` becomes one lazy lexeme
//! `(C "E") & ~(ANY (E|s…) ANY1)` (the text up to and including the first
//! occurrence of `E` or of another stop string `s`, whichever comes
//! first), so it ends exactly where `E` first appears. Free text followed
//! by a special token or by the end of the output is a greedy lexeme that
//! never contains a stop string.
//!
//! Alternatives (`or`, the branches of `triggered_tags`) each take the
//! tail; to keep the output linear in the input, a tail longer than its
//! head item is first named as a rule (`compress`), so copies are O(1).

use super::{Delimiter, Format, Tag, TagsWithSeparator, TriggeredTags};
use crate::error::Error;
use crate::error::request_error;

/// One piece of a sequence being built.
#[derive(Clone, Debug)]
enum Item {
    /// Literal text (never empty).
    Lit(String),
    /// A special token by name.
    Tok(String),
    /// A Lark expression (a rule name, `%json {…}`, …).
    Expr(String),
}

/// The Lark text of the structure rooted at `root`.
pub(super) fn to_lark(root: &Format) -> Result<String, Error> {
    let mut l = Lowerer::default();
    let items = l.lower(root, "/format", Vec::new())?;
    let body = l.render(&items, "/format")?.unwrap_or_else(|| "\"\"".to_owned());
    let mut out = format!("start: {body}\n");
    for r in &l.rules {
        out.push_str(r);
        out.push('\n');
    }
    if l.uses_any {
        out.push_str("ANY_TEXT: /(.|\\n)*/\nANY_TEXT1: /(.|\\n)+/\n");
    }
    Ok(out)
}

#[derive(Default)]
struct Lowerer {
    /// Rule and terminal definitions, one per line.
    rules: Vec<String>,
    /// Definitions made so far (for fresh names).
    count: usize,
    /// Whether `ANY_TEXT` and `ANY_TEXT1` are used.
    uses_any: bool,
}

/// A string as a Lark string literal (JSON escapes).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// `("a"|"b")` for a non-empty list of texts.
fn alternation(texts: &[String]) -> String {
    let parts: Vec<String> = texts.iter().map(|t| quote(t)).collect();
    format!("({})", parts.join("|"))
}

impl Lowerer {
    fn fresh(&mut self, prefix: &str) -> String {
        self.count += 1;
        format!("{prefix}_{}", self.count)
    }

    /// Defines a rule named after `prefix` with `body`; returns its name.
    fn rule(&mut self, prefix: &str, body: &str) -> String {
        let name = self.fresh(prefix);
        self.rules.push(format!("{name}: {body}"));
        name
    }

    /// Defines a terminal (uppercase name) with `body`; returns its name.
    fn terminal(&mut self, prefix: &str, body: &str) -> String {
        let name = self.fresh(prefix);
        self.rules.push(format!("{name}: {body}"));
        name
    }

    /// A lazy lexeme: text with no excluded string, then `end`, where
    /// `end` is the first occurrence of any of `stops` (which holds `end`).
    fn text_until(&mut self, excludes: &[String], end: &str, stops: &[String]) -> String {
        self.uses_any = true;
        let content = if excludes.is_empty() {
            "ANY_TEXT".to_owned()
        } else {
            self.terminal(
                "TEXT_X",
                &format!("ANY_TEXT & ~(ANY_TEXT {} ANY_TEXT)", alternation(excludes)),
            )
        };
        let t = self.terminal(
            "TEXT_UNTIL",
            &format!("({content} {}) & ~(ANY_TEXT {} ANY_TEXT1)", quote(end), alternation(stops)),
        );
        let name = self.fresh("text_until");
        self.rules.push(format!("{name}[lazy]: {t}"));
        name
    }

    /// A greedy, non-empty lexeme of text containing none of `stops`;
    /// use it as `NAME?`.
    fn free_text(&mut self, stops: &[String]) -> String {
        self.uses_any = true;
        if stops.is_empty() {
            return "ANY_TEXT1".to_owned();
        }
        self.terminal("TEXT", &format!("ANY_TEXT1 & ~(ANY_TEXT {} ANY_TEXT)", alternation(stops)))
    }

    /// Renders a sequence as a Lark expression; `None` when empty.
    fn render(&self, items: &[Item], pointer: &str) -> Result<Option<String>, Error> {
        let mut parts = Vec::with_capacity(items.len());
        for it in items {
            parts.push(match it {
                Item::Lit(s) => quote(s),
                Item::Tok(name) => token(name, pointer)?,
                Item::Expr(e) => e.clone(),
            });
        }
        Ok((!parts.is_empty()).then(|| parts.join(" ")))
    }

    /// A rule whose alternatives are `alts` (`None`: the empty sequence).
    fn alternatives(&mut self, prefix: &str, alts: Vec<Option<String>>) -> Option<String> {
        let nullable = alts.iter().any(Option::is_none);
        let mut bodies: Vec<String> = alts.into_iter().flatten().collect();
        bodies.dedup();
        if bodies.is_empty() {
            return None;
        }
        let name = self.rule(prefix, &bodies.join(" | "));
        Some(if nullable { format!("{name}?") } else { name })
    }

    /// The tail with everything after its first item named by one rule,
    /// so that it can be copied into alternatives in O(1).
    fn compress(&mut self, mut tail: Vec<Item>, pointer: &str) -> Result<Vec<Item>, Error> {
        if tail.len() <= 2 {
            return Ok(tail);
        }
        let rest = tail.split_off(1);
        let body = self.render(&rest, pointer)?.unwrap_or_default();
        let name = self.rule("tail", &body);
        tail.push(Item::Expr(name));
        Ok(tail)
    }

    fn lower(&mut self, f: &Format, pointer: &str, tail: Vec<Item>) -> Result<Vec<Item>, Error> {
        let mut out = Vec::new();
        match f {
            Format::ConstString(s) => push_delim(&mut out, &Delimiter::Text(s.clone())),
            Format::Token(t) => out.push(Item::Tok(t.clone())),
            Format::JsonSchema(schema) => {
                let schema = match schema {
                    serde_json::Value::Bool(true) => serde_json::json!({}),
                    serde_json::Value::Object(_) => schema.clone(),
                    _ => {
                        return Err(request_error(
                            &format!("{pointer}/json_schema"),
                            "expected a schema object or `true`",
                        ));
                    }
                };
                let name = self.rule("json", &format!("%json {schema}"));
                out.push(Item::Expr(name));
            }
            Format::Regex(p) => {
                let name = self.rule("regex", &format!("/{}/", p.replace('/', "\\/")));
                out.push(Item::Expr(name));
            }
            Format::Grammar(g) => {
                let name = self.grammar(g, pointer)?;
                out.push(Item::Expr(name));
            }
            Format::AnyText { excludes } => return self.any_text(excludes, pointer, tail),
            Format::Sequence(elements) => {
                let mut t = tail;
                for (i, e) in elements.iter().enumerate().rev() {
                    t = self.lower(e, &format!("{pointer}/elements/{i}"), t)?;
                }
                return Ok(t);
            }
            Format::Or(elements) => {
                if elements.is_empty() {
                    return Err(request_error(pointer, "`or` needs at least one element"));
                }
                let tail = self.compress(tail, pointer)?;
                let mut alts = Vec::new();
                for (i, e) in elements.iter().enumerate() {
                    let p = format!("{pointer}/elements/{i}");
                    let items = self.lower(e, &p, tail.clone())?;
                    alts.push(self.render(&items, &p)?);
                }
                return Ok(self.alternatives("or", alts).map(Item::Expr).into_iter().collect());
            }
            Format::Tag(t) => return self.tag(t, pointer, tail),
            Format::TriggeredTags(t) => return self.triggered(t, pointer, tail),
            Format::TagsWithSeparator(t) => {
                let e = self.with_separator(t, pointer)?;
                out.extend(e.map(Item::Expr));
            }
        }
        out.extend(tail);
        Ok(out)
    }

    fn tag(&mut self, t: &Tag, pointer: &str, tail: Vec<Item>) -> Result<Vec<Item>, Error> {
        let mut inner = Vec::new();
        push_delim(&mut inner, &t.end);
        inner.extend(tail);
        let inner = self.lower(&t.content, &format!("{pointer}/content"), inner)?;
        let mut out = Vec::new();
        push_delim(&mut out, &t.begin);
        out.extend(inner);
        Ok(out)
    }

    /// The tag as one rule (for alternatives); `None` if it is empty.
    fn tag_rule(&mut self, t: &Tag, pointer: &str) -> Result<Option<String>, Error> {
        let items = self.tag(t, pointer, Vec::new())?;
        Ok(self.render(&items, pointer)?.map(|body| self.rule("tag", &body)))
    }

    fn any_text(
        &mut self,
        excludes: &[String],
        pointer: &str,
        tail: Vec<Item>,
    ) -> Result<Vec<Item>, Error> {
        let excludes: Vec<String> = excludes.iter().filter(|e| !e.is_empty()).cloned().collect();
        let mut tail = tail.into_iter();
        match tail.next() {
            Some(Item::Lit(end)) => {
                let name = self.text_until(&excludes, &end, std::slice::from_ref(&end));
                Ok(std::iter::once(Item::Expr(name)).chain(tail).collect())
            }
            Some(Item::Tok(t)) => {
                let free = self.free_text(&excludes);
                Ok([Item::Expr(format!("{free}?")), Item::Tok(t)].into_iter().chain(tail).collect())
            }
            None => Ok(vec![Item::Expr(format!("{}?", self.free_text(&excludes)))]),
            Some(Item::Expr(_)) => Err(request_error(
                pointer,
                "free text must be followed by a constant text, a special token or the end \
                 of the output (otherwise it has no end)",
            )),
        }
    }

    fn with_separator(
        &mut self,
        t: &TagsWithSeparator,
        pointer: &str,
    ) -> Result<Option<String>, Error> {
        if t.tags.is_empty() {
            return Err(request_error(&format!("{pointer}/tags"), "no tags given"));
        }
        let mut alts = Vec::new();
        for (i, tag) in t.tags.iter().enumerate() {
            alts.push(self.tag_rule(tag, &format!("{pointer}/tags/{i}"))?);
        }
        let Some(a) = self.alternatives("tags", alts) else { return Ok(None) };
        let mut sep = Vec::new();
        push_delim(&mut sep, &t.separator);
        let sep = self.render(&sep, &format!("{pointer}/separator"))?;
        let body = match (t.stop_after_first, t.at_least_one, sep) {
            (true, true, _) => a,
            (true, false, _) => format!("({a})?"),
            (false, true, Some(s)) => format!("{a} ({s} {a})*"),
            (false, false, Some(s)) => format!("({a} ({s} {a})*)?"),
            (false, true, None) => format!("({a})+"),
            (false, false, None) => format!("({a})*"),
        };
        Ok(Some(self.rule("separated", &body)))
    }

    fn triggered(
        &mut self,
        t: &TriggeredTags,
        pointer: &str,
        tail: Vec<Item>,
    ) -> Result<Vec<Item>, Error> {
        if t.triggers.is_empty() {
            return Err(request_error(&format!("{pointer}/triggers"), "no triggers given"));
        }
        if t.tags.is_empty() {
            return Err(request_error(&format!("{pointer}/tags"), "no tags given"));
        }
        for (i, trig) in t.triggers.iter().enumerate() {
            if matches!(trig, Delimiter::Text(s) if s.is_empty()) {
                return Err(request_error(&format!("{pointer}/triggers/{i}"), "empty trigger"));
            }
        }
        // Each tag goes to the one trigger its begin starts with; the rest
        // of the tag (after the trigger) is one rule.
        let mut rests: Vec<Vec<Option<String>>> = vec![Vec::new(); t.triggers.len()];
        let mut fulls = Vec::new();
        for (j, tag) in t.tags.iter().enumerate() {
            let p = format!("{pointer}/tags/{j}");
            let owners: Vec<usize> = (0..t.triggers.len())
                .filter(|&i| match (&t.triggers[i], &tag.begin) {
                    (Delimiter::Text(tr), Delimiter::Text(b)) => b.starts_with(tr.as_str()),
                    (Delimiter::Token(tr), Delimiter::Token(b)) => tr == b,
                    _ => false,
                })
                .collect();
            let [i] = owners[..] else {
                return Err(request_error(
                    &format!("{p}/begin"),
                    format!(
                        "the begin of a triggered tag must start with exactly one trigger \
                         (it starts with {})",
                        owners.len()
                    ),
                ));
            };
            let rest_begin = match (&t.triggers[i], &tag.begin) {
                (Delimiter::Text(tr), Delimiter::Text(b)) => Delimiter::Text(b[tr.len()..].into()),
                _ => Delimiter::Text(String::new()),
            };
            let rest =
                Tag { begin: rest_begin, content: tag.content.clone(), end: tag.end.clone() };
            let items = self.tag(&rest, &p, Vec::new())?;
            let rest_expr = self.render(&items, &p)?;
            let mut full = Vec::new();
            push_delim(&mut full, &t.triggers[i]);
            full.extend(rest_expr.clone().map(Item::Expr));
            fulls.push(self.render(&full, &p)?);
            rests[i].push(rest_expr);
        }
        let tail = self.compress(tail, pointer)?;
        let text_triggers: Vec<String> = t
            .triggers
            .iter()
            .filter_map(|d| match d {
                Delimiter::Text(s) => Some(s.clone()),
                Delimiter::Token(_) => None,
            })
            .collect();
        let mut stops = text_triggers.clone();
        if let Some(Item::Lit(e)) = tail.first() {
            stops.push(e.clone());
        }
        // One step of the loop: free text up to a trigger, then a tag.
        let mut steps = Vec::new();
        for (i, trig) in t.triggers.iter().enumerate() {
            if rests[i].is_empty() {
                continue;
            }
            let dispatch = self.alternatives("dispatch", std::mem::take(&mut rests[i]));
            let dispatch = dispatch.unwrap_or_default();
            match trig {
                Delimiter::Text(s) => {
                    let text = self.text_until(&[], s, &stops);
                    steps.push(Some(format!("{text} {dispatch}")));
                }
                Delimiter::Token(name) => {
                    let free = self.free_text(&stops);
                    let tok = token(name, &format!("{pointer}/triggers/{i}"))?;
                    steps.push(Some(format!("{free}? {tok} {dispatch}")));
                }
            }
        }
        let step = self.alternatives("step", steps).unwrap_or_default();
        let first = self.alternatives("first", fulls).unwrap_or_default();
        let rendered_tail = self.render(&tail, pointer)?.unwrap_or_default();
        // The free text after the last tag, then the tail: it ends at the
        // first stop string like the steps' text, so the two never overlap.
        let mut rest = tail.into_iter();
        let end = match rest.next() {
            Some(Item::Lit(e)) => self.text_until(&[], &e, &stops),
            Some(Item::Tok(tok)) => {
                format!("{}? {}", self.free_text(&stops), token(&tok, pointer)?)
            }
            None => format!("{}?", self.free_text(&stops)),
            Some(Item::Expr(_)) => {
                return Err(request_error(
                    pointer,
                    "triggered tags must be followed by a constant text, a special token or \
                     the end of the output (otherwise the free text has no end)",
                ));
            }
        };
        let rest: Vec<Item> = rest.collect();
        let end = match self.render(&rest, pointer)? {
            Some(r) => format!("{end} {r}"),
            None => end,
        };
        let body = match (t.stop_after_first, t.at_least_one) {
            (true, true) => format!("{first} {rendered_tail}"),
            (true, false) => format!("{step} {rendered_tail} | {end}"),
            (false, true) => format!("{first} ({step})* {end}"),
            (false, false) => format!("({step})* {end}"),
        };
        Ok(vec![Item::Expr(self.rule("triggered", &body))])
    }

    /// A GBNF (or, after `%lark`, Lark) grammar embedded under fresh names.
    fn grammar(&mut self, g: &str, pointer: &str) -> Result<String, Error> {
        let prefix = self.fresh("g");
        let cfg = grammar::Config::default();
        let embedded = match g.trim_start().strip_prefix("%lark") {
            Some(lark) => grammar::lark::embed(lark, &prefix, &cfg),
            None => grammar::gbnf::embed(g, &prefix, &cfg),
        };
        let (start, text) = embedded.map_err(|e| {
            request_error(&format!("{pointer}/grammar"), format!("in the grammar: {e}"))
        })?;
        self.rules.push(text);
        Ok(start)
    }
}

/// The Lark form of a special token's name: `<|name|>` as it is,
/// `[NAME]` (Mistral's control tokens) as `<[NAME]>`.
fn token(name: &str, pointer: &str) -> Result<String, Error> {
    let inside = |open: char, close: char| {
        name.len() > 2
            && name.starts_with(open)
            && name.ends_with(close)
            && !name[1..name.len() - 1].contains([open, close, '<', '>'])
            && !name.chars().any(char::is_whitespace)
    };
    if inside('<', '>') {
        Ok(name.to_owned())
    } else if inside('[', ']')
        && name[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
    {
        Ok(format!("<{name}>"))
    } else {
        Err(request_error(
            pointer,
            format!(
                "special token `{name}`: names are written in angle brackets (`<|name|>`) or \
                 square brackets starting with a letter (`[TOOL_CALLS]`), without spaces"
            ),
        ))
    }
}

fn push_delim(out: &mut Vec<Item>, d: &Delimiter) {
    match d {
        Delimiter::Text(s) if s.is_empty() => {}
        Delimiter::Text(s) => out.push(Item::Lit(s.clone())),
        Delimiter::Token(t) => out.push(Item::Tok(t.clone())),
    }
}
