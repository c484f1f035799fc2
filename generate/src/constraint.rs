//! The one place this crate touches structgen's front door: output
//! [`Format`]s compiled to a [`structgen::Grammar`], and per step through a
//! [`structgen::Matcher`] the mask, the forced tokens and the consumed
//! token ([`Constraint`]).
//!
//! Everything the generation loop needs from structgen goes through this
//! file, so a change of the matcher's API changes this file only.

use serde_json::Value;
use structgen::toktrie::TokenId;
use structgen::{CompileOptions, Grammar, GrammarSpec, Matcher, Vocabulary};

use crate::error::Error;

/// What the output must be, in generation's terms: a JSON Schema laid out
/// as `json.dumps` writes JSON, any JSON object, JSON between a fixed text
/// (a tool call), or a grammar in one of the languages structgen compiles.
/// [`compile`](Format::compile) gives the [`structgen::Grammar`]; any
/// other `Grammar` works with the [`Generator`](crate::Generator) too.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Format {
    /// A JSON Schema, generated as `json.dumps` writes JSON: `", "` between
    /// items, `": "` after keys, no other whitespace, properties in schema
    /// order (the separators are then forced tokens).
    JsonSchema(Value),
    /// Any JSON object (OpenAI's `json_object`).
    JsonObject,
    /// JSON under a schema between a fixed text before and after it (a
    /// model's tool-call syntax: `<tool_call>[...]</tool_call>`).
    JsonSchemaBetween {
        /// The text before the JSON.
        before: String,
        /// The schema.
        schema: Value,
        /// The text after the JSON.
        after: String,
    },
    /// A Lark-like grammar (llguidance's dialect; `%json` embeds schemas).
    Lark(String),
    /// A GBNF grammar (llama.cpp's).
    Gbnf(String),
    /// An anchored regular expression.
    Regex(String),
}

/// The longest string value a schema without `maxLength` lets
/// the model write, in characters: a small model that loops inside a string
/// otherwise writes until the token limit.
pub const MAX_STRING_CHARS: usize = 256;

/// The longest number the model may write, in characters: enough for every
/// `f64` in its shortest round-trip form (`-2.2250738585072014e-308` has
/// 24), where a looping model writes fraction digits forever.
pub const MAX_NUMBER_CHARS: usize = 24;

/// The longest key the model may write where the schema lets any text be a
/// key (`additionalProperties`), in characters.
pub const MAX_KEY_CHARS: usize = 64;

/// The most members one object may have beyond its listed properties: a
/// small model asked for a field the schema forbids invents keys for as long
/// as it is let (MaskBench's `Github_trivial---o30283` did until the token
/// limit).
pub const MAX_ADDITIONAL_MEMBERS: usize = 16;

impl Format {
    /// The JSON Schema options used for generation (see
    /// [`Format::JsonSchema`]): `json.dumps` separators, no other
    /// whitespace, free strings and numbers capped at [`MAX_STRING_CHARS`]
    /// and [`MAX_NUMBER_CHARS`] characters, free keys at [`MAX_KEY_CHARS`],
    /// and at most [`MAX_ADDITIONAL_MEMBERS`] members beyond the listed
    /// properties of an object.
    pub fn json_options() -> jsonschema::Options {
        jsonschema::Options::compact()
            .with_separators(", ", ": ")
            .with_length_caps(Some(MAX_STRING_CHARS), Some(MAX_NUMBER_CHARS))
            .with_member_caps(Some(MAX_KEY_CHARS), Some(MAX_ADDITIONAL_MEMBERS))
    }

    /// Compiles the grammar.
    ///
    /// # Errors
    /// The front-end's error, with its line and column or JSON pointer.
    pub fn compile(&self) -> Result<Grammar, Error> {
        let opts = CompileOptions::default();
        let json = |schema: &Value| GrammarSpec::JsonSchema {
            schema: schema.clone(),
            options: Format::json_options(),
        };
        let spec = match self {
            Format::JsonSchema(schema) => json(schema),
            Format::JsonObject => json(&serde_json::json!({"type": "object"})),
            Format::JsonSchemaBetween { before, schema, after } => {
                return json_between(before, schema, after).map(Grammar::from_earley);
            }
            Format::Lark(src) => GrammarSpec::Lark(src.clone()),
            Format::Gbnf(src) => GrammarSpec::Gbnf(src.clone()),
            Format::Regex(src) => GrammarSpec::Regex(src.clone()),
        };
        Grammar::compile(&spec, &opts)
            .map_err(|e| Error::Grammar(format!("{}: {e}", spec.kind_name())))
    }
}

