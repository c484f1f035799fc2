//! Structural tags: free text with triggered constrained regions (tool
//! calls, reasoning blocks), in XGrammar's structural-tag JSON format.
//!
//! A structural tag describes a whole model output as a tree of formats:
//!
//! | `type` | fields | matches |
//! | --- | --- | --- |
//! | `const_string` | `value` | exactly `value` |
//! | `json_schema` | `json_schema` | JSON valid under the schema |
//! | `regex` | `pattern` | the regular expression (derivre syntax) |
//! | `grammar` | `grammar` | a GBNF grammar (XGrammar's EBNF, `root ::= …`) or, when it starts with `%lark`, a Lark grammar |
//! | `any_text` | `excludes` (or `excluded_str`) | any text not containing an excluded string |
//! | `sequence` | `elements` | the elements one after another |
//! | `or` | `elements` | one of the elements |
//! | `tag` | `begin`, `content`, `end` | `begin`, then `content`, then `end` |
//! | `triggered_tags` | `triggers`, `tags`, `at_least_one`, `stop_after_first` | free text; where a trigger appears, one of the tags whose `begin` starts with it; then free text again |
//! | `tags_with_separator` | `tags`, `separator`, `at_least_one`, `stop_after_first` | tags separated by `separator`, nothing else |
//! | `token` | `token` | one special token (our extension) |
//!
//! The request is `{"type": "structural_tag", "format": {…}}`, as engines
//! send it in `response_format` (see [`StructuralTag::from_json`]).
//!
//! # Semantics (as XGrammar documents them)
//! - `any_text` followed by a constant text `E` (a tag's `end`, the next
//!   element of a sequence) ends at the first occurrence of `E`: the text
//!   never contains `E`. At the end of the structure it runs to the end of
//!   the output. Followed by anything else (a JSON value, a regex) it is an
//!   error, since the text would have no end.
//! - `triggered_tags`: the free text ends at the first occurrence of a
//!   trigger (or of the text that follows the structure); the rest of that
//!   tag's `begin`, its content and its `end` follow, then free text again.
//!   Every tag's `begin` starts with exactly one trigger. `at_least_one`:
//!   the output starts with a tag (no text before the first one).
//!   `stop_after_first`: the structure ends after the first tag.
//! - `tags_with_separator`: zero or more tags (one or more with
//!   `at_least_one`; at most one with `stop_after_first`) separated by the
//!   separator.
//! - Begin, end texts and triggers are text, or special tokens written
//!   `{"token": "<|python_tag|>"}` (matched as the token, never as its text).
//!   Special token names are written as the tokenizer names them, in
//!   angle brackets (`<|python_tag|>`, `<think>`, `<｜tool▁calls▁begin｜>`).
//!
//! # How
//! [`StructuralTag::to_lark`] lowers the tree to the Lark dialect (see
//! `lower.rs`): free text becomes one lexeme that ends at its first stop
//! string (`(T E) & ~(T (E|trigger…) T+)`, lazy), JSON Schemas become
//! `%json`, special tokens `<name>`; the Lark grammar compiles as usual.
//! Masks in free text are therefore exact, and a trigger inside a JSON
//! string never re-triggers (the JSON grammar owns those bytes).
//!
//! # Presets
//! [`presets`] builds the structures of current model families' tool-call
//! and reasoning syntaxes from OpenAI-style `tools` and `tool_choice`.

mod lower;
pub mod presets;

use serde_json::{Map, Value, json};

use crate::error::{Error, Location, request_error, request_object};

/// A begin text, end text, trigger or separator: text, or one special token.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delimiter {
    /// Literal text (may be empty).
    Text(String),
    /// A special token by name (`<|python_tag|>`), matched as the token.
    Token(String),
}

impl Delimiter {
    /// Literal text.
    pub fn text(s: impl Into<String>) -> Delimiter {
        Delimiter::Text(s.into())
    }

    /// A special token by name.
    pub fn token(name: impl Into<String>) -> Delimiter {
        Delimiter::Token(name.into())
    }

    fn to_json(&self) -> Value {
        match self {
            Delimiter::Text(s) => Value::String(s.clone()),
            Delimiter::Token(t) => json!({"token": t}),
        }
    }
}

/// A tag: `begin`, then `content`, then `end`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Tag {
    /// What opens the tag.
    pub begin: Delimiter,
    /// What is inside.
    pub content: Box<Format>,
    /// What closes the tag.
    pub end: Delimiter,
}

impl Tag {
    /// A tag.
    pub fn new(begin: Delimiter, content: Format, end: Delimiter) -> Tag {
        Tag { begin, content: Box::new(content), end }
    }
}

