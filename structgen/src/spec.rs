//! The grammar front door: one [`GrammarSpec`] for every kind of
//! constraint, compiled by [`Grammar::compile`] into one immutable,
//! shareable [`Grammar`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arc_swap::ArcSwapOption;

use lexer::{LexemeSpec, RegexAst};

use crate::error::{Error, ErrorKind, Location, json_syntax};
use crate::{Matcher, MatcherError, Vocabulary};

/// What to compile: a constraint of any kind the front door knows.
// A spec is made once per request and compiled; the size of the
// `JsonSchema` variant (its options with their limits and documents) costs
// nothing there, and boxing it would change how callers build it.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum GrammarSpec {
    /// A JSON Schema (draft 2020-12, draft-07 `definitions` and array
    /// `items` too) and how its JSON is laid out: whitespace, separators,
    /// property order (see [`jsonschema::Options`]).
    JsonSchema {
        /// The schema.
        schema: serde_json::Value,
        /// Layout and limits.
        options: jsonschema::Options,
    },
    /// A grammar in llguidance's Lark dialect (`%json { … }` embeds a schema).
    Lark(String),
    /// A grammar in llama.cpp's GBNF.
    Gbnf(String),
    /// An anchored regular expression (derivre syntax: the Rust `regex`
    /// crate's, without look-around or back-references).
    Regex(String),
    /// Exactly one of these strings.
    Choice(Vec<String>),
    /// A request in llguidance's top-level grammar format:
    /// `{"grammars": [{"lark_grammar": …} | {"json_schema": …}], "max_tokens": …}`
    /// (see `llguidance.rs` for what is supported).
    Llguidance(serde_json::Value),
    /// A structural tag in XGrammar's format,
    /// `{"type": "structural_tag", "format": {…}}`: free text with triggered
    /// tool calls, reasoning blocks (see [`crate::structural_tag`]).
    StructuralTag(serde_json::Value),
}

impl GrammarSpec {
    /// A JSON Schema with the default layout ([`jsonschema::Options::default`]:
    /// bounded whitespace, `,` and `:`, schema property order).
    pub fn json_schema(schema: serde_json::Value) -> GrammarSpec {
        GrammarSpec::JsonSchema { schema, options: jsonschema::Options::default() }
    }

    /// A JSON Schema given as text, with the default layout.
    ///
    /// # Errors
    /// [`ErrorKind::Syntax`] with the line and column when `text` is not JSON.
    pub fn json_schema_str(text: &str) -> Result<GrammarSpec, Error> {
        let schema = serde_json::from_str(text).map_err(|e| json_syntax("the schema", &e, text))?;
        Ok(GrammarSpec::json_schema(schema))
    }

    /// An llguidance request given as text.
    ///
    /// # Errors
    /// [`ErrorKind::Syntax`] with the line and column when `text` is not JSON.
    pub fn llguidance_str(text: &str) -> Result<GrammarSpec, Error> {
        let v = serde_json::from_str(text).map_err(|e| json_syntax("the request", &e, text))?;
        Ok(GrammarSpec::Llguidance(v))
    }