/// The grammar of `before`, a JSON text under `schema`, and `after`.
fn json_between(before: &str, schema: &Value, after: &str) -> Result<earley::Grammar, Error> {
    let compiled = jsonschema::compile(schema, &Format::json_options())
        .map_err(|e| Error::Grammar(format!("schema: {e}")))?;
    let g = &compiled.grammar;
    let mut b = earley::GrammarBuilder::new();
    let lexemes: Vec<earley::SymbolId> = g
        .lexemes
        .iter()
        .map(|l| b.add_lexeme(lexer::LexemeSpec::new(l.name.clone(), l.regex.clone())))
        .collect();
    let json = g.add_rules(&mut b, &lexemes);
    let mut rhs = Vec::new();
    if !before.is_empty() {
        rhs.push(b.literal(before));
    }
    rhs.push(json);
    if !after.is_empty() {
        rhs.push(b.literal(after));
    }
    let start = b.add_nonterminal("start");
    b.add_rule(start, &rhs);
    b.build(start, earley::Limits::default()).map_err(|e| Error::Grammar(format!("schema: {e}")))
}

/// A grammar applied to one generation: masks, forced tokens, consumption.
#[derive(Debug)]
pub struct Constraint {
    matcher: Matcher,
    /// The matcher's stop tokens (fixed for its life), kept so a step can
    /// read them beside the borrowed mask.
    stop: Vec<TokenId>,
}

fn matcher_err(e: impl std::fmt::Display) -> Error {
    Error::Grammar(e.to_string())
}

impl Constraint {
    /// A constraint at the start of `grammar` over `vocab` (whose stop
    /// tokens end generation); forced tokens are computed when `forcing`
    /// and the vocabulary supports them.
    ///
    /// # Errors
    /// The grammar names a special token the vocabulary lacks.
    pub fn new(vocab: &Vocabulary, grammar: &Grammar, forcing: bool) -> Result<Constraint, Error> {
        let mut matcher = Matcher::new(vocab, grammar).map_err(matcher_err)?;
        matcher.set_forcing(forcing);
        let stop = matcher.stop_tokens().to_vec();
        Ok(Constraint { matcher, stop })
    }

    /// Computes the mask and sets the logits of the tokens outside it to
    /// negative infinity. Returns the number of allowed tokens.
    ///
    /// # Errors
    /// The matcher stopped in an error or exceeded a limit.
    pub fn mask_logits(&mut self, logits: &mut [f32]) -> Result<usize, Error> {
        // Computed for this position already by `only_stop_allowed` (the
        // matcher caches it), or now.
        let mask = self.matcher.compute_mask().map_err(matcher_err)?;
        mask.apply_to_logits(logits);
        Ok(mask.count())
    }

    /// Whether the grammar allows nothing but a stop token now (the text is
    /// complete). Computes the mask.
    ///
    /// # Errors
    /// As [`mask_logits`](Constraint::mask_logits).
    pub fn only_stop_allowed(&mut self) -> Result<bool, Error> {
        let mask = self.matcher.compute_mask().map_err(matcher_err)?;
        let n = mask.count();
        Ok(n > 0 && n == self.stop.iter().filter(|&&t| mask.contains(t)).count())
    }

    /// The tokens the grammar forces now, consumed (empty when forcing is
    /// off or nothing is forced).
    ///
    /// # Errors
    /// The matcher stopped in an error or exceeded a limit.
    pub fn take_forced(&mut self) -> Result<Vec<u32>, Error> {
        let forced = self.matcher.consume_forced().map_err(matcher_err)?;
        Ok(forced.into_iter().map(|t| t.0).collect())
    }

    /// Consumes a sampled token.
    ///
    /// # Errors
    /// A token outside the mask.
    pub fn consume(&mut self, token: u32) -> Result<(), Error> {
        self.matcher.consume_token(TokenId(token)).map_err(matcher_err)
    }

    /// Whether the text so far is complete under the grammar.
    pub fn is_accepting(&self) -> bool {
        self.matcher.is_accepting()
    }
}
