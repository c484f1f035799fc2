//! `cargo xtask bench jsonsuite [DIR]`: the official JSON-Schema-Test-Suite
//! (draft 2020-12, `../shared/data/json-schema-test-suite/tests/draft2020-12`
//! by default) classified by our compiler and by llguidance 1.9.1 in the same
//! process, on the same instances, token by token on o200k (see
//! [`compare::jsonsuite`]).
//!
//! It asserts first that ours accepts no invalid instance and classifies at
//! least as many instances correctly as llguidance, then writes the counts
//! (all files, and without `optional/`), the time each engine took, and per
//! group where the engines differ (`target/bench/jsonsuite-groups.jsonl`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use serde_json::json;

use compare::jsonsuite::{Engines, Outcome, Tally, load};
use compare::report::Report;

pub(crate) fn run(args: &[String]) -> Result<()> {
    let dir = match args {
        [] => compare::shared::data_dir()
            .context("../shared/data is absent: pass a suite directory")?
            .join("json-schema-test-suite/tests/draft2020-12"),
        [d] => PathBuf::from(d),
        _ => bail!("usage: jsonsuite [DIR]"),
    };
    let groups = load(&dir)?;
    let engines = Engines::new(jsonschema::Options::default())?;
    let (mut ours, mut theirs) = ([Tally::default(); 2], [Tally::default(); 2]);
    let (mut ours_s, mut theirs_s) = (0.0, 0.0);
    let out = compare::report::bench_dir();
    std::fs::create_dir_all(&out)?;
    let mut per_group =
        std::io::BufWriter::new(std::fs::File::create(out.join("jsonsuite-groups.jsonl"))?);
    for g in &groups {
        let t0 = Instant::now();
        let a = engines.ours(g);
        ours_s += t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let b = engines.llguidance(g);
        theirs_s += t1.elapsed().as_secs_f64();
        let required = !g.file.starts_with("optional/");
        for (t, o) in [(&mut ours, &a), (&mut theirs, &b)] {
            t[0].add(g, o);
            if required {
                t[1].add(g, o);
            }
        }
        let n = g.tests.len();
        if a.verdicts(n) != b.verdicts(n) {
            let show = |o: &Outcome| match o {
                Outcome::Refused { message, .. } => json!({"refused": message}),
                other => json!(other.verdicts(n)),
            };
            let valid: Vec<bool> = g.tests.iter().map(|t| t.1).collect();
            let record = json!({"group": g.key(), "description": g.description,
                "valid": valid, "ours": show(&a), "llguidance": show(&b)});
            writeln!(per_group, "{record}")?;
        }
    }
    per_group.flush()?;
    ensure!(
        ours[0].invalid_accepted == 0,
        "ours accepted {} invalid instances",
        ours[0].invalid_accepted
    );
    ensure!(
        ours[0].correct >= theirs[0].correct,
        "ours classified {} instances correctly, llguidance {}",
        ours[0].correct,
        theirs[0].correct
    );
    let mut report = Report::new(
        "jsonsuite",
        &[
            "engine",
            "groups compiled",
            "instances correct",
            "valid rejected",
            "invalid accepted",
            "required only: correct",
            "required only: invalid accepted",
            "time s",
        ],
    );
    for (name, t, s) in [("ours", &ours, ours_s), ("llguidance", &theirs, theirs_s)] {
        report.row(vec![
            json!(name),
            json!(format!("{} of {}", t[0].compiled, t[0].groups)),
            json!(format!("{} of {}", t[0].correct, t[0].instances)),
            json!(t[0].valid_rejected),
            json!(t[0].invalid_accepted),
            json!(format!("{} of {}", t[1].correct, t[1].instances)),
            json!(t[1].invalid_accepted),
            json!(s),
        ]);
        report.extra(
            name,
            json!({"all": tally_json(&t[0]), "required": tally_json(&t[1]), "seconds": s}),
        );
    }
    report.note(format!(
        "{} groups from {}; each instance serialized compactly, tokenized with o200k and \
         walked token by token under each engine's masks. Correct: compiled and classified \
         as the suite says. Required only: without the optional/ directory. ours: \
         jsonschema::Options::default(); llguidance 1.9.1 with its defaults (slicer off).",
        groups.len(),
        dir.display()
    ));
    report.note(format!("machine: {}", compare::report::machine()));
    report.finish()?;
    Ok(())
}

fn tally_json(t: &Tally) -> serde_json::Value {
    json!({"groups": t.groups, "compiled": t.compiled, "instances": t.instances,
        "correct": t.correct, "valid_rejected": t.valid_rejected,
        "invalid_accepted": t.invalid_accepted})
}