    /// The kind's short name: `json_schema`, `lark`, `gbnf`, `regex`,
    /// `choice`, `llguidance`, `structural_tag`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            GrammarSpec::JsonSchema { .. } => "json_schema",
            GrammarSpec::Lark(_) => "lark",
            GrammarSpec::Gbnf(_) => "gbnf",
            GrammarSpec::Regex(_) => "regex",
            GrammarSpec::Choice(_) => "choice",
            GrammarSpec::Llguidance(_) => "llguidance",
            GrammarSpec::StructuralTag(_) => "structural_tag",
        }
    }

    /// Feeds the spec into `h` (the compile cache's bucket): specs that
    /// are [`same`](GrammarSpec::same) hash alike. A JSON Schema's options
    /// are left out (they rarely differ between requests; the cache
    /// compares them).
    pub(crate) fn hash_into<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write(self.kind_name().as_bytes());
        match self {
            GrammarSpec::JsonSchema { schema, .. } => jsonschema::hash_json(schema, h),
            GrammarSpec::Lark(s) | GrammarSpec::Gbnf(s) | GrammarSpec::Regex(s) => {
                h.write_usize(s.len());
                h.write(s.as_bytes());
            }
            GrammarSpec::Choice(c) => {
                h.write_usize(c.len());
                for s in c {
                    h.write_usize(s.len());
                    h.write(s.as_bytes());
                }
            }
            GrammarSpec::Llguidance(v) | GrammarSpec::StructuralTag(v) => {
                jsonschema::hash_json(v, h)
            }
        }
    }

    /// Whether `self` and `other` compile to the same grammar: the same
    /// kind and text, JSON [identical](jsonschema::json_identical) (member
    /// order and number spelling count, unlike `==` on `serde_json`
    /// values), equal options.
    pub(crate) fn same(&self, other: &GrammarSpec) -> bool {
        use GrammarSpec as S;
        match (self, other) {
            (
                S::JsonSchema { schema: a, options: oa },
                S::JsonSchema { schema: b, options: ob },
            ) => oa == ob && jsonschema::json_identical(a, b),
            (S::Lark(a), S::Lark(b)) | (S::Gbnf(a), S::Gbnf(b)) | (S::Regex(a), S::Regex(b)) => {
                a == b
            }
            (S::Choice(a), S::Choice(b)) => a == b,
            (S::Llguidance(a), S::Llguidance(b)) | (S::StructuralTag(a), S::StructuralTag(b)) => {
                jsonschema::json_identical(a, b)
            }
            _ => false,
        }
    }

    /// About how many bytes the spec holds (the cache's accounting).
    pub(crate) fn approx_bytes(&self) -> usize {
        fn json(v: &serde_json::Value) -> usize {
            16 + match v {
                serde_json::Value::String(s) => s.len(),
                serde_json::Value::Array(a) => a.iter().map(json).sum(),
                serde_json::Value::Object(m) => m.iter().map(|(k, v)| k.len() + json(v)).sum(),
                _ => 0,
            }
        }
        match self {
            GrammarSpec::JsonSchema { schema, .. } => json(schema),
            GrammarSpec::Lark(s) | GrammarSpec::Gbnf(s) | GrammarSpec::Regex(s) => s.len(),
            GrammarSpec::Choice(c) => c.iter().map(|s| s.len() + 24).sum(),
            GrammarSpec::Llguidance(v) | GrammarSpec::StructuralTag(v) => json(v),
        }
    }
}

