//! Locating the shared data corpora (`../shared/data` beside the repository).
//!
//! The environment variable `STRUCTGEN_SHARED` overrides the location. Tests
//! that need the corpora call [`data_dir_or_skip`], which prints a clear line
//! when they are absent so a skipped check is never mistaken for a pass.

pub use testkit::{data_dir, data_dir_or_skip};

/// Reads a file below `shared/data`, decompressing it when it ends in `.gz`
/// (with [`structgen_cli::io::gunzip`], the workspace's one gzip reader).
pub fn read(relative: &str) -> std::io::Result<Vec<u8>> {
    let dir = data_dir().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotFound, "../shared/data is absent")
    })?;
    let raw = std::fs::read(dir.join(relative))?;
    if relative.ends_with(".gz") { structgen_cli::io::gunzip(&raw) } else { Ok(raw) }
}