/// Free text with tags where triggers appear (see the module docs).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TriggeredTags {
    /// The triggers; every tag's `begin` starts with exactly one of them.
    pub triggers: Vec<Delimiter>,
    /// The tags.
    pub tags: Vec<Tag>,
    /// The output starts with a tag.
    pub at_least_one: bool,
    /// The structure ends after the first tag.
    pub stop_after_first: bool,
}

impl TriggeredTags {
    /// Triggered tags, neither `at_least_one` nor `stop_after_first`.
    pub fn new(triggers: Vec<Delimiter>, tags: Vec<Tag>) -> TriggeredTags {
        TriggeredTags { triggers, tags, at_least_one: false, stop_after_first: false }
    }
}

/// Tags separated by a separator, nothing else.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TagsWithSeparator {
    /// The tags.
    pub tags: Vec<Tag>,
    /// Between two tags.
    pub separator: Delimiter,
    /// At least one tag.
    pub at_least_one: bool,
    /// At most one tag.
    pub stop_after_first: bool,
}

impl TagsWithSeparator {
    /// Zero or more tags separated by `separator`.
    pub fn new(tags: Vec<Tag>, separator: Delimiter) -> TagsWithSeparator {
        TagsWithSeparator { tags, separator, at_least_one: false, stop_after_first: false }
    }
}

/// One node of a structural tag (see the module docs for each kind).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Format {
    /// Exactly this text.
    ConstString(String),
    /// One special token.
    Token(String),
    /// JSON valid under the schema.
    JsonSchema(Value),
    /// A regular expression.
    Regex(String),
    /// A GBNF grammar (or Lark, when the text starts with `%lark`).
    Grammar(String),
    /// Any text containing none of `excludes`.
    AnyText {
        /// Strings the text must not contain.
        excludes: Vec<String>,
    },
    /// One after another.
    Sequence(Vec<Format>),
    /// One of.
    Or(Vec<Format>),
    /// `begin content end`.
    Tag(Tag),
    /// Free text with triggered tags.
    TriggeredTags(TriggeredTags),
    /// Tags with a separator.
    TagsWithSeparator(TagsWithSeparator),
}

impl Format {
    /// Any text.
    pub fn any_text() -> Format {
        Format::AnyText { excludes: Vec::new() }
    }

    /// The format in XGrammar's JSON shape.
    pub fn to_json(&self) -> Value {
        let tag_json = |t: &Tag| {
            json!({"type": "tag", "begin": t.begin.to_json(), "content": t.content.to_json(),
                   "end": t.end.to_json()})
        };
        match self {
            Format::ConstString(v) => json!({"type": "const_string", "value": v}),
            Format::Token(t) => json!({"type": "token", "token": t}),
            Format::JsonSchema(s) => json!({"type": "json_schema", "json_schema": s}),
            Format::Regex(p) => json!({"type": "regex", "pattern": p}),
            Format::Grammar(g) => json!({"type": "grammar", "grammar": g}),
            Format::AnyText { excludes } if excludes.is_empty() => json!({"type": "any_text"}),
            Format::AnyText { excludes } => json!({"type": "any_text", "excludes": excludes}),
            Format::Sequence(e) => {
                json!({"type": "sequence", "elements": e.iter().map(Format::to_json).collect::<Vec<_>>()})
            }
            Format::Or(e) => {
                json!({"type": "or", "elements": e.iter().map(Format::to_json).collect::<Vec<_>>()})
            }
            Format::Tag(t) => tag_json(t),
            Format::TriggeredTags(t) => json!({
                "type": "triggered_tags",
                "triggers": t.triggers.iter().map(Delimiter::to_json).collect::<Vec<_>>(),
                "tags": t.tags.iter().map(tag_json).collect::<Vec<_>>(),
                "at_least_one": t.at_least_one,
                "stop_after_first": t.stop_after_first,
            }),
            Format::TagsWithSeparator(t) => json!({
                "type": "tags_with_separator",
                "tags": t.tags.iter().map(tag_json).collect::<Vec<_>>(),
                "separator": t.separator.to_json(),
                "at_least_one": t.at_least_one,
                "stop_after_first": t.stop_after_first,
            }),
        }
    }
}

/// A whole structural tag: `{"type": "structural_tag", "format": …}`.
///
/// ```
/// use structgen::structural_tag::StructuralTag;
/// use structgen::{Grammar, GrammarSpec};
///
/// let request = serde_json::json!({"type": "structural_tag", "format": {
///     "type": "triggered_tags",
///     "triggers": ["<tool_call>"],
///     "tags": [{"begin": "<tool_call>", "end": "</tool_call>",
///               "content": {"type": "json_schema", "json_schema": {"type": "integer"}}}]
/// }});
/// let tag = StructuralTag::from_json(&request)?;
/// assert!(tag.to_lark()?.contains("%json"));
/// let g = Grammar::compile(&GrammarSpec::StructuralTag(request), &Default::default())?;
/// assert!(g.accepts(b"Let me see. <tool_call>42</tool_call> Done."));
/// assert!(!g.accepts(b"Let me see. <tool_call>x</tool_call>"));
/// # Ok::<(), structgen::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StructuralTag {
    /// The root format.
    pub format: Format,
}