/// Limits and settings of compilation, for every grammar kind.
///
/// `#[non_exhaustive]`: start from [`CompileOptions::default`] and set
/// fields, so that a new setting is never a breaking change.
///
/// # Limits
/// Every resource a hostile grammar or text can exhaust has a limit; each
/// limit struct has a `with_*` setter per field:
///
/// ```
/// use structgen::{CompileOptions, earley, grammar, lexer};
///
/// let lexer = lexer::LexerLimits::default().with_max_states(10_000);
/// let parser = earley::Limits::default().with_lexer(lexer).with_max_items_per_row(5_000);
/// let front = grammar::Limits::default().with_max_source_bytes(1 << 20);
/// let options = CompileOptions::default().with_parser_limits(parser).with_front_end_limits(front);
/// # let _ = options;
/// ```
///
/// A limit hit while compiling is an [`Error`] of kind
/// [`ErrorKind::Limit`] naming the limit and its value, located at the
/// construct (line and column; for a regex, its start). A limit hit while
/// matching is a [`MatcherError::Parse`](crate::MatcherError) naming the
/// limit, its value and the byte offset in the text. Fuel refusals (an
/// emptiness check out of fuel) are not errors by default: the mask is a
/// subset of the exact one and [`Matcher::fuel_refusals`](crate::Matcher)
/// counts them; [`Matcher::with_refusals_as_errors`](crate::Matcher)
/// makes them errors.
///
/// | limit | default | llguidance 1.x | why ours |
/// | --- | --- | --- | --- |
/// | `grammar::Limits::max_source_bytes` (Lark, GBNF, regex, choices) | 16 MiB | none | a bound before any parsing |
/// | `grammar::Limits::max_nesting` | 200 | none (recursion) | bounds the parsers' stack |
/// | `grammar::Limits::max_nodes` | 2,000,000 | `max_grammar_size` 500,000 | counts expressions, not symbols |
/// | `grammar::Limits::max_repeat` | 100,000 | none | `x{m,n}` costs `O(log n)` rules |
/// | `grammar::Limits::max_terminal_nodes` | 1,000,000 | none | terminal inlining can double per level |
/// | `earley::Limits::max_rules` / `max_symbols` | 500,000 | `max_grammar_size` 500,000 | the same order |
/// | `earley::Limits::max_items_per_row` | 100,000 | `max_items_in_row` 2,000 | completion is indexed in large rows (`O(k log k)`), so a 16,000-rule chain is legitimate here |
/// | `earley::Limits::max_items_per_step` | 5,000,000 | `step_max_items` 50,000 | ours counts the items of every row a mask walk computes (a row per distinct lexeme end), llguidance's fewer |
/// | `earley::Limits::max_phrase_states` | 1,000,000 | (no permutation phrases) | one per set of names met |
/// | `earley::Limits::max_search_bytes` | 100,000 per search | (no `uniqueItems`) | one completion search inside a `uniqueItems` array whose items may run out of values; most end within a few bytes |
/// | `lexer::LexerLimits::max_states` | 250,000 | `max_lexer_states` 250,000 | a 60 KB literal or `\d{1,100000}` needs one state per byte; about `4 · (C + 1)` bytes each for `C` byte classes |
/// | `lexer::LexerLimits::max_exprs` | 2,000,000 | none | derivre's expression set |
/// | `lexer::LexerLimits::relevance_fuel` | 100,000 per check | none per check | one check; a step is bounded apart |
/// | `lexer::LexerLimits::build_fuel` | 10,000,000 shared by the checks of construction | `initial_lexer_fuel` 1,000,000 | each check may use at least `relevance_fuel`; running dry takes ~0.3 s |
/// | `lexer::LexerLimits::step_fuel` | 400,000 per mask or token | `step_lexer_fuel` 200,000 | learned witnesses make most checks free, so the budget goes to the hard ones |
/// | `lexer::LexerLimits::max_repeat_width` | 1,000 | none (the same growth) | `((a*){100}){100}` makes derivatives of ~10,000 terms: seconds per mask |
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompileOptions {
    /// The text front-ends' limits and settings (source size, nesting,
    /// repetition bounds, Lark priorities), and in
    /// [`parser_limits`](grammar::Config::parser_limits) the limits of the
    /// compiled grammar and of its matchers (rules, Earley items per row and
    /// per step, lexer states and fuel), which apply to every kind.
    pub grammar: grammar::Config,
}

impl CompileOptions {
    /// These options with `limits` for the compiled grammar and its matchers.
    pub fn with_parser_limits(mut self, limits: earley::Limits) -> CompileOptions {
        self.grammar.parser_limits = limits;
        self
    }

    /// These options with `limits` for the text front-ends.
    pub fn with_front_end_limits(mut self, limits: grammar::Limits) -> CompileOptions {
        self.grammar.limits = limits;
        self
    }
}

