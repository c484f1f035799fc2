//! Options and resource limits of the text front-ends (Lark, GBNF).

/// Resource limits for hostile or accidental huge grammars.
///
/// Exceeding a limit is an [`ErrorKind::Limit`](crate::ErrorKind::Limit)
/// error with the location of the offending construct; every check is done
/// before the work it guards, so a hostile grammar fails fast instead of
/// exhausting time or memory.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest accepted source text, in bytes.
    pub max_source_bytes: usize,
    /// Deepest nesting of groups, optionals and prefix operators in one
    /// expression (the parsers recurse on nesting, so this bounds the stack).
    pub max_nesting: usize,
    /// Most AST nodes (expressions) in one grammar; bounds huge alternations.
    pub max_nodes: usize,
    /// Largest bound in a repetition `x{m,n}` / `x~m..n` (the unbounded `*`
    /// and `+` are not limited).
    pub max_repeat: u32,
    /// Most regex nodes in one terminal after inlining the terminals it
    /// references (inlining can grow exponentially: `A: B B`, `B: C C`, ...).
    pub max_terminal_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_source_bytes: 16 << 20,
            max_nesting: 200,
            max_nodes: 2_000_000,
            max_repeat: 100_000,
            max_terminal_nodes: 1_000_000,
        }
    }
}

impl Limits {
    /// These limits with [`max_source_bytes`](Limits::max_source_bytes) set to `value`.
    pub fn with_max_source_bytes(mut self, value: usize) -> Limits {
        self.max_source_bytes = value;
        self
    }

    /// These limits with [`max_nesting`](Limits::max_nesting) set to `value`.
    pub fn with_max_nesting(mut self, value: usize) -> Limits {
        self.max_nesting = value;
        self
    }

    /// These limits with [`max_nodes`](Limits::max_nodes) set to `value`.
    pub fn with_max_nodes(mut self, value: usize) -> Limits {
        self.max_nodes = value;
        self
    }

    /// These limits with [`max_repeat`](Limits::max_repeat) set to `value`.
    pub fn with_max_repeat(mut self, value: u32) -> Limits {
        self.max_repeat = value;
        self
    }

    /// These limits with [`max_terminal_nodes`](Limits::max_terminal_nodes) set to `value`.
    pub fn with_max_terminal_nodes(mut self, value: usize) -> Limits {
        self.max_terminal_nodes = value;
        self
    }
}

/// How the Lark and GBNF front-ends parse and compile a grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Resource limits of the front-end (parsing and lowering).
    pub limits: Limits,
    /// Resource limits of the compiled grammar and its parsers, handed to
    /// [`earley::GrammarBuilder::build`].
    pub parser_limits: earley::Limits,
    /// Accept Lark rule and terminal priorities (`rule.2:`, `TERM.2:`) and
    /// ignore them. llguidance rejects priorities ("priority not supported
    /// yet"), and so do we by default. Priorities only choose among parses in
    /// Lark's dynamic Earley lexer, which does not change the set of accepted
    /// strings, so ignoring them keeps the language.
    pub ignore_priorities: bool,
    /// The layout `%json { … }` compiles its schema with, before the
    /// schema's own `"x-guidance"` settings
    /// ([`x_guidance`](crate::x_guidance)). Default: llguidance's,
    /// [`jsonschema::Options::llguidance_compat`] (unbounded flexible
    /// whitespace, schema property order), so that a Lark grammar means
    /// what it means to llguidance.
    pub json: jsonschema::Options,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            limits: Limits::default(),
            parser_limits: earley::Limits::default(),
            ignore_priorities: false,
            json: jsonschema::Options::llguidance_compat(),
        }
    }
}

impl Config {
    /// This configuration with `options` as `%json`'s layout.
    pub fn with_json_options(mut self, options: jsonschema::Options) -> Config {
        self.json = options;
        self
    }
}
