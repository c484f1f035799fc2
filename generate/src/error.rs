//! The crate's error type.

use std::fmt;

/// Something went wrong loading the model or generating.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The model file or a forward pass (candle's message).
    Model(String),
    /// The tokenizer in the model file (`bpe`'s error, with its offset or
    /// token).
    Tokenizer(bpe::LoadError),
    /// The grammar did not compile (with its line and column or JSON
    /// pointer), or the matcher stopped in an error.
    Grammar(String),
    /// The chat template did not compile or render (with its line).
    Template(String),
    /// A chat request is malformed or asks for something unsupported (the
    /// JSON path of the field at fault).
    Request(String),
    /// The prompt and the generated tokens would exceed the context.
    ContextFull {
        /// The most tokens a session holds.
        limit: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Model(m) => write!(f, "model: {m}"),
            Error::Tokenizer(e) => write!(f, "tokenizer: {e}"),
            Error::Grammar(m) => write!(f, "grammar: {m}"),
            Error::Template(m) => write!(f, "chat template: {m}"),
            Error::Request(m) => write!(f, "request: {m}"),
            Error::ContextFull { limit } => {
                write!(f, "the context of {limit} tokens is full")
            }
        }
    }
}

impl std::error::Error for Error {}