impl StructuralTag {
    /// A structural tag with root `format`.
    pub fn new(format: Format) -> StructuralTag {
        StructuralTag { format }
    }

    /// Reads a request in XGrammar's structural-tag format.
    ///
    /// # Errors
    /// [`ErrorKind::Request`](crate::ErrorKind::Request) with the JSON pointer of the first field that
    /// is missing, unknown or of the wrong type.
    pub fn from_json(v: &Value) -> Result<StructuralTag, Error> {
        let top = request_object(v, "", &["type", "format"])?;
        match top.get("type").and_then(Value::as_str) {
            Some("structural_tag") => {}
            _ => return Err(request_error("/type", "expected \"structural_tag\"")),
        }
        let Some(f) = top.get("format") else {
            return Err(request_error("/format", "missing field `format`"));
        };
        Ok(StructuralTag { format: format(f, "/format")? })
    }

    /// The request in XGrammar's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({"type": "structural_tag", "format": self.format.to_json()})
    }

    /// The equivalent grammar in the Lark dialect (`grammar::lark`).
    ///
    /// # Errors
    /// A structure with no grammar: a tag whose `begin` starts with no
    /// trigger, free text followed by something other than a constant
    /// text, a special token or the end, a special token name not in angle
    /// brackets; each with the JSON pointer of the offending node.
    pub fn to_lark(&self) -> Result<String, Error> {
        lower::to_lark(&self.format)
    }
}

fn field<'a>(map: &'a Map<String, Value>, pointer: &str, key: &str) -> Result<&'a Value, Error> {
    map.get(key).ok_or_else(|| request_error(pointer, format!("missing field `{key}`")))
}

fn string(v: &Value, pointer: &str) -> Result<String, Error> {
    v.as_str().map(str::to_owned).ok_or_else(|| request_error(pointer, "expected a string"))
}

fn boolean(map: &Map<String, Value>, pointer: &str, key: &str) -> Result<bool, Error> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(request_error(&format!("{pointer}/{key}"), "expected a boolean")),
    }
}

fn array<'a>(map: &'a Map<String, Value>, pointer: &str, key: &str) -> Result<&'a [Value], Error> {
    match field(map, pointer, key)? {
        Value::Array(a) => Ok(a),
        _ => Err(request_error(&format!("{pointer}/{key}"), "expected an array")),
    }
}

fn delimiter(v: &Value, pointer: &str) -> Result<Delimiter, Error> {
    match v {
        Value::String(s) => Ok(Delimiter::Text(s.clone())),
        Value::Object(_) => {
            let m = request_object(v, pointer, &["type", "token"])?;
            if let Some(t) = m.get("type")
                && t.as_str() != Some("token")
            {
                return Err(request_error(&format!("{pointer}/type"), "expected \"token\""));
            }
            let name = string(field(m, pointer, "token")?, &format!("{pointer}/token"))?;
            Ok(Delimiter::Token(name))
        }
        _ => Err(request_error(pointer, "expected a string or {\"token\": name}")),
    }
}

fn tag(v: &Value, pointer: &str) -> Result<Tag, Error> {
    let m = request_object(v, pointer, &["type", "begin", "content", "end"])?;
    if let Some(t) = m.get("type")
        && t.as_str() != Some("tag")
    {
        return Err(request_error(&format!("{pointer}/type"), "expected \"tag\""));
    }
    Ok(Tag {
        begin: delimiter(field(m, pointer, "begin")?, &format!("{pointer}/begin"))?,
        content: Box::new(format(field(m, pointer, "content")?, &format!("{pointer}/content"))?),
        end: delimiter(field(m, pointer, "end")?, &format!("{pointer}/end"))?,
    })
}

fn tags(m: &Map<String, Value>, pointer: &str) -> Result<Vec<Tag>, Error> {
    let list = array(m, pointer, "tags")?;
    list.iter().enumerate().map(|(i, t)| tag(t, &format!("{pointer}/tags/{i}"))).collect()
}

fn formats(m: &Map<String, Value>, pointer: &str) -> Result<Vec<Format>, Error> {
    let list = array(m, pointer, "elements")?;
    list.iter().enumerate().map(|(i, e)| format(e, &format!("{pointer}/elements/{i}"))).collect()
}

