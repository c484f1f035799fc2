//! Requests in llguidance's top-level grammar format, so an engine that
//! sends llguidance grammars today switches without rewriting them.
//!
//! The format (llguidance 1.9's `TopLevelGrammar`):
//!
//! ```json
//! {"grammars": [{"name": "…", "lark_grammar": "start: …"}], "max_tokens": 100}
//! {"grammars": [{"json_schema": {"type": "object", "x-guidance": {…}}}]}
//! ```
//!
//! - `grammars` holds one grammar with exactly one of `lark_grammar` (the
//!   Lark dialect, `%json` included) or `json_schema`; `name` is accepted
//!   and ignored. Several grammars (referenced from Lark as `@name`) are
//!   not supported yet: an error says so.
//! - `max_tokens` limits the tokens a matcher consumes
//!   ([`Grammar::max_tokens`](crate::Grammar::max_tokens)).
//! - A JSON Schema compiles with llguidance's JSON defaults
//!   ([`jsonschema::Options::llguidance_compat`]: flexible whitespace, `,`
//!   and `:`, schema property order); its top-level `"x-guidance"` object
//!   maps onto our options ([`grammar::x_guidance`], shared with Lark's
//!   `%json`): `item_separator`, `key_separator` (regexes),
//!   `whitespace_flexible`, `whitespace_pattern`, `coerce_one_of`,
//!   `lenient`, and our `property_order` (`"schema"` or `"any"`);
//!   `json_allowed_escapes` and `json_allow_general_unicode_escapes` only
//!   at their defaults.
//!
//! Unlike llguidance, which ignores fields it does not know, every unknown
//! field or setting is an error ([`ErrorKind::Request`]) with its JSON
//! pointer: a misspelt setting never silently loosens a grammar.

use serde_json::Value;

use crate::error::{Error, ErrorKind, Location, request_error, request_object};

/// A compiled request.
pub(crate) struct Compiled {
    pub(crate) grammar: earley::Grammar,
    pub(crate) warnings: Vec<String>,
    pub(crate) max_tokens: Option<usize>,
}

/// Compiles a request.
pub(crate) fn compile(request: &Value, cfg: &grammar::Config) -> Result<Compiled, Error> {
    let top = request_object(request, "", &["grammars", "max_tokens"])?;
    let max_tokens = match top.get("max_tokens") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            None => return Err(request_error("/max_tokens", "expected a non-negative integer")),
        },
    };
    let grammars = match top.get("grammars") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(request_error("/grammars", "no grammar given")),
        Some(_) => return Err(request_error("/grammars", "expected an array of grammars")),
        None => return Err(request_error("", "missing field `grammars`")),
    };
    if grammars.len() > 1 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "a request with {} grammars (referenced from Lark as `@name`) is not supported; \
                 send one grammar",
                grammars.len()
            ),
        )
        .at(Location::Pointer("/grammars/1".to_owned())));
    }
    let g = request_object(&grammars[0], "/grammars/0", &["name", "json_schema", "lark_grammar"])?;
    let present = |k: &str| g.get(k).is_some_and(|v| !v.is_null());
    let (grammar, warnings) = match (present("lark_grammar"), present("json_schema")) {
        (true, false) => {
            let Some(src) = g["lark_grammar"].as_str() else {
                return Err(request_error("/grammars/0/lark_grammar", "expected a string"));
            };
            (grammar::lark::compile(src, cfg).map_err(Error::from)?, Vec::new())
        }
        (false, true) => {
            let (schema, options) = schema_options(&g["json_schema"])?;
            crate::spec::compile_json(&schema, &options, cfg.parser_limits)
                .map_err(|e| e.in_grammar(0, "json_schema"))?
        }
        (true, true) => {
            return Err(request_error(
                "/grammars/0",
                "both `lark_grammar` and `json_schema` are set; give one",
            ));
        }
        (false, false) => {
            return Err(request_error(
                "/grammars/0",
                "neither `lark_grammar` nor `json_schema` is set",
            ));
        }
    };
    Ok(Compiled { grammar, warnings, max_tokens })
}

/// The schema without its `"x-guidance"` key, and the options that key sets
/// on top of llguidance's JSON defaults (see [`grammar::x_guidance`]).
fn schema_options(schema: &Value) -> Result<(Value, jsonschema::Options), Error> {
    grammar::x_guidance::split(schema, jsonschema::Options::llguidance_compat()).map_err(|e| {
        let kind = if e.is_unsupported() { ErrorKind::Unsupported } else { ErrorKind::Request };
        Error::new(kind, e.message())
            .at(Location::Pointer(format!("/grammars/0/json_schema{}", e.pointer())))
    })
}
