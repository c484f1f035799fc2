//! Directives that embed settings or other languages in a Lark grammar:
//! `%llguidance { … }` (llguidance's grammar options) and `%json { … }` (a
//! JSON Schema compiled by the `jsonschema` crate, with its layout from
//! [`Config::json`](crate::Config::json) and the schema's own
//! `"x-guidance"` settings, see [`x_guidance`](crate::x_guidance)).

use earley::SymbolId;
use lexer::LexemeSpec;

use super::Lowering;
use crate::error::{Error, ErrorKind};
use crate::span::Span;

impl<'a> Lowering<'a> {
    /// `%llguidance {...}`: the options llguidance 1.9 knows. Options that
    /// do not change which texts are accepted are accepted and ignored;
    /// `ignore_once` sets the builder's [`GrammarBuilder::ignore_once`].
    pub(super) fn options(&mut self, v: &serde_json::Value, span: Span) -> Result<(), Error> {
        let Some(obj) = v.as_object() else {
            return Err(self.err(ErrorKind::Invalid, "`%llguidance` takes a JSON object", span));
        };
        for (k, val) in obj {
            if k == "skip_repetition" {
                return Err(self.err(
                    ErrorKind::Unsupported,
                    "`%llguidance` option `skip_repetition` is not an llguidance 1.9 option; \
                     write `\"ignore_once\": true` for a `%ignore` that matches once",
                    span,
                ));
            }
            let Some(b) = val.as_bool() else {
                return Err(self.err(
                    ErrorKind::Invalid,
                    format!("`%llguidance` option `{k}` must be true or false"),
                    span,
                ));
            };
            match k.as_str() {
                // Tokenization of forced text: no effect on masks.
                "no_forcing" => {}
                "ignore_once" => self.b.ignore_once(b),
                "allow_invalid_utf8" | "allow_initial_skip" if b => {
                    return Err(self.err(
                        ErrorKind::Unsupported,
                        format!("`%llguidance` option `{k}: true` is not supported"),
                        span,
                    ));
                }
                "allow_invalid_utf8" | "allow_initial_skip" => {}
                _ => {
                    return Err(self.err(
                        ErrorKind::Unsupported,
                        format!("unknown `%llguidance` option `{k}`"),
                        span,
                    ));
                }
            }
        }
        Ok(())
    }

    /// `%json {...}`: the schema compiled by the `jsonschema` crate, its
    /// lexemes and rules added to this grammar; the symbol of its start
    /// rule. The layout is [`Config::json`](crate::Config::json) (by
    /// default llguidance's: flexible whitespace between JSON tokens, never
    /// before the first or after the last; schema property order) with the
    /// schema's own `"x-guidance"` settings on top.
    pub(super) fn json_symbol(
        &mut self,
        schema: &serde_json::Value,
        span: Span,
    ) -> Result<SymbolId, Error> {
        if self.has_ignore {
            // llguidance keeps a JSON Schema's lexemes in their own class,
            // where the grammar's `%ignore` does not apply; one engine-wide
            // ignore would let it in between JSON tokens.
            return Err(self.err(
                ErrorKind::Unsupported,
                "`%json` in a grammar with `%ignore` is not supported",
                span,
            ));
        }
        let (schema, options) = crate::x_guidance::split(schema, self.config.json.clone())
            .map_err(|e| {
                let kind =
                    if e.is_unsupported() { ErrorKind::Unsupported } else { ErrorKind::Invalid };
                self.err(kind, format!("`%json`: {e}"), span)
            })?;
        let compiled = jsonschema::compile(&schema, &options).map_err(|e| {
            let kind = match e.kind() {
                jsonschema::ErrorKind::LimitExceeded => ErrorKind::Limit,
                jsonschema::ErrorKind::UnsupportedKeyword
                | jsonschema::ErrorKind::UnsupportedPattern
                | jsonschema::ErrorKind::UnknownFormat
                | jsonschema::ErrorKind::Inexpressible => ErrorKind::Unsupported,
                _ => ErrorKind::Invalid,
            };
            self.err(kind, format!("failed to compile JSON schema: {e}"), span)
        })?;
        let g = &compiled.grammar;
        let lexemes: Vec<SymbolId> = g
            .lexemes
            .iter()
            .map(|l| self.add_lexeme(LexemeSpec::new(l.name.clone(), l.regex.clone()), span))
            .collect();
        Ok(g.add_rules(&mut self.b, &lexemes))
    }
}
