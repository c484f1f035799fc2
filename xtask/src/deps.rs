//! The dependency directions of ARCHITECTURE.md, checked by tidy: each
//! crate's `[dependencies]` name only the workspace crates its row below
//! allows (so `lexer` never learns about Earley and `bpe` never about
//! grammars), no library crate depends on a peer (llguidance, HF
//! tokenizers, tiktoken-rs, bpe-openai) and none on the command-line stack
//! (clap, anyhow, flate2): those belong to `structgen-cli`, `compare`,
//! `testkit` and `xtask`.

use std::path::Path;

use crate::tidy::Problem;

/// The workspace crates by folder name, as they name each other.
const OURS: &[&str] = &[
    "toktrie",
    "lexer",
    "earley",
    "grammar",
    "jsonschema",
    "slicer",
    "bpe",
    "coalesce",
    "radix-cache",
    "kv-events",
    "structgen",
    "structgen-cli",
    "testkit",
];

/// Which workspace crates each crate may depend on (ARCHITECTURE.md's
/// diagram); a crate not listed may depend on any (compare, xtask, python).
const ALLOWED: &[(&str, &[&str])] = &[
    ("toktrie", &[]),
    ("bpe", &[]),
    ("radix-cache", &[]),
    ("lexer", &[]),
    ("earley", &["lexer", "toktrie"]),
    ("jsonschema", &["earley", "lexer"]),
    ("grammar", &["jsonschema", "earley", "lexer"]),
    ("slicer", &["lexer", "toktrie"]),
    ("coalesce", &["bpe", "toktrie"]),
    ("kv-events", &["radix-cache"]),
    (
        "structgen",
        &[
            "grammar",
            "jsonschema",
            "earley",
            "lexer",
            "toktrie",
            "slicer",
            "coalesce",
            "bpe",
            "radix-cache",
        ],
    ),
    ("testkit", &[]),
];

/// Crates only `compare` may depend on.
const PEERS: &[&str] =
    &["llguidance", "peer-toktrie", "peer-bpe", "tokenizers", "tiktoken-rs", "bpe-openai"];

/// The command-line stack, kept out of the libraries.
const CLI_ONLY: &[&str] = &["clap", "anyhow", "flate2"];

/// The crates that may use the command-line stack.
const NOT_LIBRARIES: &[&str] = &["structgen-cli", "compare", "xtask", "testkit", "fuzz"];

/// The names under `[dependencies]` of a manifest (dev- and
/// build-dependencies are free).
pub(crate) fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or("").trim();
            if !name.is_empty() {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// Checks the manifest of the crate in folder `krate`.
pub(crate) fn check(rel: &Path, krate: &str, manifest: &str, problems: &mut Vec<Problem>) {
    for dep in dependencies(manifest) {
        let d = dep.as_str();
        let why = if krate != "compare" && PEERS.contains(&d) {
            Some("only `compare` depends on a peer".to_owned())
        } else if !NOT_LIBRARIES.contains(&krate) && CLI_ONLY.contains(&d) && krate != "python" {
            Some(format!("`{d}` belongs to the CLI side (structgen-cli, compare, xtask)"))
        } else if let Some((_, allowed)) = ALLOWED.iter().find(|(k, _)| *k == krate)
            && OURS.contains(&d)
            && !allowed.contains(&d)
        {
            Some(format!(
                "`{krate}` may depend on {} (ARCHITECTURE.md's diagram), not on `{d}`",
                if allowed.is_empty() { "no crate of ours".to_owned() } else { allowed.join(", ") }
            ))
        } else {
            None
        };
        if let Some(why) = why {
            problems.push(Problem::new(rel, format!("dependency `{d}`: {why}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_are_enforced() {
        let manifest = "[package]\nname = \"x\"\n\n[dependencies]\nearley.workspace = true\n\
                        clap = \"4\"\n# note\nllguidance = \"1\"\n\n[dev-dependencies]\ngrammar.workspace = true\n";
        assert_eq!(dependencies(manifest), ["earley", "clap", "llguidance"]);
        let mut problems = Vec::new();
        check(Path::new("lexer/Cargo.toml"), "lexer", manifest, &mut problems);
        let report: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(report.len(), 3, "{report:?}");
        assert!(report[0].contains("`lexer` may depend on no crate of ours"));
        let mut problems = Vec::new();
        check(Path::new("compare/Cargo.toml"), "compare", manifest, &mut problems);
        assert!(problems.is_empty());
    }
}