/// A compiled grammar: immutable, `Send + Sync`, shared by [`Arc`]
/// (cloning is a reference count); matchers are created from it cheaply.
///
/// A grammar's only state is its *start*, kept per grammar for the first
/// vocabulary matchers are created over: the first matcher's start (its
/// parser after the first Earley row, its lexer with the slicer's probes
/// added, and its first mask computed), from which later matchers over the
/// same vocabulary start as a copy. No token has been consumed there, so the
/// start is the same for every request. Matchers over another vocabulary
/// are built from scratch, with the same result.
///
/// The start also learns. When a matcher is dropped, its lexer (the
/// derivatives, transitions and witnesses it computed) may replace the
/// start's, with its free-text split masks (`matcher/split.rs`), if every
/// answer it holds is exact ([`lexer::Lexer::is_exact`]: no derivative
/// refused for want of fuel, no limit met), it learned markedly more than
/// the start holds, and it stays within 4 times the compiled grammar's
/// size plus 64 KiB (every new matcher copies it). A lexer transition is a
/// function of the state's derivatives and the byte, whoever computed it,
/// so a matcher's masks are those its own tokens give; what crosses
/// requests is work saved, not answers. What can differ is only cost, and
/// with it whether a step's fuel or a limit runs out first: a matcher
/// copied from a learned start computes less, so it meets fuel refusals
/// and limits no sooner than one from the first start (the limits count
/// what it learns past its start). Keeping and replacing the start never
/// blocks: the start is read and replaced by atomic pointer swaps (a
/// replacement that loses a race is dropped), and a matcher created while
/// another thread builds the first start builds its own.
///
/// ```
/// use structgen::{Grammar, GrammarSpec};
///
/// let g = Grammar::compile(&GrammarSpec::Regex("[0-9]{1,3}".into()), &Default::default())?;
/// assert!(g.accepts(b"123"));
/// let g = Grammar::json_schema(&serde_json::json!({"type": "integer", "minimum": 3}))?;
/// assert!(g.accepts(b"7") && !g.accepts(b"2"));
///
/// let e = Grammar::lark("start: \"a\" foo").unwrap_err();
/// assert_eq!((e.line(), e.column()), (Some(1), Some(12)));
/// let e = Grammar::json_schema(&serde_json::json!({"type": "string", "minLength": "x"}))
///     .unwrap_err();
/// assert_eq!(e.pointer(), Some(""));
/// # Ok::<(), structgen::Error>(())
/// ```
#[derive(Clone)]
pub struct Grammar {
    inner: Arc<Inner>,
}

struct Inner {
    compiled: Arc<Compiled>,
    /// The start of the first vocabulary's matchers (see the type's docs);
    /// replaced by a learned one, never emptied.
    first: ArcSwapOption<First>,
}

#[derive(Debug)]
struct Compiled {
    earley: earley::Grammar,
    kind: &'static str,
    warnings: Vec<String>,
    max_tokens: Option<usize>,
}

/// A matcher's start over one vocabulary. Its `grammar` is a detached
/// handle (see [`Grammar::detached`]), so the memo holds no reference
/// to the grammar that holds it.
struct First {
    vocab: Vocabulary,
    start: Matcher,
    /// Which start this is, and the first start its lexer descends from.
    id: StartId,
    /// The most bytes the start's lexer may grow to ([`start_budget`]).
    budget: usize,
}

/// How much a learned start's lexer may grow: to at most this many times
/// the compiled grammar (in [`earley::Grammar::heap_size`] bytes, mostly
/// its lexer) plus [`START_SLACK`]. Every new matcher copies the start's
/// lexer, so its size is a per-request cost (about 15 µs plus 0.27 µs per
/// kilobyte on the MaskBench dev split); unbounded, the largest learned
/// starts reached 2 MB and a millisecond per matcher.
pub(crate) const START_GROWTH: usize = 4;

/// See [`START_GROWTH`].
pub(crate) const START_SLACK: usize = 64 << 10;

/// The most bytes a learned start's lexer may hold, for a grammar of
/// `grammar` bytes ([`earley::Grammar::heap_size`]).
pub(crate) fn start_budget(grammar: usize) -> usize {
    grammar.saturating_mul(START_GROWTH).saturating_add(START_SLACK)
}

/// Lineage and generation names, unique in the process (0: none).
static NEXT_LINEAGE: AtomicU64 = AtomicU64::new(1);

/// Which kept start a matcher was copied from (lineage 0: none, the
/// matcher was built from scratch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StartId {
    /// The first start the kept one descends from: a matcher's lexer may
    /// replace a start's only if both descend from the same (its state and
    /// expression ids then mean the same).
    pub(crate) lineage: u64,
    /// The kept start itself.
    pub(crate) generation: u64,
}

impl std::fmt::Debug for Grammar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.inner.compiled;
        f.debug_struct("Grammar")
            .field("kind", &c.kind)
            .field("rules", &c.earley.num_rules())
            .field("warnings", &c.warnings)
            .field("max_tokens", &c.max_tokens)
            .finish_non_exhaustive()
    }
}

