//! The one place this crate touches structgen's matcher: grammars compiled
//! from a [`GrammarSpec`], the vocabulary trie with the model's stop tokens,
//! and per step the mask, the forced tokens and the consumed token.
//!
//! Everything the generation loop needs goes through [`Vocabulary`] and
//! [`Constraint`], so moving to another matcher API changes this file only.

use std::sync::Arc;

use serde_json::Value;
use structgen::Matcher;
use toktrie::{TokTrie, TokenId, TokenSet};

use crate::error::Error;

/// A grammar, in one of the languages structgen compiles.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GrammarSpec {
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

impl GrammarSpec {
    /// The JSON Schema options used for generation (see
    /// [`GrammarSpec::JsonSchema`]).
    pub fn json_options() -> jsonschema::Options {
        jsonschema::Options::compact().with_separators(", ", ": ")
    }

    /// Compiles the grammar.
    ///
    /// # Errors
    /// The front-end's error, with its line and column or JSON pointer.
    pub fn compile(&self) -> Result<earley::Grammar, Error> {
        let config = grammar::Config::default();
        match self {
            GrammarSpec::JsonSchema(schema) => json_between("", schema, ""),
            GrammarSpec::JsonObject => json_between("", &serde_json::json!({"type": "object"}), ""),
            GrammarSpec::JsonSchemaBetween { before, schema, after } => {
                json_between(before, schema, after)
            }
            GrammarSpec::Lark(src) => grammar::lark::compile(src, &config)
                .map_err(|e| Error::Grammar(format!("lark grammar: {e}"))),
            GrammarSpec::Gbnf(src) => grammar::gbnf::compile(src, &config)
                .map_err(|e| Error::Grammar(format!("gbnf grammar: {e}"))),
            GrammarSpec::Regex(src) => grammar::regex::compile(src)
                .map_err(|e| Error::Grammar(format!("regex: {e}"))),
        }
    }
}

/// The grammar of `before`, a JSON text under `schema`, and `after`.
fn json_between(before: &str, schema: &Value, after: &str) -> Result<earley::Grammar, Error> {
    let compiled = jsonschema::compile(schema, &GrammarSpec::json_options())
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

/// The model's vocabulary as the matcher sees it: the tokenizer (for
/// canonical forced tokens) and its trie, whose end-of-sequence tokens are
/// the model's stop tokens. Built once per model, shared by every
/// constraint.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    tokenizer: Arc<bpe::Tokenizer>,
    trie: Arc<TokTrie>,
    stop: Vec<u32>,
}

impl Vocabulary {
    /// The vocabulary of `tokenizer`; `stop` are the ids that end
    /// generation (special tokens of the tokenizer).
    ///
    /// # Errors
    /// A stop id that is not a special token, or a vocabulary the trie
    /// cannot hold.
    pub fn new(tokenizer: Arc<bpe::Tokenizer>, stop: &[u32]) -> Result<Vocabulary, Error> {
        let mut names = Vec::new();
        for &id in stop {
            let name = tokenizer
                .special_tokens()
                .find(|&(i, _)| i == id)
                .map(|(_, n)| n.to_owned())
                .ok_or_else(|| Error::Model(format!("stop token {id} is not a special token")))?;
            names.push(name);
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let trie = structgen::trie::toktrie_with_eos(&tokenizer, &names)
            .map_err(|e| Error::Model(format!("vocabulary trie: {e}")))?;
        Ok(Vocabulary { tokenizer, trie: Arc::new(trie), stop: stop.to_vec() })
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Arc<bpe::Tokenizer> {
        &self.tokenizer
    }

    /// The stop ids.
    pub fn stop_tokens(&self) -> &[u32] {
        &self.stop
    }
}

/// A grammar applied to one generation: masks, forced tokens, consumption.
#[derive(Debug)]
pub struct Constraint {
    matcher: Matcher,
    /// Whether the last mask holds stop tokens only.
    only_stop: bool,
    stop: Vec<u32>,
}

impl Constraint {
    /// A constraint at the start of `grammar`; forced tokens are computed
    /// when `forcing`.
    ///
    /// # Errors
    /// The grammar names a special token the vocabulary lacks.
    pub fn new(
        vocab: &Vocabulary,
        grammar: &earley::Grammar,
        forcing: bool,
    ) -> Result<Constraint, Error> {
        let mut matcher = Matcher::new(vocab.trie.clone(), grammar)
            .map_err(|e| Error::Grammar(e.to_string()))?
            .with_tokenizer(vocab.tokenizer.clone());
        matcher.set_forcing(forcing);
        Ok(Constraint { matcher, only_stop: false, stop: vocab.stop.clone() })
    }

    /// Computes the mask and sets the logits of the tokens outside it to
    /// negative infinity. Returns the number of allowed tokens.
    ///
    /// # Errors
    /// The matcher stopped in an error or exceeded a limit.
    pub fn mask_logits(&mut self, logits: &mut [f32]) -> Result<usize, Error> {
        let mask = self.mask()?;
        mask.apply_to_logits(logits);
        Ok(mask.count())
    }

    /// Computes the mask (and whether it allows only stop tokens).
    fn mask(&mut self) -> Result<&TokenSet, Error> {
        let stop = &self.stop;
        let mask = self.matcher.compute_mask().map_err(|e| Error::Grammar(e.to_string()))?;
        let n = mask.count();
        self.only_stop = n > 0 && n == stop.iter().filter(|&&t| mask.contains(TokenId(t))).count();
        Ok(mask)
    }

    /// Whether the grammar allows nothing but a stop token now (the text is
    /// complete). Computes the mask.
    ///
    /// # Errors
    /// As [`mask_logits`](Constraint::mask_logits).
    pub fn only_stop_allowed(&mut self) -> Result<bool, Error> {
        self.mask()?;
        Ok(self.only_stop)
    }

    /// The tokens the grammar forces now, consumed (empty when forcing is
    /// off or nothing is forced).
    ///
    /// # Errors
    /// The matcher stopped in an error or exceeded a limit.
    pub fn take_forced(&mut self) -> Result<Vec<u32>, Error> {
        let forced = self.matcher.consume_forced().map_err(|e| Error::Grammar(e.to_string()))?;
        Ok(forced.into_iter().map(|t| t.0).collect())
    }

    /// Consumes a sampled token.
    ///
    /// # Errors
    /// A token outside the mask.
    pub fn consume(&mut self, token: u32) -> Result<(), Error> {
        self.matcher.consume_token(TokenId(token)).map_err(|e| Error::Grammar(e.to_string()))
    }

    /// Whether the text so far is complete under the grammar.
    pub fn is_accepting(&mut self) -> bool {
        self.matcher.is_accepting()
    }
}
