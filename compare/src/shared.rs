//! Locating the shared data corpora (`../shared/data` beside the repository).
//!
//! The environment variable `STRUCTGEN_SHARED` overrides the location. Tests
//! that need the corpora call [`data_dir_or_skip`], which prints a clear line
//! when they are absent so a skipped check is never mistaken for a pass.

use std::path::PathBuf;

/// The `shared/data` directory, if present.
pub fn data_dir() -> Option<PathBuf> {
    let shared = match std::env::var_os("STRUCTGEN_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    let data = shared.join("data");
    data.is_dir().then_some(data)
}

/// The `shared/data` directory, or `None` after printing why `what` is skipped.
pub fn data_dir_or_skip(what: &str) -> Option<PathBuf> {
    let dir = data_dir();
    if dir.is_none() {
        eprintln!("SKIPPED {what}: ../shared/data is absent (set STRUCTGEN_SHARED to point at it)");
    }
    dir
}

/// Reads a file below `shared/data`, decompressing it when it ends in `.gz`.
pub fn read(relative: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let dir = data_dir().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotFound, "../shared/data is absent")
    })?;
    let raw = std::fs::read(dir.join(relative))?;
    if relative.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice()).read_to_end(&mut out)?;
        Ok(out)
    } else {
        Ok(raw)
    }
}
