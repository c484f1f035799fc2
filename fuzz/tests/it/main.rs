//! Every fuzz target for a bounded number of executions from a fixed seed
//! (the CI run), and the minimized failures found by campaigns, replayed.

extern crate structgen_fuzz as fuzz;

mod regressions;

use fuzz::{Campaign, Target};

/// Executions per target in `cargo test`: about 25 s of one core in all
/// (the dev profile runs 400–20,000 executions a second, by target).
fn ci_execs(t: Target) -> u64 {
    match t {
        Target::Matcher | Target::Regex | Target::Lark => 2_000,
        Target::JsonSchema | Target::Gbnf | Target::TokenizerJson => 4_000,
        Target::Tiktoken => 10_000,
        Target::Trace => 4_000,
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
fn trace() {
    campaign(Target::Trace);
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
