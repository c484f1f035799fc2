//! Rules with lexeme options (`[lazy]`, `[suffix=…]`, `[stop=…]`,
//! `[max_tokens=N]`): read from the rule's attributes and compiled like a
//! terminal into one lexeme (or, for a stop of a few words, one lexeme per
//! word under one rule, so that the parser knows the hidden text from the
//! lexeme that ends; see `earley` DESIGN.md "Lexeme options").

use earley::SymbolId;
use lexer::{LexemeSpec, RegexAst};

use super::{Lowering, Ns};
use crate::error::{Error, ErrorKind};
use crate::lark::ast::{Attr, AttrValue, Def, ExprKind};

/// Lexeme options of a rule (`[lazy]`, `[suffix=...]`, `[stop=...]`,
/// `[max_tokens=N]`).
pub(super) struct LexemeOptions {
    lazy: bool,
    suffix: Option<RegexAst>,
    stop: Option<Stop>,
    pub(super) max_tokens: Option<u32>,
}

/// A rule's `stop=`.
enum Stop {
    /// Hidden stop text (a non-empty string, a regex or a terminal).
    Text(RegexAst),
    /// `stop=""`: the end-of-sequence token may end the lexeme.
    Eos,
}

impl<'a> Lowering<'a> {
    /// Reads `[lazy, suffix=..., stop=..., max_tokens=N, ...]`; `None`
    /// when the rule stays a rule (no option, or only `capture` and
    /// `stop_capture`, which do not change masks); `temperature` alone
    /// makes the rule one greedy lexeme, as in llguidance.
    ///
    /// As in llguidance: `stop=` and `suffix=` exclude each other, and so
    /// do `lazy` followed by `stop=`, and `stop=""` with `lazy` (in
    /// llguidance `lazy` is an empty-regex suffix).
    pub(super) fn lexeme_options(
        &mut self,
        attrs: &[Attr],
    ) -> Result<Option<LexemeOptions>, Error> {
        let mut opts = LexemeOptions { lazy: false, suffix: None, stop: None, max_tokens: None };
        let mut any = false;
        let mut suffix_seen = false;
        for a in attrs {
            let name = a.name.name.as_str();
            match (name, &a.value) {
                ("lazy", None) => {
                    if matches!(opts.stop, Some(Stop::Eos)) {
                        return Err(self.err(
                            ErrorKind::Invalid,
                            "`lazy` cannot be combined with `stop=\"\"`",
                            a.span,
                        ));
                    }
                    opts.lazy = true;
                    any = true;
                }
                ("suffix", Some(AttrValue::Expr(e))) => {
                    if opts.stop.is_some() || suffix_seen {
                        return Err(self.err(
                            ErrorKind::Invalid,
                            "a rule takes one of `stop=` and `suffix=`",
                            a.span,
                        ));
                    }
                    suffix_seen = true;
                    let rx = self.expr_regex(e, Ns::User)?;
                    any = true;
                    if !matches!(&e.kind, ExprKind::Literal { value, .. } if value.is_empty()) {
                        opts.lazy = true;
                        opts.suffix = Some(rx);
                    }
                }
                ("capture", None) | ("capture" | "stop_capture", Some(AttrValue::Expr(_))) => {}
                // Sampling only, but llguidance compiles such a rule as one
                // lexeme (no `%ignore` inside it), so ours does too.
                ("temperature", Some(AttrValue::Number(..))) => any = true,
                ("stop", Some(AttrValue::Expr(e))) => {
                    if opts.stop.is_some() || suffix_seen || opts.lazy {
                        return Err(self.err(
                            ErrorKind::Invalid,
                            "a rule takes one of `stop=`, `suffix=` and a `lazy` before `stop=`",
                            a.span,
                        ));
                    }
                    let empty =
                        matches!(&e.kind, ExprKind::Literal { value, .. } if value.is_empty());
                    opts.stop = Some(if empty {
                        Stop::Eos
                    } else {
                        Stop::Text(self.expr_regex(e, Ns::User)?)
                    });
                    any = true;
                }
                ("max_tokens", Some(AttrValue::Number(v, text))) => {
                    if !(v.fract() == 0.0 && *v >= 0.0 && *v <= f64::from(u32::MAX)) {
                        return Err(self.err(
                            ErrorKind::Invalid,
                            format!("`max_tokens=` takes a whole number of tokens, not `{text}`"),
                            a.span,
                        ));
                    }
                    opts.max_tokens = Some(*v as u32);
                    any = true;
                }
                (
                    "lazy" | "suffix" | "capture" | "stop_capture" | "temperature" | "stop"
                    | "max_tokens",
                    _,
                ) => {
                    return Err(self.err(
                        ErrorKind::Invalid,
                        format!("wrong value for option `{name}`"),
                        a.span,
                    ));
                }
                _ => {
                    return Err(self.err(
                        ErrorKind::Invalid,
                        format!("unknown option `{name}`"),
                        a.name.span,
                    ));
                }
            }
        }
        Ok(any.then_some(opts))
    }

