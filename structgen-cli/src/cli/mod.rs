//! Subcommands of the `structgen` tool, one module each, plus shared helpers.

/// `println!` for subcommands: a failed write to standard output (a closed
/// pipe, a full disk) returns an error from the enclosing function instead
/// of panicking; `main` exits quietly on a closed pipe.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
            .map_err($crate::cli::common::stdout_error)?
    }};
}

pub(crate) mod cache_sim;
pub(crate) mod common;
pub(crate) mod demo;
pub(crate) mod forced;
#[cfg(feature = "generate")]
pub(crate) mod generate;
#[cfg(feature = "generate")]
pub(crate) mod generate_eval;
pub(crate) mod jsonschema_suite;
pub(crate) mod mask;
pub(crate) mod maskbench;
pub(crate) mod tokenize;
pub(crate) mod validate;
