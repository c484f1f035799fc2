//! Errors of grammar construction and of parsing.

use lexer::LexerError;

/// Why a grammar could not be built. Messages name the symbol involved.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrammarError {
    /// A [`SymbolId`](crate::SymbolId) that this builder did not hand out.
    UnknownSymbol {
        /// The raw id.
        id: u32,
    },
    /// A rule whose left-hand side is a lexeme or a special token.
    NotANonterminal {
        /// The symbol's name.
        name: String,
    },
    /// A nonterminal defined by a permutation phrase has other rules or a
    /// second phrase.
    Redefined {
        /// The nonterminal's name.
        name: String,
    },
    /// A nonterminal reachable from the start symbol has no rule.
    Undefined {
        /// The nonterminal's name.
        name: String,
    },
    /// The start symbol derives no string at all.
    EmptyLanguage {
        /// The start symbol's name.
        start: String,
    },
    /// A repetition with `min > max`.
    BadRepeat {
        /// The repeated symbol's name.
        name: String,
        /// The lower bound.
        min: u32,
        /// The upper bound.
        max: u32,
    },
    /// An [`ordered`](crate::Permutation::ordered) phrase whose members'
    /// names do not first appear as `0, 1, 2, …`.
    UnorderedNames {
        /// The phrase's name.
        name: String,
    },
    /// The grammar exceeds [`Limits::max_rules`](crate::Limits) or
    /// [`Limits::max_symbols`](crate::Limits).
    TooLarge {
        /// What was counted: `"rules"` or `"symbols"`.
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// A lexeme could not be compiled.
    Lexer(LexerError),
}

impl std::fmt::Display for GrammarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrammarError::UnknownSymbol { id } => {
                write!(f, "symbol id {id} does not belong to this grammar builder")
            }
            GrammarError::NotANonterminal { name } => {
                write!(f, "{name} is a terminal and cannot have rules")
            }
            GrammarError::Undefined { name } => write!(f, "nonterminal {name} has no rule"),
            GrammarError::Redefined { name } => write!(
                f,
                "nonterminal {name} is defined by a permutation phrase and by other rules"
            ),
            GrammarError::UnorderedNames { name } => write!(
                f,
                "the ordered phrase {name} names its members other than 0, 1, 2, … in order"
            ),
            GrammarError::EmptyLanguage { start } => {
                write!(f, "the grammar accepts no string: {start} derives nothing")
            }
            GrammarError::BadRepeat { name, min, max } => {
                write!(f, "repetition of {name} has min {min} > max {max}")
            }
            GrammarError::TooLarge { what, limit } => {
                write!(f, "the grammar has more than {limit} {what} (see earley::Limits)")
            }
            GrammarError::Lexer(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GrammarError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GrammarError::Lexer(e) => Some(e),
            _ => None,
        }
    }
}

impl From<LexerError> for GrammarError {
    fn from(e: LexerError) -> GrammarError {
        GrammarError::Lexer(e)
    }
}

/// Why a parser stopped; the parser stays in this error state (sticky).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// The lexer exceeded a limit.
    Lexer {
        /// The lexer's error (which limit, its value).
        error: LexerError,
        /// The byte offset in the text where the parser noticed it: the
        /// bytes consumed when the step that tripped it ends.
        offset: usize,
    },
    /// A row would hold more than [`Limits::max_items_per_row`](crate::Limits) items.
    TooManyItems {
        /// The limit.
        limit: usize,
        /// The byte offset in the text where the row starts (during a
        /// mask, the consumed bytes plus those of the token being tried).
        offset: usize,
    },
    /// One mask computation or one consumed token computed more than
    /// [`Limits::max_items_per_step`](crate::Limits) items.
    StepTooExpensive {
        /// The limit.
        limit: usize,
        /// The byte offset in the text where it tripped, as for
        /// [`TooManyItems`](ParseError::TooManyItems).
        offset: usize,
    },
    /// A parser met more than [`Limits::max_phrase_states`](crate::Limits)
    /// permutation-phrase states.
    TooManyPhraseStates {
        /// The limit.
        limit: usize,
        /// The byte offset in the text where it tripped, as for
        /// [`TooManyItems`](ParseError::TooManyItems).
        offset: usize,
    },
    /// A special token named in the grammar is not in the vocabulary.
    UnknownSpecialToken {
        /// The name, e.g. `<|eom_id|>`.
        name: String,
    },
    /// A [`StateRecognizer`](toktrie::StateRecognizer) walk reached a
    /// phrase with distinct members that has a member, whose checks need the
    /// bytes that walk does not hand over (see
    /// [`Parser::needs_byte_walk`](crate::Parser::needs_byte_walk)).
    ByteWalkRequired {
        /// The byte offset of the consumed text.
        offset: usize,
    },
    /// A completion search inside a distinct phrase with
    /// [`Permutation::search`](crate::Permutation) pushed more than
    /// [`Limits::max_search_bytes`](crate::Limits) bytes without an answer.
    SearchTooLong {
        /// The limit.
        limit: usize,
        /// The byte offset in the text where the search started.
        offset: usize,
    },
    /// A byte or special token the grammar does not allow was consumed.
    Rejected {
        /// The byte offset in the consumed text where it happened.
        offset: usize,
    },
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Lexer { error, offset } => write!(f, "at byte {offset}: {error}"),
            ParseError::TooManyItems { limit, offset } => write!(
                f,
                "at byte {offset}: an Earley row exceeds {limit} items (Limits::max_items_per_row)"
            ),
            ParseError::StepTooExpensive { limit, offset } => write!(
                f,
                "at byte {offset}: one step exceeds {limit} Earley items (Limits::max_items_per_step)"
            ),
            ParseError::TooManyPhraseStates { limit, offset } => write!(
                f,
                "at byte {offset}: more than {limit} permutation-phrase states \
                 (Limits::max_phrase_states)"
            ),
            ParseError::UnknownSpecialToken { name } => {
                write!(f, "special token {name} is not in the vocabulary")
            }
            ParseError::SearchTooLong { limit, offset } => write!(
                f,
                "at byte {offset}: a search for an item that differs from the earlier ones \
                 pushed more than {limit} bytes (Limits::max_search_bytes)"
            ),
            ParseError::Rejected { offset } => {
                write!(f, "the input is rejected by the grammar at byte {offset}")
            }
            ParseError::ByteWalkRequired { offset } => write!(
                f,
                "at byte {offset}: this grammar checks distinct members and needs the \
                 byte-by-byte mask walk (Parser::needs_byte_walk)"
            ),
        }
    }
}

impl ParseError {
    /// The byte offset in the text where the error happened, for the errors
    /// that have one (limits and rejections).
    pub fn offset(&self) -> Option<usize> {
        match *self {
            ParseError::Lexer { offset, .. }
            | ParseError::TooManyItems { offset, .. }
            | ParseError::StepTooExpensive { offset, .. }
            | ParseError::TooManyPhraseStates { offset, .. }
            | ParseError::SearchTooLong { offset, .. }
            | ParseError::ByteWalkRequired { offset }
            | ParseError::Rejected { offset } => Some(offset),
            ParseError::UnknownSpecialToken { .. } => None,
        }
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ParseError::Lexer { error, .. } => Some(error),
            _ => None,
        }
    }
}