impl Grammar {
    /// Compiles `spec`.
    ///
    /// # Errors
    /// Every problem is one [`Error`] with its [`ErrorKind`] and, when it
    /// has a place, its [`Location`](crate::Location): line and column in a
    /// text grammar, the JSON pointer in a schema or request.
    pub fn compile(spec: &GrammarSpec, options: &CompileOptions) -> Result<Grammar, Error> {
        let cfg = &options.grammar;
        let (earley, warnings, max_tokens) = match spec {
            GrammarSpec::JsonSchema { schema, options } => {
                let (g, w) = compile_json(schema, options, cfg.parser_limits)?;
                (g, w, None)
            }
            GrammarSpec::Lark(src) => (grammar::lark::compile(src, cfg)?, Vec::new(), None),
            GrammarSpec::Gbnf(src) => (grammar::gbnf::compile(src, cfg)?, Vec::new(), None),
            GrammarSpec::Regex(rx) => {
                if rx.len() > cfg.limits.max_source_bytes {
                    return Err(Error::new(
                        ErrorKind::Limit,
                        format!(
                            "the regex has {} bytes, more than the limit of {} (grammar::Limits::max_source_bytes)",
                            rx.len(),
                            cfg.limits.max_source_bytes
                        ),
                    ));
                }
                (grammar::regex::compile_with(rx, cfg.parser_limits)?, Vec::new(), None)
            }
            GrammarSpec::Choice(options) => (compile_choice(options, cfg)?, Vec::new(), None),
            GrammarSpec::Llguidance(request) => {
                let r = crate::llguidance::compile(request, cfg)?;
                (r.grammar, r.warnings, r.max_tokens)
            }
            GrammarSpec::StructuralTag(request) => {
                (crate::structural_tag::compile(request, cfg)?, Vec::new(), None)
            }
        };
        Ok(Grammar::from_parts(earley, spec.kind_name(), warnings, max_tokens))
    }

    /// A JSON Schema with the default layout and limits.
    ///
    /// # Errors
    /// As [`compile`](Grammar::compile).
    pub fn json_schema(schema: &serde_json::Value) -> Result<Grammar, Error> {
        Grammar::compile(&GrammarSpec::json_schema(schema.clone()), &CompileOptions::default())
    }

    /// A Lark grammar with the default limits.
    ///
    /// # Errors
    /// As [`compile`](Grammar::compile).
    pub fn lark(src: &str) -> Result<Grammar, Error> {
        Grammar::compile(&GrammarSpec::Lark(src.to_owned()), &CompileOptions::default())
    }

    /// A GBNF grammar with the default limits.
    ///
    /// # Errors
    /// As [`compile`](Grammar::compile).
    pub fn gbnf(src: &str) -> Result<Grammar, Error> {
        Grammar::compile(&GrammarSpec::Gbnf(src.to_owned()), &CompileOptions::default())
    }

    /// A regular expression with the default limits.
    ///
    /// # Errors
    /// As [`compile`](Grammar::compile).
    pub fn regex(pattern: &str) -> Result<Grammar, Error> {
        Grammar::compile(&GrammarSpec::Regex(pattern.to_owned()), &CompileOptions::default())
    }

    /// Exactly one of `options`.
    ///
    /// # Errors
    /// As [`compile`](Grammar::compile); an empty list is
    /// [`ErrorKind::Unsatisfiable`].
    pub fn choice<S: AsRef<str>>(options: &[S]) -> Result<Grammar, Error> {
        let list = options.iter().map(|s| s.as_ref().to_owned()).collect();
        Grammar::compile(&GrammarSpec::Choice(list), &CompileOptions::default())
    }

    /// A request in llguidance's top-level format, with the default limits.
    ///
    /// # Errors
    /// As [`compile`](Grammar::compile).
    pub fn llguidance(request: &serde_json::Value) -> Result<Grammar, Error> {
        Grammar::compile(&GrammarSpec::Llguidance(request.clone()), &CompileOptions::default())
    }

