//! The official JSON-Schema-Test-Suite, classified by our compiler and by
//! llguidance 1.9.1 in the same process, on the same instances.
//!
//! A test group is a schema with instances `{data, valid}`. Each engine
//! compiles the schema (ours with [`jsonschema::Options::default`], llguidance
//! with its defaults); each instance is serialized compactly, tokenized with
//! o200k, and walked token by token: every token must be in the engine's
//! mask, and after the last one the engine must be accepting. An instance is
//! *correct* when the schema compiled and the verdict equals `valid`; an
//! instance of a schema the engine refuses is never correct (nor accepted),
//! except that a schema the engine proves unsatisfiable (ours:
//! [`jsonschema::ErrorKind::Unsatisfiable`]; llguidance: an error starting
//! `Unsatisfiable schema`) counts as compiled to the empty language, which
//! rejects every instance.
//!
//! The suite files, the tally and our side are `structgen_cli::jsonsuite`
//! (the harness of `structgen jsonschema-suite`); this module adds
//! llguidance beside it. Used by the `jsonsuite` bench suite and the
//! `jsonsuite` differential test.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use structgen::Vocabulary;

pub use structgen_cli::jsonsuite::{Group, Outcome, Tally};

/// Every group of every `.json` file under `dir`, in path order
/// ([`structgen_cli::jsonsuite::load`]).
///
/// # Errors
/// A file that cannot be read or is not a suite file.
pub fn load(dir: &Path) -> Result<Vec<Group>> {
    Ok(structgen_cli::jsonsuite::load(dir)?)
}

/// Both engines over the o200k vocabulary.
pub struct Engines {
    tokenizer: Arc<bpe::Tokenizer>,
    vocab: Vocabulary,
    factory: llguidance::ParserFactory,
    options: jsonschema::Options,
}

impl std::fmt::Debug for Engines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engines").field("options", &self.options).finish_non_exhaustive()
    }
}

impl Engines {
    /// Our compiler with `options` and llguidance (slicer off) on o200k.
    ///
    /// # Errors
    /// The trie or llguidance's factory cannot be built.
    pub fn new(options: jsonschema::Options) -> Result<Engines> {
        let tokenizer = Arc::new(bpe::Tokenizer::o200k_base());
        let (vocab, eos) = crate::peer::vocabulary(&tokenizer, false)?;
        let env = crate::peer::llg_tok_env(&tokenizer, eos);
        let factory = crate::peer::llg_factory(&env, &[])?;
        Ok(Engines { tokenizer, vocab, factory, options })
    }

    /// Our compiler on one group ([`structgen_cli::jsonsuite::Runner`]).
    pub fn ours(&self, group: &Group) -> Outcome {
        structgen_cli::jsonsuite::Runner::new(&self.vocab, &self.tokenizer, self.options.clone())
            .run(group)
    }

    /// llguidance on one group.
    pub fn llguidance(&self, group: &Group) -> Outcome {
        let built = catch_unwind(AssertUnwindSafe(|| {
            let grammar = llguidance::api::TopLevelGrammar::from_json_schema(group.schema.clone());
            let m = llguidance::Matcher::new(self.factory.create_parser(grammar));
            match m.get_error() {
                Some(e) => Err(e),
                None => Ok(m),
            }
        }))
        .unwrap_or_else(|_| Err("panic".to_string()));
        let template = match built {
            Ok(m) => m,
            Err(e) if e.starts_with("Unsatisfiable schema") => {
                return Outcome::Unsatisfiable(e);
            }
            Err(e) => {
                let kind = if e == "panic" { "panic" } else { "llguidance" };
                return Outcome::Refused { kind: kind.into(), message: e };
            }
        };
        let walk = |text: &str| -> bool {
            let mut m = template.deep_clone();
            let tokens =
                structgen_cli::tokenizer::encode_document(&self.tokenizer, text.as_bytes());
            catch_unwind(AssertUnwindSafe(|| {
                tokens.iter().all(|&t| {
                    m.compute_mask_or_eos().is_ok_and(|mask| mask.is_allowed(t))
                        && m.consume_token(t).is_ok()
                }) && m.is_accepting().unwrap_or(false)
            }))
            .unwrap_or(false)
        };
        Outcome::Compiled(group.tests.iter().map(|(text, _, _)| walk(text)).collect())
    }
}
