//! Access to the team's shared corpora (see `testkit`: a visible skip when
//! absent, a failure when `STRUCTGEN_REQUIRE_DATA=1`).

use std::path::PathBuf;

/// The shared `grammars` folder, or `None` after reporting that `what` is
/// skipped (see `testkit`).
pub(crate) fn grammars_dir(what: &str) -> Option<PathBuf> {
    testkit::data_path_or_skip(what, "grammars")
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
