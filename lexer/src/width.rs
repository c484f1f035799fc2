//! A bound on how many terms a lexeme's derivatives can hold at once, from
//! nested counted repetitions of nullable bodies, checked when the lexer is
//! built ([`LexerLimits::max_repeat_width`](crate::LexerLimits)).
//!
//! derivre keeps a counted repetition `e{m,n}` as one node with its counts,
//! so `a{1,100000}` costs one term per derivative. When the body is
//! nullable (`(a*){100}`), a derivative is a union of the body's remainder
//! followed by the repetition at every count reached so far: after `k`
//! bytes up to `min(k, n)` terms that derivre cannot prove equal. Nested,
//! the counts multiply: `((a*){100}){100}` reaches 10,000 terms, and every
//! byte of every mask walk rebuilds such a union (7 s for one mask and
//! 700 MB after 300 bytes, measured before this check). The estimate
//! multiplies `n + 1` over each chain of nested finite repetitions with
//! nullable bodies and takes the largest over the other constructs
//! (alternatives, concatenations and intersections keep their terms apart
//! in practice). A repetition whose body is not nullable, and an unbounded
//! one (`e*`: its derivative is `e'·e*`, one term), adds nothing.
//!
//! The walk is over the lexeme's [`RegexAst`], with pattern strings parsed
//! by `regex-syntax`'s syntax-tree parser (no Unicode tables: a fraction of
//! derivre's own parse; a string that does not parse counts as width 1,
//! derivre reports the error); it recurses on the nesting depth, which
//! `regex-syntax` bounds (250 by default) and the front-ends bound for the
//! trees they build.

use derivre::RegexAst;

use crate::error::{LexerError, LexerErrorKind};
use crate::spec::{LexemeId, LexerLimits, LexerSpec};
use regex_syntax::ast::{Ast, RepetitionKind, RepetitionRange};
use rustc_hash::FxHashMap;

/// The width and nullability of pattern strings already seen.
pub(crate) type Memo = FxHashMap<String, Width>;

/// An estimated derivative width, and whether the expression is nullable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Width {
    pub(crate) terms: u64,
    pub(crate) nullable: bool,
}

const ONE: Width = Width { terms: 1, nullable: false };

/// `Err` for the first lexeme of `spec` wider than
/// [`LexerLimits::max_repeat_width`].
pub(crate) fn check(spec: &LexerSpec, limits: &LexerLimits) -> Result<(), LexerError> {
    let mut memo = Memo::default();
    let base = spec.preparsed().widths();
    for (i, lexeme) in spec.lexemes().iter().enumerate() {
        let width = of_ast(&lexeme.regex, base, &mut memo).terms;
        if width > limits.max_repeat_width {
            return Err(LexerError::new(LexerErrorKind::RepeatTooWide {
                lexeme: LexemeId(i as u32),
                name: lexeme.name.clone(),
                width,
                limit: limits.max_repeat_width,
            }));
        }
    }
    Ok(())
}

/// The estimated derivative width of `regex`: the number that
/// [`LexerLimits::max_repeat_width`] bounds for each lexeme (see the
/// module docs of the crate). 1 for regexes without nested counted
/// repetitions of nullable bodies; `((a*){100}){100}` has 101 · 101.
///
/// ```
/// use structgen_lexer::{RegexAst, repeat_width};
///
/// assert_eq!(repeat_width(&RegexAst::Regex("((a*){100}){100}b".into())), 101 * 101);
/// assert_eq!(repeat_width(&RegexAst::Regex("a{1,100000}".into())), 1);
/// ```
pub fn repeat_width(regex: &RegexAst) -> u64 {
    of_ast(regex, &Memo::default(), &mut Memo::default()).terms
}

/// The width of a lexeme's regex; the widths of pattern strings are taken
/// from `base` (a [`Preparsed`](crate::Preparsed) set's) or `memo`, and
/// new ones are kept in `memo`.
pub(crate) fn of_ast(ast: &RegexAst, base: &Memo, memo: &mut Memo) -> Width {
    match ast {
        RegexAst::EmptyString => Width { terms: 1, nullable: true },
        RegexAst::Literal(s) => Width { terms: 1, nullable: s.is_empty() },
        RegexAst::ByteLiteral(b) => Width { terms: 1, nullable: b.is_empty() },
        RegexAst::Regex(s) | RegexAst::SearchRegex(s) => {
            if let Some(&w) = base.get(s.as_str()).or_else(|| memo.get(s.as_str())) {
                return w;
            }
            let w = match regex_syntax::ast::parse::Parser::new().parse(s) {
                Ok(ast) => of_syntax(&ast),
                Err(_) => ONE,
            };
            memo.insert(s.clone(), w);
            w
        }
        RegexAst::Concat(args) => {
            let ws: Vec<Width> = args.iter().map(|a| of_ast(a, base, memo)).collect();
            Width { terms: widest(&ws), nullable: ws.iter().all(|w| w.nullable) }
        }
        RegexAst::Or(args) => {
            let ws: Vec<Width> = args.iter().map(|a| of_ast(a, base, memo)).collect();
            Width { terms: widest(&ws), nullable: ws.iter().any(|w| w.nullable) }
        }
        RegexAst::And(args) => {
            let ws: Vec<Width> = args.iter().map(|a| of_ast(a, base, memo)).collect();
            Width { terms: widest(&ws), nullable: ws.iter().all(|w| w.nullable) }
        }
        RegexAst::Not(a) => {
            let w = of_ast(a, base, memo);
            Width { terms: w.terms, nullable: !w.nullable }
        }
        RegexAst::LookAhead(a) | RegexAst::JsonQuote(a, _) => of_ast(a, base, memo),
        RegexAst::Repeat(a, min, max) => {
            let max = (*max != u32::MAX).then_some(*max);
            repeat(of_ast(a, base, memo), *min, max)
        }
        _ => ONE,
    }
}