    /// The lexeme (or, for a stop of a few words, the rule over one lexeme
    /// per word) of rule `def` with lexeme options `opts`.
    pub(super) fn options_lexeme(
        &mut self,
        name: &'a str,
        def: &'a Def,
        opts: LexemeOptions,
    ) -> Result<SymbolId, Error> {
        let body = self.expansions_regex(&def.body, Ns::User)?;
        let regex = match opts.suffix {
            Some(suffix) => RegexAst::Concat(vec![body, suffix]),
            None => body,
        };
        let mut spec = LexemeSpec::new(name, regex);
        spec.lazy = opts.lazy;
        spec.max_tokens = opts.max_tokens;
        match opts.stop {
            Some(Stop::Text(stop)) => match stop_words(&stop) {
                // One word: a literal stop.
                Some(mut words) if words.len() == 1 => {
                    spec = spec.with_stop(RegexAst::Literal(words.remove(0)));
                }
                // A stop of a few words: one lexeme per word, so
                // that the parser knows the hidden text from the
                // lexeme that ends (see `earley` DESIGN.md).
                Some(words) if words.len() > 1 => {
                    let alts: Vec<SymbolId> = words
                        .into_iter()
                        .map(|w| {
                            let l = spec.clone().with_stop(RegexAst::Literal(w));
                            self.add_lexeme(l, def.name.span)
                        })
                        .collect();
                    let rule = self.b.add_nonterminal(name);
                    for a in alts {
                        self.b.add_rule(rule, &[a]);
                    }
                    self.rule_syms.insert(name, rule);
                    return Ok(rule);
                }
                _ => spec = spec.with_stop(stop),
            },
            Some(Stop::Eos) => spec = spec.ending_at_eos(),
            None => {}
        }
        Ok(self.add_lexeme(spec, def.name.span))
    }
}

/// The words of a stop regex when there are a few (at most 16, each valid
/// UTF-8 of at most 32 bytes), found by walking a lexer of the regex;
/// `None` for a larger, infinite or empty-word language, or on any error.
fn stop_words(stop: &RegexAst) -> Option<Vec<String>> {
    const MAX_WORDS: usize = 16;
    const MAX_LEN: usize = 32;
    if matches!(stop, RegexAst::Literal(_)) {
        return None;
    }
    let mut spec = lexer::LexerSpec::new();
    let id = spec.add(LexemeSpec::new("stop", stop.clone()));
    let mut lx = lexer::Lexer::new(&spec, lexer::LexerLimits::default()).ok()?;
    if lx.is_nullable(id) {
        return None;
    }
    let mut allowed = lexer::LexemeSet::default();
    allowed.insert(id);
    let mut words = Vec::new();
    let mut stack = vec![(lx.start_state(&allowed), Vec::new())];
    while let Some((state, word)) = stack.pop() {
        for b in 0..=255u8 {
            let next = lx.next(state, b);
            if next.is_dead() {
                continue;
            }
            let mut w: Vec<u8> = word.clone();
            w.push(b);
            if lx.accepting(next).is_some() {
                words.push(String::from_utf8(w.clone()).ok()?);
            }
            if words.len() > MAX_WORDS || w.len() > MAX_LEN || stack.len() > 4 * MAX_WORDS {
                return None;
            }
            if !lx.next_is_dead_for_all(next) {
                stack.push((next, w));
            }
        }
    }
    if lx.error().is_some() {
        return None;
    }
    Some(words)
}