fn format(v: &Value, pointer: &str) -> Result<Format, Error> {
    let Some(kind) = v.get("type").and_then(Value::as_str) else {
        return Err(request_error(pointer, "expected an object with a string `type`"));
    };
    let p = |k: &str| format!("{pointer}/{k}");
    Ok(match kind {
        "const_string" => {
            // XGrammar's docs spell the field `value` (one example `text`).
            let m = request_object(v, pointer, &["type", "value", "text"])?;
            let val = m.get("value").or_else(|| m.get("text"));
            let Some(val) = val else {
                return Err(request_error(pointer, "missing field `value`"));
            };
            Format::ConstString(string(val, &p("value"))?)
        }
        "token" => {
            let m = request_object(v, pointer, &["type", "token"])?;
            Format::Token(string(field(m, pointer, "token")?, &p("token"))?)
        }
        "json_schema" => {
            let m = request_object(v, pointer, &["type", "json_schema"])?;
            Format::JsonSchema(field(m, pointer, "json_schema")?.clone())
        }
        "regex" => {
            let m = request_object(v, pointer, &["type", "pattern"])?;
            Format::Regex(string(field(m, pointer, "pattern")?, &p("pattern"))?)
        }
        "grammar" => {
            let m = request_object(v, pointer, &["type", "grammar"])?;
            Format::Grammar(string(field(m, pointer, "grammar")?, &p("grammar"))?)
        }
        "any_text" => {
            let m = request_object(v, pointer, &["type", "excludes", "excluded_str"])?;
            let key = if m.contains_key("excludes") { "excludes" } else { "excluded_str" };
            let excludes = match m.get(key) {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, s)| string(s, &format!("{pointer}/{key}/{i}")))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(request_error(&p(key), "expected an array of strings")),
            };
            Format::AnyText { excludes }
        }
        "sequence" => {
            Format::Sequence(formats(request_object(v, pointer, &["type", "elements"])?, pointer)?)
        }
        "or" => Format::Or(formats(request_object(v, pointer, &["type", "elements"])?, pointer)?),
        "tag" => Format::Tag(tag(v, pointer)?),
        "triggered_tags" => {
            let m = request_object(
                v,
                pointer,
                &["type", "triggers", "tags", "at_least_one", "stop_after_first"],
            )?;
            let triggers = array(m, pointer, "triggers")?
                .iter()
                .enumerate()
                .map(|(i, t)| delimiter(t, &format!("{pointer}/triggers/{i}")))
                .collect::<Result<_, _>>()?;
            Format::TriggeredTags(TriggeredTags {
                triggers,
                tags: tags(m, pointer)?,
                at_least_one: boolean(m, pointer, "at_least_one")?,
                stop_after_first: boolean(m, pointer, "stop_after_first")?,
            })
        }
        "tags_with_separator" => {
            let m = request_object(
                v,
                pointer,
                &["type", "tags", "separator", "at_least_one", "stop_after_first"],
            )?;
            Format::TagsWithSeparator(TagsWithSeparator {
                tags: tags(m, pointer)?,
                separator: delimiter(field(m, pointer, "separator")?, &p("separator"))?,
                at_least_one: boolean(m, pointer, "at_least_one")?,
                stop_after_first: boolean(m, pointer, "stop_after_first")?,
            })
        }
        other => {
            return Err(request_error(
                &p("type"),
                format!(
                    "unknown format type `{other}` (known: const_string, json_schema, regex, \
                     grammar, any_text, sequence, or, tag, triggered_tags, tags_with_separator, token)"
                ),
            ));
        }
    })
}

/// Compiles a structural-tag request (the front door's
/// [`GrammarSpec::StructuralTag`](crate::GrammarSpec::StructuralTag)).
pub(crate) fn compile(request: &Value, cfg: &grammar::Config) -> Result<earley::Grammar, Error> {
    let tag = StructuralTag::from_json(request)?;
    tag.compile(cfg)
}

impl StructuralTag {
    /// Compiles the structure to the parser's grammar (through
    /// [`to_lark`](StructuralTag::to_lark)).
    ///
    /// # Errors
    /// As [`to_lark`](StructuralTag::to_lark), and the errors of the
    /// embedded JSON Schemas, regexes and grammars.
    pub fn compile(&self, cfg: &grammar::Config) -> Result<earley::Grammar, Error> {
        let lark = self.to_lark()?;
        grammar::lark::compile(&lark, cfg).map_err(|e| {
            let e = Error::from(e);
            Error::new(e.kind(), format!("in the structural tag's grammar: {e}"))
                .at(Location::Pointer("/format".to_owned()))
        })
    }
}