fn of_syntax(ast: &Ast) -> Width {
    match ast {
        Ast::Empty(_) | Ast::Flags(_) | Ast::Assertion(_) => Width { terms: 1, nullable: true },
        Ast::Literal(_) | Ast::Dot(_) | Ast::ClassUnicode(_) | Ast::ClassPerl(_) => ONE,
        Ast::ClassBracketed(_) => ONE,
        Ast::Group(g) => of_syntax(&g.ast),
        Ast::Repetition(r) => {
            let (min, max) = match &r.op.kind {
                RepetitionKind::ZeroOrOne => (0, Some(1)),
                RepetitionKind::ZeroOrMore => (0, None),
                RepetitionKind::OneOrMore => (1, None),
                RepetitionKind::Range(RepetitionRange::Exactly(n)) => (*n, Some(*n)),
                RepetitionKind::Range(RepetitionRange::AtLeast(n)) => (*n, None),
                RepetitionKind::Range(RepetitionRange::Bounded(m, n)) => (*m, Some(*n)),
            };
            repeat(of_syntax(&r.ast), min, max)
        }
        Ast::Concat(c) => {
            let ws: Vec<Width> = c.asts.iter().map(of_syntax).collect();
            Width { terms: widest(&ws), nullable: ws.iter().all(|w| w.nullable) }
        }
        Ast::Alternation(a) => {
            let ws: Vec<Width> = a.asts.iter().map(of_syntax).collect();
            Width { terms: widest(&ws), nullable: ws.iter().any(|w| w.nullable) }
        }
    }
}

fn widest(ws: &[Width]) -> u64 {
    ws.iter().map(|w| w.terms).max().unwrap_or(1)
}

/// `body{min,max}` (`max` `None`: unbounded).
fn repeat(body: Width, min: u32, max: Option<u32>) -> Width {
    let nullable = min == 0 || body.nullable;
    let terms = match max {
        Some(max) if max > 1 && body.nullable => body.terms.saturating_mul(u64::from(max) + 1),
        _ => body.terms,
    };
    Width { terms, nullable }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn width(rx: &str) -> u64 {
        of_ast(&RegexAst::Regex(rx.to_owned()), &Memo::default(), &mut Memo::default()).terms
    }

    #[test]
    fn nested_nullable_repetitions_multiply() {
        assert_eq!(width("((a*){100}){100}b"), 101 * 101);
        assert_eq!(width("(a?){0,500}"), 501);
        assert_eq!(width("a{1,100000}"), 1);
        assert_eq!(width("[0-9]{1,100000}"), 1);
        assert_eq!(width("(a*)*"), 1);
        assert_eq!(width("\"([^\"\\\\]|\\\\.){0,5000}\""), 1);
        assert_eq!(width("(x(a*){10}){20}"), 11);
        let ast = RegexAst::Repeat(
            Box::new(RegexAst::Repeat(Box::new(RegexAst::Regex("a*".into())), 0, 100)),
            0,
            100,
        );
        assert_eq!(of_ast(&ast, &Memo::default(), &mut Memo::default()).terms, 101 * 101);
    }

    #[test]
    fn a_preparsed_set_knows_the_widths_of_its_patterns() {
        let wide = "((a*){100}){100}b";
        let set = std::sync::Arc::new(crate::Preparsed::new(&[wide]));
        assert_eq!(set.widths().get(wide).map(|w| w.terms), Some(101 * 101));
        for p in crate::PREPARSED {
            assert_eq!(set.widths().get(*p).map(|w| w.terms), Some(width(p)), "{p}");
        }
        // A lexeme using the pattern is still refused, its width taken from the set.
        let mut spec = LexerSpec::new();
        spec.add(crate::LexemeSpec::new("WIDE", RegexAst::Regex(wide.to_owned())));
        spec.set_preparsed(set);
        let limits = LexerLimits::default().with_max_repeat_width(100);
        let err = check(&spec, &limits).unwrap_err();
        assert!(matches!(err.kind(), LexerErrorKind::RepeatTooWide { width: 10201, .. }), "{err}");
    }
}
