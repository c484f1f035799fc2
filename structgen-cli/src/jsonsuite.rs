//! The official JSON-Schema-Test-Suite on our compiler: the harness of
//! `structgen jsonschema-suite` and, beside llguidance, of `compare`'s
//! `jsonsuite` suite and test.
//!
//! A suite directory (such as `tests/draft2020-12`) holds files of test
//! groups `[{"description", "schema", "tests": [{"description", "data",
//! "valid"}]}]`. A group's schema is compiled; each instance is serialized
//! compactly, tokenized, and walked token by token: every token must be in
//! the mask, and after the last one the matcher must accept. An instance is
//! *correct* when the schema compiled and the verdict equals `valid`; a
//! schema proven unsatisfiable (no value validates) compiles to the empty
//! language, which rejects every instance.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

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
    /// `file#index`, the key of baselines.
    pub fn key(&self) -> String {
        format!("{}#{}", self.file, self.index)
    }
}

/// A suite directory or file that cannot be read.
#[derive(Debug)]
pub struct SuiteError {
    path: PathBuf,
    message: String,
}

impl fmt::Display for SuiteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for SuiteError {}

/// Every group of every `.json` file under `dir`, in path order.
///
/// # Errors
/// A directory or file that cannot be read, or a file that is not a list
/// of groups with boolean `valid`s.
pub fn load(dir: &Path) -> Result<Vec<Group>, SuiteError> {
    let mut paths = Vec::new();
    collect(dir, &mut paths)?;
    let mut groups = Vec::new();
    for p in &paths {
        let err = |message: String| SuiteError { path: p.clone(), message };
        let file = p.strip_prefix(dir).unwrap_or(p).to_string_lossy().replace('\\', "/");
        let bytes = std::fs::read(p).map_err(|e| err(e.to_string()))?;
        let doc: Value =
            serde_json::from_slice(&bytes).map_err(|e| err(format!("not JSON: {e}")))?;
        let list = doc.as_array().ok_or_else(|| err("not a list of test groups".into()))?;
        for (index, g) in list.iter().enumerate() {
            let mut tests = Vec::new();
            for t in g["tests"].as_array().into_iter().flatten() {
                let text = serde_json::to_string(&t["data"]).map_err(|e| err(e.to_string()))?;
                let valid = t["valid"].as_bool().ok_or_else(|| {
                    err(format!("group {index}: a test without a boolean `valid`"))
                })?;
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

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), SuiteError> {
    let err = |e: std::io::Error| SuiteError { path: dir.to_owned(), message: e.to_string() };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(err)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .map_err(err)?;
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

/// What one engine did with one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The schema did not compile: the error's kind (the compiler's
    /// [`jsonschema::ErrorKind::name`], `engine` for a limit of the parser's
    /// grammar, or `panic`) and message.
    Refused {
        /// A short name of the error's kind.
        kind: String,
        /// The message.
        message: String,
    },
    /// The schema accepts no value: every instance is rejected.
    Unsatisfiable(String),
    /// Per instance, whether the engine accepted it.
    Compiled(Vec<bool>),
}

impl Outcome {
    /// The verdicts, with an unsatisfiable schema rejecting all `n`
    /// instances; `None` when refused.
    pub fn verdicts(&self, n: usize) -> Option<Vec<bool>> {
        match self {
            Outcome::Refused { .. } => None,
            Outcome::Unsatisfiable(_) => Some(vec![false; n]),
            Outcome::Compiled(v) => Some(v.clone()),
        }
    }
}

/// Counts over a suite for one engine (an unsatisfiable schema counts as
/// compiled, to the empty language).
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
        let Some(verdicts) = outcome.verdicts(group.tests.len()) else { return };
        self.compiled += 1;
        for ((_, valid, _), accepted) in group.tests.iter().zip(verdicts) {
            match (valid, accepted) {
                (true, true) | (false, false) => self.correct += 1,
                (true, false) => self.valid_rejected += 1,
                (false, true) => self.invalid_accepted += 1,
            }
        }
    }
}

/// Our compiler and matcher on one vocabulary.
#[derive(Debug)]
pub struct Runner<'a> {
    vocab: &'a Vocabulary,
    tokenizer: &'a bpe::Tokenizer,
    options: jsonschema::Options,
}

impl<'a> Runner<'a> {
    /// Compiles with `options`, walks over `vocab`, whose ordinary tokens
    /// are `tokenizer`'s.
    pub fn new(
        vocab: &'a Vocabulary,
        tokenizer: &'a bpe::Tokenizer,
        options: jsonschema::Options,
    ) -> Runner<'a> {
        Runner { vocab, tokenizer, options }
    }

    /// Runs one group (a panic inside the compiler is a refusal named
    /// `panic`, so one bad schema does not stop a suite).
    pub fn run(&self, group: &Group) -> Outcome {
        let built = catch_unwind(AssertUnwindSafe(|| {
            let c = jsonschema::compile(&group.schema, &self.options)?;
            Ok::<_, jsonschema::Error>(
                c.grammar.to_earley(earley::Limits::default()).map(Grammar::from_earley),
            )
        }));
        let g = match built {
            Ok(Ok(Ok(g))) => g,
            Ok(Err(e)) if e.kind() == &jsonschema::ErrorKind::Unsatisfiable => {
                return Outcome::Unsatisfiable(e.to_string());
            }
            Ok(Err(e)) => {
                let kind = e.kind().name().to_string();
                return Outcome::Refused { kind, message: e.to_string() };
            }
            Ok(Ok(Err(e))) => {
                return Outcome::Refused { kind: "engine".into(), message: e.to_string() };
            }
            Err(_) => {
                return Outcome::Refused { kind: "panic".into(), message: "panic".into() };
            }
        };
        let walk = |text: &str| -> bool {
            let Ok(mut m) = Matcher::new(self.vocab, &g) else { return false };
            crate::tokenizer::encode_document(self.tokenizer, text.as_bytes()).into_iter().all(
                |t| {
                    m.compute_mask().is_ok_and(|mask| mask.contains(TokenId(t)))
                        && m.consume_token(TokenId(t)).is_ok()
                },
            ) && m.is_accepting()
        };
        Outcome::Compiled(group.tests.iter().map(|(text, _, _)| walk(text)).collect())
    }
}
