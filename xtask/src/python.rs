//! The Python package's tests and benchmark: build the `structgen` wheel
//! with maturin (from the virtual environment of [`registry::python`]),
//! install it there, and run pytest or the benchmark script with that
//! interpreter.
//!
//! The tests build with cargo's `dev` profile (dependencies at
//! `opt-level = 3`, our code at 1, as the Rust tests), so CI reuses most of
//! what `cargo test` compiled; the benchmark builds with `release`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::registry;

/// Builds the wheel with `profile`, installs it into `target/venv`, and
/// returns that venv's interpreter. Under `ci`, without incremental state,
/// as CI's `cargo test` builds: so its artifacts of our crates are reused.
fn install(root: &Path, profile: &str, ci: bool) -> Result<PathBuf> {
    let python = registry::python(root)?;
    let out = root.join("target").join("wheels").join(profile);
    // One wheel in the folder: the one this build makes.
    let _ = std::fs::remove_dir_all(&out);
    let started = Instant::now();
    println!("== python: maturin build --profile {profile} (python/)");
    let mut maturin = Command::new(&python);
    maturin
        .current_dir(root)
        .args(["-m", "maturin", "build", "--quiet", "--manifest-path", "python/Cargo.toml"])
        .args(["--profile", profile, "--interpreter"])
        .arg(&python)
        .arg("--out")
        .arg(&out);
    if ci {
        maturin.env("CARGO_INCREMENTAL", "0");
    }
    let status = maturin.status().context("cannot start maturin")?;
    if !status.success() {
        bail!("maturin build failed");
    }
    let wheel = std::fs::read_dir(&out)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .with_context(|| format!("maturin left no wheel in {}", out.display()))?;
    let status = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"])
        .args(["--force-reinstall"])
        .arg(&wheel)
        .status()
        .context("cannot start pip")?;
    if !status.success() {
        bail!("pip install {} failed", wheel.display());
    }
    println!(
        "== python: {} installed in {:.0} s",
        wheel.file_name().unwrap_or_default().to_string_lossy(),
        started.elapsed().as_secs_f64()
    );
    Ok(python)
}

/// `cargo xtask pytest [ARGS…]`: the wheel built and installed, then
/// `pytest python/tests` (skips listed with their reasons). Under `require`
/// (CI), a missing corpus fails instead of skipping.
pub(crate) fn pytest(root: &Path, args: &[String], require: bool) -> Result<()> {
    let python = install(root, "dev", require)?;
    let started = Instant::now();
    let mut cmd = Command::new(&python);
    cmd.current_dir(root).args([
        "-m",
        "pytest",
        "python/tests",
        "-rs",
        "-q",
        "-p",
        "no:cacheprovider",
    ]);
    cmd.args(args);
    // Nothing written into the source tree (no __pycache__ beside the tests).
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    if require {
        cmd.env(testkit::REQUIRE_DATA_VAR, "1");
        cmd.env(testkit::MODEL_VAR, registry::model(root)?);
    }
    let status = cmd.status().context("cannot start pytest")?;
    if !status.success() {
        bail!("pytest failed ({status})");
    }
    println!("== pytest done in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// `cargo xtask bench python [ARGS…]`: the release wheel, then
/// `python/bench/bench.py` (side by side with the llguidance wheel, and
/// XGrammar when it is installed), which writes `target/bench/python.md`
/// and `.json`.
pub(crate) fn bench(root: &Path, args: &[String]) -> Result<()> {
    let python = install(root, "release", false)?;
    let status = Command::new(&python)
        .current_dir(root)
        .arg("python/bench/bench.py")
        .args(args)
        .status()
        .context("cannot start the benchmark")?;
    if !status.success() {
        bail!("python/bench/bench.py failed ({status})");
    }
    Ok(())
}
