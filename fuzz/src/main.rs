//! `structgen-fuzz <target> [--time SECS] [--execs N] [--seed S] [--data DIR] [--out DIR]`
//! (or `--replay FILE`: one input, timed):
//! a long mutation campaign on one target (or `all`), run by
//! `cargo xtask fuzz`. Prints the executions done and the failures found,
//! each minimized and written to `--out` (default `target/fuzz/<target>/`);
//! exits 1 when a failure was found. Executions that take over a second
//! are counted as slow and written there too (`slow-*`): a hang in the
//! making, or a loaded machine.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use structgen_fuzz::{Campaign, Target, corpus, minimize};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprintln!(
            "usage: structgen-fuzz <target|all> [--time SECS] [--execs N] [--seed S] [--data DIR] [--out DIR]"
        );
        eprintln!("targets: {}", Target::ALL.map(Target::name).join(", "));
        return ExitCode::from(2);
    };
    let flag = |f: &str| args.iter().position(|a| a == f).and_then(|i| args.get(i + 1));
    let secs: u64 = flag("--time").and_then(|s| s.parse().ok()).unwrap_or(60);
    let execs: Option<u64> = flag("--execs").and_then(|s| s.parse().ok());
    let seed: u64 = flag("--seed").and_then(|s| s.parse().ok()).unwrap_or(1);
    let data = flag("--data").map(PathBuf::from).or_else(default_data);
    let out = flag("--out").map_or_else(|| PathBuf::from("target/fuzz"), PathBuf::from);
    let targets: Vec<Target> = if name == "all" {
        Target::ALL.to_vec()
    } else {
        match Target::from_name(name) {
            Some(t) => vec![t],
            None => {
                eprintln!(
                    "unknown target {name}; one of: {}",
                    Target::ALL.map(Target::name).join(", ")
                );
                return ExitCode::from(2);
            }
        }
    };
    if let Some(file) = flag("--replay") {
        // One input, timed: `structgen-fuzz <target> --replay FILE`.
        let input = std::fs::read(file).unwrap_or_default();
        for t in targets {
            let start = Instant::now();
            let r = t.run(&input);
            println!("{}: {r:?} in {:.3} s", t.name(), start.elapsed().as_secs_f64());
        }
        return ExitCode::SUCCESS;
    }
    let mut failed = false;
    for t in targets {
        let mut seeds = t.builtin_seeds();
        if let Some(d) = &data {
            seeds.extend(corpus::load(d, t));
        }
        let n_seeds = seeds.len();
        let mut campaign = Campaign::new(t, seed).seeds(seeds);
        let start = Instant::now();
        let budget = Duration::from_secs(secs);
        let mut last = Instant::now();
        let mut slow = 0u64;
        let dir = out.join(t.name());
        let report = campaign.run_while(|r| {
            if last.elapsed() > Duration::from_secs(1) {
                // Kept for a look: slow on a loaded machine, or a hang in
                // the making.
                let _ = std::fs::create_dir_all(&dir);
                let _ = std::fs::write(dir.join(format!("slow-{seed}-{slow}")), &r.last);
                slow += 1;
            }
            last = Instant::now();
            match execs {
                Some(n) => r.execs < n,
                None => start.elapsed() < budget,
            }
        });
        let elapsed = start.elapsed().as_secs_f64();
        println!(
            "{}: {} execs in {elapsed:.0} s ({:.0}/s), {} seeds, {} accepted, {} slow (> 1 s), {} failures",
            t.name(),
            report.execs,
            report.execs as f64 / elapsed.max(1e-9),
            n_seeds,
            report.accepted,
            slow,
            report.failures.len()
        );
        for (i, f) in report.failures.iter().enumerate() {
            failed = true;
            let small = minimize(t, &f.input);
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("crash-{seed}-{i}"));
            let _ = std::fs::write(&path, &small);
            println!(
                "  failure: {}\n  minimized ({} bytes): {}",
                f.message,
                small.len(),
                path.display()
            );
            println!("  {:?}", String::from_utf8_lossy(&small));
        }
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

/// `$STRUCTGEN_SHARED/data`, or `../shared/data` beside the workspace
/// (where the tests find it too).
fn default_data() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("STRUCTGEN_SHARED") {
        return Some(PathBuf::from(d).join("data"));
    }
    let here = std::env::current_dir().ok()?;
    here.ancestors().map(|a| a.join("../shared/data")).find(|p| p.is_dir())
}
