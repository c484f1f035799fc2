//! `structgen-bench`: the benchmark suites behind `cargo xtask bench <suite>`.
//!
//! Each suite measures our crate and its peers in this one process, on the
//! same inputs, single-threaded unless it says otherwise; it asserts its
//! results before timing them and reports ratios (see `compare::report`).

use std::process::ExitCode;

use anyhow::{Result, bail};

mod suites;

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
    let Some(name) = args.first() else {
        bail!("usage: structgen-bench <suite> [ARGS...]\n\n{}", suites::listing());
    };
    if name == "list" {
        println!("{}", suites::listing());
        return Ok(());
    }
    let Some(suite) = suites::SUITES.iter().find(|s| s.name == name) else {
        bail!("unknown suite `{name}`\n\n{}", suites::listing());
    };
    eprintln!("structgen-bench {name}: reads {} from the shared corpora", suites::reads(name));
    (suite.run)(&args[1..]).map_err(|e| {
        if compare::shared::data_dir().is_none() {
            e.context(format!(
                "suite `{name}` reads {}; the shared corpora (../shared/data, or the folder \
                 STRUCTGEN_SHARED names) are absent: see the README's \"Where the corpora come \
                 from\"",
                suites::reads(name)
            ))
        } else {
            e
        }
    })
}
