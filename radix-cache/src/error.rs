//! The typed errors of the cache, the scheduler and the trace reader.

use std::fmt;

/// Misuse of a [`RadixCache`](crate::RadixCache): every fallible call says
/// exactly what was wrong instead of panicking.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `insert` got a different number of values than tokens.
    ValuesLength {
        /// Tokens given.
        tokens: usize,
        /// Values given.
        values: usize,
    },
    /// A sequence longer than the cache can address (`u32::MAX` tokens).
    TooLong {
        /// Tokens given.
        tokens: usize,
    },
    /// A match handle whose node has since been evicted, or that comes from
    /// before a `reset` (match again).
    StaleHandle,
    /// `unlock` of a lock that is not held: never taken, already released, or
    /// taken before a `reset`.
    NotLocked,
    /// A configuration value out of range (`page_size` 0, block size 0, ...).
    Config {
        /// What was wrong.
        what: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ValuesLength { tokens, values } => {
                write!(f, "insert got {tokens} tokens but {values} values")
            }
            Error::TooLong { tokens } => {
                write!(f, "a sequence of {tokens} tokens exceeds the limit of {} tokens", u32::MAX)
            }
            Error::StaleHandle => {
                write!(f, "the match handle refers to an evicted node or a reset cache")
            }
            Error::NotLocked => write!(f, "unlock of a lock that is not held"),
            Error::Config { what } => write!(f, "invalid configuration: {what}"),
        }
    }
}

impl std::error::Error for Error {}
