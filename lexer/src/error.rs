//! Lexer errors.

use crate::spec::LexemeId;

/// Why a lexer could not be built or could not go on.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LexerErrorKind {
    /// A lexeme's regular expression does not compile.
    Regex {
        /// The lexeme.
        lexeme: LexemeId,
        /// Its name.
        name: String,
        /// derivre's message.
        message: String,
    },
    /// The derivative engine (derivre) failed internally on this lexeme's
    /// regex; the lexer stops computing transitions.
    EngineFault {
        /// The lexeme whose derivative failed.
        lexeme: LexemeId,
        /// Its name.
        name: String,
    },
    /// An emptiness check ran out of fuel (see [`LexerLimits::relevance_fuel`](crate::LexerLimits)).
    RelevanceFuel {
        /// The lexeme being checked, when known.
        lexeme: Option<LexemeId>,
        /// Its name.
        name: String,
    },
    /// More lexer states than [`LexerLimits::max_states`](crate::LexerLimits).
    TooManyStates {
        /// The limit.
        limit: usize,
    },
    /// More expression nodes than [`LexerLimits::max_exprs`](crate::LexerLimits).
    TooManyExprs {
        /// The limit.
        limit: usize,
    },
    /// A lexeme whose derivatives could grow wider than
    /// [`LexerLimits::max_repeat_width`](crate::LexerLimits) terms (nested
    /// counted repetitions of nullable bodies, like `((a*){100}){100}`).
    RepeatTooWide {
        /// The lexeme.
        lexeme: LexemeId,
        /// Its name.
        name: String,
        /// The estimated width.
        width: u64,
        /// The limit.
        limit: u64,
    },
}

/// A lexer error; [`kind`](LexerError::kind) says what went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexerError {
    kind: LexerErrorKind,
}

impl LexerError {
    pub(crate) fn new(kind: LexerErrorKind) -> LexerError {
        LexerError { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &LexerErrorKind {
        &self.kind
    }

    /// The lexeme at fault, when the error is about one.
    pub fn lexeme(&self) -> Option<LexemeId> {
        match &self.kind {
            LexerErrorKind::Regex { lexeme, .. }
            | LexerErrorKind::EngineFault { lexeme, .. }
            | LexerErrorKind::RepeatTooWide { lexeme, .. } => Some(*lexeme),
            LexerErrorKind::RelevanceFuel { lexeme, .. } => *lexeme,
            LexerErrorKind::TooManyStates { .. } | LexerErrorKind::TooManyExprs { .. } => None,
        }
    }
}

impl std::fmt::Display for LexerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            LexerErrorKind::Regex { name, message, .. } => {
                write!(f, "invalid regular expression in lexeme {name}: {message}")
            }
            LexerErrorKind::EngineFault { name, .. } => write!(
                f,
                "the derivative engine failed on lexeme {name}; the regex is not supported"
            ),
            LexerErrorKind::RelevanceFuel { name, .. } => write!(
                f,
                "lexeme {name} is too complex: the emptiness check ran out of fuel \
                 (raise LexerLimits::build_fuel)"
            ),
            LexerErrorKind::TooManyStates { limit } => {
                write!(f, "the lexer needs more than {limit} states (LexerLimits::max_states)")
            }
            LexerErrorKind::TooManyExprs { limit } => write!(
                f,
                "the lexer needs more than {limit} expression nodes (LexerLimits::max_exprs)"
            ),
            LexerErrorKind::RepeatTooWide { name, width, limit, .. } => write!(
                f,
                "lexeme {name} nests counted repetitions of patterns that match the empty \
                 string: its derivatives could hold {width} terms, more than the limit of \
                 {limit} (LexerLimits::max_repeat_width); write `(a*){{100}}` as `a*`"
            ),
        }
    }
}

impl std::error::Error for LexerError {}
