//! Errors: loading a vocabulary, encoding with specials, decoding.

use std::fmt;

/// A vocabulary could not be loaded. The message names the line, token or
/// merge at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// A tiktoken rank file line is malformed (1-based line number).
    Tiktoken {
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A `tokenizer.json` is not valid JSON or lacks a required field.
    Json {
        /// What is wrong, with the JSON path when known.
        message: String,
    },
    /// A token is unusable (duplicate, bad id, bytes that cannot be decoded).
    Token {
        /// The token as written in the file.
        token: String,
        /// What is wrong.
        message: String,
    },
    /// A merge of a `tokenizer.json` is unusable (0-based index in the list).
    Merge {
        /// The 0-based index in `model.merges`.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// A GGUF file's metadata is unusable.
    Gguf {
        /// The byte offset in the file where the problem was found (0
        /// when it concerns the metadata as a whole).
        offset: u64,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The file uses a component this crate does not implement.
    Unsupported {
        /// The component, e.g. `pre_tokenizer Split regex \w+`.
        what: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Tiktoken { line, message } => {
                write!(f, "tiktoken file, line {line}: {message}")
            }
            LoadError::Json { message } => write!(f, "tokenizer.json: {message}"),
            LoadError::Token { token, message } => write!(f, "token {token:?}: {message}"),
            LoadError::Merge { index, message } => write!(f, "merge #{index}: {message}"),
            LoadError::Gguf { offset, message } => write!(f, "GGUF, byte {offset}: {message}"),
            LoadError::Unsupported { what } => write!(f, "unsupported tokenizer component: {what}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Encoding with special tokens failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The text contains a special token that was not allowed.
    DisallowedSpecial {
        /// The special token's name.
        name: String,
        /// Its byte offset in the text.
        offset: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::DisallowedSpecial { name, offset } => {
                write!(
                    f,
                    "the text contains the special token {name:?} at byte {offset}, which is not allowed"
                )
            }
        }
    }
}

impl std::error::Error for EncodeError {}

/// Decoding failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// An id that is not in the vocabulary.
    UnknownId {
        /// The id.
        id: u32,
        /// Its position in the input.
        index: usize,
    },
    /// The bytes are not valid UTF-8.
    InvalidUtf8 {
        /// The length of the longest valid prefix, in bytes.
        valid_up_to: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnknownId { id, index } => {
                write!(f, "token #{index} has id {id}, which is not in the vocabulary")
            }
            DecodeError::InvalidUtf8 { valid_up_to } => {
                write!(f, "the decoded bytes are not valid UTF-8 after byte {valid_up_to}")
            }
        }
    }
}

impl std::error::Error for DecodeError {}
