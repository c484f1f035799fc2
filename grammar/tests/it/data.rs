//! Access to the team's shared corpora in `../shared/data`, which tests skip
//! (printing `SKIPPED`) when absent.

use std::path::PathBuf;

/// `../shared/data/grammars` relative to the workspace, if present.
pub(crate) fn grammars_dir(what: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/grammars");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("SKIPPED {what}: {} is absent", dir.display());
        None
    }
}

/// Every file under `dir` (recursively) whose name ends with `ext`, sorted.
pub(crate) fn files_with_ext(dir: &std::path::Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable directory") {
            let p = entry.expect("directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
