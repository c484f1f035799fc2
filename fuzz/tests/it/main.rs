//! Every fuzz target for a bounded number of executions from a fixed seed
//! (the CI run), and the minimized failures found by campaigns, replayed.

extern crate structgen_fuzz as fuzz;

mod regressions;

use fuzz::{Campaign, Target};

/// Executions per target in `cargo test`: the whole file runs in well under
/// a minute on two cores (debug build with the workspace's test profile).
fn ci_execs(t: Target) -> u64 {
    match t {
        Target::Matcher => 400,
        Target::JsonSchema | Target::Lark | Target::Gbnf => 600,
        _ => 1_500,
    }
}

fn campaign(t: Target) {
    let mut seeds = t.builtin_seeds();
    if let Some(data) = testkit::data_dir_or_skip("fuzz seeds from the shared corpora") {
        seeds.extend(fuzz::corpus::load(&data, t));
    }
    let report = Campaign::new(t, 0x5eed).seeds(seeds).run_execs(ci_execs(t));
    assert!(report.accepted > 0, "{}: no input got past the parser", t.name());
    if let Some(f) = report.failures.first() {
        let small = fuzz::minimize(t, &f.input);
        panic!(
            "{}: {} failure(s); first: {}\nminimized: {:?}",
            t.name(),
            report.failures.len(),
            f.message,
            String::from_utf8_lossy(&small)
        );
    }
}

#[test]
fn lark() {
    campaign(Target::Lark);
}

#[test]
fn gbnf() {
    campaign(Target::Gbnf);
}

#[test]
fn regex() {
    campaign(Target::Regex);
}

#[test]
fn json_schema() {
    campaign(Target::JsonSchema);
}

#[test]
fn tokenizer_json() {
    campaign(Target::TokenizerJson);
}

#[test]
fn tiktoken() {
    campaign(Target::Tiktoken);
}

#[test]
fn matcher() {
    campaign(Target::Matcher);
}

#[test]
fn builtin_seeds_run_and_reach_the_deeper_checks() {
    for t in Target::ALL {
        let mut accepted = 0;
        for s in t.builtin_seeds() {
            let r = t.run(&s);
            assert!(r.is_ok(), "{}: {r:?} on {:?}", t.name(), String::from_utf8_lossy(&s));
            accepted += usize::from(r == Ok(true));
        }
        assert!(accepted > 0, "{}: no built-in seed is accepted", t.name());
    }
}
