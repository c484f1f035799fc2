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
//! Used by the `jsonsuite` bench suite and the `jsonsuite` differential test.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::Value;
use structgen::{Grammar, Matcher, Vocabulary};
use toktrie::TokenId;

/// One test group of a suite file.
#[derive(Clone, Debug)]
pub struct Group {
    /// The file, relative to the suite directory (`optional/format/date.json`).
    pub file: String,
    /// The group's index in its file.
    pub index: usize,
    /// The group's description.
    pub description: String,
    /// The schema.
    pub schema: Value,
    /// The instances: (compact text, valid, description).
    pub tests: Vec<(String, bool, String)>,
}

impl Group {
    /// `file#index`, the key of the committed baselines.
    pub fn key(&self) -> String {
        format!("{}#{}", self.file, self.index)
    }
}

/// Every group of every `.json` file under `dir`, in path order.
///
/// # Errors
/// A file that cannot be read or is not a suite file.
pub fn load(dir: &Path) -> Result<Vec<Group>> {
    fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()?;
        entries.sort();
        for p in entries {
            if p.is_dir() {
                collect(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "json") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut paths = Vec::new();
    collect(dir, &mut paths)?;
    let mut groups = Vec::new();
    for p in &paths {
        let file = p.strip_prefix(dir).unwrap_or(p).to_string_lossy().replace('\\', "/");
        let doc: Value = serde_json::from_slice(&std::fs::read(p)?)
            .with_context(|| format!("{file}: not JSON"))?;
        for (index, g) in
            doc.as_array().with_context(|| format!("{file}: not a list"))?.iter().enumerate()
        {
            let mut tests = Vec::new();
            for t in g["tests"].as_array().into_iter().flatten() {
                let text = serde_json::to_string(&t["data"])?;
                let valid =
                    t["valid"].as_bool().with_context(|| format!("{file}#{index}: valid"))?;
                tests.push((text, valid, t["description"].as_str().unwrap_or("").to_string()));
            }
            groups.push(Group {
                file: file.clone(),
                index,
                description: g["description"].as_str().unwrap_or("").to_string(),
                schema: g["schema"].clone(),
                tests,
            });
        }
    }
    Ok(groups)
}

/// What one engine did with one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The schema did not compile (the error message).
    Refused(String),
    /// Per instance, whether the engine accepted it.
    Compiled(Vec<bool>),
}

/// Counts over a suite for one engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Test groups.
    pub groups: usize,
    /// Groups whose schema compiled.
    pub compiled: usize,
    /// Instances.
    pub instances: usize,
    /// Instances of compiled schemas classified as the suite says.
    pub correct: usize,
    /// Valid instances of compiled schemas rejected.
    pub valid_rejected: usize,
    /// Invalid instances accepted.
    pub invalid_accepted: usize,
}

impl Tally {
    /// Adds one group's outcome.
    pub fn add(&mut self, group: &Group, outcome: &Outcome) {
        self.groups += 1;
        self.instances += group.tests.len();
        let Outcome::Compiled(verdicts) = outcome else { return };
        self.compiled += 1;
        for ((_, valid, _), &accepted) in group.tests.iter().zip(verdicts) {
            match (valid, accepted) {
                (true, true) | (false, false) => self.correct += 1,
                (true, false) => self.valid_rejected += 1,
                (false, true) => self.invalid_accepted += 1,
            }
        }
    }
}

/// Why our compiler refused a schema.
enum Refusal {
    /// The schema accepts no value.
    Unsatisfiable,
    /// Any other error (its message).
    Other(String),
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

    /// Our compiler on one group.
    pub fn ours(&self, group: &Group) -> Outcome {
        let built = catch_unwind(AssertUnwindSafe(|| {
            let c =
                jsonschema::compile(&group.schema, &self.options).map_err(|e| match e.kind() {
                    jsonschema::ErrorKind::Unsatisfiable => Refusal::Unsatisfiable,
                    _ => Refusal::Other(e.to_string()),
                })?;
            c.grammar
                .to_earley(earley::Limits::default())
                .map(Grammar::from_earley)
                .map_err(|e| Refusal::Other(e.to_string()))
        }))
        .unwrap_or_else(|_| Err(Refusal::Other("panic".to_string())));
        let g = match built {
            Ok(g) => g,
            Err(Refusal::Unsatisfiable) => {
                return Outcome::Compiled(vec![false; group.tests.len()]);
            }
            Err(Refusal::Other(e)) => return Outcome::Refused(e),
        };
        let walk = |text: &str| -> bool {
            let Ok(mut m) = Matcher::new(&self.vocab, &g) else { return false };
            self.tokenizer.encode(text).into_iter().all(|t| {
                m.compute_mask().is_ok_and(|mask| mask.contains(TokenId(t)))
                    && m.consume_token(TokenId(t)).is_ok()
            }) && m.is_accepting()
        };
        Outcome::Compiled(group.tests.iter().map(|(text, _, _)| walk(text)).collect())
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
                return Outcome::Compiled(vec![false; group.tests.len()]);
            }
            Err(e) => return Outcome::Refused(e),
        };
        let walk = |text: &str| -> bool {
            let mut m = template.deep_clone();
            let tokens = self.tokenizer.encode(text);
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
