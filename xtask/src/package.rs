//! CI's packaging step: every published crate packaged as crates.io would
//! receive it, and the packages type-checked against each other.
//!
//! `cargo package` can verify a package itself: it unpacks the `.crate`
//! and builds it, with the sibling packages served from a temporary local
//! registry. On CI's two cores that took 526 s of a 2,806 s run
//! (2026-11-25), most of it a second full build of every dependency
//! (candle, PyO3, tokenizers' regex stack) at the default dev profile, the
//! packaged manifests carrying no workspace profile. It also left its
//! unpacked siblings in `$CARGO_HOME/registry/src/-<hash>/`, keyed by the
//! checkout's path and reused by a later run with the same version number:
//! CI once verified a crate against a sibling that predated the methods it
//! calls.
//!
//! This step keeps what the verification proves about the *packages* and
//! drops the second build. `cargo package --no-verify` checks the manifests
//! (versions on every path dependency, the metadata crates.io requires)
//! and writes the `.crate` files; they are unpacked into
//! `target/package-check/`, a workspace of the unpacked crates only, in
//! which each crate's dependency on a sibling (a plain version requirement
//! once packaged) is patched to the sibling's unpacked sources, with the
//! repository's `Cargo.lock` (the same dependency versions) and profiles.
//! `cargo check` there fails on a file the package leaves out, a feature
//! or dependency the workspace supplied and the manifest does not, or a
//! sibling API the packaged version lacks. It shares `target/` with
//! clippy's check of the dependencies, reused where their features agree:
//! on a clean clone (2026-11-26) it re-checked about 48 dependencies whose
//! features differ without the unpublished members (syn, serde,
//! candle-core, tokenizers), and the step took 236 s against the
//! verification's 526 s. What it no longer runs is code generation and
//! linking of the packaged sources, which are byte for byte the sources
//! `cargo test` has just built and linked.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::cargo;

/// A workspace member that `cargo publish` would accept.
struct Published {
    name: String,
    version: String,
}

/// Packages every published crate and checks the packages together.
pub(crate) fn package(root: &Path) -> Result<()> {
    let started = Instant::now();
    let crates = published(root)?;
    let mut args = vec!["package".to_owned(), "--no-verify".into(), "--allow-dirty".into()];
    for c in &crates {
        args.extend(["--package".into(), c.name.clone()]);
    }
    println!("== package: cargo {}", args.join(" "));
    run(Command::new(cargo()).current_dir(root).args(&args), "cargo package")?;

    let target = root.join("target");
    let dir = target.join("package-check");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)?;
    let mut members = Vec::with_capacity(crates.len());
    for c in &crates {
        let file = target.join("package").join(format!("{}-{}.crate", c.name, c.version));
        // A `.crate` is a gzipped tar holding one folder, `NAME-VERSION/`.
        let mut tar = Command::new("tar");
        tar.arg("-xzf").arg(&file).arg("-C").arg(&dir);
        run(&mut tar, &format!("tar -xzf {}", file.display()))?;
        members.push(format!("{}-{}", c.name, c.version));
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))?;
    std::fs::write(dir.join("Cargo.toml"), check_manifest(&crates, &members, &manifest))?;
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))
        .context("cannot copy Cargo.lock")?;

    println!("== package check: cargo check --workspace in {}", dir.display());
    run(
        Command::new(cargo())
            .current_dir(&dir)
            .args(["check", "--workspace"])
            .env("CARGO_TARGET_DIR", &target)
            .env("CARGO_INCREMENTAL", "0"),
        "cargo check of the packages",
    )?;
    println!(
        "== package done in {:.0} s ({} crates)",
        started.elapsed().as_secs_f64(),
        crates.len()
    );
    Ok(())
}

/// The workspace members without `publish = false`, from `cargo metadata`.
fn published(root: &Path) -> Result<Vec<Published>> {
    let out = Command::new(cargo())
        .current_dir(root)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("cargo metadata printed no JSON")?;
    let mut crates = Vec::new();
    for p in meta["packages"].as_array().context("cargo metadata: no packages")? {
        // `publish` is null for "any registry" and a list of registry names
        // otherwise; `publish = false` is the empty list.
        let publishable = match &p["publish"] {
            serde_json::Value::Null => true,
            serde_json::Value::Array(registries) => !registries.is_empty(),
            _ => false,
        };
        if publishable {
            let field = |k: &str| p[k].as_str().map(str::to_owned).context("cargo metadata");
            crates.push(Published { name: field("name")?, version: field("version")? });
        }
    }
    if crates.is_empty() {
        bail!("no workspace member is published");
    }
    crates.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(crates)
}

/// The manifest of the check workspace: the unpacked crates as members,
/// each sibling dependency patched to its unpacked folder, and the
/// repository's profiles (so dependencies built by clippy are reused).
fn check_manifest(crates: &[Published], members: &[String], root_manifest: &str) -> String {
    let mut m = String::from(
        "# Written by `cargo xtask ci` (xtask/src/package.rs): the packaged crates,\n\
         # unpacked, checked against each other.\n[workspace]\nresolver = \"3\"\nmembers = [\n",
    );
    for member in members {
        let _ = writeln!(m, "    \"{member}\",");
    }
    m.push_str("]\n\n[patch.crates-io]\n");
    for (c, member) in crates.iter().zip(members) {
        let _ = writeln!(m, "{} = {{ path = \"{member}\" }}", c.name);
    }
    m.push_str(&profile_sections(root_manifest));
    m
}

/// Every `[profile…]` table of a manifest, verbatim.
fn profile_sections(manifest: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in manifest.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            inside = trimmed.starts_with("[profile");
            if inside {
                out.push('\n');
            }
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd.status().with_context(|| format!("cannot run {what}"))?;
    if !status.success() {
        bail!("{what} failed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_copied_and_nothing_else() {
        let manifest = "[workspace]\nmembers = [\"a\"]\n\n[profile.dev]\nopt-level = 1\n\n\
                        [workspace.dependencies]\nx = \"1\"\n\n[profile.dev.package.\"*\"]\n\
                        opt-level = 3\n";
        let got = profile_sections(manifest);
        assert_eq!(
            got,
            "\n[profile.dev]\nopt-level = 1\n\n\n[profile.dev.package.\"*\"]\nopt-level = 3\n"
        );
    }

    #[test]
    fn siblings_are_patched_to_their_folders() {
        let crates = [
            Published { name: "structgen-lexer".into(), version: "0.1.0".into() },
            Published { name: "structgen".into(), version: "0.2.0".into() },
        ];
        let members = ["structgen-lexer-0.1.0".to_owned(), "structgen-0.2.0".to_owned()];
        let m = check_manifest(&crates, &members, "");
        assert!(m.contains("    \"structgen-lexer-0.1.0\",\n    \"structgen-0.2.0\",\n]"));
        assert!(m.contains("structgen-lexer = { path = \"structgen-lexer-0.1.0\" }\n"));
        assert!(m.contains("structgen = { path = \"structgen-0.2.0\" }\n"));
    }
}