    /// A grammar built directly with the parser's [`earley::GrammarBuilder`].
    pub fn from_earley(grammar: earley::Grammar) -> Grammar {
        Grammar::from_parts(grammar, "earley", Vec::new(), None)
    }

    fn from_parts(
        earley: earley::Grammar,
        kind: &'static str,
        warnings: Vec<String>,
        max_tokens: Option<usize>,
    ) -> Grammar {
        let compiled = Arc::new(Compiled { earley, kind, warnings, max_tokens });
        Grammar { inner: Arc::new(Inner { compiled, first: ArcSwapOption::empty() }) }
    }

    /// A handle on the same compiled grammar without the memo of starts.
    fn detached(&self) -> Grammar {
        let compiled = self.inner.compiled.clone();
        Grammar { inner: Arc::new(Inner { compiled, first: ArcSwapOption::empty() }) }
    }

    /// A matcher over `vocab` at the start of this grammar, with its first
    /// mask computed: a copy of the kept start when `vocab` is the one it
    /// was kept for, else built (and kept, if none is).
    pub(crate) fn start_matcher(&self, vocab: &Vocabulary) -> Result<Matcher, MatcherError> {
        if let Some(first) = &*self.inner.first.load()
            && first.vocab.ptr_eq(vocab)
        {
            let mut m = first.start.clone();
            m.set_grammar(self.clone(), first.id);
            return Ok(m);
        }
        let start = Matcher::build(vocab, self.detached())?;
        let lineage = NEXT_LINEAGE.fetch_add(1, Ordering::Relaxed);
        let id = StartId { lineage, generation: lineage };
        let mut m = if self.inner.first.load().is_none() {
            let m = start.clone();
            let budget = start_budget(self.earley().heap_size());
            let first = First { vocab: vocab.clone(), start, id, budget };
            // Another thread may have kept its start meanwhile; both are
            // equal, and matchers of the one that lost keep their lineage
            // (so their lexers never replace the kept start's).
            self.inner.first.compare_and_swap(&None::<Arc<First>>, Some(Arc::new(first)));
            m
        } else {
            start
        };
        m.set_grammar(self.clone(), id);
        Ok(m)
    }

    /// Offers the lexer of `m`, a matcher being dropped, as the new start's
    /// (see the type's docs), with its split masks: taken when it descends
    /// from the kept start over the same vocabulary, every answer in it is
    /// exact, it learned at least a quarter more transitions than the start
    /// holds (or, copied from this very start, it holds more split masks),
    /// and it is within the start's byte budget ([`start_budget`]).
    pub(crate) fn offer_lexer(&self, m: &Matcher) {
        let lexer = m.lexer();
        let id = m.start_id();
        let first = self.inner.first.load_full();
        let Some(first) =
            first.filter(|f| f.id.lineage == id.lineage && f.vocab.ptr_eq(m.vocabulary()))
        else {
            return;
        };
        let known = first.start.lexer().num_known_transitions();
        let grew = lexer.num_known_transitions() >= known + (known / 4).max(16);
        // Copied from this very start, its lexer holds all the start's
        // does: more split masks alone are worth a new start.
        let more_splits =
            id.generation == first.id.generation && m.num_splits() > first.start.num_splits();
        if !lexer.is_exact() || !(grew || more_splits) || lexer.heap_size() > first.budget {
            return;
        }
        let mut start = first.start.clone();
        start.learn_from(m);
        let generation = NEXT_LINEAGE.fetch_add(1, Ordering::Relaxed);
        let next = First {
            vocab: first.vocab.clone(),
            start,
            id: StartId { lineage: id.lineage, generation },
            budget: first.budget,
        };
        // Lost to another replacement: this one is dropped.
        self.inner.first.compare_and_swap(&first, Some(Arc::new(next)));
    }

    /// Whether a matcher start is kept (over some vocabulary).
    pub fn has_kept_start(&self) -> bool {
        self.inner.first.load().is_some()
    }

    /// How many lexer transitions the kept start holds (0 when none is
    /// kept): it grows as matchers learn (see the type's docs).
    pub fn start_transitions(&self) -> usize {
        self.inner.first.load().as_ref().map_or(0, |f| f.start.lexer().num_known_transitions())
    }

