//! Checking a JSON text against a grammar or a JSON Schema the way an
//! engine would generate it, token by token, and saying where and why it
//! is rejected: the harness of `structgen validate`.
//!
//! A document is a JSON text: whitespace before and after the value is
//! insignificant (RFC 8259), so it is set aside ([`Checker::trim`]; a
//! trailing newline from an editor is fine) and the value is tokenized and
//! walked through the [`Matcher`]: a token outside its mask rejects the
//! document, and after the last token the grammar must accept.
//!
//! A [`Rejection`] names the token, the exact byte the grammar refused (a
//! byte-level parse of that token; offsets and line:column count in the
//! whole document), what could have come there (the lexemes in progress
//! and those that may start, a few allowed tokens), the instance's JSON
//! pointer, and for schemas the [`Reason`] (see `explain.rs`): not JSON in
//! this layout, properties out of schema order, or the schema keywords
//! whose removal would let the byte through, with their pointers.

use std::fmt::Write as _;

use earley::Parser;
use serde_json::Value;
use structgen::{Grammar, Matcher, MatcherError, Vocabulary};
use toktrie::TokenId;

/// How many allowed tokens a rejection lists.
const ALLOWED_SHOWN: usize = 8;

/// One token of the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// Its position in the document's tokenization.
    pub index: usize,
    /// Its id.
    pub id: u32,
    /// Its bytes, as text (lossy).
    pub text: String,
    /// The byte offset of its first byte in the document.
    pub offset: usize,
}

/// A schema keyword that rejected the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keyword {
    /// The keyword (`type`, `required`, …; `false` for a `false` schema).
    pub keyword: String,
    /// The JSON pointer of the schema object holding it (of the `false`
    /// schema itself for `false`).
    pub pointer: String,
}

/// Why a schema rejected a document (see `explain.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The text is not JSON in this layout (whitespace, separators): the
    /// schema `true` rejects it at the same place.
    NotJson,
    /// The document is accepted with properties in any order: its keys
    /// simply come in another order than the schema lists them.
    PropertyOrder,
    /// Removing any one of these keywords lets the refused byte through
    /// (the most specific first; assertions before applicators).
    Keywords(Vec<Keyword>),
    /// No single keyword is to blame (or the search was cut short after
    /// `tried` compilations).
    Unknown {
        /// Schemas compiled while searching.
        tried: usize,
        /// Whether the search stopped at its limit.
        cut_short: bool,
    },
}

/// Where and why a document was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The byte offset of the refused byte in the document (its length
    /// when the text ended too early).
    pub offset: usize,
    /// The line of `offset`, from 1.
    pub line: usize,
    /// The column of `offset` in characters, from 1.
    pub column: usize,
    /// The text ended before the grammar could accept (every byte was
    /// allowed).
    pub at_end: bool,
    /// The token not allowed (`None` at the end).
    pub token: Option<Token>,
    /// The names of the lexemes the lexeme in progress could still be.
    pub in_progress: Vec<String>,
    /// The names of the lexemes that could start at `offset`.
    pub expected: Vec<String>,
    /// A few tokens the mask allowed instead (`<end>` for a stop token).
    pub allowed: Vec<String>,
    /// A limit that stopped the matcher, if that is why.
    pub error: Option<String>,
    /// The JSON pointer of the instance value at `offset` (for JSON texts).
    pub instance_pointer: Option<String>,
    /// For schemas: why.
    pub reason: Option<Reason>,
}

/// The verdict on one document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every token was allowed and the grammar accepts at the end.
    Accepted {
        /// Tokens walked.
        tokens: usize,
    },
    /// Not accepted: where and why.
    Rejected(Box<Rejection>),
}

/// Checks documents against one grammar.
#[derive(Debug)]
pub struct Checker<'a> {
    vocab: &'a Vocabulary,
    tokenizer: &'a bpe::Tokenizer,
    grammar: &'a Grammar,
    schema: Option<(&'a Value, &'a jsonschema::Options)>,
    /// Set surrounding JSON whitespace aside (default on).
    pub trim: bool,
    /// The most schemas compiled while looking for the keyword to blame.
    pub explain_limit: usize,
    /// The most time spent looking for it, per rejected document.
    pub explain_time: std::time::Duration,
}

