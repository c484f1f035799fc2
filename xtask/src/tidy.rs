//! The house-rule checks: run by `cargo xtask tidy` and by the `tidy` test.
//!
//! Rules (see `STYLE.md` of the team): every `.rs` file opens with a `//!`
//! line; every `unsafe` block has a `// SAFETY:` comment in the comment block
//! right above it; no ignored tests; no file longer than [`MAX_LINES`]; every
//! crate opts into the workspace lints; the workspace is formatted; the
//! dependency directions of ARCHITECTURE.md hold (`deps.rs`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

/// The longest a source file may grow before it must be split by concern.
const MAX_LINES: usize = 800;

/// Files over [`MAX_LINES`] whose split is under way elsewhere, each with
/// the length it may not exceed meanwhile (delete a row once its file is
/// split).
const PENDING_SPLIT: &[(&str, usize)] = &[];

/// One broken rule, with the file (and line) that breaks it.
#[derive(Debug)]
pub(crate) struct Problem {
    path: PathBuf,
    line: Option<usize>,
    message: String,
}

impl Problem {
    /// A problem of a whole file.
    pub(crate) fn new(path: &Path, message: String) -> Problem {
        Problem { path: path.to_path_buf(), line: None, message }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path.display(), line, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// Checks the whole workspace below `root` and returns every problem found.
pub(crate) fn check(root: &Path) -> Result<Vec<Problem>> {
    let mut problems = Vec::new();
    let mut files = Vec::new();
    collect_files(root, &mut files)?;
    for path in &files {
        let rel = path.strip_prefix(root).unwrap_or(path).to_path_buf();
        match path.extension().and_then(|e| e.to_str()) {
            Some("rs") => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                check_rust_file(&rel, &text, &mut problems);
            }
            Some("toml") if path.file_name().is_some_and(|n| n == "Cargo.toml") => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                if let Some(krate) = path.parent().filter(|p| *p != root).and_then(Path::file_name)
                {
                    crate::deps::check(&rel, &krate.to_string_lossy(), &text, &mut problems);
                }
                if path.parent() != Some(root) && !text.contains("[lints]\nworkspace = true") {
                    problems.push(Problem {
                        path: rel,
                        line: None,
                        message: "crate does not opt into the workspace lints \
                                  (`[lints] workspace = true`)"
                            .into(),
                    });
                }
            }
            _ => {}
        }
    }
    check_fmt(root, &mut problems);
    check_readme_example(root, &mut problems);
    Ok(problems)
}

/// The README's engine loop must be the code of `structgen/examples/engine.rs`
/// (which the tests compile), so that it cannot rot.
fn check_readme_example(root: &Path, problems: &mut Vec<Problem>) {
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap_or_default();
    let example =
        std::fs::read_to_string(root.join("structgen/examples/engine.rs")).unwrap_or_default();
    let block = readme
        .split_once("## For engines")
        .and_then(|(_, rest)| rest.split_once("```rust\n"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(code, _)| code);
    match block {
        Some(code) if !code.trim().is_empty() && example.contains(code) => {}
        _ => problems.push(Problem {
            path: "README.md".into(),
            line: None,
            message: "the `## For engines` Rust block is not the code of \
                      structgen/examples/engine.rs: copy it from there"
                .into(),
        }),
    }
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if entry.file_type()?.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn check_rust_file(path: &Path, text: &str, problems: &mut Vec<Problem>) {
    let mut problem = |line: Option<usize>, message: &str| {
        problems.push(Problem { path: path.to_path_buf(), line, message: message.into() })
    };
    if !text.starts_with("//!") {
        problem(Some(1), "file does not open with a `//!` comment saying what it is for");
    }
    let lines: Vec<&str> = text.lines().collect();
    let limit = PENDING_SPLIT
        .iter()
        .find(|(p, _)| Path::new(p) == path)
        .map_or(MAX_LINES, |&(_, n)| n.max(MAX_LINES));
    if lines.len() > limit {
        problem(None, &format!("{} lines: split it by concern (limit {limit})", lines.len()));
    }
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        // Spelled in two pieces so that this file does not flag itself.
        if code.contains(concat!("#[", "ignore")) {
            problem(Some(i + 1), "ignored test: fix it or delete it");
        }
        if is_unsafe_block(code) {
            // The comment block right above the block must hold the SAFETY line.
            let mut comments =
                lines[..i].iter().rev().take_while(|l| l.trim_start().starts_with("//"));
            if !comments.any(|l| l.trim_start().starts_with("// SAFETY:")) {
                problem(Some(i + 1), "`unsafe` block without a `// SAFETY:` comment above it");
            }
        }
    }
}

/// Whether a line of code opens an `unsafe` block (not an `unsafe fn`/`impl`/`trait`).
fn is_unsafe_block(code: &str) -> bool {
    let mut rest = code;
    while let Some(at) = rest.find("unsafe") {
        let before = &rest[..at];
        let after = rest[at + "unsafe".len()..].trim_start();
        let word_start = before.chars().last().is_none_or(|c| !c.is_alphanumeric() && c != '_');
        // An odd number of quotes before it puts the word inside a string literal.
        let prefix = &code[..code.len() - rest.len() + at];
        let in_string = prefix.matches('"').count() % 2 != prefix.matches("\\\"").count() % 2;
        if word_start && after.starts_with('{') && !in_string {
            return true;
        }
        rest = &rest[at + "unsafe".len()..];
    }
    false
}

fn check_fmt(root: &Path, problems: &mut Vec<Problem>) {
    let output = Command::new("cargo")
        .current_dir(root)
        .args(["fmt", "--all", "--", "--check", "--files-with-diff"])
        .output();
    match output {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            let files = String::from_utf8_lossy(&out.stdout);
            for file in files.lines().filter(|l| !l.is_empty()) {
                problems.push(Problem {
                    path: file.into(),
                    line: None,
                    message: "not formatted: run `cargo fmt --all`".into(),
                });
            }
            if files.trim().is_empty() {
                problems.push(Problem {
                    path: root.into(),
                    line: None,
                    message: format!(
                        "`cargo fmt --check` failed: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    ),
                });
            }
        }
        // Without rustfmt on the machine the formatting rule cannot be checked;
        // the other rules still are.
        Err(_) => eprintln!("tidy: cargo fmt is not available; formatting not checked"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy() {
        let root = crate::workspace_root();
        let problems = check(&root).unwrap();
        let report: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(report.is_empty(), "tidy found problems:\n{}", report.join("\n"));
    }

    #[test]
    fn unsafe_blocks_are_recognized() {
        assert!(is_unsafe_block("let x = unsafe { *p };"));
        assert!(is_unsafe_block("unsafe {"));
        assert!(!is_unsafe_block("unsafe fn f() {"));
        assert!(!is_unsafe_block("unsafe impl Send for X {}"));
        assert!(!is_unsafe_block("#![forbid(unsafe_code)]"));
        assert!(!is_unsafe_block("let s = \"unsafe { x }\";"));
    }

    #[test]
    fn rust_file_rules_report_locations() {
        let mut problems = Vec::new();
        let text = "fn main() {\n    let _ = unsafe { 1 };\n}\n";
        check_rust_file(Path::new("x.rs"), text, &mut problems);
        let report: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(report.len(), 2, "{report:?}");
        assert!(report[0].starts_with("x.rs:1:"));
        assert!(report[1].starts_with("x.rs:2:"));
    }
}