    /// The compiled grammar the parser runs on.
    pub fn earley(&self) -> &earley::Grammar {
        &self.inner.compiled.earley
    }

    /// The kind it was compiled from ([`GrammarSpec::kind_name`], or
    /// `"earley"` for [`from_earley`](Grammar::from_earley)).
    pub fn kind_name(&self) -> &'static str {
        self.inner.compiled.kind
    }

    /// What compilation ignored and said so (a JSON Schema in lenient mode,
    /// unknown formats treated as annotations).
    pub fn warnings(&self) -> &[String] {
        &self.inner.compiled.warnings
    }

    /// The most tokens a matcher of this grammar may consume (llguidance's
    /// `max_tokens`), if set.
    pub fn max_tokens(&self) -> Option<usize> {
        self.inner.compiled.max_tokens
    }

    /// Whether the grammar accepts `text` (byte by byte, no tokenizer; a
    /// limit exceeded counts as a rejection).
    pub fn accepts(&self, text: &[u8]) -> bool {
        self.inner.compiled.earley.accepts(text).unwrap_or(false)
    }

    /// Whether two handles share one compiled grammar.
    pub fn ptr_eq(&self, other: &Grammar) -> bool {
        Arc::ptr_eq(&self.inner.compiled, &other.inner.compiled)
    }
}

/// A JSON Schema compiled to the parser's grammar; its warnings.
pub(crate) fn compile_json(
    schema: &serde_json::Value,
    options: &jsonschema::Options,
    limits: earley::Limits,
) -> Result<(earley::Grammar, Vec<String>), Error> {
    let compiled = jsonschema::compile(schema, options)?;
    let g = compiled.grammar.to_earley(limits).map_err(|e| locate_in_schema(&compiled, e))?;
    let warnings = compiled.warnings.iter().map(|w| w.to_string()).collect();
    Ok((g, warnings))
}

/// An error of the engine's build placed in the schema: a lexeme too wide
/// for [`lexer::LexerLimits::max_repeat_width`] comes from a pattern, which
/// the compiled schema finds (the lexer knows only the lexeme).
fn locate_in_schema(compiled: &jsonschema::Compiled, e: earley::GrammarError) -> Error {
    let site = match &e {
        earley::GrammarError::Lexer(l) => match l.kind() {
            lexer::LexerErrorKind::RepeatTooWide { limit, .. } => {
                compiled.pattern_wider_than(*limit)
            }
            _ => None,
        },
        _ => None,
    };
    match site {
        Some((pointer, keyword, _)) => {
            Error::from(e).at(Location::Pointer(pointer.to_owned())).with_keyword(keyword)
        }
        None => Error::from(e),
    }
}

/// One lexeme matching exactly one of `options`.
fn compile_choice(options: &[String], cfg: &grammar::Config) -> Result<earley::Grammar, Error> {
    if options.is_empty() {
        return Err(Error::new(ErrorKind::Unsatisfiable, "a choice of no strings accepts nothing"));
    }
    let bytes: usize = options.iter().map(String::len).sum();
    if bytes > cfg.limits.max_source_bytes {
        return Err(Error::new(
            ErrorKind::Limit,
            format!(
                "the choices hold {bytes} bytes, more than the limit of {} (grammar::Limits::max_source_bytes)",
                cfg.limits.max_source_bytes
            ),
        ));
    }
    let mut b = earley::GrammarBuilder::new();
    let start = b.add_nonterminal("start");
    // Lexemes match at least one byte: the empty choice is an empty rule.
    let alternatives: Vec<RegexAst> =
        options.iter().filter(|s| !s.is_empty()).map(|s| RegexAst::Literal(s.clone())).collect();
    if !alternatives.is_empty() {
        let rx = RegexAst::Or(alternatives);
        let lexeme = b.add_lexeme(LexemeSpec::new("choice".to_owned(), rx));
        b.add_rule(start, &[lexeme]);
    }
    if options.iter().any(String::is_empty) {
        b.add_rule(start, &[]);
    }
    Ok(b.build(start, cfg.parser_limits)?)
}