/// JSON whitespace (RFC 8259: space, tab, line feed, carriage return).
fn is_json_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a> Checker<'a> {
    /// A checker of `grammar` over `vocab`, whose ordinary tokens are
    /// `tokenizer`'s; give `schema` (with its options) to have rejections
    /// explained by keyword.
    pub fn new(
        vocab: &'a Vocabulary,
        tokenizer: &'a bpe::Tokenizer,
        grammar: &'a Grammar,
        schema: Option<(&'a Value, &'a jsonschema::Options)>,
    ) -> Checker<'a> {
        Checker {
            vocab,
            tokenizer,
            grammar,
            schema,
            trim: true,
            explain_limit: 500,
            explain_time: std::time::Duration::from_secs(5),
        }
    }

    /// Checks one document.
    ///
    /// # Errors
    /// A matcher that cannot be created (a special token the vocabulary
    /// lacks); limits hit while walking are reported in the rejection.
    pub fn check(&self, doc: &[u8]) -> Result<Verdict, MatcherError> {
        let (start, end) = if self.trim {
            let start = doc.iter().position(|&b| !is_json_ws(b)).unwrap_or(doc.len());
            let end = doc.iter().rposition(|&b| !is_json_ws(b)).map_or(start, |e| e + 1);
            (start, end)
        } else {
            (0, doc.len())
        };
        let body = &doc[start..end];
        let tokens = crate::tokenizer::encode_document(self.tokenizer, body);
        let mut m = Matcher::new(self.vocab, self.grammar)?;
        let stop = m.stop_tokens().to_vec();
        let mut at = 0usize;
        for (i, &t) in tokens.iter().enumerate() {
            let bytes = self.tokenizer.token_bytes(t).unwrap_or_default();
            let allowed = match m.compute_mask() {
                Ok(mask) if mask.contains(TokenId(t)) => None,
                Ok(mask) => Some((self.shown(mask.iter(), &stop, bytes), None)),
                Err(e) => Some((Vec::new(), Some(e.to_string()))),
            };
            let allowed = match allowed {
                None => match m.consume_token(TokenId(t)) {
                    Ok(()) => {
                        at += bytes.len();
                        continue;
                    }
                    Err(e) => (Vec::new(), Some(e.to_string())),
                },
                Some(a) => a,
            };
            let token = Token {
                index: i,
                id: t,
                text: String::from_utf8_lossy(bytes).into_owned(),
                offset: start + at,
            };
            let r = self.reject(doc, start, body, at + bytes.len(), Some(token), allowed);
            return Ok(Verdict::Rejected(Box::new(r)));
        }
        if m.is_accepting() {
            return Ok(Verdict::Accepted { tokens: tokens.len() });
        }
        let allowed = match m.compute_mask() {
            Ok(mask) => (self.shown(mask.iter(), &stop, b""), None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let r = self.reject(doc, start, body, body.len(), None, allowed);
        Ok(Verdict::Rejected(Box::new(r)))
    }

    /// The rejection of `body` (at `start` in `doc`), whose bytes up to
    /// `upto` the token walk reached: the refused byte found by a
    /// byte-level parse, and what was expected there.
    fn reject(
        &self,
        doc: &[u8],
        start: usize,
        body: &[u8],
        upto: usize,
        token: Option<Token>,
        (allowed, error): (Vec<String>, Option<String>),
    ) -> Rejection {
        let scan = scan_bytes(self.grammar, &body[..upto]);
        // Every byte of a refused token allowed one by one: the token is
        // refused as a whole (where a token boundary may not fall); point
        // at its first byte.
        let (rel, at_end) = match (scan.refused, &token) {
            (Some(r), _) => (r, false),
            (None, Some(t)) => (t.offset - start, false),
            (None, None) => (body.len(), true),
        };
        let expect = if scan.refused.is_none() && token.is_some() {
            scan_bytes(self.grammar, &body[..rel]).expect
        } else {
            scan.expect
        };
        let offset = start + rel;
        let (line, column) = line_column(doc, offset);
        let mut r = Rejection {
            offset,
            line,
            column,
            at_end,
            token,
            in_progress: expect.0,
            expected: expect.1,
            allowed,
            error: error.or(scan.error),
            instance_pointer: instance_pointer(&body[..rel], body.get(rel).copied()),
            reason: None,
        };
        // A limit, not the schema, stopped the walk: no keyword to blame.
        if let Some((schema, options)) = self.schema
            && r.error.is_none()
        {
            let budget =
                crate::explain::Budget { tries: self.explain_limit, time: self.explain_time };
            r.reason = Some(crate::explain::reason(schema, options, body, rel, at_end, budget));
        }
        r
    }

    /// A few tokens of a mask: those sharing the longest start with the
    /// refused token `like` first (the nearest alternatives to what was
    /// written), then the shortest, whitespace-only ones last; stop tokens
    /// as `<end>`.
    fn shown(
        &self,
        mask: impl Iterator<Item = TokenId>,
        stop: &[TokenId],
        like: &[u8],
    ) -> Vec<String> {
        let mut ends = false;
        let mut texts: Vec<(usize, bool, usize, String)> = Vec::new();
        for t in mask {
            if stop.contains(&t) {
                ends = true;
                continue;
            }
            let Some(b) = self.tokenizer.token_bytes(t.0) else { continue };
            let blank = b.iter().all(|&c| is_json_ws(c));
            let shared = b.iter().zip(like).take_while(|(x, y)| x == y).count();
            let text = String::from_utf8_lossy(b).into_owned();
            texts.push((usize::MAX - shared, blank, b.len(), text));
        }
        texts.sort();
        texts.dedup_by(|a, b| a.3 == b.3);
        let mut out: Vec<String> = Vec::new();
        if ends {
            out.push("<end>".to_string());
        }
        out.extend(texts.into_iter().map(|t| t.3).take(ALLOWED_SHOWN - out.len()));
        out
    }
}

/// What a byte-level parse of a prefix found.
struct Scan {
    /// The offset of the first byte refused.
    refused: Option<usize>,
    /// The lexemes in progress and those allowed next, where it stopped.
    expect: (Vec<String>, Vec<String>),
    /// A limit that stopped the parse.
    error: Option<String>,
}

/// Parses `bytes` one by one until one is refused.
fn scan_bytes(grammar: &Grammar, bytes: &[u8]) -> Scan {
    let mut p = match Parser::new(grammar.earley(), &|_| None) {
        Ok(p) => p,
        Err(e) => {
            return Scan { refused: None, expect: Default::default(), error: Some(e.to_string()) };
        }
    };
    let mut refused = None;
    let mut error = None;
    for (i, &b) in bytes.iter().enumerate() {
        match p.try_consume_byte(b) {
            Ok(true) => {
                p.take_hidden(&bytes[..=i]);
            }
            Ok(false) => {
                refused = Some(i);
                break;
            }
            Err(e) => {
                error = Some(e.to_string());
                refused = Some(i);
                break;
            }
        }
    }
    let names = |p: &Parser, ids: Vec<lexer::LexemeId>| -> Vec<String> {
        let mut v: Vec<String> =
            ids.into_iter().map(|l| p.lexer().lexeme_name(l).to_owned()).collect();
        v.sort();
        v.dedup();
        v
    };
    let in_progress = names(&p, p.lexemes_in_progress());
    let next = p.allowed_lexemes();
    let expected = names(&p, next);
    Scan { refused, expect: (in_progress, expected), error }
}

/// The 1-based line and column (in characters) of byte `offset`.
pub fn line_column(doc: &[u8], offset: usize) -> (usize, usize) {
    let before = &doc[..offset.min(doc.len())];
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    // Characters: every byte that does not continue a UTF-8 sequence.
    let column = 1 + before[line_start..].iter().filter(|&&b| b & 0xC0 != 0x80).count();
    (line, column)
}

/// One open container of [`instance_pointer`]'s scan.
enum Open {
    /// An object: the key of the member being read, once its `:` is seen.
    Object(Option<String>),
    /// An array: the index of the item being read, once it starts.
    Array(usize, bool),
}

/// The JSON pointer of the value a JSON text prefix ends in, where the
/// byte `next` was refused: the container when the prefix ends between
/// members, or when `next` would end a member (`,`) or the container
/// (`}`, `]`); `None` when the prefix is not the start of a JSON text.
pub fn instance_pointer(prefix: &[u8], next: Option<u8>) -> Option<String> {
    let mut stack: Vec<Open> = Vec::new();
    let mut i = 0;
    let mut last_key: Option<String> = None;
    while i < prefix.len() {
        let b = prefix[i];
        match b {
            b'{' => {
                mark_item(&mut stack);
                stack.push(Open::Object(None));
            }
            b'[' => {
                mark_item(&mut stack);
                stack.push(Open::Array(0, false));
            }
            b'}' | b']' => {
                stack.pop()?;
            }
            b',' => match stack.last_mut()? {
                Open::Object(k) => *k = None,
                Open::Array(n, started) => {
                    *n += 1;
                    *started = false;
                }
            },
            b':' => {
                if let Some(Open::Object(k)) = stack.last_mut() {
                    *k = last_key.take();
                }
            }
            b'"' => {
                // A string: a key (in an object before `:`) or a value.
                let mut j = i + 1;
                while j < prefix.len() && prefix[j] != b'"' {
                    j += if prefix[j] == b'\\' { 2 } else { 1 };
                }
                let is_key = matches!(stack.last(), Some(Open::Object(None)));
                if j >= prefix.len() {
                    // The prefix ends inside it.
                    if !is_key {
                        mark_item(&mut stack);
                    }
                    break;
                }
                if is_key {
                    last_key = serde_json::from_slice::<String>(&prefix[i..=j]).ok();
                } else {
                    mark_item(&mut stack);
                }
                i = j;
            }
            b if is_json_ws(b) => {}
            _ => mark_item(&mut stack),
        }
        i += 1;
    }
    if matches!(next, Some(b',' | b'}' | b']'))
        && let Some(top) = stack.last_mut()
    {
        match top {
            Open::Object(k) => *k = None,
            Open::Array(_, started) => *started = false,
        }
    }
    let mut out = String::new();
    for o in &stack {
        match o {
            Open::Object(Some(k)) => {
                let _ = write!(out, "/{}", k.replace('~', "~0").replace('/', "~1"));
            }
            Open::Array(n, true) => {
                let _ = write!(out, "/{n}");
            }
            _ => break,
        }
    }
    Some(out)
}

/// A value starts in the innermost container (an array item begins).
fn mark_item(stack: &mut [Open]) {
    if let Some(Open::Array(_, started)) = stack.last_mut() {
        *started = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_of_prefixes() {
        let p = |s: &str| instance_pointer(s.as_bytes(), None);
        assert_eq!(p(""), Some(String::new()));
        assert_eq!(p(r#"{"a": "#).as_deref(), Some("/a"));
        assert_eq!(p(r#"{"a": [1, {"b~/": tr"#).as_deref(), Some("/a/1/b~0~1"));
        assert_eq!(p(r#"{"a": 1, "#).as_deref(), Some(""));
        assert_eq!(p(r#"{"a": 1, "b"#).as_deref(), Some(""));
        assert_eq!(p(r#"[1, 2, "x"#).as_deref(), Some("/2"));
        assert_eq!(p(r#"[1, 2, "#).as_deref(), Some(""));
        assert_eq!(p(r#"{"a": "x\"y", "b": ["#).as_deref(), Some("/b"));
        assert_eq!(p("]"), None);
        // Refused where a member or the container would end: the container.
        assert_eq!(instance_pointer(br#"{"a": {"b": 1"#, Some(b',')).as_deref(), Some("/a"));
        assert_eq!(instance_pointer(br#"{"a": [1"#, Some(b']')).as_deref(), Some("/a"));
    }

    #[test]
    fn lines_and_columns_count_characters() {
        let doc = "{\n  \"é\": x".as_bytes();
        assert_eq!(line_column(doc, 0), (1, 1));
        let x = doc.len() - 1;
        assert_eq!(line_column(doc, x), (2, 8));
    }
}
