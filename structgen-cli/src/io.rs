//! Reading inputs: whole files, gunzipped when their name ends in `.gz`.
//!
//! The one gzip reader of the command and of the benchmark harnesses (the
//! `structgen` library does no file I/O; `compare` reads its corpora
//! through here).

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A file could not be read, or its gzip stream is broken.
#[derive(Debug)]
pub struct ReadError {
    path: PathBuf,
    gzip: bool,
    source: std::io::Error,
}

impl ReadError {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether reading succeeded and decompressing failed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// The operating system's (or the decoder's) error.
    pub fn io_error(&self) -> &std::io::Error {
        &self.source
    }

    /// The operating system's (or the decoder's) error, by value.
    pub fn into_io_error(self) -> std::io::Error {
        self.source
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The cause is `source()`; error chains (`{:#}`) print it next.
        if self.gzip {
            write!(f, "`{}` is not a valid gzip file", self.path.display())
        } else {
            write!(f, "cannot read `{}`", self.path.display())
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Reads a file, decompressing it when its name ends in `.gz`.
///
/// # Errors
/// The file cannot be read, or (`.gz`) is not a valid gzip stream.
pub fn read_maybe_gz(path: &Path) -> Result<Vec<u8>, ReadError> {
    let raw = std::fs::read(path).map_err(|source| ReadError {
        path: path.to_owned(),
        gzip: false,
        source,
    })?;
    if path.extension().is_some_and(|e| e == "gz") {
        gunzip(&raw).map_err(|source| ReadError { path: path.to_owned(), gzip: true, source })
    } else {
        Ok(raw)
    }
}

/// Decompresses a gzip stream held in memory.
///
/// # Errors
/// The stream is not valid gzip.
pub fn gunzip(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(raw).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_gzipped_files_read_the_same() {
        let dir = std::env::temp_dir().join(format!("structgen-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plain = dir.join("a.txt");
        std::fs::write(&plain, b"hello\n").unwrap();
        let gz = dir.join("a.txt.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, b"hello\n").unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        assert_eq!(read_maybe_gz(&plain).unwrap(), b"hello\n");
        assert_eq!(read_maybe_gz(&gz).unwrap(), b"hello\n");
        // A `.gz` name over plain bytes is a gzip error naming the file.
        let bad = dir.join("bad.gz");
        std::fs::write(&bad, b"plain").unwrap();
        let e = read_maybe_gz(&bad).unwrap_err();
        assert!(e.is_gzip() && e.to_string().contains("bad.gz"), "{e}");
        let e = read_maybe_gz(&dir.join("missing.txt")).unwrap_err();
        assert!(!e.is_gzip() && e.to_string().starts_with("cannot read"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
