//! Project automation, run as `cargo xtask <command>`.
//!
//! - `cargo xtask bench <suite> [ARGS…]`: a side-by-side benchmark suite, run
//!   in release mode by the `structgen-bench` binary of the `compare` crate;
//!   each suite prints a Markdown table and writes `target/bench/<suite>.json`
//!   and `target/bench/<suite>.md`.
//! - `cargo xtask tidy`: the house-rule checks (also run as a test).
//! - `cargo xtask ci`: formatting, tidy, the whole test suite, and the docs
//!   with warnings denied.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

mod tidy;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  bench <suite> [ARGS...]  run a benchmark suite (`cargo xtask bench list` lists them)
  tidy                     check the house rules
  ci                       fmt check, tidy, tests and docs, as a reviewer would";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<()> {
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("bench") => bench(&root, &args[1..]),
        Some("tidy") => {
            let problems = tidy::check(&root)?;
            if problems.is_empty() {
                println!("tidy: clean");
                Ok(())
            } else {
                for p in &problems {
                    eprintln!("{p}");
                }
                bail!("tidy found {} problem(s)", problems.len())
            }
        }
        Some("ci") => ci(&root),
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

/// The workspace root: the parent of this crate's manifest directory.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").into()
}

fn bench(root: &Path, args: &[String]) -> Result<()> {
    if args.is_empty() {
        bail!("usage: cargo xtask bench <suite> [ARGS...]; `cargo xtask bench list` lists suites");
    }
    let status = Command::new(cargo())
        .current_dir(root)
        .args(["run", "--release", "--quiet", "--package", "compare", "--bin", "structgen-bench"])
        .arg("--")
        .args(args)
        .status()
        .context("cannot start cargo")?;
    if !status.success() {
        bail!("benchmark suite `{}` failed", args[0]);
    }
    Ok(())
}

fn ci(root: &Path) -> Result<()> {
    let steps: [(&str, &[&str]); 3] = [
        ("fmt", &["fmt", "--all", "--", "--check"]),
        ("test", &["test", "--workspace"]),
        ("doc", &["doc", "--workspace", "--no-deps"]),
    ];
    for (name, cargo_args) in steps {
        println!("== {name}");
        let mut cmd = Command::new(cargo());
        cmd.current_dir(root).args(cargo_args);
        if name == "doc" {
            cmd.env("RUSTDOCFLAGS", "-D warnings");
        }
        let status = cmd.status().with_context(|| format!("cannot run cargo {name}"))?;
        if !status.success() {
            bail!("`cargo {}` failed", cargo_args.join(" "));
        }
    }
    Ok(())
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}
