//! Test support shared by every crate of the workspace (unpublished, a
//! dev-dependency only): where the team's corpora are, how a test that
//! cannot run says so, and reading gzipped files.
//!
//! # The corpora
//! Tests that use the shared corpora (tokenizers, MaskBench, grammars,
//! traces) find them with [`data_dir_or_skip`]: the directory named by the
//! environment variable `STRUCTGEN_SHARED` (its `data/` folder), or
//! `../shared/data` beside the repository.
//!
//! # Registry packages
//! Tests that run Python (with the packages of `cargo xtask python`) or the
//! SmolLM2 model (`cargo xtask model`) find them with [`python_or_skip`] and
//! [`model_or_skip`], through `STRUCTGEN_PYTHON` and `STRUCTGEN_MODEL`;
//! `cargo xtask ci` fetches both and sets them. They skip like a missing
//! corpus.
//!
//! # Visible skips
//! A test whose corpus is absent does not pass silently:
//! - with `STRUCTGEN_REQUIRE_DATA=1` it fails (CI sets it through
//!   `cargo xtask ci`), so a missing corpus can never look like a pass;
//! - otherwise it prints `SKIPPED <what>: <why>` and, when
//!   `STRUCTGEN_SKIP_LOG` names a file, appends that line to it; `cargo
//!   xtask test` and `cargo xtask ci` set it and print the skipped tests,
//!   counted and named, after the test summary.
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The environment variable that makes a missing corpus a failure.
pub const REQUIRE_DATA_VAR: &str = "STRUCTGEN_REQUIRE_DATA";
/// The environment variable naming the file skipped tests are logged to.
pub const SKIP_LOG_VAR: &str = "STRUCTGEN_SKIP_LOG";
/// The environment variable naming the shared folder (holding `data/`).
pub const SHARED_VAR: &str = "STRUCTGEN_SHARED";
/// The environment variable naming the Python interpreter of the test
/// environment (`cargo xtask python` creates it).
pub const PYTHON_VAR: &str = "STRUCTGEN_PYTHON";
/// The environment variable naming the model file (`cargo xtask model`
/// fetches it).
pub const MODEL_VAR: &str = "STRUCTGEN_MODEL";

/// The shared `data` directory, if present.
pub fn data_dir() -> Option<PathBuf> {
    let shared = match std::env::var_os(SHARED_VAR) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    let data = shared.join("data");
    data.is_dir().then_some(data)
}

/// The shared `data` directory, or `None` after reporting that `what` is
/// skipped (see the crate docs).
///
/// # Panics
/// When the directory is absent and `STRUCTGEN_REQUIRE_DATA=1`.
pub fn data_dir_or_skip(what: &str) -> Option<PathBuf> {
    let dir = data_dir();
    if dir.is_none() {
        skip(
            what,
            "the shared corpora are absent (set STRUCTGEN_SHARED to the folder holding data/)",
        );
    }
    dir
}

/// A file or folder below the shared `data` directory, or `None` after
/// reporting that `what` is skipped.
///
/// # Panics
/// When it is absent and `STRUCTGEN_REQUIRE_DATA=1`.
pub fn data_path_or_skip(what: &str, relative: &str) -> Option<PathBuf> {
    let path = data_dir_or_skip(what)?.join(relative);
    if path.exists() {
        Some(path)
    } else {
        skip(what, &format!("{} is absent", path.display()));
        None
    }
}

/// The test environment's Python interpreter, or `None` after reporting
/// that `what` is skipped.
///
/// # Panics
/// When it is unset or absent and `STRUCTGEN_REQUIRE_DATA=1`.
pub fn python_or_skip(what: &str) -> Option<PathBuf> {
    env_file_or_skip(what, PYTHON_VAR, "cargo xtask python")
}

/// The SmolLM2 GGUF file, or `None` after reporting that `what` is skipped.
///
/// # Panics
/// When it is unset or absent and `STRUCTGEN_REQUIRE_DATA=1`.
pub fn model_or_skip(what: &str) -> Option<PathBuf> {
    env_file_or_skip(what, MODEL_VAR, "cargo xtask model")
}

fn env_file_or_skip(what: &str, var: &str, maker: &str) -> Option<PathBuf> {
    match std::env::var_os(var).map(PathBuf::from) {
        Some(path) if path.exists() => Some(path),
        Some(path) => {
            skip(what, &format!("{var}={} does not exist", path.display()));
            None
        }
        None => {
            skip(what, &format!("{var} is unset (`{maker}` prints the path to set it to)"));
            None
        }
    }
}

/// Reports that the test `what` cannot run, and why: a failure when
/// `STRUCTGEN_REQUIRE_DATA=1`, else a `SKIPPED` line on standard error and
/// in the skip log.
///
/// # Panics
/// When `STRUCTGEN_REQUIRE_DATA=1`.
pub fn skip(what: &str, why: &str) {
    if std::env::var(REQUIRE_DATA_VAR).is_ok_and(|v| v == "1") {
        panic!("{what} cannot run: {why} ({REQUIRE_DATA_VAR}=1 forbids skipping)");
    }
    let line = format!("SKIPPED {what}: {why}");
    eprintln!("{line}");
    if let Some(log) = std::env::var_os(SKIP_LOG_VAR) {
        // One short `write` per line to a file opened for appending: lines
        // from tests running in parallel processes do not interleave.
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = appended {
            eprintln!("cannot append to the skip log {}: {e}", Path::new(&log).display());
        }
    }
}

/// Reads a file, decompressing it when its name ends in `.gz`.
///
/// # Panics
/// When the file cannot be read or decompressed (a test fixture is broken).
pub fn read(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out
    } else {
        raw
    }
}

/// Reads a file below the shared `data` directory (see [`read`]), or
/// `None` after reporting that `what` is skipped.
///
/// # Panics
/// As [`read`], and as [`data_path_or_skip`].
pub fn read_data_or_skip(what: &str, relative: &str) -> Option<Vec<u8>> {
    data_path_or_skip(what, relative).map(|p| read(&p))
}
